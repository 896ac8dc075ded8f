"""doit integration, through real `doit` processes on real workspaces (and `run_tasks`, the
CLI's way to run doit in its own process)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import CORPUS, ROOT, OpenedDatabases, run_python, write_tree
from tests.toolmodel.test_bundled import KIOSK, KIOSK_TRAIL
from trailblaze.check.run import last_stats
from trailblaze.doit_tasks import run_tasks
from trailblaze.state.scratch import Layout

DODO = """\
from trailblaze.doit_tasks import DOIT_CONFIG, task_check
"""


def doit(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("TRAILBLAZE_")}
    full.update(env or {}, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "doit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=full,
        check=False,
        timeout=120,
    )


def test_doit_list_documents_every_task() -> None:
    result = doit(ROOT, "list")
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(None, 1) for line in result.stdout.splitlines() if line.strip())
    assert "check" in lines
    assert all(doc.strip() for doc in lines.values())


def test_run_tasks_leaves_doit_s_database_closed_whatever_the_command(
    compact_ws: Path, opened_databases: OpenedDatabases
) -> None:
    # In this process (the CLI's path): doit opens its dependency file for every command and
    # closes it only when tasks ran, so `list` and an unknown task name left it open.
    for command, code in (("list", 0), ("no-such-task", 3), ("surfaces", 0)):
        opened = len(opened_databases.opened)
        assert run_tasks(compact_ws, [command]) == code
        assert len(opened_databases.opened) > opened, command  # doit's, at least
        assert opened_databases.still_open() == [], command


def test_monorepo_dodo_imports_our_tasks_and_a_second_run_does_nothing(compact_ws: Path) -> None:
    write_tree(
        compact_ws,
        {
            "dodo.py": DODO,
            "trailmaps/app/trails/a.trail.yaml": "config: {target: app}\ntrail:\n  - step: a\n",
        },
    )
    first = doit(compact_ws)
    assert first.returncode == 0, first.stdout + first.stderr
    assert ".  check:run" in first.stdout
    assert ".  check\n" in first.stdout
    assert "passed" in first.stdout
    assert (compact_ws / ".trailblaze" / "doit.sqlite3").is_file()
    assert (compact_ws / ".trailblaze" / ".gitignore").read_text().endswith("*\n")
    second = doit(compact_ws)
    assert second.returncode == 0
    # Up to date: nothing runs, and one line says what the recorded report holds.
    assert second.stdout.splitlines() == [
        "-- check:run",
        "-- check: up to date, 1 trailmaps, 1 trails: 1 parsed, 0 rejected, 0 type-checked "
        "(0 calls); passed",
    ]
    (compact_ws / "trailmaps/app/trails/b.trail.yaml").write_text("trail:\n  - step: b\n")
    third = doit(compact_ws)
    assert ".  check:run" in third.stdout


def test_every_kind_of_input_change_runs_the_check_again(compact_ws: Path) -> None:
    trail = compact_ws / "trailmaps/app/trails/a.trail.yaml"
    write_tree(
        compact_ws,
        {
            "dodo.py": DODO,
            "trailmaps/app/trails/a.trail.yaml": "trail:\n  - step: a\n",
            "trailmaps/app/trails/sub/b.trail.yaml": "trail:\n  - step: b\n",
        },
    )

    def ran(**env: str) -> bool:
        result = doit(compact_ws, env=env)
        assert result.returncode in (0, 1), result.stdout + result.stderr
        first = result.stdout.splitlines()[0]
        assert first in (".  check:run", "-- check:run")
        return first == ".  check:run"

    assert ran()
    assert not ran()
    trail.write_text("trail:\n  - step: c\n")  # same size, new content
    assert ran()
    assert not ran()
    (compact_ws / "trailmaps/app/trails/sub/b.trail.yaml").unlink()  # a deleted trail
    assert ran()
    trail.rename(compact_ws / "trailmaps/app/trails/z.trail.yaml")  # a renamed trail
    assert ran()
    manifest = compact_ws / "trailmaps/app/trailmap.yaml"
    manifest.write_text(manifest.read_text() + "# edited\n")  # a trailmap input
    assert ran()
    assert not ran()
    assert ran(TRAILBLAZE_DISABLE_TRAIL_RECORDING_VALIDATION="1")  # other options
    assert ran()


def test_a_generated_file_deleted_by_hand_is_written_again_and_then_up_to_date(
    compact_ws: Path,
) -> None:
    # It used to stay gone: the check was up to date (its inputs unchanged), and an editor had
    # no typed surface until an input changed.
    write_tree(
        compact_ws, {"dodo.py": DODO, "trailmaps/app/trails/a.trail.yaml": "trail:\n  - step: a\n"}
    )
    assert doit(compact_ws).returncode == 0
    # The first run's own files are part of what it saved: the second run is up to date.
    assert doit(compact_ws).stdout.splitlines()[0] == "-- check:run"
    surface = compact_ws / "trailmaps/app/tools/trailblaze-client.d.ts"
    written = surface.read_bytes()
    surface.unlink()
    again = doit(compact_ws)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.splitlines()[0] == ".  check:run"
    assert surface.read_bytes() == written
    assert doit(compact_ws).stdout.splitlines()[0] == "-- check:run"


def test_findings_fail_the_task_every_time_until_fixed(compact_ws: Path) -> None:
    write_tree(
        compact_ws,
        {"dodo.py": DODO, "trailmaps/app/trails/a.trail.yaml": "trail:\n  - stpe: a\n"},
    )
    for run in range(2):
        result = doit(compact_ws)
        assert result.returncode == 1
        assert "unknown key 'stpe' (did you mean 'step'?)" in result.stdout
        assert "    2 |   - stpe: a" in result.stdout  # the code frame, also when repeated
        # The work is remembered: only the report runs again, from the recorded file.
        expected = ".  check:run" if run == 0 else "-- check:run"
        assert result.stdout.splitlines()[0] == expected
    # An edit that keeps the finding on the same line: the frame shows the line as it is now.
    (compact_ws / "trailmaps/app/trails/a.trail.yaml").write_text("trail:\n  - stpe: bb\n")
    edited = doit(compact_ws)
    assert "    2 |   - stpe: bb" in edited.stdout
    assert "    2 |   - stpe: bb" in doit(compact_ws).stdout
    (compact_ws / "trailmaps/app/trails/a.trail.yaml").write_text("trail:\n  - step: a\n")
    assert doit(compact_ws).returncode == 0


def test_a_damaged_recorded_report_is_checked_again(compact_ws: Path) -> None:
    write_tree(
        compact_ws,
        {"dodo.py": DODO, "trailmaps/app/trails/a.trail.yaml": "trail:\n  - stpe: a\n"},
    )
    first = doit(compact_ws)
    assert first.returncode == 1
    # The recorded outcome vouches for the report it was written with: a report changed
    # since is not trusted, and the check runs again at once.
    (compact_ws / ".trailblaze/report.json").write_text("{not json")
    damaged = doit(compact_ws)
    assert damaged.stdout.splitlines()[0] == ".  check:run"
    assert damaged.returncode == 1
    assert "Traceback" not in damaged.stdout + damaged.stderr
    assert "unknown key 'stpe'" in damaged.stdout
    assert damaged.stdout == first.stdout


def test_a_damaged_report_view_is_read_from_the_report_itself(compact_ws: Path) -> None:
    write_tree(
        compact_ws,
        {"dodo.py": DODO, "trailmaps/app/trails/a.trail.yaml": "trail:\n  - stpe: a\n"},
    )
    first = doit(compact_ws)
    db = sqlite3.connect(Layout(compact_ws / ".trailblaze").store)
    with db:
        db.execute("UPDATE memos SET value = '{not json' WHERE kind = 'report-view'")
    db.close()
    again = doit(compact_ws)
    assert again.stdout.splitlines()[0] == "-- check:run"
    assert again.returncode == 1
    assert "Traceback" not in again.stdout + again.stderr
    assert again.stdout.splitlines()[1:] == first.stdout.splitlines()[1:]


def test_no_workspace_is_a_task_error_without_traceback(tmp_path: Path) -> None:
    write_tree(tmp_path, {"dodo.py": DODO})
    result = doit(tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    assert "trailblaze check: no workspace found" in result.stdout + result.stderr


def test_a_tool_file_is_an_input_unless_the_generator_skips_its_directory(
    compact_ws: Path,
) -> None:
    tool = "id: {id}\ndescription: A tool.\ntools:\n  - hideKeyboard: {{}}\n"
    write_tree(
        compact_ws,
        {
            "dodo.py": DODO,
            "trailmaps/app/trails/a.trail.yaml": "trail:\n  - step: a\n",
            "trailmaps/app/tools/app_a.tool.yaml": tool.format(id="app_a"),
            "trailmaps/app/tools/build/app_x.tool.yaml": tool.format(id="app_x"),
        },
    )

    def ran() -> bool:
        result = doit(compact_ws)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout.splitlines()[0] == ".  check:run"

    assert ran()
    assert not ran()
    # Under build/: the generator does not read it (tooldefs walks as trailmap_files does).
    (compact_ws / "trailmaps/app/tools/build/app_x.tool.yaml").write_text("not: [a tool\n")
    assert not ran()
    (compact_ws / "trailmaps/app/tools/app_a.tool.yaml").write_text(
        tool.format(id="app_a") + "# edited\n"
    )
    assert ran()
    assert not ran()


RECORDED = (
    "config: {target: app}\ntrail:\n  - step: s\n    recording:\n      android:\n"
    "        - tapOnElementWithText: {text: Buy}\n"
)


def _tree(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root)): p.stat().st_mtime_ns
        for p in sorted(root.rglob("*"))
        if "__pycache__" not in p.parts
    }


def test_importing_the_dodo_writes_nothing(compact_ws: Path) -> None:
    write_tree(compact_ws, {"dodo.py": DODO + "from trailblaze.doit_tasks import make_tasks\n"})
    before = _tree(compact_ws)
    result = subprocess.run(
        [sys.executable, "-B", "-c", "import dodo; dodo.DOIT_CONFIG; dodo.make_tasks('.')"],
        cwd=compact_ws,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert _tree(compact_ws) == before
    # doit itself makes the scratch directory when it opens its dependency file.
    assert doit(compact_ws, "list").returncode == 0
    assert (compact_ws / ".trailblaze/doit.sqlite3").is_file()


def test_doit_info_tells_whether_the_check_would_run(compact_ws: Path) -> None:
    write_tree(
        compact_ws, {"dodo.py": DODO, "trailmaps/app/trails/a.trail.yaml": "trail:\n  - step: a\n"}
    )

    def status() -> str:
        result = doit(compact_ws, "info", "check")
        assert result.returncode in (0, 1), result.stderr  # doit info: 1 when it would run
        [line] = [line for line in result.stdout.splitlines() if line.startswith("status")]
        return line.split(":", 1)[1].strip()

    assert status() == "run"
    assert doit(compact_ws).returncode == 0
    assert status() == "up-to-date"
    (compact_ws / "trailmaps/app/trails/a.trail.yaml").write_text("trail:\n  - step: b\n")
    assert status() == "run"
    assert doit(compact_ws).returncode == 0
    assert status() == "up-to-date"
    (compact_ws / "trailmaps/app/trails/a.trail.yaml").write_text("trail:\n  - stpe: b\n")
    assert doit(compact_ws).returncode == 1
    assert status() == "run"  # findings stand: the report runs (and fails) every time


def test_doit_check_takes_format_and_output(compact_ws: Path, tmp_path: Path) -> None:
    write_tree(
        compact_ws,
        {"dodo.py": DODO, "trailmaps/app/trails/a.trail.yaml": "trail:\n  - stpe: a\n"},
    )
    github = doit(compact_ws, "check", "--format", "github")
    assert github.returncode == 1
    assert (
        "::error file=trailmaps/app/trails/a.trail.yaml,line=2,col=5,"
        "title=trailblaze parse unknown-key::trail[0]: unknown key 'stpe' (did you mean 'step'?)"
    ) in github.stdout.splitlines()
    target = tmp_path / "out.sarif"
    sarif = doit(compact_ws, "check", "--format", "sarif", "--output", str(target))
    assert sarif.returncode == 1
    assert "unknown key 'stpe'" in sarif.stdout  # the text report still shows
    [run] = json.loads(target.read_text())["runs"]
    assert [r["ruleId"] for r in run["results"]] == ["missing-key", "unknown-key"]
    (compact_ws / "trailmaps/app/trails/a.trail.yaml").write_text("trail:\n  - step: a\n")
    assert doit(compact_ws).returncode == 0
    # Up to date, but a format was asked for: the report runs and writes it.
    junit = doit(compact_ws, "check", "--format", "junit", "--output", str(tmp_path / "j.xml"))
    assert junit.returncode == 0
    assert ".  check" in junit.stdout.splitlines()
    assert (
        (tmp_path / "j.xml")
        .read_text()
        .startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')
    )


def test_doit_clean_removes_what_we_generated_and_nothing_else(compact_ws: Path) -> None:
    write_tree(
        compact_ws,
        {
            "dodo.py": DODO,
            "trailmaps/app/trails/a.trail.yaml": "trail:\n  - step: a\n",
            "trailmaps/own/trailmap.yaml": "id: own\ntarget:\n  display_name: own\n",
            "trailmaps/own/tools/tsconfig.json": '{"compilerOptions": {}}\n',
        },
    )
    assert doit(compact_ws).returncode == 0
    tools = compact_ws / "trailmaps/app/tools"
    generated = sorted(p.name for p in tools.iterdir())
    assert "trailblaze-client.d.ts" in generated
    cleaned = doit(compact_ws, "clean")
    assert cleaned.returncode == 0, cleaned.stderr
    assert "  removed trailmaps/app/tools/trailblaze-client.d.ts" in cleaned.stdout.splitlines()
    assert not tools.exists() or sorted(p.name for p in tools.iterdir()) == []
    # A hand-written tsconfig has no banner: kept (its trailmap's generated files go).
    own = sorted(p.name for p in (compact_ws / "trailmaps/own/tools").iterdir())
    assert own == ["tsconfig.json"]
    assert sorted(p.name for p in (compact_ws / ".trailblaze").iterdir()) == [
        ".gitignore",
        ".trailblaze-doit-created",
        "CACHEDIR.TAG",
        "doit.sqlite3",
    ]
    again = doit(compact_ws)
    assert again.returncode == 0
    assert again.stdout.splitlines()[0] == ".  check:run"
    assert (tools / "trailblaze-client.d.ts").is_file()


def test_a_required_type_check_that_could_not_run_is_a_task_error(
    compact_ws: Path, tmp_path: Path
) -> None:
    write_tree(compact_ws, {"dodo.py": DODO, "trailmaps/app/trails/a.trail.yaml": RECORDED})
    env = {
        "CI": "true",
        "TRAILBLAZE_TOOLCHAIN_DIR": str(tmp_path / "toolchain"),
        "npm_config_offline": "true",
        "npm_config_cache": str(tmp_path / "npm-cache"),
    }
    result = doit(compact_ws, env=env)
    assert result.returncode == 2
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert "SystemExit" not in output
    assert "the type check could not run completely and is required" in output
    assert output.count("type check could not run for 1 trail(s)") == 1
    assert "trailblaze: typescript@7.0.2: installing with npm into" in result.stderr


def test_a_user_error_in_an_action_is_a_task_error_with_its_message(
    compact_ws: Path, tmp_path: Path
) -> None:
    write_tree(compact_ws, {"dodo.py": DODO})
    missing = tmp_path / "nowhere"
    bad = doit(compact_ws, "check", "--path-base", str(missing), "--output", str(tmp_path / "o"))
    assert bad.returncode == 2
    output = bad.stdout + bad.stderr
    assert f"trailblaze check: --path-base {missing}: not a directory" in output
    assert "Traceback" not in output
    assert not (tmp_path / "o").exists()
    (tmp_path / "file").write_text("")
    target = tmp_path / "file" / "report.txt"  # below a file: cannot be written
    unwritable = doit(compact_ws, "check", "--output", str(target))
    assert unwritable.returncode == 2
    assert f"trailblaze check: cannot write {target}: File exists" in unwritable.stdout
    assert "Traceback" not in unwritable.stdout + unwritable.stderr


def test_every_action_turns_a_user_error_into_a_task_error(tmp_path: Path) -> None:
    from doit.exceptions import TaskError  # noqa: PLC0415

    from trailblaze.doit_tasks import actions as doit_actions  # noqa: PLC0415

    gone = tmp_path / "gone"
    for command, action in (
        ("check", doit_actions.check_report),
        ("surfaces", doit_actions.surfaces_manifests),
    ):
        verdict = action(str(gone))
        assert isinstance(verdict, TaskError), action
        assert verdict.message == f"trailblaze {command}: workspace '{gone}' is not a directory"


def test_doit_check_reads_the_config_dir_and_never_repeats_a_verdict_across_it(
    tmp_path: Path, tsc: object
) -> None:
    # The upstream root with upstream CI's override (tests/data/corpus/head, see its NOTICE).
    root = tmp_path / "trailblaze"
    for part in ("trails", "examples"):
        shutil.copytree(CORPUS / "head" / part, root / part)
    (root / "dodo.py").write_text(DODO)
    ios = {"TRAILBLAZE_CONFIG_DIR": "examples/ios-contacts/trails/config"}
    toolchain = {k: v for k, v in os.environ.items() if k == "TRAILBLAZE_TOOLCHAIN_DIR"}
    for env, code in ((ios, 0), ({}, 1), (ios, 0), (ios, 0), ({}, 1)):
        result = doit(root, env={**toolchain, **env})
        assert result.returncode == code, (env, result.stdout[-2000:], result.stderr[-2000:])
    wrong = doit(root, env={**toolchain, "TRAILBLAZE_CONFIG_DIR": "no/such"})
    assert wrong.returncode != 0
    assert "TRAILBLAZE_CONFIG_DIR=no/such: " in wrong.stdout + wrong.stderr
    assert "Traceback" not in wrong.stdout + wrong.stderr


def test_doit_list_shows_check_run_only_with_all_as_doit_does_for_subtasks(
    compact_ws: Path,
) -> None:
    write_tree(compact_ws, {"dodo.py": DODO})
    listed = doit(compact_ws, "list")
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == ["check"]
    every = doit(compact_ws, "list", "--all")
    assert [line.split()[0] for line in every.stdout.splitlines()] == ["check", "check:run"]
    # Still a task of its own: run, and asked about, by name.
    assert doit(compact_ws, "check:run").returncode == 0
    assert doit(compact_ws, "info", "check:run").returncode == 0


def test_doit_info_says_why_in_words_not_an_object_s_repr(compact_ws: Path) -> None:
    write_tree(
        compact_ws, {"dodo.py": DODO, "trailmaps/app/trails/a.trail.yaml": "trail:\n  - step: a\n"}
    )
    for task in ("check", "check:run"):
        result = doit(compact_ws, "info", task)
        assert result.returncode == 1, result.stderr  # it would run
        assert " object at 0x" not in result.stdout
        assert "<function " not in result.stdout
        assert "<class " not in result.stdout
    why = doit(compact_ws, "info", "check:run").stdout
    assert "    - its inputs (2 files: trails, manifests, tool files) or options changed" in why
    assert "    - no complete run is recorded (none yet, or the last one could not" in why
    assert "    - the recorded report is not one of a clean, complete run of these inputs" in (
        doit(compact_ws, "info", "check").stdout
    )
    write_tree(compact_ws, {"dodo.py": DODO + "from trailblaze.doit_tasks import task_toolchain\n"})
    toolchain = doit(compact_ws, "info", "toolchain", env={"TRAILBLAZE_TSC": "/no/such/tsc"})
    assert (
        "    - the pinned compiler or zod is not installed (or TRAILBLAZE_TSC names no file)"
        in (toolchain.stdout)
    ), toolchain.stdout + toolchain.stderr
    assert " object at 0x" not in toolchain.stdout


MONOREPO_DODO = """\
from trailblaze.doit_tasks import monorepo_config, monorepo_tasks

