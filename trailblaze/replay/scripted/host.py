"""The runtime bridge: what a scripted tool's ``ctx`` is built from, and which child runs it.

``ScriptHost`` belongs to one replay run. It compiles the tool modules (``compiler``), keeps one
Node child per replay thread (``child``; a new one when it dies, and after ``MAX_SESSIONS``
trails, since the modules of every trail stay loaded in it), and caches what the device tells
``ctx.device`` and ``ctx.target`` (screen size, installed packages) per serial. ``TrailmapScripts``
is a trailmap's view of it: its target (``resolveAppId`` picks the first of the trailmap's
``app_ids`` that is installed) and the envelope of each invocation (``protocol``).
"""

from __future__ import annotations

import itertools
import os
import shutil
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trailblaze.options import env_flag
from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import ToolError
from trailblaze.replay.scripted.child import NodeChild
from trailblaze.replay.scripted.compiler import ScriptCompiler, ScriptError, data_file
from trailblaze.replay.scripted.protocol import (
    Caller,
    DispatchCall,
    Invocation,
    ScriptOutcome,
    Validate,
)
from trailblaze.toolchain.proc import ProcError
from trailblaze.toolmodel.records import Trailmap
from trailblaze.toolmodel.tooldefs.modules import MODULE_SUFFIXES
from trailblaze.yaml.node import YamlError, YMap, YScalar, load, read_text

#: Seconds a scripted tool may stay silent (not counting the nested calls the engine runs).
DEFAULT_TIMEOUT = 30.0
#: Trails one child serves before a fresh one takes over (each trail's modules stay loaded).
MAX_SESSIONS = 100


@dataclass(frozen=True, slots=True)
class TargetInfo:
    """What ``ctx.target`` is built from: the trailmap's target on Android."""

    id: str
    display_name: str | None
    app_ids: tuple[str, ...]

    @classmethod
    def of(cls, manifest: Trailmap) -> TargetInfo:
        android = next((p for p in manifest.platforms if p.name == "android"), None)
        return cls(
            id=manifest.id,
            display_name=manifest.display_name,
            app_ids=android.app_ids if android else (),
        )


@dataclass(frozen=True, slots=True)
class _DeviceFacts:
    size: tuple[int, int]
    packages: frozenset[str]


BLANK_UNKNOWN_TOKENS_ENV = "TRAILBLAZE_MEMORY_BLANK_UNKNOWN_TOKENS"
"""On: an unknown `{{memory.x}}` token in a scripted tool interpolates to "" (memory.cjs)."""


def blank_unknown_tokens(env: Mapping[str, str]) -> bool:
    return env_flag(BLANK_UNKNOWN_TOKENS_ENV, env)


