"""Our own LSP client: `trailblaze lsp` in a child process, JSON-RPC on its pipes.

The benchmark's (`bench/lsp.py`) and the tests' (`tests/lsp/`).

Synchronous: a reader thread queues every message the server sends; `request` waits for its
answer, `wait_diagnostics` for the next `publishDiagnostics` of a document. Every wait has a
deadline, and a failure shows what the server wrote on stderr.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pygls.uris import from_fs_path

RECEIVED = "_received"
"""Added to each message the server sent: `time.perf_counter()` when it was read."""
WAIT = 60.0
"""Seconds a test waits for an answer (the first check of a workspace compiles its surfaces)."""


def uri_of(path: Path) -> str:
    uri: str | None = from_fs_path(str(path))
    assert uri is not None
    return uri


class Client:
    def __init__(
        self, cwd: Path, env: Mapping[str, str] | None = None, python: str = sys.executable
    ) -> None:
        self.process = subprocess.Popen(
            [python, "-m", "trailblaze", "lsp"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env if env is not None else os.environ),
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.notifications: list[dict[str, Any]] = []
        self.stderr: list[bytes] = []
        self._next = 0
        self._versions: dict[str, int] = {}
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # -- the wire ---------------------------------------------------------------------------

    def _read(self) -> None:
        out = self.process.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            message = json.loads(out.read(length))
            message[RECEIVED] = time.perf_counter()
            self.messages.put(message)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = WAIT) -> Any:
        self._next += 1
        ident = self._next
        self.send({"id": ident, "method": method, "params": params})
        message = self._until(lambda m: m.get("id") == ident and "method" not in m, timeout, method)
        if "error" in message:
            raise AssertionError(f"{method} failed: {message['error']}\n{self.log()}")
        return message.get("result")

    def _until(self, wanted: Any, timeout: float, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no answer to {what} in {timeout:.0f} s\n{self.log()}")
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})  # registrations and the like
                continue
            if "method" in message:
                self.notifications.append(message)
            if wanted(message):
                return message

    def log(self) -> str:
        return "server stderr:\n" + b"".join(self.stderr).decode("utf-8", "replace")[-4000:]

    # -- the protocol -------------------------------------------------------------------------

    def initialize(self, root: Path) -> Any:
        result = self.request(
            "initialize",
            {"processId": os.getpid(), "rootUri": uri_of(root), "capabilities": {}},
        )
        self.notify("initialized", {})
        return result

    def open(self, path: Path, text: str | None = None) -> str:
        uri = uri_of(path)
        self._versions[uri] = 1
        self.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "yaml",
                    "version": 1,
                    "text": path.read_text("utf-8") if text is None else text,
                }
            },
        )
        return uri

    def change(self, uri: str, text: str) -> None:
        self._versions[uri] += 1
        self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self._versions[uri]},
                "contentChanges": [{"text": text}],
            },
        )

    def wait_diagnostics(self, uri: str, timeout: float = WAIT) -> list[dict[str, Any]]:
        """The diagnostics of the next publish for `uri` (of its current version, when the
        server says which)."""
        diagnostics: list[dict[str, Any]] = self.wait_publish(uri, timeout)["params"]["diagnostics"]
        return diagnostics

    def wait_publish(self, uri: str, timeout: float = WAIT) -> dict[str, Any]:
        """The next `publishDiagnostics` message for `uri`, of its current version."""
        version = self._versions.get(uri)

        def wanted(message: dict[str, Any]) -> bool:
            params = message.get("params") or {}
            return (
                message.get("method") == "textDocument/publishDiagnostics"
                and params.get("uri") == uri
                and params.get("version") in (None, version)
            )

        return self._until(wanted, timeout, f"diagnostics of {uri}")

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except (AssertionError, OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
                if pipe is not None:
                    pipe.close()
