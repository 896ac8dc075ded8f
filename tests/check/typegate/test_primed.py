"""The primed compiler (`typegate/primed.py`): TypeScript's language server started before the
run. A check of a few edited trails gets from it the findings a new compiler process gives, and
whatever it cannot prove (a module too deep, a server that ends, lies or is the wrong compiler)
is compiled by such a process: the report never changes, only its time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.check.typegate.test_proof import TRAIL
from tests.check.typegate.test_warm import fake_compiler
from tests.conftest import write_tree
from trailblaze.check.run import last_stats, run_check
from trailblaze.check.typegate.primed import LOAD_WAIT, MAX_DEPTH, PrimedCompiler, prime
from trailblaze.options import CheckOptions
from trailblaze.report.record import Report
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import find_workspace

pytestmark = pytest.mark.usefixtures("tsc")

SELECT = """\
config: {{target: app}}
trail:
  - step: pick
    recording:
      android:
        - tapOnElementBySelector:
            nodeSelector:
              androidAccessibility: {{labeledByTextRegex: {text}, inputType: {index}}}
"""
TRAILS = {
    # path: (as first checked, as edited): each edit makes or changes a type error.
    "trailmaps/app/trails/top.trail.yaml": (TRAIL.format(x=1), TRAIL.format(x='"one"')),
    "trailmaps/app/trails/a/mid.trail.yaml": (
        TRAIL.format(x='"one"'),
        TRAIL.format(x="[1, 2]"),
    ),
    "trailmaps/app/trails/a/b/c/d/deep.trail.yaml": (
        SELECT.format(text="Save", index=0),
        SELECT.format(text="Save", index='"first"'),
    ),
    "trailmaps/app/trails/a/b/fixed.trail.yaml": (
        SELECT.format(text="Save", index="{kind: 1}"),
        SELECT.format(text="Save", index=1),
    ),
}
OPTIONS = CheckOptions(tests=False)


def first(root: Path) -> None:
    write_tree(root, {path: texts[0] for path, texts in TRAILS.items()})
    run_check(find_workspace(root, explicit=True), OPTIONS)


def edit(root: Path, paths: list[str]) -> None:
    write_tree(root, {path: TRAILS[path][1] for path in paths})


def primed_check(root: Path) -> tuple[Report, PrimedCompiler | None]:
    """The check a command runs after a miss: the primed compiler started, then the pipeline."""
    primed = prime(root / ".trailblaze", OPTIONS)
    try:
        report = run_check(find_workspace(root, explicit=True), OPTIONS, primed=primed)
    finally:
        if primed is not None:
            primed.close()
    if primed is not None:
        assert primed.join(10), "the primed compiler's thread did not end"
    return report, primed


def cold(root: Path, elsewhere: Path) -> Report:
    """The same files checked from nothing, in another directory."""
    shutil.copytree(root, elsewhere, ignore=shutil.ignore_patterns(".trailblaze"))
    return run_check(find_workspace(elsewhere, explicit=True), OPTIONS)


def seen(report: Report) -> list[tuple[str, int, int, str | None, str, str]]:
    return sorted((f.path, f.line, f.column, f.code, f.kind, f.message) for f in report.findings)


def statuses(report: Report) -> list[tuple[str, str, str | None]]:
    return sorted((t.path, t.status, t.reason) for t in report.trails)


def test_edited_trails_at_any_depth_get_a_new_compiler_s_findings(
    compact_ws: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    first(compact_ws)
    edit(compact_ws, list(TRAILS))
    report, primed = primed_check(compact_ws)
    assert primed is not None
    stats = last_stats(compact_ws / ".trailblaze")
    assert stats["narrow"] == len(TRAILS)  # the edited trails only
    assert stats["primed_compiles"] == 1, primed.declined
    assert primed.checked == len(TRAILS)
    expected = cold(compact_ws, tmp_path_factory.mktemp("cold") / "ws")
    assert seen(report) == seen(expected)
    assert statuses(report) == statuses(expected)
    # The test sees something: each edit made or changed a type error, one fixed its own.
    type_errors = {f.path for f in report.findings if (f.code or "").startswith("TS")}
    assert type_errors == set(TRAILS) - {"trailmaps/app/trails/a/b/fixed.trail.yaml"}
    # Its server ended with its thread.
    assert primed.pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(primed.pid, 0)


def test_its_verdicts_are_recorded_for_the_next_runs(compact_ws: Path) -> None:
    first(compact_ws)
    top = "trailmaps/app/trails/top.trail.yaml"
    edit(compact_ws, [top])
    before, _ = primed_check(compact_ws)
    assert last_stats(compact_ws / ".trailblaze")["reads_covered"] is True
    # The next edit is narrow again: the primed run left a record a narrow run can build on.
    mid = "trailmaps/app/trails/a/mid.trail.yaml"
    edit(compact_ws, [mid])
    after, primed = primed_check(compact_ws)
    assert primed is not None
    assert primed.checked == 1
    assert last_stats(compact_ws / ".trailblaze")["narrow"] == 1
    assert [f for f in after.findings if f.path == top] == [
        f for f in before.findings if f.path == top
    ]


def test_a_module_deeper_than_its_placeholders_goes_to_a_new_compiler(
    compact_ws: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # trails/trailmaps/app/trails/ and these directories: one deeper than the placeholders.
    deep = "trailmaps/app/trails/" + "d/" * (MAX_DEPTH - 3) + "deepest.trail.yaml"
    write_tree(compact_ws, {deep: TRAIL.format(x=1)})
    first(compact_ws)
    write_tree(compact_ws, {deep: TRAIL.format(x='"one"')})
    report, primed = primed_check(compact_ws)
    assert primed is not None
    assert primed.declined == f"{deep}: its module is {MAX_DEPTH + 1} directories deep"
    assert last_stats(compact_ws / ".trailblaze")["primed_compiles"] == 0
    expected = cold(compact_ws, tmp_path_factory.mktemp("cold") / "ws")
    assert seen(report) == seen(expected)
    assert any(f.path == deep and f.code == "TS2322" for f in report.findings)


FAULTS = {
    "ends at once": ("exit 3", "did not start: the warm compiler ended (exit status 3)"),
    # Killed when the command closes it, not waited for until its deadline.
    "stalls": ("sleep 30", f"not loaded within {LOAD_WAIT:g} s"),
    "answers without checking": (
        'exec {python} "$SERVER"',
        "failed: the warm compiler did not report the canary's error: it did not check the module",
    ),
    "checks without the gate's options": (
        'exec {python} "$SERVER" canary-only',
        "failed: the warm compiler did not report the options canaries' errors: "
        "the module was not compiled with the type gate's options",
    ),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_server_that_cannot_be_trusted_leaves_the_batch_to_a_new_compiler(
    fault: str,
    compact_ws: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tsc: Compiler,
) -> None:
    body, reason = FAULTS[fault]
    bin_dir = tmp_path_factory.mktemp("bin")
    fake = fake_compiler(bin_dir, tsc, body.format(python=sys.executable))
    monkeypatch.setenv("TRAILBLAZE_TSC", str(fake))  # every compile of the test: the same key
    first(compact_ws)
    edit(compact_ws, list(TRAILS))
    report, primed = primed_check(compact_ws)
    assert primed is not None
    assert primed.declined is not None
    assert primed.declined.startswith(reason), primed.declined
    assert primed.checked == 0
    stats = last_stats(compact_ws / ".trailblaze")
    assert stats["primed_compiles"] == 0
    assert stats["narrow"] == len(TRAILS)
    expected = cold(compact_ws, tmp_path_factory.mktemp("cold") / "ws")
    assert seen(report) == seen(expected)
    assert statuses(report) == statuses(expected)
    assert all(t.reason is None for t in report.trails)  # every trail really type-checked


def test_no_compiler_is_primed_where_no_narrow_check_can_follow(compact_ws: Path) -> None:
    write_tree(compact_ws, {path: texts[0] for path, texts in TRAILS.items()})
    scratch = compact_ws / ".trailblaze"
    assert prime(scratch, OPTIONS) is None  # no complete check recorded yet
    run_check(find_workspace(compact_ws, explicit=True), OPTIONS)
    assert Layout(scratch).last_run.exists()
    assert prime(scratch, CheckOptions(tests=False, typecheck=False)) is None
    primed = prime(scratch, OPTIONS)
    assert primed is not None
    primed.close()
    assert primed.join(10)


def test_a_run_that_turns_out_full_stops_it_before_its_compiles(compact_ws: Path) -> None:
    first(compact_ws)
    # A trail added: no narrow run (the record's trail list changed), the full stages.
    write_tree(compact_ws, {"trailmaps/app/trails/added.trail.yaml": TRAIL.format(x='"one"')})
    report, primed = primed_check(compact_ws)
    assert primed is not None
    stats = last_stats(compact_ws / ".trailblaze")
    assert stats.get("narrow") is None
    # Closed when the full stages began: their one batch was given back at once, not queued
    # behind the stop (where it would have waited out the timeout).
    assert primed.declined == "closed"
    assert stats["primed_compiles"] == 0
    assert stats["compiler_runs"] == 1
    added = [f for f in report.findings if f.path == "trailmaps/app/trails/added.trail.yaml"]
    assert [f.code for f in added] == ["TS2322"]


def test_the_pipeline_registers_no_fork_hook_while_its_server_may_fork() -> None:
    """The primed server's thread starts its process while the main thread imports the
    pipeline. A fork hook registered in between runs its after-fork half without its
    before-fork half: "release unlocked lock" and a traceback on the user's terminal. Every
    hook the pipeline needs is registered once the primed module is imported."""
    script = """
import os, sys
import trailblaze.cli.main, trailblaze.cli.noop, trailblaze.doit_tasks.recorded
import trailblaze.check.typegate.primed
late = []
real = os.register_at_fork
def spy(**hooks):
    late.append(sorted(hooks))
    real(**hooks)
os.register_at_fork = spy
import trailblaze.check.run, trailblaze.report.console, trailblaze.runs.monorepo
from concurrent.futures import ThreadPoolExecutor, ProcessPoolExecutor
print(late)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_its_server_may_use_two_processors(compact_ws: Path) -> None:
    """The edited modules are checked while the main thread waits for them: one processor
    made each of the first checks after the load several times slower (`primed._load`)."""
    first(compact_ws)
    primed = prime(compact_ws / ".trailblaze", OPTIONS)
    assert primed is not None
    try:
        deadline = time.monotonic() + 30
        while primed.pid is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert primed.pid is not None
        environ = Path(f"/proc/{primed.pid}/environ").read_bytes().split(b"\0")
    finally:
        primed.close()
    assert primed.join(10)
    assert b"GOMAXPROCS=2" in environ
