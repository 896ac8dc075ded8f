"""The code frames of a recorded report, reused from the last one while their file is unchanged.

`doit check` records a `ReportView` with the YAML line of every finding (`frames`, keyed by
`console.frame_key`) and the stamp of each file those lines were read from (`stamps`). A check
that changed one trail of a workspace with hundreds of findings then reads one file: the lines
of every file whose stamp is what the last view recorded are taken from that view.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from trailblaze.fsutil import stamp_of
from trailblaze.report.console import frame_key, source_lines

if TYPE_CHECKING:
    from trailblaze.finding import Finding
    from trailblaze.report.record import ReportView


def frames_of(
    root: Path,
    findings: tuple[Finding, ...],
    *,
    stats: Mapping[str, os.stat_result | None],
    previous: ReportView | None,
) -> tuple[dict[str, str], dict[str, str]]:
    """The YAML line of every finding, and the stamps of the files they were read from.

    `stats` holds the `os.stat` the run already made of its inputs (by absolute path; None:
    missing), so that an input is not statted twice; `previous` is the last recorded view.
    """
    base = str(root)
    stamps: dict[str, str] = {}
    for path in {f.path for f in findings}:
        full = os.path.join(base, path)
        st = stats[full] if full in stats else _stat(full)
        if st is not None:
            stamps[path] = stamp_of(st)
    frames: dict[str, str] = {}
    unread: list[Finding] = []
    for finding in findings:
        key = frame_key(finding)
        stamp = stamps.get(finding.path)
        if (
            previous is not None
            and stamp is not None
            and previous.stamps.get(finding.path) == stamp
            and key in previous.frames
        ):
            frames[key] = previous.frames[key]
        else:
            unread.append(finding)
    frames.update(source_lines(root, unread))
    return frames, stamps


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None