DOIT_CONFIG = monorepo_config()
globals().update(monorepo_tasks())
"""


def test_doit_clean_in_a_monorepo_removes_each_workspace_s_scratch_it_created(
    tmp_path: Path,
) -> None:
    manifest = "id: app\ntarget:\n  display_name: app\n"
    trail = "config: {target: app}\ntrail:\n  - step: a\n"
    write_tree(
        tmp_path,
        {
            "dodo.py": MONOREPO_DODO,
            "apps/shop/trailmaps/app/trailmap.yaml": manifest,
            "apps/shop/trailmaps/app/trails/a.trail.yaml": trail,
            "apps/notes/trailmaps/app/trailmap.yaml": manifest,
            "apps/notes/trailmaps/app/trails/a.trail.yaml": trail,
            # A scratch directory we did not create: only what we added to it goes.
            "apps/notes/.trailblaze/mine.txt": "kept\n",
        },
    )
    assert doit(tmp_path).returncode == 0
    assert (tmp_path / "apps/shop/.trailblaze/report.json").is_file()
    cleaned = doit(tmp_path, "clean")
    assert cleaned.returncode == 0, cleaned.stderr
    lines = cleaned.stdout.splitlines()
    assert "  removed apps/shop/.trailblaze" in lines
    assert "  removed apps/shop/trailmaps/app/tools/trailblaze-client.d.ts" in lines
    assert not (tmp_path / "apps/shop/.trailblaze").exists()
    assert sorted(p.name for p in (tmp_path / "apps/notes/.trailblaze").iterdir()) == [
        ".trailblaze-doit-created",
        "mine.txt",
    ]
    assert (tmp_path / "apps/notes/.trailblaze/mine.txt").read_text() == "kept\n"
    # The root's scratch holds doit's database: it stays, as doit's business.
    assert (tmp_path / ".trailblaze/doit.sqlite3").is_file()
    again = doit(tmp_path)
    assert again.returncode == 0
    assert (tmp_path / "apps/shop/.trailblaze/report.json").is_file()


def test_doit_dumpdb_dumps_our_sqlite3_database(compact_ws: Path, tmp_path: Path) -> None:
    write_tree(compact_ws, {"dodo.py": DODO})
    before = doit(compact_ws, "dumpdb")
    assert before.returncode == 3
    assert "no dependency file" in before.stderr + before.stdout
    assert "Traceback" not in before.stderr
    assert not (compact_ws / ".trailblaze").exists()  # asking wrote nothing
    assert doit(compact_ws).returncode == 0
    dumped = doit(compact_ws, "dumpdb")
    assert dumped.returncode == 0, dumped.stderr
    lines = dumped.stdout.splitlines()
    assert lines[0] == "DBM type is 'sqlite3'"
    assert [line.split(" -> ")[0] for line in lines if " -> " in line] == ["check", "check:run"]
    assert "'trailblaze-inputs':" in dumped.stdout
    # Another project's dbm database: doit's own dumpdb, as before.
    (tmp_path / "other").mkdir()
    write_tree(
        tmp_path / "other",
        {"dodo.py": "def task_x():\n    return {'actions': ['true'], 'file_dep': ['dodo.py']}\n"},
    )
    assert doit(tmp_path / "other").returncode == 0
    theirs = doit(tmp_path / "other", "dumpdb")
    assert theirs.returncode == 0, theirs.stderr
    assert "b'x' -> " in theirs.stdout  # doit's own output, bytes keys and all


def test_doit_s_report_after_one_edit_is_a_cold_run_s(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps")
    (ws / "dodo.py").write_text(DODO, "utf-8")
    assert doit(ws).returncode == 0
    search = ws / "trailmaps/notes/trails/search.trail.yaml"
    text = search.read_text("utf-8")
    search.write_text(text.replace("text: Packing list", "text: [1]", 1), "utf-8")
    edited = doit(ws)
    assert edited.returncode == 1, edited.stdout + edited.stderr
    assert "TS2322" in edited.stdout
    fresh = tmp_path / "fresh"
    shutil.copytree(ws, fresh, ignore=shutil.ignore_patterns(".trailblaze"))
    assert doit(fresh).returncode == 1

    def report(root: Path) -> dict[str, object]:
        data = json.loads((root / ".trailblaze" / "report.json").read_text("utf-8"))
        return {k: v for k, v in data.items() if k not in ("workspace", "path_base", "seconds")}

    assert report(ws) == report(fresh)
    from trailblaze.check.run import last_stats  # noqa: PLC0415

    # The edited run (doit's, in its own process) compiled the edited trail alone, and looked
    # at no other (`check/narrow.py`).
    edited_stats = last_stats(ws / ".trailblaze")
    assert edited_stats["files_compiled"] == ["trailmaps/notes/trails/search.trail.yaml"]
    assert edited_stats["narrow"] == 1
    # By the compiler started while the pipeline loaded (`typegate/primed.py`).
    assert edited_stats["primed_compiles"] == 1


def test_doit_check_sees_a_baked_target_that_appears_or_changes(
    tmp_path: Path, tsc: object
) -> None:
    # It used to be up to date: `trails/config/targets/` was not in the inputs' digest.
    root = write_tree(
        tmp_path / "ws",
        {
            "dodo.py": DODO,
            "trails/config/trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: App\n",
            "trails/kiosk.trail.yaml": KIOSK_TRAIL,
        },
    )
    toolchain = {k: v for k, v in os.environ.items() if k == "TRAILBLAZE_TOOLCHAIN_DIR"}

    def check() -> subprocess.CompletedProcess[str]:
        return doit(root, "check", env=toolchain)

    first = check()
    assert "boolean" not in first.stdout, first.stdout
    write_tree(root, {"trails/config/targets/kiosk.yaml": KIOSK})  # it appears
    found = check()
    assert found.returncode == 1, found.stdout + found.stderr
    assert "type: trails/kiosk.trail.yaml:8:19: " in found.stdout
    assert "Type 'string' is not assignable to type 'boolean'." in found.stdout
    fixed = KIOSK.replace("hard: {type: boolean}", "hard: {type: string}")
    write_tree(root, {"trails/config/targets/kiosk.yaml": fixed})  # it changes
    passed = check()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    again = check()
    assert again.returncode == 0
    assert "check: up to date" in again.stdout
    # A warning that appears in the project configuration (no input: the scan reads it).
    write_tree(root, {"trails/config/trailblaze.yaml": "trailmaps:\n  - nowhere/trailmap.yaml\n"})
    warned = check()
    assert warned.returncode == 0, warned.stdout + warned.stderr
    assert (
        "warning: trails/config/trailblaze.yaml:2:5: trailmaps: 'nowhere/trailmap.yaml' names "
        "no trailmap.yaml; not read"
    ) in warned.stdout


LOADED = """
import json, runpy, sys
before = set(sys.modules)
sys.argv = ["doit", "check"]
try:
    runpy.run_module("doit", run_name="__main__")
