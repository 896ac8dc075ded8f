"""A warm compiler for the type gate: TypeScript 7's language server, kept open between runs.

A new `tsc` process per compile costs its start and the load of the program (the surfaces, our
SDK, the libraries) every time, some 100 ms; the same compiler kept open as a language server
(`tsc --lsp --stdio`) checks an edited module in a few. `WarmCompiler` is a `BatchCompile`
(`check.phase`) for a caller that checks again and again (the language server's session): each
job's generated module is opened in it (or changed, when it was open) and its diagnostics
pulled (`textDocument/diagnostic`).

The verdict stays proven, as the command line's is (`proof.py`), by what the same answer holds:

- the module as sent ends with three canary lines of our own: one assigns a string to a
  literal type made of two fresh random words (its error must come back, with both words, on
  its line: the answer is about this very text, and the checker checked it); one assigns
  `string | undefined` to `string` (an error under `strict` only) and one calls
  `Array.prototype.findLast` (an error with the gate's `lib: ES2022` only, not with the
  compiler's defaults): the module was compiled with the gate's options, in the project of the
  `tsconfig.json` written beside it, not in an inferred project;
- every other diagnostic is mapped as the command line maps it (`mapping.py`): an import that
  does not resolve is a diagnostic like any, so a call is never checked against `any` unseen,
  and a syntax error takes its module out as "generated code does not parse".

Anything else (no answer within the timeout, a compiler that ended, an answer without both
canaries) fails the batch with its reason: its trails are reported not type-checked, never
passed, and the compiler is started again for the next run. A warm compiler does not list the
files it read, so none of its verdicts is put in the result cache (`GateResult.unlisted`).

A compiler older than TypeScript 7 has no such server: its batches go to `compile_jobs`.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from trailblaze.check.typegate.compilation import compile_jobs
from trailblaze.check.typegate.jobs import GateResult, Job
from trailblaze.check.typegate.mapping import map_diagnostics
from trailblaze.check.typegate.mapping import show as _show
from trailblaze.check.typegate.preparation import Prepared
from trailblaze.check.typegate.proof import Diagnostic
from trailblaze.check.typegate.proof import abs_path as _abs
from trailblaze.check.typegate.settings import COMPILER_OPTIONS, timeout_seconds
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolchain.proc import ProcError, Spawned, spawn

WARM_TIMEOUT = 30.0
"""The longest a warm compile may take (less when the type gate's own timeout is shorter): the
editor waits for it. A compiler that takes longer is killed and started again."""
TSCONFIG = "tsconfig.json"
"""The project the warm compiler finds for the generated modules (beside them)."""
_STDERR_KEPT = 4000
_ERROR = 1  # LSP DiagnosticSeverity.Error: what tsc reports (the rest are hints)
GOGC = "400"
"""The Go collector's target for the warm compiler (unless the environment sets `GOGC`): each
edit builds a new checker, and at Go's default (100) the collections took about a seventh of
the compiler's CPU per edit and doubled its 95th percentile; its heap stays near 100 MB
(measured at 10,000 trails: 52 MB at the default)."""


class WarmError(Exception):
    """The warm compiler did not give a proven answer: why."""


def is_native(compiler: Compiler) -> bool:
    """TypeScript 7 or later: the compiler that has `--lsp`."""
    major = compiler.version.split(".", 1)[0]
    return major.isdigit() and int(major) >= 7


class _Server:
    """One `tsc --lsp --stdio` process and its JSON-RPC stream."""

    def __init__(self, compiler: Compiler, root: Path) -> None:
        self.compiler = compiler
        self.root = root
        self.thread = threading.current_thread()
        """The thread it lives as long as (`proc.spawn`)."""
        env = None if "GOGC" in os.environ else {**os.environ, "GOGC": GOGC}
        self.process: Spawned = spawn(
            [*compiler.argv_prefix, "--lsp", "--stdio"], cwd=root, env=env
        )
        self._buffer = b""
        self._next = 0
        self.versions: dict[str, int] = {}
        self._stderr = bytearray()
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self) -> None:
        while True:
            try:
                chunk = os.read(self.process.stderr.fileno(), 65536)
            except OSError:
                return
            if not chunk:
                return
            self._stderr += chunk
            del self._stderr[: max(0, len(self._stderr) - _STDERR_KEPT)]

    def ended(self, what: str) -> str:
        """Why it stopped answering: its exit status when it ended, and its last words."""
        status = self.process.wait(1.0)
        if status is None:
            return f"the warm compiler {what}{self.said()}"
        return f"the warm compiler ended (exit status {status}){self.said()}"

    def said(self) -> str:
        text = self._stderr.decode("utf-8", "replace").strip()
        return f": {text[-500:]}" if text else ""

    def send(self, message: dict[str, Any]) -> None:
        body = orjson.dumps({"jsonrpc": "2.0", **message})
        try:
            self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        except OSError as exc:
            raise WarmError(self.ended(f"stopped reading ({exc})")) from exc

    def request(self, method: str, params: Any, deadline: float) -> Any:
        self._next += 1
        ident = self._next
        self.send({"id": ident, "method": method, "params": params})
        while True:
            message = self._read(deadline)
            if "method" in message:
                if "id" in message:  # a request of the server's: answered, with nothing
                    items = (message.get("params") or {}).get("items")
                    answer = [None] * len(items) if isinstance(items, list) else None
                    self.send({"id": message["id"], "result": answer})
                continue
            if message.get("id") != ident:
                continue
            if "error" in message:
                raise WarmError(f"the warm compiler refused {method}: {message['error']}")
            return message.get("result")

    def _read(self, deadline: float) -> dict[str, Any]:
        while True:
            head, sep, rest = self._buffer.partition(b"\r\n\r\n")
            if sep:
                length = None
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length" and value.strip().isdigit():
                        length = int(value)
                if length is None:
                    raise WarmError("the warm compiler sent a message without its length")
                if len(rest) >= length:
                    self._buffer = rest[length:]
                    try:
                        message = orjson.loads(rest[:length])
                    except ValueError as exc:
                        raise WarmError(f"the warm compiler sent invalid JSON ({exc})") from exc
                    if not isinstance(message, dict):
                        raise WarmError("the warm compiler sent a message that is not an object")
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            fd = self.process.stdout.fileno()
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise TimeoutError
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise WarmError(self.ended("closed its output"))
            self._buffer += chunk

    def close(self) -> None:
        self.process.kill()
        self.process.close_pipes()


class WarmCompiler:
    """The type gate's compiler for one layout, kept open between runs (see the module
    docstring). A call compiles on the calling thread, one call at a time: the compiler dies
    with the thread that started it (`proc.spawn`), so it is started again when a call comes
    from another thread (the language server makes every call from its one check thread, which
    lives as long as the server). No hop to a thread of its own: on a busy machine each wake of
    another thread may wait for a core, on every edit."""

    def __init__(self, layout: Layout, *, timeout: float | None = None) -> None:
        self.layout = layout
        self.timeout = min(timeout if timeout is not None else timeout_seconds(), WARM_TIMEOUT)
        self.starts = 0
        """How many compiler processes it started (one, unless one died or was stopped)."""
        self._server: _Server | None = None
        self._lock = threading.Lock()
        self._quiet = True
        """Whether the compiler is asked not to log (until one refuses it)."""

    def __call__(self, jobs: list[Job], prepared: Prepared) -> GateResult:
        with self._lock:
            return self._compile(jobs, prepared.compiler)

    def restart(self) -> None:
        """Stop the compiler (its inputs changed on disk): the next call starts another."""
        with self._lock:
            self._stop()

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    def _compile(self, jobs: list[Job], compiler: Compiler) -> GateResult:
        if not is_native(compiler):
            return compile_jobs(jobs, compiler, self.layout, timeout=self.timeout)
        result = GateResult(unlisted=True)
        result.compiler_runs += 1
        result.files_compiled.extend(job.path for job in jobs)
        deadline = time.monotonic() + self.timeout
        checked: list[Job] = []
        diagnostics: list[Diagnostic] = []
        for job in jobs:
            try:
                found = self._check(job, compiler, deadline)
            except TimeoutError:
                self._stop()
                result.fail(
                    [j for j in jobs if j not in checked],
                    f"the warm compiler gave no answer within {self.timeout:g} s",
                )
                break
            except (WarmError, ProcError, OSError) as exc:
                self._stop()
                result.fail([j for j in jobs if j not in checked], str(exc))
                break
            syntax = [d for d in found if d.code.startswith("TS1")]
            if syntax:
                result.fail(
                    [job], f"generated code does not parse: {_show(syntax[0], self.layout)}"
                )
                checked.append(job)
                continue
            checked.append(job)
            diagnostics.extend(found)
        proven = [job for job in checked if job.path not in result.failed]
        if proven:
            map_diagnostics(proven, diagnostics, self.layout, result)
        return result

    def _server_for(self, compiler: Compiler) -> _Server:
        server = self._server
        if server is not None and (
            server.compiler != compiler
            or server.thread is not threading.current_thread()
            or server.process.poll() is not None
        ):
            self._stop()
            server = None
        if server is None:
            root = self.layout.root
            root.mkdir(parents=True, exist_ok=True)
            config = {"compilerOptions": COMPILER_OPTIONS, "include": ["trails/**/*.ts"]}
            _write_if_changed(root / TSCONFIG, json.dumps(config, indent=1) + "\n")
            try:
                server = self._start(compiler, root, quiet=self._quiet)
            except (WarmError, ProcError, OSError):
                if not self._quiet:
                    raise
                # A compiler that refuses the quiet option (another 7.x) ends or says so at
                # once: started again without it. (One that stalls would stall without it.)
                self._stop()
                self._quiet = False
                server = self._start(compiler, root, quiet=False)
        return server

    def _start(self, compiler: Compiler, root: Path, *, quiet: bool) -> _Server:
        server = _Server(compiler, root)
        self._server = server
        self.starts += 1
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "capabilities": {"textDocument": {"diagnostic": {}}},
        }
        if quiet:
            # TypeScript 7.0 logs half a dozen messages per edit (snapshots, timings): built,
            # sent and parsed for nothing. Verbosity 0 turns them off.
            params["initializationOptions"] = {"logVerbosity": 0}
        server.request("initialize", params, time.monotonic() + self.timeout)
        server.send({"method": "initialized", "params": {}})
        return server

    def _check(self, job: Job, compiler: Compiler, deadline: float) -> list[Diagnostic]:
        """The job's module checked in the warm compiler: its diagnostics, once proven."""
        server = self._server_for(compiler)
        file = _abs(job.file)
        text = file.read_text("utf-8")
        if text and not text.endswith("\n"):
            text += "\n"
        canary_line = text.count("\n") + 1
        strict_line = canary_line + 1
        lib_line = canary_line + 2
        expected, given = secrets.token_hex(8), secrets.token_hex(8)
        sent = (
            f'const __trailblaze_canary_{expected}: "{expected}" = "{given}";\n'
            f"const __trailblaze_strict_{expected}: string = "
            "undefined as string | undefined;\n"
            f"const __trailblaze_lib_{expected} = [0].findLast(() => true);\n"
        )
        uri = file.as_uri()
        version = server.versions.get(uri)
        if version is None:
            server.versions[uri] = 1
            server.send(
                {
                    "method": "textDocument/didOpen",
                    "params": {
                        "textDocument": {
                            "uri": uri,
                            "languageId": "typescript",
                            "version": 1,
                            "text": text + sent,
                        }
                    },
                }
            )
        else:
            server.versions[uri] = version + 1
            server.send(
                {
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": uri, "version": version + 1},
                        "contentChanges": [{"text": text + sent}],
                    },
                }
            )
        report = server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, deadline)
        items = report.get("items") if isinstance(report, dict) else None
        if not isinstance(items, list):
            raise WarmError("the warm compiler's answer holds no diagnostics list")
        found = [_diagnostic(file, item) for item in items if _is_error(item)]
        if any(d.code.startswith("TS1") and d.line < canary_line for d in found):
            # A syntax error may hide the semantic ones, the canaries' too: the caller fails
            # the module on it, as the command line does.
            return [d for d in found if d.line < canary_line]
        canary = [d for d in found if d.line == canary_line]
        strict = [d for d in found if d.line == strict_line]
        if not any(
            d.code == "TS2322" and expected in d.message and given in d.message for d in canary
        ):
            raise WarmError(
                "the warm compiler did not report the canary's error: it did not check the module"
            )
        lib = [d for d in found if d.line == lib_line]
        if not any(d.code == "TS2322" for d in strict) or not any(d.code == "TS2550" for d in lib):
            raise WarmError(
                "the warm compiler did not report the options canaries' errors: "
                "the module was not compiled with the type gate's options"
            )
        return [d for d in found if d.line < canary_line]


def _is_error(item: Any) -> bool:
    return isinstance(item, dict) and item.get("severity", _ERROR) == _ERROR


def _diagnostic(file: Path, item: dict[str, Any]) -> Diagnostic:
    """An LSP diagnostic as `tsc --pretty false` prints it (`proof.parse_output`): 1-based line
    and column (UTF-16 units, as both count), `TS` and the code, the message's lines after the
    first folded in, each stripped."""
    try:
        start = item["range"]["start"]
        line, character = int(start["line"]), int(start["character"])
        # The compiler's own code (a number here, `TS` and the number in its printed output).
        number = int(item["code"])
        lines = str(item["message"]).split("\n")
    except (KeyError, TypeError, ValueError) as exc:
        raise WarmError(f"the warm compiler sent a diagnostic without {exc}") from exc
    message = lines[0].strip()
    for more in lines[1:]:
        if more.strip():
            message = f"{message} {more.strip()}"
    tsc_code = "TS" + str(number)
    return Diagnostic(
        file=file, line=line + 1, column=character + 1, code=tsc_code, message=message
    )


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text("utf-8") == text:
            return
    except OSError:
        pass
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(text, "utf-8")
    os.replace(partial, path)
