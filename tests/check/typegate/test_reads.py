"""Every file the compiler reads is an input of every key that can repeat a verdict.

A scripted tool's input type imported from a file no key named (`tools/build/`, a hidden
directory, a package in the workspace's `node_modules` or in one above it, a declaration file
outside the workspace) used to leave every key unchanged when it was edited: the command line's
no-op, doit's up-to-date check and a fresh clone's run entry repeated the old pass. Each kind of
file is edited here so that a trail no longer type-checks, and the finding must come back
through every entry point a user has; then the fix must show the pass.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import trailblaze.check.run
from bench.nginx import NginxCache
from tests.conftest import MINIMAL_MANIFEST, run_python, write_tree
from trailblaze.check.run import last_stats
from trailblaze.cli.main import main
from trailblaze.state.reads import recorded_reads
from trailblaze.state.scratch import Layout
from trailblaze.state.store import Store
from trailblaze.toolchain.compilers import Compiler

TRAIL = "trailmaps/app/trails/login.trail.yaml"
RECORDING = """\
config: {target: app}
trail:
  - step: Log in
    recording:
      android:
        - app_login: {user: ann, remember: true}
"""
GOOD = "export interface LoginInput { user: string; remember?: boolean }\n"
BAD = "export interface LoginInput { user: string; remember?: string }\n"
"""The type narrowed: the recorded `remember: true` is a finding at its line and column."""
FINDING = ("TS2322", 6, 44)


@dataclass(frozen=True)
class Imported:
    """One kind of file a scripted tool takes its input type from."""

    name: str
    file: Callable[[Path], Path]
    """The workspace -> the imported file (beside it or outside it)."""
    specifier: Callable[[Path], str]
    """The workspace -> what `app_login.ts` imports the type from."""
    package: bool = False
    """The file is a package's `index.d.ts`: a `package.json` goes beside it."""
    tool_file: bool = False
    """The file is a tool file of the trailmap (an input of every key), not a read."""


KINDS = [
    Imported(
        "tools-build",
        lambda ws: ws / "trailmaps/app/tools/build/types.ts",
        lambda ws: "./build/types",
    ),
    Imported(
        "hidden-dir",
        lambda ws: ws / "trailmaps/app/tools/.gen/types.ts",
        lambda ws: "./.gen/types",
        tool_file=True,
    ),
    Imported(
        # A hidden directory the tool walk skips (as it skips `.git` and `.gradle`).
        "skipped-hidden-dir",
        lambda ws: ws / "trailmaps/app/tools/.claude/types.ts",
        lambda ws: "./.claude/types",
    ),
    Imported(
        # A hidden directory at the workspace's root, outside every trailmap: a declaration
        # file (a `.ts` source outside `tools/` is outside the emit's rootDir, TS6059), by its
        # absolute path (the emitted declarations keep a relative specifier as written, and
        # they lie elsewhere: the type would not resolve, reported as `unresolved-input`).
        "hidden-dir-outside-tools",
        lambda ws: ws / ".shared/types.d.ts",
        lambda ws: str(ws / ".shared/types"),
    ),
    Imported(
        # A file someone put in our scratch directory (hidden too), beside what we write there.
        "in-the-scratch-dir",
        lambda ws: ws / ".trailblaze/mine/types.d.ts",
        lambda ws: str(ws / ".trailblaze/mine/types"),
    ),
    Imported(
        "workspace-package",
        lambda ws: ws / "node_modules/@app/types/index.d.ts",
        lambda ws: "@app/types",
        package=True,
    ),
    Imported(
        "package-above-workspace",
        lambda ws: ws.parent / "node_modules/@org/types/index.d.ts",
        lambda ws: "@org/types",
        package=True,
    ),
    Imported(
        "file-outside-workspace",
        lambda ws: ws.parent / "shared-types/types.d.ts",
        lambda ws: str(ws.parent / "shared-types/types"),
    ),
]


def backdate(*roots: Path) -> None:
    """Every file under `roots` as a checkout made a while ago leaves it: a file changed just
    before a compile began cannot be told from one changed while it ran, and a run that read
    one caches nothing (`test_a_file_read_for_the_first_time_right_after_an_edit_...`)."""
    then = time.time() - 60
    for root in roots:
        for path in [root, *root.rglob("*")]:
            os.utime(path, (then, then), follow_symlinks=False)