except SystemExit as exc:
    code = exc.code
loaded = sorted(
    name for name in sys.modules
    if name not in before and name.startswith(tuple(json.loads(sys.argv_names)))
)
print(json.dumps([code, loaded]))
"""


def test_a_one_trail_doit_check_loads_no_module_only_other_checks_need(
    tmp_path: Path, tsc: object
) -> None:
    from tests.cli.test_check import LOADED_ONLY_ELSEWHERE  # noqa: PLC0415 - one list for both

    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps")
    (ws / "dodo.py").write_text(DODO, "utf-8")
    # doit itself loads its task runner's multiprocessing and the package metadata; and ours.
    doit_s = (
        "multiprocessing",
        "importlib.metadata",
        "importlib.resources",
        "trailblaze.doit_tasks",
    )
    names = [n for n in LOADED_ONLY_ELSEWHERE if n not in doit_s]
    script = f"import sys; sys.argv_names = {json.dumps(json.dumps(names))}\n" + LOADED
    cold = run_python(ws, "-c", script)
    assert json.loads(cold.stdout.splitlines()[-1])[1] != [], cold.stderr
    trail = ws / "trailmaps/notes/trails/search.trail.yaml"
    trail.write_text(trail.read_text("utf-8").replace("text: Packing list", "text: [1]"), "utf-8")
    edited = run_python(ws, "-c", script)
    assert last_stats(ws / ".trailblaze").get("narrow") == 1, edited.stderr  # checked narrowly
    assert json.loads(edited.stdout.splitlines()[-1]) == [1, []], edited.stderr
