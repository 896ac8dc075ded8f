"""TypeScript 7's language server (`tsc --lsp --stdio`) as the type gate talks to it.

`TsServer` is one such process and its JSON-RPC stream; `start_server` starts one and
initializes it; `check_text` checks one module's text in it and proves the answer (see
`warm.py` for the proof: three canary lines of our own must come back with their errors, so
the answer is about this very text, compiled with the gate's options). `warm.py` keeps one
server open between an editor's edits; `primed.py` starts one before a command knows it needs
it. This module imports nothing of the pipeline, so that a command can start the server while
the pipeline imports.
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

from trailblaze.check.typegate.proof import Diagnostic
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolchain.proc import Spawned, spawn

_STDERR_KEPT = 4000
_ERROR = 1  # LSP DiagnosticSeverity.Error: what tsc reports (the rest are hints)


class WarmError(Exception):
    """The warm compiler did not give a proven answer: why."""


class TsServer:
    """One `tsc --lsp --stdio` process and its JSON-RPC stream."""

    def __init__(
        self, compiler: Compiler, root: Path, *, cores: int | None = None, gogc: str | None = None
    ) -> None:
        self.compiler = compiler
        self.root = root
        self.thread = threading.current_thread()
        """The thread it lives as long as (`proc.spawn`)."""
        # `cores`: how many threads of its own may run at once (the Go runtime's GOMAXPROCS);
        # `gogc`: its collector's target (GOGC), unless the environment sets one.
        runtime = {"GOMAXPROCS": str(cores)} if cores is not None else {}
        if gogc is not None and "GOGC" not in os.environ:
            runtime["GOGC"] = gogc
        env = {**os.environ, **runtime} if runtime else None
        argv = [*compiler.argv_prefix, "--lsp", "--stdio"]
        self.process: Spawned = spawn(argv, cwd=root, env=env)
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
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
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
                        message = json.loads(rest[:length])
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

    def show(self, uri: str, text: str) -> None:
        """The document `uri` holds `text` now: opened, or changed when it was open."""
        version = self.versions.get(uri)
        if version is None:
            self.versions[uri] = 1
            document = {"uri": uri, "languageId": "typescript", "version": 1, "text": text}
            self.send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
        else:
            self.versions[uri] = version + 1
            changed = {
                "textDocument": {"uri": uri, "version": version + 1},
                "contentChanges": [{"text": text}],
            }
            self.send({"method": "textDocument/didChange", "params": changed})

    def close(self) -> None:
        self.process.kill()
        self.process.close_pipes()


def start_server(
    compiler: Compiler,
    root: Path,
    *,
    quiet: bool,
    deadline: float,
    cores: int | None = None,
    gogc: str | None = None,
) -> TsServer:
    """A server started in `root` and initialized (the caller closes it)."""
    server = TsServer(compiler, root, cores=cores, gogc=gogc)
    try:
        initialize(server, quiet=quiet, deadline=deadline)
    except BaseException:
        server.close()
        raise
    return server


def initialize(server: TsServer, *, quiet: bool, deadline: float) -> None:
    """The LSP handshake. `quiet`: asked not to log (TypeScript 7.0 logs half a dozen messages
    per edit: snapshots, timings, built, sent and parsed for nothing; verbosity 0 turns them
    off)."""
    params: dict[str, Any] = {
        "processId": os.getpid(),
        "rootUri": server.root.as_uri(),
        "capabilities": {"textDocument": {"diagnostic": {}}},
    }
    if quiet:
        params["initializationOptions"] = {"logVerbosity": 0}
    server.request("initialize", params, deadline)
    server.send({"method": "initialized", "params": {}})


def check_text(
    server: TsServer, uri: str, file: Path, text: str, deadline: float
) -> list[Diagnostic]:
    """`text` (a generated module) checked as the document `uri`: its diagnostics, once proven,
    given as `file`'s. The document is opened, or changed when it was open."""
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
    server.show(uri, text + sent)
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
    if not any(d.code == "TS2322" and expected in d.message and given in d.message for d in canary):
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
