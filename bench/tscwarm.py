"""The floor of a warm compile: TypeScript 7's own language server on one generated trail module.

`bench.lsp` calls `measure` after its own run, on the same workspace: the file checks' type gate
directory (`<scratch>/files/typegate/`) then holds the edited trail's generated module and the
module surfaces it imports. For the length of the measure, a `tsconfig.json` with the type
gate's compiler options is put beside them (and removed after), `tsc --lsp --stdio` (the pinned
7.0.2) opens the module, and each edit is a `didChange` of the module's edited line followed by
a pull of its diagnostics (`textDocument/diagnostic`), timed from the change to the answer.

This is what the type gate would cost per edit with a warm compiler process: the server does
not use it (its compiles are proven `tsc` runs: canary and `--listFiles`), and the difference is
the next step toward 10 ms per edit (docs/editors.md).
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import time
from pathlib import Path
from typing import IO, Any

from trailblaze.check.typegate.settings import COMPILER_OPTIONS
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import find_compiler

_EDITED = re.compile(r'^(?P<indent>\s*)(?:text|txt): (?:"Bench edit \d+"|\[\d+\])(?P<tail>.*)$')


class _Wire:
    def __init__(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.next = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.stdin.flush()

    def request(self, method: str, params: Any) -> Any:
        self.next += 1
        ident = self.next
        self.send({"id": ident, "method": method, "params": params})
        while True:
            message = self._read()
            if message.get("id") == ident and "method" not in message:
                return message.get("result")
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})

    def _read(self) -> dict[str, Any]:
        length = 0
        while True:
            line = self.stdout.readline()
            if not line:
                raise EOFError("tsc --lsp closed its output")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(self.stdout.read(length))
        return message


def measure(workspace: Path, trail: str, edits: int) -> dict[str, Any] | None:
    """Median and p95 (ms) of `edits` warm pulls of the diagnostics of `trail`'s module, or None
    when there is no module to measure."""
    layout = Layout(workspace / ".trailblaze" / "files")
    module = layout.trail_file(trail)
    if not module.is_file():
        return None
    lines = module.read_text("utf-8").splitlines()
    at = next((i for i, line in enumerate(lines) if _EDITED.match(line)), None)
    if at is None:
        return None
    match = _EDITED.match(lines[at])
    assert match is not None
    tsconfig = layout.root / "tsconfig.json"
    tsconfig.write_text(
        json.dumps({"compilerOptions": COMPILER_OPTIONS, "include": ["trails/**/*.ts"]}), "utf-8"
    )
    compiler = find_compiler()
    process = subprocess.Popen(
        [*compiler.argv_prefix, "--lsp", "--stdio"],
        cwd=layout.root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    wire = _Wire(process.stdin, process.stdout)
    uri = module.as_uri()
    try:
        wire.request(
            "initialize",
            {"processId": None, "rootUri": layout.root.as_uri(), "capabilities": {}},
        )
        wire.send({"method": "initialized", "params": {}})
        text = "\n".join(lines) + "\n"
        wire.send(
            {
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "typescript",
                        "version": 1,
                        "text": text,
                    }
                },
            }
        )
        wire.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        samples = []
        errors = 0
        for index in range(edits):
            kind = index % 3
            value = (
                f'text: "Bench warm {index}"',
                f'txt: "Bench warm {index}"',
                f"text: [{index}]",
            )[kind]
            edited = [*lines[:at], f"{match['indent']}{value}{match['tail']}", *lines[at + 1 :]]
            started = time.perf_counter()
            wire.send(
                {
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": uri, "version": index + 2},
                        "contentChanges": [{"text": "\n".join(edited) + "\n"}],
                    },
                }
            )
            found = wire.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            samples.append(time.perf_counter() - started)
            errors += bool(found.get("items"))
    finally:
        process.kill()
        process.wait()
        process.stdin.close()
        process.stdout.close()
        tsconfig.unlink(missing_ok=True)
    ordered = sorted(samples)
    return {
        "n": len(samples),
        "median_ms": round(statistics.median(samples) * 1000, 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000, 2),
        "with_errors": errors,
    }
