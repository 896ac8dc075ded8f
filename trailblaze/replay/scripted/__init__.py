"""Scripted tools at replay: a trailmap's ``.ts`` / ``.js`` tools, run under Node.

Three concepts, one module each:

- ``compiler``: a tool's module with its types stripped by the pinned compiler, once per run,
  next to our runtime of ``@trailblaze/scripting`` (``data/scripting/``) and the pinned zod;
- ``child``: a Node child (``data/scripting/host.cjs``) speaking JSON lines on its pipes. One
  per replay thread, reused by every call on it, with fresh module state for every trail;
  one that dies or stops answering is replaced for the next call;
- ``protocol``: one invocation's messages (nested ``ctx.tools`` calls run by the engine in the
  recording's batch context, logs, the result) and the failure kinds it ends with.

``host`` ties them together for the engine (``ScriptHost`` per run, ``TrailmapScripts`` per
trailmap) and builds what the tool's ``ctx`` holds: device, target, memory.
"""

from __future__ import annotations

from typing import Any

from trailblaze.replay.scripted.compiler import ScriptError
from trailblaze.replay.scripted.host import (
    DEFAULT_TIMEOUT,
    MAX_SESSIONS,
    ScriptHost,
    TargetInfo,
    TrailmapScripts,
)
from trailblaze.replay.scripted.protocol import DispatchCall, ScriptOutcome, Validate

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_SESSIONS",
    "OPEN_SCHEMA",
    "SCRIPTED_KINDS",
    "DispatchCall",
    "ScriptError",
    "ScriptHost",
    "ScriptOutcome",
    "TargetInfo",
    "TrailmapScripts",
    "Validate",
]

#: Entry kinds (``records.EntryKind``) that a Node child runs.
SCRIPTED_KINDS = frozenset({"module", "descriptor", "open"})
#: What replay parses a scripted call with before the tool says what it declares: any object
#: (tsc checked a module tool's arguments at check time; the module's own ``inputSchema``, if
#: it has one, is applied once the module is loaded).
OPEN_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}
