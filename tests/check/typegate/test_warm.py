"""The warm compiler (`tsc --lsp` kept open, `typegate/warm.py`) behind a kept workspace phase:
the command line's findings, its stages and its compiler reused, and a compiler that lies,
stalls or dies never passes a trail (reported not type-checked, with the reason)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.check.typegate.test_proof import BAD, GOOD, TRAIL
from tests.conftest import write_tree
from trailblaze.check.phase import WorkspacePhase
from trailblaze.check.run import last_stats, run_check
from trailblaze.check.typegate.warm import GOGC, WarmCompiler
from trailblaze.options import CheckOptions
from trailblaze.report.record import Report
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import Workspace, find_workspace

pytestmark = pytest.mark.usefixtures("tsc")


# A language server that answers every request, and the diagnostics pull with nothing (it did
# not check anything), or, with an argument, with the word canary's error only (it repeats what
# it was sent without compiling it with the gate's options).
FAKE_SERVER = r"""
import json, re, sys
canary_only = len(sys.argv) > 1
text = ""
def read():
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(sys.stdin.buffer.read(length))
while True:
    message = read()
    params = message.get("params") or {}
    if message.get("method") == "textDocument/didOpen":
        text = params["textDocument"]["text"]
    elif message.get("method") == "textDocument/didChange":
        text = params["contentChanges"][-1]["text"]
    if "id" not in message:
        continue
    result = {}
    if message["method"] == "textDocument/diagnostic":
        items = []
        for number, line in enumerate(text.splitlines()):
            found = re.search(r': "(\w+)" = "(\w+)"', line)
            if canary_only and found:
                items.append({
                    "range": {"start": {"line": number, "character": 6},
                              "end": {"line": number, "character": 9}},
                    "severity": 1, "code": 2322,
                    "message": f"Type '\"{found[2]}\"' is not assignable to type '\"{found[1]}\"'.",
                })
        result = {"kind": "full", "items": items}
    body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()
"""

FAULTS = {
    "ends at once": ("exit 3", "the warm compiler ended"),
    "stalls": ("sleep 30", "the warm compiler gave no answer within 2 s"),
    "answers without checking": (
        f'exec {shlex.quote(sys.executable)} "$SERVER"',
        "the warm compiler did not report the canary's error",
    ),
    "checks without the gate's options": (
        f'exec {shlex.quote(sys.executable)} "$SERVER" canary-only',
        "the warm compiler did not report the options canaries' errors",
    ),
}


@pytest.fixture
def ws(compact_ws: Path) -> Path:
    write_tree(compact_ws, {GOOD: TRAIL.format(x=1), BAD: TRAIL.format(x='"one"')})
    return compact_ws


@pytest.fixture
def warm(ws: Path) -> Iterator[WarmCompiler]:
    compiler = WarmCompiler(Layout(ws / ".trailblaze"))
    yield compiler
    compiler.close()


def check(root: Path, phase: WorkspacePhase | None = None, **texts: str) -> Report:
    workspace: Workspace = find_workspace(root, explicit=True)
    given = {str(root / path): text.encode() for path, text in texts.items()}
    return run_check(workspace, CheckOptions(tests=False), texts=given, phase=phase)


def seen(report: Report) -> list[tuple[str, int, int, str | None, str]]:
    return sorted((f.path, f.line, f.column, f.code, f.message) for f in report.findings)


def fake_compiler(directory: Path, real: Compiler, body: str) -> Path:
    (directory / "server.py").write_text(FAKE_SERVER)
    fake = directory / "tsc"
    fake.write_text(
        "#!/bin/sh\n"
        f"REAL={shlex.quote(str(real.path))}\n"
        f"SERVER={shlex.quote(str(directory / 'server.py'))}\n"
        'if [ "$1" = --lsp ]; then\n'
        f"{body}\n"
        "fi\n"
        'exec "$REAL" "$@"\n'
    )
    fake.chmod(0o755)
    return fake


def test_the_warm_compiler_gives_the_command_lines_findings(ws: Path, warm: WarmCompiler) -> None:
    phase = WorkspacePhase(compile=warm)
    edits = [
        {},
        {BAD: TRAIL.format(x="[1]")},
        {GOOD: TRAIL.format(x='"two"').replace("tapOnPoint", "tapOnPointt")},
        {BAD: TRAIL.format(x=3)},
    ]
    for texts in edits:
        kept = check(ws, phase, **texts)
        assert seen(kept) == seen(check(ws, None, **texts)), texts
        assert kept.exit_code == check(ws, None, **texts).exit_code
    # The stages ran once; one compiler process answered every edit.
    assert phase.stages is not None
    assert warm.starts == 1
    assert [(f.path, f.code) for f in check(ws, phase).fatal_findings] == [(BAD, "TS2322")]
    # Its verdicts are not cached (it lists no files): the command line compiles them again.
    new = {BAD: TRAIL.format(x=5)}
    before = last_stats(ws / ".trailblaze")
    assert check(ws, phase, **new).stats["files_compiled"] == [BAD]
    # A run with a phase (an editor's buffers) leaves the state as the last command left it.
    assert last_stats(ws / ".trailblaze") == before
    check(ws, None, **new)
    assert last_stats(ws / ".trailblaze")["files_compiled"] == [BAD]


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_broken_warm_compiler_never_passes_a_trail(
    *,
    ws: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tsc: Compiler,
    fault: str,
) -> None:
    body, reason = FAULTS[fault]
    monkeypatch.setenv("TRAILBLAZE_TYPECHECK_TIMEOUT_MS", "2000")
    monkeypatch.setenv(
        "TRAILBLAZE_TSC", str(fake_compiler(tmp_path_factory.mktemp("bin"), tsc, body))
    )
    warm = WarmCompiler(Layout(ws / ".trailblaze"))
    try:
        report = check(ws, WorkspacePhase(compile=warm))
    finally:
        warm.close()
    assert sorted((t.path, t.status, t.reason) for t in report.trails) == [
        (BAD, "parsed", "type check could not run"),
        (GOOD, "parsed", "type check could not run"),
    ]
    assert sorted(f.path for f in report.infra_findings) == [BAD, GOOD]
    assert all(reason in f.message for f in report.infra_findings), report.infra_findings
    assert [f for f in report.findings if f.kind == "type"] == []


def test_a_warm_compiler_that_died_is_started_again(
    *,
    ws: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tsc: Compiler,
) -> None:
    bin_dir = tmp_path_factory.mktemp("bin")
    # It dies twice: once asked to be quiet, once again without (`WarmCompiler._start`).
    once, twice = (shlex.quote(str(bin_dir / name)) for name in ("died-once", "died-twice"))
    body = (
        f"if [ ! -e {once} ]; then touch {once}; exit 3; fi\n"
        f"if [ ! -e {twice} ]; then touch {twice}; exit 3; fi"
    )
    monkeypatch.setenv("TRAILBLAZE_TSC", str(fake_compiler(bin_dir, tsc, body)))
    warm = WarmCompiler(Layout(ws / ".trailblaze"))
    phase = WorkspacePhase(compile=warm)
    try:
        first = check(ws, phase)
        assert {t.reason for t in first.trails} == {"type check could not run"}
        again = check(ws, phase)
    finally:
        warm.close()
    assert warm.starts == 3
    assert [(f.path, f.code) for f in again.fatal_findings] == [(BAD, "TS2322")]


def test_a_call_from_another_thread_gets_a_compiler_that_lives_with_that_thread(
    ws: Path, warm: WarmCompiler
) -> None:
    """The compiler is killed when the thread that started it ends (`proc.spawn`): a call made
    on another thread starts its own, and still gets the command line's findings. (Each text
    is new: a verdict the command line cached would be taken without a compile.)"""
    phase = WorkspacePhase(compile=warm)

    def same_as_the_command_line(x: str) -> Report:
        texts = {BAD: TRAIL.format(x=x)}
        kept = check(ws, phase, **texts)
        assert seen(kept) == seen(check(ws, None, **texts))
        assert [f.code for f in kept.fatal_findings] == ["TS2322"]
        return kept

    same_as_the_command_line("[11]")
    assert warm.starts == 1
    with ThreadPoolExecutor(1) as other:
        other.submit(same_as_the_command_line, "[12]").result()
    assert warm.starts == 2
    # That thread has ended, and its compiler with it: the next call starts one again.
    same_as_the_command_line("[13]")
    assert warm.starts == 3
    same_as_the_command_line("[14]")
    assert warm.starts == 3


# A compiler that ends when asked to be quiet (`logVerbosity`, which TypeScript 7.0 takes) and
# is the real one otherwise: what another 7.x that refuses the option would do.
REFUSES_QUIET = r"""
import os, subprocess, sys
def message():
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        byte = sys.stdin.buffer.read(1)
        if not byte:
            sys.exit(0)
        head += byte
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length"))
    return head + sys.stdin.buffer.read(length)
