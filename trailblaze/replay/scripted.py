"""Scripted tools at replay: a trailmap's ``.ts`` / ``.js`` tools, run under Node.

A scripted tool's module is compiled once per run with the pinned compiler (``toolchain``;
``--noCheck``: the type gate already checked it, here only the types are stripped) into a scratch
directory, next to our own runtime of ``@trailblaze/scripting`` (``data/scripting/index.cjs``).
Each invocation is one Node child process (``data/scripting/host.cjs``) that talks to the engine
in JSON lines over its stdin and stdout:

- the engine sends the invocation (module, export, arguments, and the context: device, target,
  memory snapshot);
- the tool's ``ctx.tools.X(args)`` calls come back as ``call`` messages. The engine runs each one
  through its own dispatch, in the execution context of the scripted tool's call (so in the
  recording's batch context: same clipboard, same snapshot frame, same trace id), with its own
  result, log line and position (``notes_copy.calls[0]``), and answers with a ``reply``;
- ``log`` messages are the tool's ``ctx.logger`` lines; what it prints goes to stderr;
- the child ends with ``result`` (``ok`` with the return value and the memory delta, or the
  error it threw) or ``unrunnable``.

How it fails, as the engine's three kinds (``failure``):

- the tool threw, or returned ``isError``: ``ExpectedFailure`` with its message. A ``runIf``
  condition reads it as false. A nested call that could not run (or lost the device) and that the
  tool let escape keeps its own kind;
- the tool could not run at all (its module does not compile or load, no such export, a crash,
  no answer within the timeout, no Node): ``ToolError``, "could not run". It fails the step,
  even as a ``runIf`` condition;
- a nested call that lost the device: ``FatalToolError`` at once, the child is stopped.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import re
import selectors
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from trailblaze.fsutil import write_atomic
from trailblaze.manifest import Trailmap
from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import (
    Cancelled,
    ExpectedFailure,
    FatalToolError,
    ToolError,
    ToolFailure,
)
from trailblaze.replay.results import ToolResult
from trailblaze.replay.structured import Structured, structured_value
from trailblaze.toolchain import TS_VERSION, ToolchainError, find_compiler, install_library
from trailblaze.tooldefs import MODULE_SUFFIXES
from trailblaze.yamlnode import YamlError, YMap, YScalar, load, read_text

logger = logging.getLogger(__name__)

#: Entry kinds (``resolve.EntryKind``) that a Node child runs.
SCRIPTED_KINDS = frozenset({"module", "descriptor", "open"})
#: Arguments of a module tool are checked by tsc at check time; replay takes any object.
OPEN_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}
#: Seconds a scripted tool may stay silent (not counting the nested calls the engine runs).
DEFAULT_TIMEOUT = 30.0
DRIVER_TYPE = "android-ondevice-accessibility"
_COMPILE_TIMEOUT = 120.0
_LOG_LINES = 200
_JS_SUFFIX = {".ts": ".js", ".mts": ".mjs", ".cts": ".cjs"}
_TSC_ERROR = re.compile(r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): error (?P<msg>.*)$")
_FRAME = re.compile(r"\(?(?:file://)?(?P<file>/[^():]+):(?P<line>\d+):(?P<col>\d+)\)?$")

_KINDS: dict[str, type[ToolFailure]] = {
    "expected": ExpectedFailure,
    "error": ToolError,
    "fatal": FatalToolError,
}

DispatchCall = Callable[[str, dict[str, Any], int], ToolResult]
"""Runs one nested call (name, arguments, index among this invocation's calls); its result."""


class ScriptError(Exception):
    """A scripted tool could not run; the message says why."""


@dataclass(frozen=True, slots=True)
class TargetInfo:
    """What ``ctx.target`` is built from: the trailmap's target on Android."""

    id: str
    display_name: str | None
    app_ids: tuple[str, ...]

    @classmethod
    def of(cls, manifest: Trailmap) -> TargetInfo:
        android = next((p for p in manifest.platforms if p.name == "android"), None)
        return cls(manifest.id, manifest.display_name, android.app_ids if android else ())


@dataclass(frozen=True, slots=True)
class ScriptOutcome:
    detail: str
    sets: dict[str, str]
    """What the tool wrote to memory (``ctx.memory.set``), to apply now that it succeeded."""
    deletions: tuple[str, ...]


@dataclass(slots=True)
class _Compiled:
    js: Path | None
    error: str | None


@dataclass(slots=True)
class _DeviceFacts:
    size: tuple[int, int]
    packages: frozenset[str]


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
        self.scratch = scratch
        self.timeout = timeout
        self.env = dict(os.environ if env is None else env)
        self.session_id = f"replay-{uuid.uuid4().hex[:12]}"
        self._lock = threading.Lock()
        self._out: Path | None = None
        self._compiled: dict[Path, _Compiled] = {}
        self._facts: dict[str, _DeviceFacts] = {}
        self._invocations = itertools.count(1)
        data = resources.files("trailblaze").joinpath("data/scripting")
        self._runtime_src = Path(str(data.joinpath("index.cjs")))
        self.host_js = Path(str(data.joinpath("host.cjs")))
        """The child's entry point: the Node side of the protocol."""

    def for_trailmap(self, manifest: Trailmap | None) -> TrailmapScripts:
        return TrailmapScripts(self, TargetInfo.of(manifest) if manifest is not None else None)

    def close(self) -> None:
        with self._lock:
            if self._out is not None:
                shutil.rmtree(self._out, ignore_errors=True)
                self._out = None
            self._compiled.clear()

    # -- compiling -----------------------------------------------------------------------------

    def _out_dir(self) -> Path:
        with self._lock:
            return self._make_out()

    def _make_out(self) -> Path:
        if self._out is None:
            self.scratch.mkdir(parents=True, exist_ok=True)
            out = Path(tempfile.mkdtemp(prefix="scripted-", dir=self.scratch))
            runtime = out / "node_modules" / "@trailblaze" / "scripting"
            runtime.mkdir(parents=True)
            shutil.copyfile(self._runtime_src, runtime / "index.cjs")
            package = {"name": "@trailblaze/scripting", "main": "./index.cjs"}
            write_atomic(runtime / "package.json", json.dumps(package) + "\n")
            write_atomic(out / "package.json", json.dumps({"type": "module"}) + "\n")
            try:
                # `z` of @trailblaze/scripting (and `import ... from "zod"`): the pinned zod.
                zod = install_library("zod")
            except ToolchainError as exc:
                logger.warning("scripted tools run without zod: %s", exc)
            else:
                os.symlink(zod, out / "node_modules" / "zod", target_is_directory=True)
            self._out = out
        return self._out

    def compiled(self, module: Path) -> Path:
        """The JavaScript of ``module`` (compiled on first use); ``ScriptError`` if it has none."""
        module = module.absolute()
        with self._lock:
            found = self._compiled.get(module)
            if found is None:
                found = self._compile(module)
                self._compiled[module] = found
        if found.js is None:
            raise ScriptError(found.error or "cannot compile")
        return found.js

    def _compile(self, module: Path) -> _Compiled:
        rel = self._rel(module)
        if not module.is_file():
            return _Compiled(None, f"its module {rel} does not exist")
        out = self._make_out()  # under the lock
        target = out / module.relative_to(module.anchor)
        target = target.with_suffix(_JS_SUFFIX.get(module.suffix, module.suffix))
        try:
            compiler = find_compiler(TS_VERSION, install=True)
        except ToolchainError as exc:
            return _Compiled(None, f"no TypeScript compiler to strip the types of {rel}: {exc}")
        argv = [
            *compiler.argv_prefix,
            "--ignoreConfig",
            "--noCheck",
            "--allowJs",
            "--module", "esnext",
            "--moduleResolution", "bundler",
            "--target", "es2022",
            "--rewriteRelativeImportExtensions",
            "--sourceMap",
            "--skipLibCheck",
            "--types", "",
            "--pretty", "false",
            "--rootDir", module.anchor,
            "--outDir", str(out),
            str(module),
        ]  # fmt: skip
        try:
            done = subprocess.run(
                argv,
                cwd=out,
                capture_output=True,
                text=True,
                timeout=_COMPILE_TIMEOUT,
                check=False,
                env=self.env,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return _Compiled(None, f"cannot compile {rel}: {exc}")
        errors = []
        for line in done.stdout.splitlines():
            match = _TSC_ERROR.match(line.strip())
            if match is None:
                continue
            where = self._rel((out / match["file"]).resolve())
            errors.append(f"{where}:{match['line']}:{match['col']}: {match['msg']}")
        if errors or done.returncode != 0 or not target.is_file():
            shown = "; ".join(errors[:5]) or (done.stdout + done.stderr).strip()[:500]
            more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
            return _Compiled(None, f"{rel} does not compile: {shown}{more}")
        return _Compiled(target, None)

    def invocation(
        self, name: str, module: Path, js: Path, args: dict[str, Any], envelope: dict[str, Any]
    ) -> dict[str, Any]:
        """The first message to a child: run tool ``name`` of ``module`` (compiled to ``js``)."""
        out = self._out_dir()
        return {
            "type": "invoke",
            "runtime": str(out / "node_modules" / "@trailblaze" / "scripting" / "index.cjs"),
            "outDir": str(out),
            "module": str(js),
            "source": self._rel(module),
            "export": name,
            "tool": name,
            "args": args,
            "context": envelope,
        }

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

    def _rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

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
        context: ExecutionContext,
        memory: Mapping[str, str],
        call: DispatchCall,
        logs: list[str],
    ) -> ScriptOutcome:
        """Run scripted tool ``name`` of ``module``; raises a ``ToolFailure`` when it fails.

        What the tool logs and prints is appended to ``logs`` as it comes, failure or not.
        """
        host = self.host
        if module is None:
            raise ToolError(
                f"scripted tool '{name}' could not run: no module in the trailmap's tools/ "
                "defines it"
            )
        try:
            js = host.compiled(module)
        except ScriptError as exc:
            raise ToolError(f"scripted tool '{name}' could not run: {exc}") from None
        node = shutil.which("node", path=host.env.get("PATH"))
        if node is None:
            raise ToolError(
                f"scripted tool '{name}' could not run: node is not on PATH (install Node.js 20)"
            )
        facts = host.facts(context)
        envelope = {
            "sessionId": host.session_id,
            "invocationId": host.next_invocation(),
            "device": {
                "platform": "android",
                "widthPixels": facts.size[0],
                "heightPixels": facts.size[1],
                "driverType": DRIVER_TYPE,
                "instanceId": context.device.serial,
            },
            "memory": dict(memory),
        }
        if self.target is not None:
            installed = [a for a in self.target.app_ids if a in facts.packages]
            target: dict[str, Any] = {"id": self.target.id, "appIds": list(self.target.app_ids)}
            if self.target.display_name:
                target["displayName"] = self.target.display_name
            if installed:
                target["appId"] = installed[0]
            envelope["target"] = target
        invoke = host.invocation(name, module, js, args, envelope)
        argv = [node, "--enable-source-maps", str(host.host_js)]
        session = _Session(name, argv, module, host, logs)
        return session.run(invoke, context, call)


class _Session:
    """One Node child running one invocation."""

    def __init__(
        self, name: str, argv: list[str], module: Path, host: ScriptHost, logs: list[str]
    ) -> None:
        self.name = name
        self.argv = argv
        self.module = module
        self.host = host
        self.logs = logs
        self._lock = threading.Lock()
        self._stderr: list[str] = []
        self._buffer = b""
        self._calls = 0

    def run(
        self,
        invoke: dict[str, Any],
        context: ExecutionContext,
        call: DispatchCall,
    ) -> ScriptOutcome:
        try:
            child = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.module.parent,
                env=self.host.env,
                bufsize=0,
            )
        except OSError as exc:
            raise ToolError(f"scripted tool '{self.name}' could not run: {exc}") from None
        reader = threading.Thread(target=self._drain_stderr, args=(child,), daemon=True)
        reader.start()
        try:
            self._send(child, invoke)
            return self._loop(child, context, call)
        finally:
            with contextlib.suppress(OSError):
                child.kill()
            child.wait()
            for stream in (child.stdin, child.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
            reader.join(timeout=2)
            if child.stderr is not None:
                child.stderr.close()

    def _drain_stderr(self, child: subprocess.Popen[bytes]) -> None:
        assert child.stderr is not None
        for raw in child.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self._lock:
                if len(self._stderr) < _LOG_LINES:
                    self._stderr.append(line)
                    self.logs.append(f"[console] {line}")
            logger.info("[%s] %s", self.name, line)

    def _send(self, child: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
        assert child.stdin is not None
        data = (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            child.stdin.write(data)
            child.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass  # it exited; the loop reads why

    def _loop(
        self,
        child: subprocess.Popen[bytes],
        context: ExecutionContext,
        call: DispatchCall,
    ) -> ScriptOutcome:
        with contextlib.ExitStack() as phases:
            return self._messages(child, context, call, phases)

    def _messages(
        self,
        child: subprocess.Popen[bytes],
        context: ExecutionContext,
        call: DispatchCall,
        phases: contextlib.ExitStack,
    ) -> ScriptOutcome:
        while True:
            message = self._receive(child, context)
            kind = message.get("type")
            if kind == "started":
                # Compiling, starting node and loading the module were the startup phase.
                phases.enter_context(context.phase("act"))
            elif kind == "log":
                level = str(message.get("level", "info"))
                text = f"[{level}] {message.get('message', '')}"
                fields = message.get("fields")
                if fields:
                    text += f" {json.dumps(fields, ensure_ascii=False)}"
                with self._lock:
                    self.logs.append(text)
                logger.info("[%s] %s", self.name, text)
            elif kind == "call":
                self._nested(child, message, call)
            elif kind == "result":
                return self._result(message)
            elif kind == "unrunnable":
                where = self._where(message.get("stack"))
                raise ToolError(
                    f"scripted tool '{self.name}' could not run: {message.get('error')}{where}"
                )

    def _nested(
        self, child: subprocess.Popen[bytes], message: dict[str, Any], call: DispatchCall
    ) -> None:
        tool = str(message.get("tool"))
        args = message.get("args")
        index = self._calls
        self._calls += 1
        if not isinstance(args, dict):
            args = {}
        result = call(tool, args, index)
        if result.status == "cancelled":
            raise Cancelled
        if result.status == "failed" and result.error_kind == "fatal":
            raise FatalToolError(f"{result.label} failed: {result.error}")
        reply: dict[str, Any] = {"type": "reply", "id": message.get("id")}
        if result.status == "passed":
            reply.update(ok=True, text=result.detail or "")
            value = structured_value(result.detail)
            if value is not None:
                reply["structured"] = value
        else:
            reply.update(
                ok=False, error=result.error or "failed", kind=result.error_kind, label=result.label
            )
        self._send(child, reply)

    def _result(self, message: dict[str, Any]) -> ScriptOutcome:
        if not message.get("ok"):
            error = str(message.get("error") or "failed")
            text = f"{self.name} threw {error}{self._where(message.get('stack'))}"
            kind = message.get("kind")
            if kind in _KINDS:
                # A failed call (or a helper replay lacks) that the tool let through keeps its
                # message and its kind: a runIf condition must not read "could not run" as false.
                raise _KINDS[kind](error)
            raise ExpectedFailure(text)
        delta = message.get("memory") or {}
        sets = {str(k): str(v) for k, v in (delta.get("sets") or {}).items()}
        deletions = tuple(str(k) for k in delta.get("deletions") or ())
        text = str(message.get("text") or "")
        value = message.get("structured")
        detail = Structured(text, value) if value is not None else text
        return ScriptOutcome(detail, sets, deletions)

    def _receive(self, child: subprocess.Popen[bytes], context: ExecutionContext) -> dict[str, Any]:
        """The child's next message; the run's cancellation and the timeout are checked."""
        assert child.stdout is not None
        fd = child.stdout.fileno()
        deadline = time.monotonic() + self.host.timeout
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                newline = self._buffer.find(b"\n")
                if newline >= 0:
                    line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
                    try:
                        parsed = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(parsed, dict):
                        return parsed
                    continue
                context.check_cancelled()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ToolError(
                        f"scripted tool '{self.name}' could not run: it did not answer within "
                        f"{self.host.timeout:g} s, so it was stopped{self._tail()}"
                    )
                if not selector.select(min(left, 0.1)):
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    code = child.wait()
                    context.check_cancelled()
                    raise ToolError(
                        f"scripted tool '{self.name}' could not run: node exited "
                        f"({_exit(code)}) before it returned{self._tail()}"
                    )
                self._buffer += chunk

    def _tail(self) -> str:
        time.sleep(0.05)  # let the stderr reader catch the last lines
        with self._lock:
            lines = [line for line in self._stderr if line.strip()][-5:]
        return (": " + " | ".join(lines)) if lines else ""

    def _where(self, stack: object) -> str:
        """`` (at trailmaps/x/tools/y.ts:3:9)``: the first frame of the stack in the workspace."""
        if not isinstance(stack, str):
            return ""
        for line in stack.splitlines()[1:]:
            match = _FRAME.search(line.strip())
            if match is None:
                continue
            path = Path(match["file"])
            if "node_modules" in path.parts or not path.is_relative_to(self.host.root):
                continue
            return f" (at {self.host._rel(path)}:{match['line']}:{match['col']})"
        return ""


def _exit(code: int) -> str:
    return f"killed by signal {-code}" if code < 0 else f"exit {code}"
