"""Code frames: each finding's YAML line, read once per file."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.conftest import write_tree
from trailblaze.finding import Finding
from trailblaze.report.console import render_report, report_console, source_lines
from trailblaze.report.record import Report


def finding(path: str, line: int, column: int = 1) -> Finding:
    return Finding("parse", path, line, column, "bad")


def test_source_lines_reads_each_file_once_for_all_its_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(
        tmp_path,
        {
            "a.yaml": "one: 1\r\ntwo: 2\nthree: 3\n" + "x" * 201 + "\nfive: 5\n",
            "b.yaml": "only: 1\n",
        },
    )
    opened: list[str] = []
    real_open = Path.open

    def counting_open(self: Path, *args: object, **kwargs: object) -> object:
        opened.append(self.name)
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", counting_open)
    findings = [
        finding("a.yaml", 3),
        finding("a.yaml", 1),
        finding("b.yaml", 1),
        finding("a.yaml", 4),  # too long to show
        finding("a.yaml", 3, 5),
        finding("b.yaml", 9),  # past the end
        finding("missing.yaml", 1),
    ]
    assert source_lines(tmp_path, findings) == {
        "a.yaml:1": "one: 1",
        "a.yaml:3": "three: 3",
        "b.yaml:1": "only: 1",
    }
    assert sorted(opened) == ["a.yaml", "b.yaml"]  # missing.yaml: its stat says so, not opened


def test_a_report_is_rendered_with_the_lines_read_now(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.trail.yaml": "trail:\n  - stpe: a\n"})
    report = Report("ws", (), (), (finding("a.trail.yaml", 2, 5),))
    out = io.StringIO()
    render_report(report_console(out, color=False), report, tmp_path)
    assert "    2 |   - stpe: a\n      |     ^\n" in out.getvalue()


def test_a_recorded_view_is_rendered_from_its_frames_only(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.trail.yaml": "trail:\n  - stpe: a\n"})
    report = Report("ws", (), (), (finding("a.trail.yaml", 2, 5),))
    out = io.StringIO()
    render_report(report_console(out, color=False), report.view({}), tmp_path)
    assert "a.trail.yaml:2:5: bad" in out.getvalue()
    assert " | " not in out.getvalue()  # no frame recorded: the file is not read again
    out = io.StringIO()
    view = report.view({"a.trail.yaml:2": "  - stpe: recorded"})
    render_report(report_console(out, color=False), view, tmp_path)
    assert "    2 |   - stpe: recorded\n" in out.getvalue()