first = message()
if b"logVerbosity" in first:
    sys.stderr.write("unknown option logVerbosity\n")
    sys.exit(4)
child = subprocess.Popen([sys.argv[1], "--lsp", "--stdio"], stdin=subprocess.PIPE)
child.stdin.write(first)
child.stdin.flush()
while chunk := os.read(0, 65536):
    child.stdin.write(chunk)
    child.stdin.flush()
"""


def test_a_compiler_that_refuses_the_quiet_option_is_started_without_it(
    *,
    ws: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tsc: Compiler,
) -> None:
    directory = tmp_path_factory.mktemp("bin")
    (directory / "proxy.py").write_text(REFUSES_QUIET)
    body = f'exec {shlex.quote(sys.executable)} {shlex.quote(str(directory / "proxy.py"))} "$REAL"'
    monkeypatch.setenv("TRAILBLAZE_TSC", str(fake_compiler(directory, tsc, body)))
    warm = WarmCompiler(Layout(ws / ".trailblaze"))
    try:
        texts = {BAD: TRAIL.format(x="[21]")}
        report = check(ws, WorkspacePhase(compile=warm), **texts)
        assert warm.starts == 2  # the quiet one ended; the next one answered
        assert seen(report) == seen(check(ws, None, **texts))
        assert [f.code for f in report.fatal_findings] == ["TS2322"]
    finally:
        warm.close()


def test_the_warm_compiler_collects_less_often_unless_the_environment_says(
    ws: Path, warm: WarmCompiler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each edit makes the compiler build a new checker: at Go's default collector target its
    collections took a seventh of its CPU per edit (`warm.GOGC`). A `GOGC` the user set is
    theirs."""
    phase = WorkspacePhase(compile=warm)

    def collector_target() -> str | None:
        server = warm._server
        assert server is not None
        environ = Path(f"/proc/{server.process.pid}/environ").read_bytes().split(b"\0")
        found = [v for v in environ if v.startswith(b"GOGC=")]
        return found[0].decode()[5:] if found else None

    monkeypatch.delenv("GOGC", raising=False)
    report = check(ws, phase, **{BAD: TRAIL.format(x="[31]")})
    assert [f.code for f in report.fatal_findings] == ["TS2322"]
    assert collector_target() == GOGC
    monkeypatch.setenv("GOGC", "150")
    warm.restart()
    report = check(ws, phase, **{BAD: TRAIL.format(x="[32]")})
    assert [f.code for f in report.fatal_findings] == ["TS2322"]
    assert collector_target() == "150"
