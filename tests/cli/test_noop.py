"""The command line's no-op: nothing changed since a complete check, so its output again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import trailblaze.check.run
from tests.conftest import ROOT, run_python, write_tree
from tests.toolmodel.test_bundled import KIOSK, KIOSK_TRAIL, make_package
from trailblaze.cli.main import main
from trailblaze.cli.noop import inputs_key, known_key
from trailblaze.toolchain.compilers import TSC_ENV, Compiler

BROKEN = """
config:
  target: notes
trail:
  - step: Search
    recording:
      android-phone:
        - scrollUntilTextIsVisible:
            text: [1]
"""


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", root / "trailmaps")
    monkeypatch.chdir(root)
    return root


def run(out: Path, *args: str) -> tuple[int, bytes]:
    code = main(["check", *args, "--output", str(out)])
    return code, out.read_bytes()


def no_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the check pipeline ran on a no-op")

    monkeypatch.setattr(trailblaze.check.run, "run_check", refuse)


@pytest.mark.tsc
def test_an_unchanged_workspace_repeats_the_recorded_output_without_checking(
    tsc: Compiler, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(ws, {"trailmaps/notes/trails/broken.trail.yaml": BROKEN})
    first = {fmt: run(tmp_path / f"1.{fmt}", "--format", fmt) for fmt in ("json", "sarif", "text")}
    assert first["json"][0] == 1
    with monkeypatch.context() as patched:
        no_pipeline(patched)
        for fmt, expected in first.items():
            assert run(tmp_path / f"2.{fmt}", "--format", fmt) == expected
    # A changed trail is checked again: the finding is gone, the exit code follows.
    write_tree(
        ws, {"trailmaps/notes/trails/broken.trail.yaml": BROKEN.replace("[1]", "Packing list")}
    )
    code, output = run(tmp_path / "3.json", "--format", "json")
    assert code == 0
    assert b"TS2322" not in output
    # Other options are other outputs.
    lenient = run(tmp_path / "4.json", "--format", "json", "--lenient")
    assert lenient[0] == 0


@pytest.mark.tsc
def test_a_generated_file_deleted_by_hand_is_written_again_by_the_next_check(
    tsc: Compiler, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It used to stay gone: the next check repeated the recorded output (its inputs were
    # unchanged), and an editor had no typed surface until an input changed.
    for path in (ws / "trailmaps").glob("*/tools/trailblaze-client.d.ts"):
        path.unlink()  # as in a fresh clone
    first = run(tmp_path / "1.json", "--format", "json")
    surface = ws / "trailmaps/shop/tools/trailblaze-client.d.ts"
    written = surface.read_bytes()
    with monkeypatch.context() as patched:
        no_pipeline(patched)  # the files the first run wrote are what its key was saved with
        assert run(tmp_path / "2.json", "--format", "json") == first
    surface.unlink()
    assert run(tmp_path / "3.json", "--format", "json") == first
    assert surface.read_bytes() == written
    with monkeypatch.context() as patched:
        no_pipeline(patched)
        assert run(tmp_path / "4.json", "--format", "json") == first


@pytest.mark.tsc
def test_a_check_that_could_not_run_is_never_repeated(
    tsc: Compiler, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "tsc"
    broken.write_text("#!/bin/sh\necho 'Version 7.0.2'\nexit 0\n", "utf-8")
    broken.chmod(0o755)
    monkeypatch.setenv(TSC_ENV, str(broken))
    runs: list[int] = []
    real = trailblaze.check.run.run_check

    def counted(*args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(trailblaze.check.run, "run_check", counted)
    for attempt in (1, 2):
        code, output = run(tmp_path / f"{attempt}.json", "--format", "json")
        assert b'"kind": "infra"' in output
        assert len(runs) == attempt
    monkeypatch.setenv(TSC_ENV, str(tsc.path))
    code, output = run(tmp_path / "3.json", "--format", "json")
    assert code == 0
    assert b'"kind": "infra"' not in output
    assert run(tmp_path / "4.json", "--format", "json") == (code, output)
    assert len(runs) == 3


def test_the_key_from_stats_taken_before_is_the_key_from_statting_now(ws: Path) -> None:
    # A fresh clone's no-op key is made of the stats its run entry's key took (`known_key`);
    # the next run's lookup stats every input itself (`inputs_key`): the two must agree.
    files = [str(p) for p in sorted((ws / "trailmaps").rglob("*")) if p.is_file() or p.is_dir()] + [
        str(ws / "trailmaps" / "gone.trail.yaml")
    ]
    settings = {"format": "json", "cwd": str(ws)}
    key, stats = inputs_key(files, settings)
    assert stats[files[-1]] is None  # missing
    assert known_key(files, settings, stats) == key
    assert known_key(files, {**settings, "format": "sarif"}, stats) != key
    # An input the run did not look at before checking: no key (statting it now could pair an
    # edit made meanwhile with the output of the check before it).
    del stats[files[0]]
    assert known_key(files, settings, stats) is None


def _kiosk(hard: str) -> str:
    return KIOSK.replace("hard: {type: boolean}", f"hard: {{type: {hard}}}")


def _findings(output: bytes) -> list[tuple[str, int, int, str]]:
    return [
        (f["path"], f["line"], f["column"], f["message"]) for f in json.loads(output)["findings"]
    ]


@pytest.mark.tsc
def test_a_baked_target_that_appears_or_changes_is_checked_again(
    tsc: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It used to replay the recorded output: `trails/config/targets/` was in no key, so a
    # trail's verdict against a target that appeared (or changed) there was the old one.
    root = write_tree(
        tmp_path / "ws",
        {
            "trails/config/trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: App\n",
            "trails/kiosk.trail.yaml": KIOSK_TRAIL,
        },
    )
    monkeypatch.chdir(root)
    before = run(tmp_path / "0.json", "--format", "json")
    assert not any("boolean" in message for *_, message in _findings(before[1]))
    # The target appears: the trail's string is not its boolean.
    write_tree(root, {"trails/config/targets/kiosk.yaml": KIOSK})
    code, output = run(tmp_path / "1.json", "--format", "json")
    assert (code, _findings(output)) == (
        1,
        [("trails/kiosk.trail.yaml", 8, 19, "Type 'string' is not assignable to type 'boolean'.")],
    )
    # It changes: the same trail passes.
    write_tree(root, {"trails/config/targets/kiosk.yaml": _kiosk("string")})
    code, output = run(tmp_path / "2.json", "--format", "json")
    assert (code, _findings(output)) == (0, [])
    # And back (same size and second: the stamp still differs by inode or mtime).
    write_tree(root, {"trails/config/targets/kiosk.yaml": _kiosk("boolean")})
    assert run(tmp_path / "3.json", "--format", "json")[0] == 1
    with monkeypatch.context() as patched:
        no_pipeline(patched)  # nothing changed since: the recorded output, unchecked
        assert run(tmp_path / "4.json", "--format", "json")[0] == 1


@pytest.mark.tsc
def test_a_package_trailmap_that_appears_or_changes_is_checked_again(
    tsc: Compiler, tmp_path: Path
) -> None:
    # It used to replay the recorded output: installed packages' trailmaps and baked targets
    # were in no key.
    root = write_tree(
        tmp_path / "ws",
        {
            "trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: App\n",
            "trailmaps/app/trails/kiosk.trail.yaml": KIOSK_TRAIL,
        },
    )
    site = tmp_path / "site"
    site.mkdir()

    def check() -> tuple[int, list[tuple[str, int, int, str]]]:
        result = run_python(
            root, "-m", "trailblaze", "check", "--format", "json", env={"PYTHONPATH": str(site)}
        )
        assert result.returncode in (0, 1), result.stderr
        return result.returncode, _findings(result.stdout.encode())

    wrong = [
        (
            "trailmaps/app/trails/kiosk.trail.yaml",
            8,
            19,
            "Type 'string' is not assignable to type 'boolean'.",
        )
    ]
    before = check()
    assert before[1] != wrong
    assert check() == before  # the no-op
    package = make_package(site)  # installed: the target appears
    assert check() == (1, wrong)
    assert check() == (1, wrong)
    (package / "targets/kiosk.yaml").write_text(_kiosk("string"))  # the package changes
    assert check() == (0, [])
    (package / "targets/kiosk.yaml").write_text(_kiosk("boolean"))
    assert check() == (1, wrong)
    shutil.rmtree(site / "kioskpkg-1.0.dist-info")  # uninstalled
    assert check() == before


def test_a_warning_about_the_project_configuration_is_no_stale_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It used to repeat the recorded output: `trails/config/trailblaze.yaml` is no input (its
    # `trailmaps:` entries are found by the scan), so a warning that appeared there was lost.
    root = write_tree(
        tmp_path / "ws",
        {
            "trails/config/trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: App\n",
            "trails/config/trailblaze.yaml": "trailmaps:\n  - trailmaps/app/trailmap.yaml\n",
        },
    )
    monkeypatch.chdir(root)
    code, output = run(tmp_path / "1.json", "--format", "json")
    assert (code, _findings(output)) == (0, [])
    write_tree(
        root,
        {
            "trails/config/trailblaze.yaml": (
                "trailmaps:\n  - trailmaps/app/trailmap.yaml\n  - nowhere/trailmap.yaml\n"
            )
        },
    )
    code, output = run(tmp_path / "2.json", "--format", "json")
    assert (code, _findings(output)) == (
        0,
        [
            (
                "trails/config/trailblaze.yaml",
                3,
                5,
                "trailmaps: 'nowhere/trailmap.yaml' names no trailmap.yaml; not read",
            )
        ],
    )