def workspace(root: Path, kind: Imported, types: str = GOOD) -> Path:
    """A compact workspace whose one scripted tool takes its input type from `kind`'s file."""
    write_tree(
        root,
        {
            "trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app"),
            "trailmaps/app/tools/app_login.ts": (
                'import { trailblaze } from "@trailblaze/scripting";\n'
                f'import type {{ LoginInput }} from "{kind.specifier(root)}";\n'
                "export const app_login = trailblaze.tool<LoginInput>(\n"
                '  { description: "Log in" }, async (input) => input.user,\n'
                ");\n"
            ),
            TRAIL: RECORDING,
        },
    )
    edit(root, kind, types)
    if kind.package:
        package = kind.file(root).parent
        manifest = {"name": f"{package.parent.name}/{package.name}", "types": "index.d.ts"}
        write_tree(package, {"package.json": json.dumps(manifest)})
    backdate(root, kind.file(root).parent)
    return root


def edit(ws: Path, kind: Imported, types: str) -> None:
    path = kind.file(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(types, encoding="utf-8")


def cli(ws: Path, *extra: str) -> dict[str, Any]:
    """`trailblaze check --format json` of the workspace, in this process: the report."""
    out = ws.with_name(f"{ws.name}.json")
    code = main(["check", "--workspace", str(ws), "--format", "json", "--output", str(out), *extra])
    report: dict[str, Any] = json.loads(out.read_text("utf-8"))
    assert report["exit_code"] == code
    return report


Verdict = tuple[int, list[tuple[str, int, int]], list[str]]
PASS: Verdict = (0, [], ["type-checked"])
FAIL: Verdict = (1, [FINDING], ["type-checked"])


def verdict(report: dict[str, Any]) -> Verdict:
    """The exit code, the findings (code, line, column) and every trail's status."""
    return (
        report["exit_code"],
        [(f["code"], f["line"], f["column"]) for f in report["findings"]],
        [t["status"] for t in report["trails"]],
    )


class PipelineRuns:
    """Counts the check pipeline's runs (a no-op runs none)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = trailblaze.check.run.run_check

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(trailblaze.check.run, "run_check", counted)


def recorded(ws: Path) -> set[str]:
    """The files the last run recorded as read beyond the inputs."""
    with Store.open(Layout(ws / ".trailblaze")) as store:
        return set(recorded_reads(store))


@pytest.fixture(params=KINDS, ids=[kind.name for kind in KINDS])
def kind(request: pytest.FixtureRequest) -> Imported:
    imported: Imported = request.param
    return imported


@pytest.mark.tsc
def test_the_command_line_no_op_sees_an_edit_of_the_imported_type(
    tsc: Compiler, kind: Imported, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(tmp_path / "ws", kind)
    runs = PipelineRuns(monkeypatch)
    assert verdict(cli(ws)) == PASS
    assert (str(kind.file(ws)) in recorded(ws)) is not kind.tool_file
    assert last_stats(ws / ".trailblaze")["reads_covered"] is True
    assert verdict(cli(ws)) == PASS
    assert runs.count == 1, "nothing changed: a no-op"
    edit(ws, kind, BAD)
    assert verdict(cli(ws)) == FAIL
    assert runs.count == 2
    assert verdict(cli(ws)) == FAIL
    assert runs.count == 2, "nothing changed since the finding: a no-op again"
    edit(ws, kind, GOOD)
    assert verdict(cli(ws)) == PASS
    assert runs.count == 3


@pytest.mark.tsc
def test_doit_s_up_to_date_check_sees_an_edit_of_the_imported_type(
    tsc: Compiler, kind: Imported, tmp_path: Path
) -> None:
    ws = workspace(tmp_path / "ws", kind)
    write_tree(ws, {"dodo.py": "from trailblaze.doit_tasks import DOIT_CONFIG, task_check\n"})

    def doit() -> tuple[int, str]:
        done = run_python(ws, "-m", "doit", "check")
        return done.returncode, done.stdout + done.stderr

    code, said = doit()
    assert code == 0, said
    code, said = doit()
    assert (code, "-- check: up to date" in said) == (0, True), said
    edit(ws, kind, BAD)
    code, said = doit()
    assert code == 1, said
    assert "TS2322" in said, said
    assert "login.trail.yaml:6:44" in said, said
    edit(ws, kind, GOOD)
    code, said = doit()
    assert (code, "TS2322" in said) == (0, False), said


@pytest.mark.tsc
def test_a_fresh_clone_served_by_the_remote_cache_sees_the_imported_type_as_it_is(
    tsc: Compiler, kind: Imported, tmp_path: Path, server: NginxCache
) -> None:
    # Fresh clones, one after the other at the same place, as a CI machine checks them out:
    # what lies above the workspace (a hoisted package, a shared declaration file) stays.
    def fresh(types: str) -> Path:
        ws = tmp_path / "clone"
        shutil.rmtree(ws, ignore_errors=True)
        workspace(ws, kind)
        edit(ws, kind, types)
        backdate(kind.file(ws).parent)
        return ws

    def check(ws: Path) -> tuple[Verdict, str]:
        report = cli(ws, "--remote-cache", server.url)
        return verdict(report), last_stats(ws / ".trailblaze")["remote_run"]

    assert check(fresh(GOOD)) == (PASS, "stored")
    # The type narrowed: the writer's entry has the same key (no input changed), but a file
    # its compilers read is not as it was there: a miss, and the finding.
    broken = fresh(BAD)
    assert check(broken) == (FAIL, "stored")
    counts = last_stats(broken / ".trailblaze")
    # (A tool file is an input: the run key itself differs.)
    assert counts.get("remote_run_reads") == (None if kind.tool_file else "changed")
    assert counts["compiler_runs"] == 1, "the writer's per-trail verdict was not taken either"
    assert check(fresh(BAD)) == (FAIL, "hit")
    # The fix shows the pass, and the entry it stores answers the next clone (a tool file is
    # an input: the writer's entry, of the same key, answers it at once).
    assert check(fresh(GOOD)) == (PASS, "hit" if kind.tool_file else "stored")
    again = fresh(GOOD)
    assert check(again) == (PASS, "hit")
    # The hit's reads are recorded: an edit after it is seen by the next run's no-op key.
    assert (str(kind.file(again)) in recorded(again)) is not kind.tool_file
    edit(again, kind, BAD)
    assert check(again)[0] == FAIL


@pytest.mark.tsc
def test_a_file_read_for_the_first_time_right_after_an_edit_caches_nothing_until_the_next_run(
    tsc: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its content, read after the compile, may not be what the compile read (it changed
    # within the file system's mtime grain of the compile's start): the run's verdicts stand,
    # but none is cached, and the next run, which reads it before compiling, caches them.
    kind = KINDS[0]
    ws = workspace(tmp_path / "ws", kind)
    edit(ws, kind, GOOD)
    # "Just now" whatever the machine's speed: a stamp a minute ahead is within the grain of
    # any compile's start, where a slow machine could start its compile seconds after the edit.
    ahead = time.time() + 60
    os.utime(kind.file(ws), (ahead, ahead))
    runs = PipelineRuns(monkeypatch)
    assert verdict(cli(ws)) == PASS
    counts = last_stats(ws / ".trailblaze")
    assert counts["reads_covered"] is False
    results = ws / ".trailblaze/cache/results-v2.sqlite3"
    assert not results.exists() or _results(results) == 0
    assert verdict(cli(ws)) == PASS
    assert runs.count == 2, "not recorded as a no-op either"
    assert last_stats(ws / ".trailblaze")["reads_covered"] is True
    assert _results(results) == 1
    assert verdict(cli(ws)) == PASS
    assert runs.count == 2


def _results(path: Path) -> int:
    import sqlite3  # noqa: PLC0415

    db = sqlite3.connect(path)
    try:
        return int(db.execute("SELECT count(*) FROM results").fetchone()[0])
    finally:
        db.close()


@pytest.mark.tsc
def test_a_workspace_that_reads_nothing_else_records_nothing(tsc: Compiler, tmp_path: Path) -> None:
    # The inputs (the tool's own file) and our files (the SDK, the toolchain's zod and
    # libraries, the generated surfaces) are no reads: the common workspace's keys are as before.
    ws = workspace(tmp_path / "ws", KINDS[0])
    source = ws / "trailmaps/app/tools/app_login.ts"
    source.write_text(source.read_text().replace('"./build/types"', '"./types"'))
    shutil.move(ws / "trailmaps/app/tools/build/types.ts", ws / "trailmaps/app/tools/types.ts")
    (ws / "trailmaps/app/tools/build").rmdir()
    assert verdict(cli(ws)) == PASS
    assert recorded(ws) == set()
    assert last_stats(ws / ".trailblaze")["compile_reads"] == 0
