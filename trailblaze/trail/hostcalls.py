"""Which calls of a recording reach a framework tool that acts on the host.

A recording is data: replaying it must not run a program on the machine that replays it, nor
read that machine's files, unless the workspace says so (`hostpolicy`). The framework tools
that do, from the reference catalog (`HOST_TOOLS`):

- `exec` starts a host program from an argument list (`argv[0]` is the program);
- `runCommand` runs a shell command line on the host (a line can start any program);
- `script` runs JavaScript from the recording on the host, then the calls it yields, which
  nothing before the run sees;
- `runTrail` reads the file at `path` on the host and replays it as a trail.

Not on the list: the tools that act on the device (`android_adbShell`, `android_sendBroadcast`,
the `android_write*` tools: a recording drives the device, and they never touch the host),
`takeSnapshot` (it writes only below the directory replay is given for snapshots, under names
it makes safe), the web and Compose tools (a browser page or a window, not the host's files or
programs), `findMatches` and the other queries (they read the screen). Like the reference,
other tools the catalog marks not recordable stay callable by a recording.

A recorded call reaches a host tool directly, through a workspace `class:` tool that registers
one's class under another name, or through composed `*.tool.yaml` tools at any depth (their
`runIf` calls included), the way replay dispatches it (`Reach`, over the trailmap's resolution,
else the catalog). A scripted tool (`.ts`) is the workspace's own code: what it calls is not
the recording's (replay runs it as it says, as the trailmap's tests would).

`recorded_calls` walks a trail's calls with every `runIf` condition and branch, in any form,
valid or not: the check and replay's preflight look at the same calls. `noted_tools` is what a
trail's state row keeps of them: the names that are not plain framework tools (a plain one
always resolves to itself and never reaches the host), so that a later check can tell, without
reading the trail again, whether it may call a tool that reaches the host in the current tool
model.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

import msgspec

from trailblaze import codes
from trailblaze.finding import join_key
from trailblaze.toolmodel.catalog import Catalog
from trailblaze.toolmodel.records import Resolution, ToolEntry
from trailblaze.toolmodel.resolution import ships_runif
from trailblaze.trail.model import Recording, Step, ToolCall, Trail, is_blank_name
from trailblaze.trail.runif import RUNIF
from trailblaze.yaml.node import YMap, YNode, YScalar, YSeq


class HostTool(msgspec.Struct, frozen=True, kw_only=True):
    """A tool whose call would run a program or touch a file on the host."""

    name: str
    code: str
    """`codes.HOST_PROGRAM` or `codes.HOST_FILE`."""
    does: str
    """What it does on the host, as a clause: `runs a shell command line on the host`."""


HOST_TOOLS: Final[Mapping[str, HostTool]] = {
    tool.name: tool
    for tool in (
        HostTool(name="exec", code=codes.HOST_PROGRAM, does="runs a program on the host"),
        HostTool(
            name="runCommand",
            code=codes.HOST_PROGRAM,
            does="runs a shell command line on the host, and a shell line can start any program",
        ),
        HostTool(
            name="script",
            code=codes.HOST_PROGRAM,
            does="runs JavaScript from the recording on the host, then the calls it yields, "
            "which nothing before the run sees",
        ),
        HostTool(
            name="runTrail", code=codes.HOST_FILE, does="reads a file of the host and replays it"
        ),
    )
}
"""The framework tools that run a host program or read host files, by name."""

_MAX_RUNIF = 16
"""`runIf` inside `runIf` inside a composed tool's body: deeper is not walked (no valid tree is)."""


def plain_names(catalog: Catalog) -> frozenset[str]:
    """The framework tools a name always resolves to and that never reach the host.

    Every trailmap's surface holds every recordable framework tool its generator emits, ahead of
    the trailmap's own tools (first write wins), and replay resolves names with that surface:
    such a name is the framework tool in every trailmap. Not `runIf`, ours, which a trailmap
    may replace with its own (`resolution.ships_runif`).
    """
    known = _PLAIN.get(catalog.version)
    if known is None:
        known = _PLAIN[catalog.version] = frozenset(
            name
            for name, tool in catalog.tools.items()
            if tool.recordable
            and tool.surface
            and name not in HOST_TOOLS
            and tool.origin != "builtin"
        )
    return known


_PLAIN: dict[str, frozenset[str]] = {}


