from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_WORKSPACE, ROOT, write_tree
from trailblaze.cli.main import main
from trailblaze.toolchain.compilers import TOOLCHAIN_DIR_ENV, TSC_ENV

GOOD = "config:\n  target: app\ntrail:\n  - step: a\n"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@REPO_WORKSPACE
def test_bundled_workspace_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", str(ROOT), "--format", "json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["version"] == 1
    assert report["exit_code"] == 0
    assert report["summary"]["trailmaps"] == 3
    assert report["summary"]["rejected"] == 0
    assert report["summary"]["trails"] == len(report["trails"]) >= 10
    statuses = {t["path"]: (t["status"], t["reason"]) for t in report["trails"]}
    assert statuses["trailmaps/shop/trails/wishlist.trail.yaml"] == ("parsed", "no target")
    assert statuses["trailmaps/notes/trails/drafts/blaze.yaml"] == ("parsed", "no recorded calls")
    assert [f for f in report["findings"] if f["fatal"]] == []


def test_json_report_shape_for_a_finding(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(compact_ws)  # paths are shown relative to where the command runs
    write_tree(
        compact_ws,
        {"trailmaps/app/trails/bad.trail.yaml": "config:\n  targte: app\ntrail:\n  - step: a\n"},
    )
    code, out, _ = run(capsys, "check", str(compact_ws), "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert report["exit_code"] == 1
    assert report["trails"] == [
        {
            "path": "trailmaps/app/trails/bad.trail.yaml",
            "trailmap": None,
            "status": "rejected",
            "reason": None,
            "target": None,
            "calls": 0,
        }
    ]
    assert report["findings"] == [
        {
            "kind": "parse",
            "path": "trailmaps/app/trails/bad.trail.yaml",
            "line": 2,
            "column": 3,
            "step": None,
            "classifier": None,
            "tool": None,
            "code": "unknown-key",
            "message": "unknown key 'targte' (did you mean 'target'?)",
            "fatal": True,
            "key_path": "config",
            "trailmap": None,
            "position": None,
            "property": None,
        }
    ]


def test_text_report_has_a_code_frame_and_summary(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(compact_ws)  # paths are shown relative to where the command runs
    write_tree(
        compact_ws,
        {"trailmaps/app/trails/bad.trail.yaml": "config:\n  targte: app\ntrail:\n  - step: a\n"},
    )
    code, out, _ = run(capsys, "check", str(compact_ws))
    assert code == 1
    assert out.splitlines() == [
        "parse: trailmaps/app/trails/bad.trail.yaml:2:3: config: unknown key 'targte' (did you mean 'target'?)",
        "    2 |   targte: app",
        "      |   ^",
        "trailblaze check: 1 trailmaps, 1 trails: 0 parsed, 1 rejected, 0 type-checked (0 calls)",
        "FAILED: 1 finding(s) in 1 file(s) (exit 1)",
    ]


def test_not_type_checked_trails_are_counted_by_reason(
    compact_ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(
        compact_ws,
        {
            "trailmaps/app/trails/a.trail.yaml": "trail:\n  - step: a\n",
            "trailmaps/app/trails/b.trail.yaml": "config: {target: elsewhere}\ntrail:\n  - step: a\n",
            "trailmaps/app/trails/c.trail.yaml": GOOD,
        },
    )
    code, out, _ = run(capsys, "check", str(compact_ws), "--format", "json")
    assert code == 0
    summary = json.loads(out)["summary"]
    assert summary["not_type_checked"] == {
        "no recorded calls": 1,
        "no target": 1,
        "unknown target": 1,
    }


BAD_FILES: dict[str, str | bytes] = {
    "trailmaps/app/trails/invalid.trail.yaml": "trail:\n  - step: [unclosed\n",
    "trailmaps/app/trails/empty.trail.yaml": "",
    "trailmaps/app/trails/latin1.trail.yaml": b"trail:\n  - step: caf\xe9\n",
    "trailmaps/app/trails/binary.trail.yaml": b"\x7fELF\x02\x01\x01\x00\x00\x00",
    "trailmaps/app/trails/bomb.trail.yaml": "\n".join(
        ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
        + [
            f"{n}: &{n} [" + ",".join([f"*{p}"] * 10) + "]"
            for p, n in zip("abcdef", "bcdefg", strict=True)
        ]
    ),
    "trailmaps/app/trails/deep.trail.yaml": "[" * 10_000 + "]" * 10_000,
    "trailmaps/app/trails/good.trail.yaml": GOOD,
}


def test_bad_input_gives_one_located_error_per_file_and_the_rest_is_checked(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(compact_ws)  # paths are shown relative to where the command runs
    write_tree(compact_ws, BAD_FILES)
    (compact_ws / "trailmaps/app/trails/dir.trail.yaml").mkdir()
    (compact_ws / "trailmaps/app/trails/dangling.trail.yaml").symlink_to(
        compact_ws / "nowhere.yaml"
    )
    with (compact_ws / "trailmaps/app/trails/huge.trail.yaml").open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    code, out, err = run(capsys, "check", str(compact_ws), "--format", "json")
    assert err == ""
    assert code == 1
    report = json.loads(out)
    by_file = {}
    for finding in report["findings"]:
        assert finding["path"] not in by_file, finding
        by_file[finding["path"]] = (finding["line"], finding["column"], finding["message"])
    p = "trailmaps/app/trails/"
    assert by_file == {
        p + "bomb.trail.yaml": (
            1,
            40,
            "document expands to more than 200000 nodes (anchors and aliases?)",
        ),
        p + "binary.trail.yaml": (1, 8, "binary file (contains a NUL byte)"),
        p + "dangling.trail.yaml": (1, 1, "cannot read file: No such file or directory"),
        p + "deep.trail.yaml": (1, 65, "nesting deeper than 64 levels"),
        p + "dir.trail.yaml": (1, 1, "is a directory, not a file"),
        p + "empty.trail.yaml": (1, 1, "empty trail file"),
        p + "huge.trail.yaml": (1, 1, "file is 50.0 MiB; files over 5 MiB are not read"),
        p + "invalid.trail.yaml": (3, 1, by_file[p + "invalid.trail.yaml"][2]),
        p + "latin1.trail.yaml": (2, 14, "not UTF-8: byte 0xe9 cannot be decoded"),
    }
    assert by_file[p + "invalid.trail.yaml"][2].startswith("invalid YAML: ")
    statuses = {t["path"]: t["status"] for t in report["trails"]}
    assert statuses[p + "good.trail.yaml"] == "parsed"
    assert sum(s == "rejected" for s in statuses.values()) == 9


def test_no_workspace_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", str(tmp_path))
    assert code == 2
    assert out == ""
    assert err.startswith(f"trailblaze check: '{tmp_path}' is not a workspace: ")


def test_lenient_flag_turns_unknown_keys_into_warnings(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(compact_ws)  # paths are shown relative to where the command runs
    write_tree(
        compact_ws,
        {"trailmaps/app/trails/a.trail.yaml": "config:\n  app: x\ntrail:\n  - step: a\n"},
    )
    assert run(capsys, "check", str(compact_ws))[0] == 1
    code, out, _ = run(capsys, "check", str(compact_ws), "--lenient")
    assert code == 0
    assert (
        "warning: trailmaps/app/trails/a.trail.yaml:2:3: config: unknown key 'app'; ignored (lenient mode)"
        in out
    )


def test_output_file_is_written(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "report.json"
    code, out, _ = run(
        capsys, "check", str(compact_ws), "--format", "json", "--output", str(target)
    )
    assert (code, out) == (0, "")
    assert json.loads(target.read_text())["exit_code"] == 0


def test_output_through_a_symlink_or_into_a_pipe_keeps_what_the_user_named(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`--output` as a shell's `>`: a symlink's target is written (the link stays a link), a
    FIFO (or `/dev/stdout`, `>(cmd)`) is written to; both were replaced by a regular file."""
    target = tmp_path / "reports" / "latest.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to(target)
    assert run(capsys, "check", str(compact_ws), "--format", "json", "--output", str(link))[0] == 0
    assert link.is_symlink()
    assert json.loads(target.read_text())["exit_code"] == 0
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    assert run(capsys, "check", str(compact_ws), "--format", "json", "--output", str(fifo))[0] == 0
    try:
        out, _ = reader.communicate(timeout=30)
    finally:
        reader.kill()
    assert json.loads(out)["exit_code"] == 0
    assert fifo.is_fifo()


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="needs /dev/full")
def test_a_full_disk_under_stdout_is_an_error_not_a_traceback_or_a_pass(compact_ws: Path) -> None:
    for fmt in ("json", "text"):
        with Path("/dev/full").open("w") as full:
            result = subprocess.run(
                [sys.executable, "-m", "trailblaze", "check", "--format", fmt],
                cwd=compact_ws,
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "NO_COLOR": "1"},
                check=False,
                timeout=120,
            )
        assert (result.returncode, result.stderr) == (
            2,
            "trailblaze check: cannot write the report to standard output: No space left on "
            "device\n",
        ), fmt


@pytest.mark.tsc
def test_a_timeout_that_is_no_number_falls_back_with_a_warning(
    compact_ws: Path, tsc: object
) -> None:
    """`nan` and `inf` reached the clock as a ValueError / OverflowError traceback; `abc` was
    silently the default. Each is now the default, with one warning naming the variable."""
    write_tree(compact_ws, {"trailmaps/app/trails/a.trail.yaml": RECORDED})
    for value in ("nan", "inf", "1e400", "abc"):
        shutil.rmtree(compact_ws / ".trailblaze", ignore_errors=True)
        result = subprocess.run(
            [sys.executable, "-m", "trailblaze", "check", "--format", "json"],
            cwd=compact_ws,
            capture_output=True,
            text=True,
            env={**os.environ, "NO_COLOR": "1", "TRAILBLAZE_TYPECHECK_TIMEOUT_MS": value},
            check=False,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["summary"]["type_checked"] == 1
        assert result.stderr == (
            f"TRAILBLAZE_TYPECHECK_TIMEOUT_MS='{value}' is not a number of milliseconds; "
            "using 300000\n"
        ), value


def test_console_script_runs_without_a_traceback_on_a_bad_path(tmp_path: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "trailblaze", "check", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert (
        result.stderr
        == f"trailblaze check: workspace '{tmp_path / 'missing'}' is not a directory\n"
    )


def test_a_reader_that_stops_early_ends_the_output_quietly_with_141() -> None:
    # `trailblaze schema shop | head`: the reader closes the pipe before the schema is written.
    read_end, write_end = os.pipe()
    os.close(read_end)
    result = subprocess.run(
        [sys.executable, "-m", "trailblaze", "schema", "shop"],
        cwd=ROOT,
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    os.close(write_end)
    assert result.stderr == ""
    assert result.returncode == 141


RECORDED = (
    "config: {target: app}\ntrail:\n  - step: s\n    recording:\n      android:\n"
    "        - tapOnElementWithText: {text: Buy}\n"
)


def test_a_failed_compiler_install_is_one_clear_error_and_fails_in_ci(
    compact_ws: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_tree(compact_ws, {f"trailmaps/app/trails/t{n}.trail.yaml": RECORDED for n in range(3)})
    toolchain = tmp_path / "toolchain"
    monkeypatch.setenv(TOOLCHAIN_DIR_ENV, str(toolchain))
    monkeypatch.delenv(TSC_ENV, raising=False)
    # npm fails at once, offline, as an install without the network does.
    monkeypatch.setenv("npm_config_offline", "true")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.chdir(compact_ws)
    code, out, err = run(capsys, "check")
    assert code == 0
    assert err.splitlines() == [
        f"trailblaze: typescript@7.0.2: installing with npm into {toolchain} (once per version)..."
    ]
    [infra] = [line for line in out.splitlines() if line.startswith("infra: ")]
    assert infra.startswith(
        f"infra: {toolchain}/typescript-7.0.2:1:1: type check could not run for 3 trail(s): "
        "npm install typescript@7.0.2 failed (exit 1): npm error code ENOTCACHED; npm error "
    )
    assert "  not type-checked: 3 (type check could not run: 3)" in out.splitlines()
    assert out.splitlines()[-1].startswith("passed, but not everything was type-checked")
    # In CI the same run fails, unless told otherwise.
    monkeypatch.setenv("CI", "true")
    code, out, _ = run(capsys, "check", "--format", "json")
    assert code == 3
    assert json.loads(out)["summary"]["infra"] == 1
    assert run(capsys, "check", "--no-require-typecheck")[0] == 0
    monkeypatch.setenv("TRAILBLAZE_REQUIRE_TYPECHECK", "0")
    assert run(capsys, "check")[0] == 0
    monkeypatch.delenv("CI")
    monkeypatch.setenv("TRAILBLAZE_REQUIRE_TYPECHECK", "1")
    assert run(capsys, "check")[0] == 3
    assert not toolchain.joinpath("typescript-7.0.2").exists()


@pytest.mark.usefixtures("tsc")
def test_only_the_program_sets_aside_what_its_check_made(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`trailblaze check` as the program leaves what its pauses made out of the collector's
    later passes (it exits soon); `main` called in a test's or an editor's process freezes
    nothing, and the collector is on after it."""
    import gc  # noqa: PLC0415 - only here: the package reaches the collector through gcpause

    write_tree(compact_ws, {"trailmaps/app/trails/a.trail.yaml": GOOD})
    argv = ("check", str(compact_ws), "--format", "json")
    assert run(capsys, *argv)[0] == 0
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()
    monkeypatch.setattr("trailblaze.state.gcpause._one_command", True)
    write_tree(compact_ws, {"trailmaps/app/trails/b.trail.yaml": GOOD})  # not a no-op
    try:
        assert run(capsys, *argv)[0] == 0
        assert gc.get_freeze_count() > 0
        assert gc.isenabled()
    finally:
        gc.unfreeze()
