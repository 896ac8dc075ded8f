"""Code frames of a recorded report: reused while their file is unchanged, read again after."""

from __future__ import annotations

import os
from pathlib import Path

from trailblaze.finding import Finding
from trailblaze.fsutil import stamp_of
from trailblaze.report.frames import frames_of
from trailblaze.report.record import ReportView

TRAIL = "trailmaps/app/trails/a.trail.yaml"


def _finding(line: int) -> Finding:
    return Finding(kind="parse", path=TRAIL, line=line, column=3, message="unknown key 'stpe'")


def _view(frames: dict[str, str], stamps: dict[str, str]) -> ReportView:
    return ReportView(
        findings=(_finding(2),),
        counts={},
        exit_code=1,
        require_typecheck=False,
        frames=frames,
        stamps=stamps,
    )


def test_lines_of_an_unchanged_file_come_from_the_last_view(tmp_path: Path) -> None:
    trail = tmp_path / TRAIL
    trail.parent.mkdir(parents=True)
    trail.write_text("trail:\n  - stpe: a\n")
    stamp = stamp_of(os.stat(trail))
    # The last view recorded another text for the line: it is what is shown, unread.
    previous = _view({f"{TRAIL}:2": "  - stpe: recorded"}, {TRAIL: stamp})
    frames, stamps = frames_of(tmp_path, (_finding(2),), stats={}, previous=previous)
    assert frames == {f"{TRAIL}:2": "  - stpe: recorded"}
    assert stamps == {TRAIL: stamp}


def test_an_edited_file_is_read_again(tmp_path: Path) -> None:
    trail = tmp_path / TRAIL
    trail.parent.mkdir(parents=True)
    trail.write_text("trail:\n  - stpe: a\n")
    previous = _view({f"{TRAIL}:2": "  - stpe: a"}, {TRAIL: stamp_of(os.stat(trail))})
    trail.write_text("trail:\n  - stpe: edited\n")
    st = os.stat(trail)
    # The run's own stat of the file is used, not a second one.
    frames, stamps = frames_of(tmp_path, (_finding(2),), stats={str(trail): st}, previous=previous)
    assert frames == {f"{TRAIL}:2": "  - stpe: edited"}
    assert stamps == {TRAIL: stamp_of(st)}


def test_a_missing_file_has_no_frame_and_no_stamp(tmp_path: Path) -> None:
    frames, stamps = frames_of(tmp_path, (_finding(2),), stats={}, previous=None)
    assert (frames, stamps) == ({}, {})