class ScriptHost:
    """Compiles and runs the scripted tools of one replay run. Thread-safe; ``close`` it."""

    def __init__(
        self,
        root: Path,
        scratch: Path,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.root = root
        self.timeout = timeout
        self.env = dict(os.environ if env is None else env)
        # Read here, with every spelling of a switch; the Node side sees `1` or nothing.
        self.env.pop(BLANK_UNKNOWN_TOKENS_ENV, None)
        if blank_unknown_tokens(os.environ if env is None else env):
            self.env[BLANK_UNKNOWN_TOKENS_ENV] = "1"
        self.session_id = f"replay-{uuid.uuid4().hex[:12]}"
        self.compiler = ScriptCompiler(root, scratch, self.env)
        self.host_js = data_file("host.cjs")
        """The children's entry point: the Node side of the protocol."""
        self.children_started = 0
        self._lock = threading.Lock()
        self._local = threading.local()
        self._children: list[NodeChild] = []
        self._facts: dict[str, _DeviceFacts] = {}
        self._invocations = itertools.count(1)

    def for_trailmap(self, manifest: Trailmap | None) -> TrailmapScripts:
        return TrailmapScripts(self, TargetInfo.of(manifest) if manifest is not None else None)

    def close(self) -> None:
        with self._lock:
            children, self._children = self._children, []
        for child in children:
            child.close()
        self.compiler.close()

    def compiled(self, module: Path) -> Path:
        """The JavaScript of ``module`` (compiled on first use); ``ScriptError`` if it has none."""
        return self.compiler.compiled(module)

    def invocation(
        self, name: str, module: Path, js: Path, args: dict[str, Any], envelope: dict[str, Any]
    ) -> dict[str, Any]:
        """An ``invoke`` message: run tool ``name`` of ``module`` (compiled to ``js``)."""
        return {
            "type": "invoke",
            "module": str(js),
            "source": self.compiler.rel(module),
            "export": name,
            "tool": name,
            "args": args,
            "context": envelope,
        }

    def hello(self) -> dict[str, Any]:
        """A child's first message: where our runtime and the compiled modules are."""
        out = self.compiler.out_dir()
        return {"type": "hello", "runtime": str(self.compiler.runtime), "outDir": str(out)}

    def descriptor_script(self, source: str) -> Path | None:
        """The script of a descriptor (``tools/<name>.yaml``): its ``script:``, else a module
        of the same name next to it."""
        descriptor = self.root / source
        try:
            node = load(read_text(descriptor))
        except YamlError:
            node = None
        script = node.get("script") if isinstance(node, YMap) else None
        if isinstance(script, YScalar) and script.text:
            for base in (descriptor.parent, descriptor.parent.parent):
                if (base / script.text).is_file():
                    return base / script.text
            return descriptor.parent / script.text
        stem = descriptor.name.rsplit(".", 1)[0]
        for suffix in MODULE_SUFFIXES:
            if (descriptor.parent / f"{stem}{suffix}").is_file():
                return descriptor.parent / f"{stem}{suffix}"
        return None

    # -- the children --------------------------------------------------------------------------

    @contextmanager
    def lease(self, name: str) -> Iterator[NodeChild]:
        """This thread's child (a new one if it has none that is alive). Nested leases share it."""
        local = self._local
        child: NodeChild | None = getattr(local, "child", None)
        depth: int = getattr(local, "depth", 0)
        if child is None or not child.alive or (depth == 0 and child.sessions >= MAX_SESSIONS):
            if child is not None and depth == 0:
                self._retire(child)
            child = self._spawn(name)
            local.child = child
        local.depth = depth + 1
        try:
            yield child
        finally:
            local.depth = depth

    def _spawn(self, name: str) -> NodeChild:
        node = shutil.which("node", path=self.env.get("PATH"))
        if node is None:
            raise ToolError(
                f"scripted tool '{name}' could not run: node is not on PATH (install Node.js 20)"
            )
        argv = [node, "--enable-source-maps", str(self.host_js)]
        try:
            child = NodeChild(argv, cwd=self.root, env=self.env, hello=self.hello())
        except (OSError, ProcError) as exc:
            raise ToolError(f"scripted tool '{name}' could not run: {exc}") from None
        with self._lock:
            self._children = [c for c in self._children if c.alive]
            self._children.append(child)
            self.children_started += 1
        return child

    def _retire(self, child: NodeChild) -> None:
        with self._lock:
            if child in self._children:
                self._children.remove(child)
        child.close()

    # -- the device, as ctx.device and ctx.target see it ---------------------------------------

    def facts(self, context: ExecutionContext) -> _DeviceFacts:
        serial = context.device.serial
        with self._lock:
            found = self._facts.get(serial)
        if found is None:
            found = _DeviceFacts(
                context.device.window_size(), frozenset(context.device.list_packages())
            )
            with self._lock:
                self._facts[serial] = found
        return found

    def next_invocation(self) -> str:
        return f"{self.session_id}-{next(self._invocations)}"


@dataclass(slots=True)
class TrailmapScripts:
    """The scripted tools of one trailmap: the run's host and the trailmap's target."""

    host: ScriptHost
    target: TargetInfo | None

    def run(
        self,
        name: str,
        module: Path | None,
        args: dict[str, Any],
        *,
        context: ExecutionContext,
        call: DispatchCall,
        logs: list[str],
        validate: Validate | None = None,
    ) -> ScriptOutcome:
        """Run scripted tool ``name`` of ``module``; raises a ``ToolFailure`` when it fails.

        Nested calls run through ``call``; what the tool logs and prints is appended to ``logs``
        as it comes, failure or not; ``validate`` parses the arguments with the input schema the
        tool declares in its module, if it declares one.
        """
        host = self.host
        if module is None:
            raise ToolError(
                f"scripted tool '{name}' could not run: no module in the trailmap's tools/ "
                "defines it"
            )
        # The child starts (Node, our runtime, zod) while the module compiles.
        with host.lease(name) as child:
            try:
                js = host.compiled(module)
            except ScriptError as exc:
                raise ToolError(f"scripted tool '{name}' could not run: {exc}") from None
            request = host.invocation(name, module, js, args, self._envelope(context))
            request["session"] = child.session_for(context.memory)
            parse: Validate | None = None
            if validate is not None:
                # What the module declares is checked on top of what a descriptor declared:
                # the descriptor's defaults stay unless the module's schema sets the key.
                def parse(schema: dict[str, Any]) -> dict[str, Any]:
                    return {**args, **validate(schema)}

            caller = Caller(
                context=context,
                call=call,
                logs=logs,
                validate=parse,
                timeout=host.timeout,
                root=host.root,
            )
            return Invocation(child, name, caller).run(request)

    def _envelope(self, context: ExecutionContext) -> dict[str, Any]:
        host = self.host
        facts = host.facts(context)
        envelope: dict[str, Any] = {
            "sessionId": host.session_id,
            "invocationId": host.next_invocation(),
            "device": {
                "platform": "android",
                "widthPixels": facts.size[0],
                "heightPixels": facts.size[1],
                "driverType": context.driver_type,
                "instanceId": context.device.serial,
            },
            # Secrets stay out of scripts, as Trailblaze keeps sensitive memory out of them.
            "memory": {k: v for k, v in context.memory.items() if k not in context.sensitive},
        }
        if self.target is not None:
            installed = [a for a in self.target.app_ids if a in facts.packages]
            target: dict[str, Any] = {"id": self.target.id, "appIds": list(self.target.app_ids)}
            if self.target.display_name:
                target["displayName"] = self.target.display_name
            if installed:
                target["appId"] = installed[0]
            envelope["target"] = target
        return envelope