# -- the calls of a recording ---------------------------------------------------------------------


class RecordedCall(msgspec.Struct, frozen=True):
    """A call a recording makes: a recorded call, or one inside a `runIf` of it."""

    step: Step
    recording: Recording
    call: ToolCall
    position: str | None = None
    """Where it sits in the `runIf` tree (`runIf.then[1]`); None for a recorded call."""


def recorded_calls(trail: Trail) -> Iterator[RecordedCall]:
    """Every call the trail's recordings make, `runIf` trees walked in any form, in file order."""
    for step, recording, call in trail.calls():
        yield RecordedCall(step, recording, call)
        if call.name == RUNIF:
            for inner, position in runif_calls(call):
                yield RecordedCall(step, recording, inner, position)


def runif_calls(call: ToolCall, depth: int = 1) -> Iterator[tuple[ToolCall, str]]:
    """The calls inside a `runIf` call: its condition tool (`{tool: {name: args}}`, and the
    forms the validator refuses: `{tool: name, args: ...}`, several tools) and every item of
    `then` and `else`, nested `runIf` too, whether the tree is valid or not."""
    args = call.args
    if args is None or depth > _MAX_RUNIF:
        return
    here = join_key(call.key_path, RUNIF)
    condition = args.get("condition")
    if isinstance(condition, YMap):
        tool = condition.get("tool")
        tool_path = join_key(join_key(here, "condition"), "tool")
        if isinstance(tool, YScalar) and not is_blank_name(tool):
            given = condition.get("args")
            inner = ToolCall(
                name=tool.text,
                args=given if isinstance(given, YMap) else None,
                line=tool.line,
                column=tool.column,
                key_path=tool_path,
            )
            yield from _with_nested(inner, "runIf.condition", depth)
        elif isinstance(tool, YMap):
            for inner in _calls_of(tool, tool_path):
                yield from _with_nested(inner, "runIf.condition", depth)
    for branch in ("then", "else"):
        items = args.get(branch)
        if not isinstance(items, YSeq):
            continue
        for i, item in enumerate(items.items):
            if isinstance(item, YMap):
                for inner in _calls_of(item, join_key(join_key(here, branch), i)):
                    yield from _with_nested(inner, f"runIf.{branch}[{i}]", depth)


def _calls_of(node: YMap, key_path: str) -> Iterator[ToolCall]:
    """Each `name: args` of a mapping that holds a call (every key, when it holds several)."""
    for key, value in node:
        if is_blank_name(key):
            continue
        yield ToolCall(
            name=key.text,
            args=value if isinstance(value, YMap) else None,
            line=key.line,
            column=key.column,
            key_path=key_path,
        )


def _with_nested(call: ToolCall, position: str, depth: int) -> Iterator[tuple[ToolCall, str]]:
    yield call, position
    if call.name == RUNIF:
        for inner, inner_position in runif_calls(call, depth + 1):
            yield inner, f"{position} › {inner_position}"


def noted_tools(trail: Trail, plain: frozenset[str]) -> str | None:
    """The names of the calls of `trail` that are not plain framework tools, as a sorted JSON
    list (what the trail's state row keeps); None when there are none."""
    # Every parsed trail comes here: one pass over the calls, `runIf` trees walked only where
    # there are some.
    calls = [c for step in trail.all_steps() for r in step.recordings for c in r.calls]
    names = {c.name for c in calls}
    if RUNIF in names:
        names.update(i.name for c in calls if c.name == RUNIF for i, _ in runif_calls(c))
    names -= plain
    return json.dumps(sorted(names), ensure_ascii=False) if names else None


# -- what a name reaches --------------------------------------------------------------------------


class HostCall(msgspec.Struct, frozen=True):
    """A call of a host tool that a recorded call leads to."""

    tool: HostTool
    via: tuple[str, ...]
    """The tools from the recorded call's name down to the one that acts on the host (both
    included): `("exec",)`, or `("cleanUp", "wipe", "exec")` through composed tools."""
    args: Any
    """The host call's arguments as plain data (None when it has none): the recorded ones, or
    those a composed tool's body gives it, `{{params.x}}` templates unfilled."""

    @property
    def direct(self) -> bool:
        """Whether the recorded call is the host tool itself, by its own name."""
        return self.via == (self.tool.name,)


