"""A disk that fills up while a check writes: one located message, no traceback, no half-written
file, nothing recorded as checked; with room again, the next run checks.

The disk is real: a tmpfs of a few hundred KiB mounted for the test (root only; skipped where
mounting is not allowed), its room taken by a filler file.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_python
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import GENERATED_TOOL_FILES

ROOM_KIB = 150
"""What the filler leaves free: the trailmaps' surfaces and the type gate's modules need more."""
DODO = "from trailblaze.doit_tasks import DOIT_CONFIG, task_check, task_surfaces\n"


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs, unmounted after the test."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, room: int = ROOM_KIB * 1024) -> Path:
    """Take all of `disk`'s room but `room` bytes; the filler's path (delete it to free it)."""
    usage = shutil.disk_usage(disk)
    filler = disk / "filler"
    filler.write_bytes(b"\0" * max(usage.free - room, 0))
    return filler


def generated(ws: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(ws)): p.read_bytes()
        for p in sorted((ws / "trailmaps").rglob("*"))
        if p.is_file() and p.name in GENERATED_TOOL_FILES
    }


@pytest.fixture
def roomy(tmp_path: Path, tsc: Compiler) -> dict[str, object]:
    """The bundled workspace checked on a disk with room: its report and generated files."""
    ws = tmp_path / "roomy"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps", ignore=_no_generated)
    done = run_python(ws, "-m", "trailblaze", "check", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    return {"report": _without_paths(done.stdout), "files": generated(ws)}


def _no_generated(directory: str, names: list[str]) -> set[str]:
    return {n for n in names if n in GENERATED_TOOL_FILES or n == ".trailblaze"}


def _without_paths(report: str) -> str:
    """The JSON report without the lines naming where the workspace is."""
    return "\n".join(
        line
        for line in report.splitlines()
        if '"workspace"' not in line and "path_base" not in line
    )


def _no_partial_files(ws: Path, roomy: dict[str, object]) -> None:
    files = roomy["files"]
    assert isinstance(files, dict)
    for path, data in generated(ws).items():
        assert data == files[path], f"{path} is half written"
    assert list(ws.rglob("*.tmp")) == []


@pytest.mark.tsc
@pytest.mark.parametrize("entry", ["trailblaze check", "doit check"])
def test_a_full_disk_is_one_message_and_the_next_run_with_room_checks(
    entry: str, disk: Path, roomy: dict[str, object]
) -> None:
    ws = disk / "ws"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps", ignore=_no_generated)
    (ws / "dodo.py").write_text(DODO)
    filler = fill(disk)
    argv = ("-m", "trailblaze", "check") if entry == "trailblaze check" else ("-m", "doit")
    for _ in range(2):  # nothing recorded as checked: the same again
        full = run_python(ws, *argv)
        out = full.stdout + full.stderr
        assert full.returncode == 2, out
        assert "Traceback" not in out
        [message] = [line for line in out.splitlines() if "No space left on device" in line]
        assert message.startswith(f"trailblaze check: {ws}/"), message
        assert message.endswith(": No space left on device; free some space and run again")
        _no_partial_files(ws, roomy)
    filler.unlink()
    again = run_python(ws, "-m", "trailblaze", "check", "--format", "json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert _without_paths(again.stdout) == roomy["report"]
    assert generated(ws) == roomy["files"]


@pytest.mark.tsc
def test_a_report_that_does_not_fit_leaves_the_last_one_whole(
    disk: Path, roomy: dict[str, object], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps", ignore=_no_generated)
    last = disk / "report.json"
    last.write_text('{"the last": "report"}\n')
    fill(disk, room=0)
    full = run_python(ws, "-m", "trailblaze", "check", "--format", "json", "--output", str(last))
    assert full.returncode == 2, full.stdout + full.stderr
    assert full.stderr == f"trailblaze check: cannot write {last}: No space left on device\n"
    assert last.read_text() == '{"the last": "report"}\n'
    assert sorted(p.name for p in disk.iterdir()) == ["filler", "report.json"]  # no temporary
