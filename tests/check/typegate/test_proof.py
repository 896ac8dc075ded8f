"""Proof of compile: broken compilers (fake ones put in place through TRAILBLAZE_TSC) never
give a pass, nothing of their runs is cached, and the findings come back with a healthy one."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from trailblaze.check.run import last_stats, run_check
from trailblaze.check.typegate.proof import Canary, Unproven, abs_path, prove
from trailblaze.options import CheckOptions
from trailblaze.report.record import Report
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolchain.proc import ProcResult
from trailblaze.workspace import find_workspace

pytestmark = pytest.mark.usefixtures("tsc")

GOOD = "trailmaps/app/trails/good.trail.yaml"
BAD = "trailmaps/app/trails/bad.trail.yaml"
TRAIL = """\
config: {{target: app}}
trail:
  - step: tap
    recording:
      android:
        - tapOnPoint: {{x: {x}, y: 2}}
"""

# The body of each fake compiler, after it answered `--version` like the real one. "$REAL" is
# the real compiler, "$@" the arguments the type gate passed. `$STAGE` is the tsconfig prefix of
# the runs the fake spoils ("tsconfig.surfaces." or "tsconfig.<pid>"): other runs are real.
FAKES = {
    "exits 0 silently": "exit 0",
    "killed mid-output": 'out=$("$REAL" "$@"); printf "%s\\n" "$out" | head -n 2; kill -9 $$',
    "cut short, exit 1": 'out=$("$REAL" "$@"); printf "%s\\n" "$out" | head -n 2; exit 1',
    "hangs past the timeout": "sleep 30; exit 0",
    "prints garbage": 'echo "Segmentation fault (core dumped)"; echo "%%%%"; exit 1',
    "replays an old output": 'cat "$OLD"; exit 1',
}


def fake_compiler(directory: Path, real: Compiler, body: str, stage: str, old: Path) -> Path:
    fake = directory / "tsc"
    fake.write_text(
        "#!/bin/sh\n"
        f"REAL={shlex.quote(str(real.path))}\nOLD={shlex.quote(str(old))}\n"
        'if [ "$1" = --version ]; then exec "$REAL" --version; fi\n'
        f'case "$2" in *{stage}*) ;; *) exec "$REAL" "$@";; esac\n'
        f"{body}\n"
    )
    fake.chmod(0o755)
    return fake


@pytest.fixture
def ws(compact_ws: Path) -> Path:
    write_tree(compact_ws, {GOOD: TRAIL.format(x=1), BAD: TRAIL.format(x='"one"')})
    return compact_ws


def check(root: Path, **options: Any) -> Report:
    return run_check(find_workspace(root, explicit=True), CheckOptions(**options))


def compiled(root: Path) -> list[str]:
    return sorted(last_stats(root / ".trailblaze")["files_compiled"])


@pytest.mark.parametrize(
    ("fault", "stage"),
    [pytest.param(f, "tsconfig.surfaces.", id=f"{f} (surfaces)") for f in FAKES]
    + [pytest.param(f, f"tsconfig.{os.getpid()}", id=f"{f} (trails)") for f in FAKES],
)
def test_a_broken_compiler_never_passes_a_trail_and_nothing_is_cached(
    *,
    ws: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tsc: Compiler,
    fault: str,
    stage: str,
) -> None:
    # What a canary of an earlier run looked like: a replay of it proves nothing now.
    old = tmp_path_factory.mktemp("old") / "output.txt"
    old.write_text(
        "canary.1.abcdef.ts(3,7): error TS2322: Type '\"a\"' is not assignable to type '\"b\"'.\n"
    )
    monkeypatch.setenv("TRAILBLAZE_TYPECHECK_TIMEOUT_MS", "1500")
    fake = fake_compiler(tmp_path_factory.mktemp("bin"), tsc, FAKES[fault], stage, old)
    monkeypatch.setenv("TRAILBLAZE_TSC", str(fake))

    report = check(ws)
    assert report.exit_code == 0  # infrastructure problems warn by default
    assert sorted((t.path, t.status, t.reason) for t in report.trails) == [
        (BAD, "parsed", "type check could not run"),
        (GOOD, "parsed", "type check could not run"),
    ]
    assert sorted(f.path for f in report.infra_findings) == [BAD, GOOD]
    assert all("type check could not run: " in f.message for f in report.infra_findings)
    assert [f for f in report.findings if f.kind == "type"] == []
    assert check(ws, require_typecheck=True).exit_code == 3

    monkeypatch.setenv("TRAILBLAZE_TSC", str(tsc.path))
    healthy = check(ws)
    assert compiled(ws) == [BAD, GOOD]  # nothing of the broken runs was cached
    assert [(f.path, f.code) for f in healthy.fatal_findings] == [(BAD, "TS2322")]
    assert healthy.exit_code == 1


def test_each_kind_of_broken_run_says_what_is_wrong(tmp_path: Path) -> None:
    root = abs_path(tmp_path)
    canary = Canary(root / "canary.ts", "aaaa", "bbbb")
    trail = root / "trails/t.ts"
    seen = "canary.ts(3,7): error TS2322: Type '\"bbbb\"' is not assignable to type '\"aaaa\"'.\n"
    listing = f"{trail}\n{canary.file}\n"

    def reason(returncode: int, stdout: str) -> str:
        with pytest.raises(Unproven) as info:
            prove(ProcResult(("tsc",), returncode, stdout, "", 0.1), [trail], canary, root)
        return str(info.value)

    assert reason(0, "") == (
        "tsc exited 0 (a compile that finds the canary's error exits 1 or 2) (no output)"
    )
    assert reason(-9, seen) == f"tsc was killed by signal 9: {seen.strip()}"
    assert reason(1, seen + "Killed\n" + listing) == (
        "the compiler printed a line that is neither a diagnostic nor a file name: 'Killed'"
    )
    assert reason(1, seen.replace("bbbb", "cccc") + listing) == (
        "the canary's error did not come back: the compiler did not check the program"
    )
    assert reason(1, seen + f"{trail}\n") == (
        "the compiler's output stops before the end of its file list: it did not finish"
    )
    assert reason(1, seen + f"{canary.file}\n") == (
        "1 file(s) of the batch are not in the compiler's file list (first: t.ts)"
    )
    assert reason(1, "error TS5023: Unknown compiler option '--x'.\n" + seen + listing) == (
        "the compiler reported an error about the run itself: "
        "error TS5023: Unknown compiler option '--x'."
    )
    finding = "trails/t.ts(5,3): error TS2322: Type 'string' is not assignable to type 'number'.\n"
    [diagnostic] = prove(
        ProcResult(("tsc",), 1, seen + finding + listing, "", 0.1), [trail], canary, root
    )
    assert (diagnostic.file, diagnostic.line, diagnostic.code) == (trail, 5, "TS2322")
