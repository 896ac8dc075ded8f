"""The scratch directory: every path of ours that is broken is repaired, and the report is the same.

Each case damages one path that `trailblaze.state.scratch.Layout` names (a file replaced by a
directory, a directory replaced by a file, the state store or result cache made garbage), then
checks again: no traceback, the same report as an undamaged run, and the path healthy again.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_python, write_tree
from tests.state.test_store import LOCKER
from trailblaze.check.run import last_stats, run_check
from trailblaze.fsutil import clear_way
from trailblaze.options import CheckOptions
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import find_workspace

TRAIL = "trailmaps/app/trails/a.trail.yaml"
FILES = {
    "trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: app\n",
    "trailmaps/app/tools/app_login.ts": (
        'import { trailblaze } from "@trailblaze/scripting";\n'
        "export interface LoginInput { user: string; remember?: boolean }\n"
        "export const app_login = trailblaze.tool<LoginInput>("
        '{ description: "Log in" }, async (i) => i.user);\n'
    ),
    TRAIL: (
        "config: {target: app}\ntrail:\n  - step: s\n    recording:\n      android:\n"
        "        - app_login: {user: ann, remember: 'yes'}\n        - pressBack: {}\n"
    ),
    "trailmaps/app/trails/b.trail.yaml": (
        "config: {target: app}\ntrail:\n  - step: s\n    recording:\n      android:\n"
        "        - app_login: {user: bob}\n"
    ),
}


def report_of(root: Path) -> dict[str, Any]:
    data = run_check(find_workspace(root, explicit=True), CheckOptions()).to_json()
    data.pop("workspace")
    return data


@pytest.fixture
def ws(tmp_path: Path, tsc: Compiler) -> Path:
    return write_tree(tmp_path / "ws", dict(FILES))


def as_directory(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    (path / "inside").mkdir(parents=True)


def as_file(path: Path) -> None:
    shutil.rmtree(path)
    path.write_text("in the way")


def as_garbage(path: Path) -> None:
    for extra in path.parent.glob(path.name + "-*"):
        extra.unlink()
    path.write_bytes(b"\x00not a database" * 300)


def tooldecl_file(layout: Layout) -> Path:
    [emitted] = (layout.tooldecl("app")).rglob("*.d.ts")
    return emitted


# (what breaks, which path, how) -- every path of ours a check reads or writes.
CASES: dict[str, tuple[Callable[[Layout], Path], Callable[[Path], None]]] = {
    "store is a directory": (lambda lay: lay.store, as_directory),
    "store is garbage": (lambda lay: lay.store, as_garbage),
    "state directory is a file": (lambda lay: lay.state_dir, as_file),
    "result cache is a directory": (lambda lay: lay.results(), as_directory),
    "result cache is garbage": (lambda lay: lay.results(), as_garbage),
    "cache directory is a file": (lambda lay: lay.cache_dir(), as_file),
    "cache tag is a directory": (lambda lay: lay.cache_dir() / "CACHEDIR.TAG", as_directory),
    "sdk declarations are a directory": (lambda lay: lay.sdk_index, as_directory),
    "sdk directory is a file": (lambda lay: lay.sdk_dir, as_file),
    "module surface is a directory": (lambda lay: lay.surface("app"), as_directory),
    "surfaces directory is a file": (lambda lay: lay.surface("app").parent, as_file),
    "tool declaration is a directory": (tooldecl_file, as_directory),
    "tool declarations are a file": (lambda lay: lay.tooldecl("app"), as_file),
    "type gate directory is a file": (lambda lay: lay.root, as_file),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_scratch_path_is_repaired_and_the_report_is_unchanged(ws: Path, case: str) -> None:
    clean = report_of(ws)
    assert [f["code"] for f in clean["findings"]] == ["TS2322"]
    layout = Layout(ws / ".trailblaze")
    where, damage = CASES[case]
    path = where(layout)
    was_file = path.is_file()
    damage(path)
    assert report_of(ws) == clean
    assert report_of(ws) == clean
    if case == "cache tag is a directory":
        return  # in nobody's way: replaced when results are next stored
    if not (path.is_file() if was_file else path.is_dir()):
        # The result cache is repaired when it is next written: when a trail is compiled.
        assert "cache" in case
        layout.store.unlink()
        assert report_of(ws) == clean
    assert path.is_file() if was_file else path.is_dir()
    assert report_of(ws) == clean
    assert last_stats(layout.scratch)["compiler_runs"] == 0  # healthy again: nothing to redo


def test_a_generated_trail_module_in_the_way_is_replaced(ws: Path) -> None:
    clean = report_of(ws)
    layout = Layout(ws / ".trailblaze")
    module = layout.trail_file(TRAIL)
    as_directory(module)
    layout.store.unlink()  # every trail is read and its module written again
    assert report_of(ws) == clean
    assert module.is_file()
    # A file where the generated modules' directory belongs.
    trails_dir = layout.trails_dir / "trailmaps"
    as_file(trails_dir)
    layout.store.unlink()
    assert report_of(ws) == clean
    assert module.is_file()


def test_the_results_of_a_fresh_clone_come_from_a_shared_cache(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAILBLAZE_CACHE_DIR", str(tmp_path / "shared"))
    clean = report_of(ws)
    assert (tmp_path / "shared" / Layout(ws).results().name).is_file()
    clone = tmp_path / "clone"
    shutil.copytree(ws, clone, ignore=shutil.ignore_patterns(".trailblaze"))
    assert report_of(clone) == clean
    stats = last_stats(clone / ".trailblaze")
    assert (stats["cache_hits"], stats["files_compiled"]) == (2, [])


def test_a_cache_dir_the_user_named_is_never_cleared_out_of_the_way(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """`TRAILBLAZE_CACHE_DIR` naming a file (a typo for a sibling, `~/.bashrc`): the file stays,
    the check works without its cache, and says so."""
    clean = report_of(ws)
    mine = tmp_path / "notes.txt"
    mine.write_text("my notes\n")
    monkeypatch.setenv("TRAILBLAZE_CACHE_DIR", str(mine))
    shutil.rmtree(ws / ".trailblaze")
    with caplog.at_level(logging.WARNING):
        assert report_of(ws) == clean
    assert mine.read_text() == "my notes\n"
    assert f"result cache {mine} unusable" in caplog.text


def test_a_file_where_the_scratch_directory_belongs_is_a_located_error_of_every_check(
    ws: Path, tmp_path: Path
) -> None:
    """It was cleared (a user's file deleted); now every check names it, exits 2, and leaves
    it as it was: the workspace, trail files, and files outside the workspace alike."""
    outside = write_tree(tmp_path / "elsewhere", {"b.trail.yaml": FILES[TRAIL]})
    for argv in ((), (TRAIL,), ("--workspace", str(ws), str(outside / "b.trail.yaml"))):
        shutil.rmtree(ws / ".trailblaze", ignore_errors=True)
        (ws / ".trailblaze").write_bytes(b"mine\x00, not yours\n")
        again = run_python(ws, "-m", "trailblaze", "check", "--format", "json", *argv)
        assert "Traceback" not in again.stderr, again.stderr
        assert again.returncode == 2, (argv, again.stderr)
        assert f"{ws / '.trailblaze'}: is a file, not a directory" in again.stderr
        assert "left as it is" in again.stderr
        assert (ws / ".trailblaze").read_bytes() == b"mine\x00, not yours\n"
    assert sorted(p.name for p in outside.iterdir()) == ["b.trail.yaml"]


DODO = "from trailblaze.doit_tasks import DOIT_CONFIG, task_check  # noqa: F401\n"


def doit(root: Path) -> tuple[int, str]:
    result = run_python(root, "-m", "doit")
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    return result.returncode, result.stdout


DOIT_CASES: dict[str, tuple[Callable[[Layout], Path], Callable[[Path], None]]] = {
    "doit database is a directory": (lambda lay: lay.doit_db, as_directory),
    "recorded report is a directory": (lambda lay: lay.report, as_directory),
    "store is a directory": (lambda lay: lay.store, as_directory),
    "store is garbage": (lambda lay: lay.store, as_garbage),
    "state directory is a file": (lambda lay: lay.state_dir, as_file),
    "gitignore is a directory": (lambda lay: lay.gitignore, as_directory),
}


@pytest.mark.parametrize("case", sorted(DOIT_CASES))
def test_doit_check_repairs_a_broken_scratch_path(compact_ws: Path, case: str) -> None:
    write_tree(
        compact_ws,
        {"dodo.py": DODO, "trailmaps/app/trails/a.trail.yaml": "trail:\n  - stpe: a\n"},
    )
    code, first = doit(compact_ws)
    assert code == 1
    assert "unknown key 'stpe'" in first
    where, damage = DOIT_CASES[case]
    path = where(Layout(compact_ws / ".trailblaze"))
    was_file = path.is_file()
    damage(path)
    code, again = doit(compact_ws)
    assert code == 1
    assert again.splitlines()[1:] == first.splitlines()[1:]
    if case != "gitignore is a directory":  # not in the way of anything: left alone
        assert path.is_file() if was_file else path.is_dir()
    report = json.loads((compact_ws / ".trailblaze" / "report.json").read_text())
    assert report["exit_code"] == 1


def test_clear_way_touches_nothing_outside_its_directory(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("keep")
    inside = tmp_path / "scratch"
    inside.mkdir()
    (inside / "a").write_text("in the way")
    link = inside / "link"
    link.symlink_to(tmp_path, target_is_directory=True)
    assert clear_way(inside / "a" / "b", inside)
    assert not (inside / "a").exists()
    assert not clear_way(link / "outside", inside)  # a symbolic link is followed, not removed
    assert outside.read_text() == "keep"
    assert not clear_way(outside, inside)
    assert outside.read_text() == "keep"


def test_a_check_with_its_store_locked_is_a_full_check_and_a_warning(
    ws: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from trailblaze.state import store as store_module  # noqa: PLC0415

    clean = report_of(ws)
    layout = Layout(ws / ".trailblaze")
    monkeypatch.setattr(store_module, "LOCK_TIMEOUT", 0.2)
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(layout.store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert locker.stdin is not None
    assert locker.stdout is not None
    try:
        assert locker.stdout.readline().strip() == "locked"
        with caplog.at_level(logging.WARNING):
            assert report_of(ws) == clean  # every trail read again; verdicts from the cache
        assert "could not record state" in caplog.text
    finally:
        locker.stdin.close()
        locker.wait(timeout=30)
        locker.stdout.close()
    assert report_of(ws) == clean
    assert last_stats(layout.scratch)["trails_parsed"] == 0  # the store works again


def test_a_finding_moved_by_an_inserted_line_is_not_taken_from_the_cache(ws: Path) -> None:
    [finding] = report_of(ws)["findings"]
    trail = ws / TRAIL
    trail.write_text("# the same calls, one line lower\n" + trail.read_text())
    # The generated module is the same; its line table is not, and it is part of the key.
    assert [f["line"] for f in report_of(ws)["findings"]] == [finding["line"] + 1]


def test_a_recorded_cli_output_in_the_way_is_a_miss_and_is_replaced(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trailblaze.cli.main import main  # noqa: PLC0415

    monkeypatch.chdir(ws)
    out = tmp_path / "report.json"

    def run() -> tuple[int, bytes]:
        code = main(["check", "--format", "json", "--output", str(out)])
        return code, out.read_bytes()

    first = run()
    assert first[0] == 1
    [recorded] = Layout(ws / ".trailblaze").state_dir.glob("cli-output.*")
    as_directory(recorded)
    assert run() == first
    assert recorded.is_file()
    assert run() == first


COLLIDING_IDS = ("a", "b", "a.b", "a.d", "a.d.ts", "x", "x.probe", "App", "app")
"""Trailmap ids whose raw names would share or shadow each other's scratch files: `./a.d`
resolves to `a.d.ts` (trailmap `a`'s surface), `./x.probe` to trailmap `x`'s probes."""


def test_trailmap_ids_with_dots_or_case_variants_keep_their_own_surfaces(tmp_path: Path) -> None:
    files: dict[str, str] = {}
    for n, trailmap in enumerate(COLLIDING_IDS):
        base = f"trailmaps/{trailmap}"
        files[f"{base}/trailmap.yaml"] = f"id: {trailmap}\ntarget:\n  display_name: d{n}\n"
        files[f"{base}/tools/own.ts"] = (
            'import { trailblaze } from "@trailblaze/scripting";\n'
            f"export const own_{n} = trailblaze.tool<{{ v{n}: string }}>("
            f'{{ description: "own" }}, async (i) => i.v{n});\n'
        )
        files[f"{base}/trails/t.trail.yaml"] = (
            f"config: {{target: {trailmap}}}\ntrail:\n  - step: s\n    recording:\n"
            f"      android:\n        - own_{n}: {{v{n}: [1]}}\n"
        )
    ws = write_tree(tmp_path / "ws", files)
    result = run_python(ws, "-m", "trailblaze", "check", "--format", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert {t["path"]: t["status"] for t in report["trails"]} == {
        f"trailmaps/{trailmap}/trails/t.trail.yaml": "type-checked" for trailmap in COLLIDING_IDS
    }
    # Each trail is checked against its own trailmap's tool: on another's surface the tool
    # would be unknown (TS2339), on none the trail would be unchecked.
    assert sorted((f["path"], f["tool"], f["code"]) for f in report["findings"]) == sorted(
        (f"trailmaps/{trailmap}/trails/t.trail.yaml", f"own_{n}", "TS2322")
        for n, trailmap in enumerate(COLLIDING_IDS)
    )
    layout = Layout(ws / ".trailblaze")
    names = [layout.surface(t).name for t in COLLIDING_IDS]
    assert len({name.lower() for name in names}) == len(COLLIDING_IDS)  # case-insensitive too
    assert not any("." in name.removesuffix(".d.ts") for name in names)  # no dot of the id