class Reach:
    """The host calls each name leads to in one trailmap's tool model.

    The model is the trailmap's resolution (None: the framework tools alone, as replay sees a
    trail with no known target); a name it does not hold is looked up in the catalog, as
    replay looks it up. A composed tool's body is walked breadth first over every composed
    tool it reaches, each once (a cycle or a diamond costs nothing more), so what a name
    reaches is found in time linear in the bodies, and remembered.
    """

    def __init__(self, resolution: Resolution | None, catalog: Catalog) -> None:
        entries = {e.name: e for e in resolution.entries} if resolution is not None else {}
        self._entry: Callable[[str], ToolEntry | None] = entries.get
        self._runif_ours = not ships_runif(resolution)
        self._catalog = catalog
        self._composed: dict[str, tuple[HostCall, ...]] = {}

    def calls(self, name: str, args: Any) -> tuple[HostCall, ...]:
        """The host calls that calling `name` with `args` (plain data) leads to. Our `runIf` is
        replay's own: the calls inside a recorded one are calls of their own. A trailmap's own
        `runIf` is a tool like any other."""
        if name == RUNIF and self._runif_ours:
            return ()
        kind, tool = self._kind(name)
        if tool is not None:
            return (HostCall(tool, _via((), name, tool), args),)
        return self._reach_of(name) if kind == "yaml" else ()

    def _kind(self, name: str) -> tuple[str | None, HostTool | None]:
        """How replay runs `name`: (`yaml` for a composed tool, else None; the host tool it is)."""
        entry = self._entry(name)
        if entry is None:
            implementation = name if self._catalog.tool(name) is not None else None
        elif entry.kind == "framework":
            implementation = name
        elif entry.kind == "class":
            implementation = entry.implements
        elif entry.kind == "yaml":
            return "yaml", None
        else:
            return None, None  # a scripted tool: the workspace's own code
        return None, HOST_TOOLS.get(implementation or "")

    def _reach_of(self, start: str) -> tuple[HostCall, ...]:
        known = self._composed.get(start)
        if known is not None:
            return known
        found: list[HostCall] = []
        queue: deque[tuple[str, tuple[str, ...]]] = deque([(start, (start,))])
        seen = {start}
        while queue:
            name, path = queue.popleft()
            entry = self._entry(name)
            assert entry is not None
            for call_name, call_args in body_calls(entry.body):
                kind, tool = self._kind(call_name)
                if tool is not None:
                    found.append(HostCall(tool, _via(path, call_name, tool), call_args))
                elif kind == "yaml" and call_name not in seen:
                    seen.add(call_name)
                    queue.append((call_name, (*path, call_name)))
        self._composed[start] = result = tuple(found)
        return result


def _via(path: tuple[str, ...], name: str, tool: HostTool) -> tuple[str, ...]:
    """`path` and `name`, and the host tool's own name after a `class:` tool's."""
    return (*path, name) if name == tool.name else (*path, name, tool.name)


def body_calls(body: tuple[tuple[str, Any], ...]) -> Iterator[tuple[str, Any]]:
    """The calls of a composed tool's body as (name, raw arguments), those inside its `runIf`
    calls (replay's own) in their place."""
    for name, args in body:
        if name == RUNIF:
            yield from _raw_runif_calls(args, 1)
        else:
            yield name, args


def _raw_runif_calls(raw: Any, depth: int) -> Iterator[tuple[str, Any]]:
    """The calls inside a `runIf` given as plain data: its condition tool in any form and every
    item of `then` and `else` (each key of an item with several), nested `runIf` walked too."""
    if not isinstance(raw, dict) or depth > _MAX_RUNIF:
        return
    calls: list[tuple[str, Any]] = []
    condition = raw.get("condition")
    if isinstance(condition, dict):
        tool = condition.get("tool")
        if isinstance(tool, str):
            calls.append((tool, condition.get("args")))
        elif isinstance(tool, dict):
            calls.extend((str(k), v) for k, v in tool.items())
    for branch in ("then", "else"):
        items = raw.get(branch)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                calls.extend((str(k), v) for k, v in item.items())
    for name, args in calls:
        if name == RUNIF:
            yield from _raw_runif_calls(args, depth + 1)
        else:
            yield name, args


def call_args(node: YNode | None) -> Any:
    """A recorded call's arguments as plain data (None without any)."""
    return node.to_python() if node is not None else None
