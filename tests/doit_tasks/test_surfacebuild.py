"""`doit surfaces` and `trailblaze surfaces`: incremental per trailmap, through real processes
(and the surfaces `doit check` and `trailblaze check` write, where a file is in their way)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import DATA, run_python, write_tree

DODO = "from trailblaze.doit_tasks import DOIT_CONFIG, task_surfaces\n"
OLD_NS = 1_000_000_000_000_000_000


def run(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    # No TRAILBLAZE_* at all, the toolchain directory included: writing surfaces needs no tsc.
    return run_python(cwd, *argv, trailblaze_env=False)


def doit_surfaces(ws: Path) -> list[str]:
    result = run(ws, "-m", "doit", "surfaces")
    assert (result.returncode, result.stderr) == (0, ""), result.stdout + result.stderr
    return result.stdout.splitlines()


def task_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith("  ")]


def age(root: Path) -> None:
    """Set every file's mtime far into the past, so any rewrite shows."""
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(OLD_NS, OLD_NS))


def rewritten(root: Path) -> list[str]:
    """Files written since `age`, besides the bookkeeping (doit's database, our memos)."""
    return sorted(
        rel
        for p in root.rglob("*")
        if p.is_file()
        and p.stat().st_mtime_ns != OLD_NS
        and "doit.sqlite3" not in p.name
        and not (rel := p.relative_to(root).as_posix()).startswith(".trailblaze/state/")
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(DATA / "surfaces", root)
    write_tree(root, {"dodo.py": DODO})
    return root


def test_second_run_does_nothing_and_an_edit_regenerates_that_trailmap_only(ws: Path) -> None:
    first = doit_surfaces(ws)
    assert task_lines(first) == [
        ".  surfaces:_manifests",
        ".  surfaces:app:build",
        ".  surfaces:lib:build",
        "-- surfaces:_result",
        "-- surfaces:app",
        "-- surfaces:lib",
    ]
    assert "  wrote trailmaps/app/tools/trailblaze-client.d.ts" in first
    assert "  wrote trailmaps/lib/tools/trailblaze-client.d.ts" in first

    age(ws)
    assert doit_surfaces(ws) == [
        "-- surfaces:_manifests",
        "-- surfaces:app:build",
        "-- surfaces:lib:build",
        "-- surfaces:_result",
        "-- surfaces:app",
        "-- surfaces:lib",
    ]
    assert rewritten(ws) == []

    tool = ws / "trailmaps/app/tools/app_signIn.tool.yaml"
    tool.write_text(tool.read_text().replace("Sign in with", "Log in with"))
    age(ws)
    third = doit_surfaces(ws)
    assert task_lines(third) == [
        "-- surfaces:_manifests",
        ".  surfaces:app:build",
        "-- surfaces:lib:build",
        "-- surfaces:_result",
        "-- surfaces:app",
        "-- surfaces:lib",
    ]
    assert rewritten(ws) == [
        "trailmaps/app/tools/trail.schema.json",
        "trailmaps/app/tools/trailblaze-client.d.ts",
        "trailmaps/app/tools/trailblaze-tool-descriptors.json",
    ]
    assert "Log in with" in (ws / "trailmaps/app/tools/trailblaze-client.d.ts").read_text()


def test_a_dependency_change_regenerates_its_dependents(ws: Path) -> None:
    doit_surfaces(ws)
    manifest = ws / "trailmaps/lib/trailmap.yaml"
    manifest.write_text(manifest.read_text() + "# touched\n")
    assert task_lines(doit_surfaces(ws)) == [
        ".  surfaces:_manifests",
        ".  surfaces:app:build",
        ".  surfaces:lib:build",
        "-- surfaces:_result",
        "-- surfaces:app",
        "-- surfaces:lib",
    ]


def test_added_removed_tools_and_a_deleted_artifact_regenerate(ws: Path) -> None:
    doit_surfaces(ws)
    dts = ws / "trailmaps/app/tools/trailblaze-client.d.ts"
    (ws / "trailmaps/app/tools/app_tapOk.tool.yaml").unlink()
    assert task_lines(doit_surfaces(ws))[1] == ".  surfaces:app:build"
    assert "app_tapOk" not in dts.read_text()
    write_tree(
        ws,
        {
            "trailmaps/app/tools/app_new.tool.yaml": (
                "id: app_new\ndescription: New.\ntools:\n  - hideKeyboard: {}\n"
            )
        },
    )
    assert task_lines(doit_surfaces(ws))[1] == ".  surfaces:app:build"
    assert "    app_new: {" in dts.read_text()
    dts.unlink()
    assert task_lines(doit_surfaces(ws))[1:] == [
        ".  surfaces:app:build",
        "-- surfaces:lib:build",
        "-- surfaces:_result",
        "-- surfaces:app",
        "-- surfaces:lib",
    ]
    assert dts.is_file()


def test_trailblaze_surfaces_runs_the_same_tasks_without_a_dodo(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(DATA / "surfaces", root)
    first = run(tmp_path, "-m", "trailblaze", "surfaces", str(root))
    assert first.returncode == 0, first.stdout + first.stderr
    assert task_lines(first.stdout.splitlines()) == [
        ".  surfaces:_manifests",
        ".  surfaces:app:build",
        ".  surfaces:lib:build",
        "-- surfaces:_result",
        "-- surfaces:app",
        "-- surfaces:lib",
    ]
    age(root)
    second = run(tmp_path, "-m", "trailblaze", "surfaces", str(root))
    assert (second.returncode, second.stdout.splitlines()) == (
        0,
        [
            "-- surfaces:_manifests",
            "-- surfaces:app:build",
            "-- surfaces:lib:build",
            "-- surfaces:_result",
            "-- surfaces:app",
            "-- surfaces:lib",
        ],
    )
    assert rewritten(root) == []


def test_a_broken_tool_file_fails_its_task_with_the_located_message(ws: Path) -> None:
    write_tree(
        ws,
        {
            "trailmaps/app/tools/app_bad.tool.yaml": (
                "id: app_bad\ndescription: Bad.\nparameters:\n  - name: n\n    type: integr\n"
                "tools:\n  - hideKeyboard: {}\n"
            )
        },
    )
    result = run(ws, "-m", "doit", "surfaces")
    assert result.returncode == 1
    assert (
        "manifest: trailmaps/app/tools/app_bad.tool.yaml:5:11: parameters[0].type: unknown "
        "parameter type 'integr' (did you mean 'integer'?); expected string, integer, number, "
        "boolean, array or object"
    ) in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_a_broken_waypoint_fails_its_trailmap_s_task_until_it_is_fixed(ws: Path) -> None:
    """A waypoint file is an input of its trailmap's surface task: its findings are that
    task's, and an edit of it runs the task again."""
    doit_surfaces(ws)
    waypoint = ws / "trailmaps/app/waypoints/app_home.waypoint.yaml"
    write_tree(ws, {"trailmaps/app/waypoints/app_home.waypoint.yaml": "id: app/home\nios: [x]\n"})
    result = run(ws, "-m", "doit", "surfaces")
    assert result.returncode == 1
    assert (
        "manifest: trailmaps/app/waypoints/app_home.waypoint.yaml:2:6: ios: 'ios' is a device "
        "classifier block: expected a mapping ('required:', 'forbidden:', 'route:', 'example:')"
    ) in result.stdout
    waypoint.write_text("id: app/home\nios: {}\n")
    doit_surfaces(ws)
    assert "-- surfaces:app:build" in task_lines(doit_surfaces(ws))
    waypoint.write_text("id: app/home\nandroid: {}\nios: {}\n")
    lines = task_lines(doit_surfaces(ws))
    assert ".  surfaces:app:build" in lines  # run again: the waypoint is one of its inputs
    assert "-- surfaces:lib:build" in lines  # another trailmap's task is not


BROKEN = "id: broken\ntarget:\n  display_nmae: Broken\n"
GENERATED = sorted(
    [
        "trail.schema.json",
        "trailblaze-client.d.ts",
        "trailblaze-tool-descriptors.json",
        "tsconfig.json",
    ]
)


def generated(root: Path, trailmap: str) -> list[str]:
    tools = root / "trailmaps" / trailmap / "tools"
    return sorted(p.name for p in tools.glob("*") if p.name in GENERATED)


@pytest.mark.parametrize("entry", ["doit", "trailblaze"])
def test_an_invalid_manifest_fails_the_run_but_the_valid_surfaces_are_written(
    ws: Path, entry: str
) -> None:
    # `broken` sorts before `lib`: doit stops at the first failed task, which must not keep
    # the valid trailmaps' surfaces from being written.
    write_tree(
        ws,
        {
            "trailmaps/broken/trailmap.yaml": BROKEN,
            "trailmaps/uses/trailmap.yaml": "id: uses\ndependencies:\n  - broken\n",
        },
    )
    argv = ("-m", "doit", "surfaces") if entry == "doit" else ("-m", "trailblaze", "surfaces")
    for _ in range(2):  # failed: not up to date, the same again
        result = run(ws, *argv)
        out = result.stdout + result.stderr
        assert result.returncode == 1, out
        assert "Traceback" not in out
        assert (
            "manifest: trailmaps/broken/trailmap.yaml:3:3: target: unknown key 'display_nmae' "
            "(did you mean 'display_name'?)"
        ) in result.stdout
        assert (
            "manifest: trailmaps/uses/trailmap.yaml:3:5: dependencies: unknown trailmap 'broken'"
        ) in result.stdout
        assert (
            "trailblaze surfaces: 2 problem(s) in trailmap.yaml; 1 problem(s) in trailmap 'uses'"
        ) in result.stdout
        assert generated(ws, "app") == generated(ws, "lib") == GENERATED
        assert generated(ws, "broken") == []
    (ws / "trailmaps/broken/trailmap.yaml").write_text(BROKEN.replace("nmae", "name"))
    fixed = run(ws, *argv)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert generated(ws, "broken") == generated(ws, "uses") == GENERATED
    assert task_lines(run(ws, *argv).stdout.splitlines()) == [
        "-- surfaces:_manifests",
        "-- surfaces:app:build",
        "-- surfaces:broken:build",
        "-- surfaces:lib:build",
        "-- surfaces:uses:build",
        "-- surfaces:_result",
        "-- surfaces:app",
        "-- surfaces:broken",
        "-- surfaces:lib",
        "-- surfaces:uses",
    ]


def test_one_trailmap_alone_fails_for_its_own_problem_and_passes_for_a_good_one(ws: Path) -> None:
    # `doit surfaces:uses` by itself used to print its finding and exit 0: only `_result`, which
    # a one-trailmap run never reaches, failed.
    write_tree(
        ws,
        {
            "trailmaps/broken/trailmap.yaml": BROKEN,
            "trailmaps/uses/trailmap.yaml": "id: uses\ndependencies:\n  - broken\n",
        },
    )
    for _ in range(2):  # failed: not up to date, the same again
        alone = run(ws, "-m", "doit", "surfaces:uses")
        out = alone.stdout + alone.stderr
        assert alone.returncode == 1, out
        assert (
            "manifest: trailmaps/uses/trailmap.yaml:3:5: dependencies: unknown trailmap 'broken'"
        ) in alone.stdout
        assert "TaskFailed - taskid:surfaces:uses" in out
        assert "trailblaze surfaces: 1 problem(s) in trailmap 'uses'" in out
        assert "Traceback" not in out
    good = run(ws, "-m", "doit", "surfaces:app")
    assert good.returncode == 0, good.stdout + good.stderr
    assert task_lines(good.stdout.splitlines()) == [".  surfaces:app:build", "-- surfaces:app"]
    assert generated(ws, "app") == GENERATED
    assert generated(ws, "lib") == []  # nothing but the trailmap asked for


IN_THE_WAY = {
    "doit surfaces": ("trail.schema.json", "trail JSON Schema"),
    "trailblaze surfaces": ("trailblaze-client.d.ts", "typed surface"),
    "doit check": ("tsconfig.json", "tsconfig"),
    "trailblaze check": ("trail.schema.json", "trail JSON Schema"),
}


@pytest.mark.parametrize("entry", sorted(IN_THE_WAY))
def test_a_directory_where_a_generated_file_goes_is_a_located_error_and_is_left_alone(
    ws: Path, entry: str, request: pytest.FixtureRequest
) -> None:
    """Writing the file over it ended in an IsADirectoryError traceback (and the trailmaps after
    it unwritten). Now: one located error, the directory as it was, none of that trailmap's
    files written, the others' all written, and the failure shown again until it is fixed;
    never the pass of the run before the directory came."""
    if entry.endswith("check"):
        request.getfixturevalue("tsc")  # the check compiles the scripted tools
    name, what = IN_THE_WAY[entry]
    write_tree(ws, {"dodo.py": DODO.replace("task_surfaces", "task_check, task_surfaces")})
    tool, command = entry.split()
    argv = ("-m", "doit" if tool == "doit" else "trailblaze", command)
    for _ in range(2):  # the second run is one a check may repeat without checking
        passed = run_python(ws, *argv)
        assert passed.returncode == 0, passed.stdout + passed.stderr
    tools = ws / "trailmaps" / "app" / "tools"
    for generated_file in GENERATED:
        (tools / generated_file).unlink()
    # A file in it would be an input of the check (a tool file walked to): empty, the inputs
    # are as when the check passed.
    mine = {} if command == "check" else {"notes.txt": "mine\n"}
    (tools / name).mkdir()
    write_tree(tools / name, mine)
    expected = (
        f"manifest: trailmaps/app/tools/{name}:1:1: is a directory, not a file: the {what} goes "
        "here; none of the generated files of trailmap 'app' were written"
    )
    for _ in range(2):  # failed: no pass remembered, the same again
        result = run_python(ws, *argv)
        out = result.stdout + result.stderr
        assert result.returncode == 1, out
        assert "Traceback" not in out
        assert expected in result.stdout.splitlines(), out
        assert {p.name: p.read_text() for p in (tools / name).iterdir()} == mine
        assert generated(ws, "app") == [name]  # the directory, nothing else generated
        assert [p.name for p in tools.iterdir() if p.name.endswith(".tmp")] == []
        assert generated(ws, "lib") == GENERATED
    shutil.rmtree(tools / name)
    fixed = run_python(ws, *argv)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert generated(ws, "app") == GENERATED
    assert (tools / name).is_file()


def test_a_file_for_tools_and_a_pipe_for_a_generated_file_are_located_errors(
    tmp_path: Path,
) -> None:
    """A pipe named tsconfig.json hung the check (its code frame was read from it)."""
    root = write_tree(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: App\n",
            "trailmaps/app/tools": "mine\n",
            "trailmaps/web/trailmap.yaml": "id: web\ntarget:\n  display_name: Web\n",
        },
    )
    (root / "trailmaps/web/tools").mkdir()
    os.mkfifo(root / "trailmaps/web/tools/tsconfig.json")
    result = run_python(root, "-m", "trailblaze", "check", timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines()[:4] == [
        "manifest: trailmaps/app/tools:1:1: is a file, not a directory: the generated files go "
        "in it; none of the generated files of trailmap 'app' were written",
        "    1 | mine",
        "      | ^",
        "manifest: trailmaps/web/tools/tsconfig.json:1:1: is not a regular file: the tsconfig "
        "goes here; none of the generated files of trailmap 'web' were written",
    ]
    assert (root / "trailmaps/app/tools").read_text() == "mine\n"
    assert (root / "trailmaps/web/tools/tsconfig.json").is_fifo()
    assert generated(root, "web") == ["tsconfig.json"]
