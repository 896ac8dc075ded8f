"""The recorded check: what `doit check:run` leaves for `doit check` and for the next run.

`check:run` runs the pipeline and records three things: the full report
(`<scratch>/report.json`), its view (`REPORT_VIEW`: the findings, counts and code frames the
text output shows, kept small) and its outcome (`OUTCOME`: was everything really checked, the
exit code, the one-line summary). View and outcome are memos of the state store that vouch for
the report file they were recorded with: a report written by another run makes them missing,
and the check runs again.

Only what reading the outcome needs is imported at the top (doit asks for it on every run, a
no-op included); the pipeline loads when a check runs.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from trailblaze.options import CheckOptions
from trailblaze.state.scratch import Layout, write_scratch
from trailblaze.state.store import Kind, Store

if TYPE_CHECKING:
    from trailblaze.report.record import Report, ReportView
    from trailblaze.runs.monorepo import SharedRemote
    from trailblaze.workspace import Scan, Workspace


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """What the last `check:run` recorded of its outcome, for doit's up-to-date checks."""

    complete: bool
    """Everything was really checked (no infrastructure problem)."""
    exit_code: int
    summary: str = ""
    """The report in one line: what an up-to-date `doit check` shows."""

    def to_json(self) -> dict[str, Any]:
        return {"complete": self.complete, "exit_code": self.exit_code, "summary": self.summary}

    @classmethod
    def from_json(cls, data: Any) -> CheckOutcome:
        complete, code = data["complete"], data["exit_code"]
        summary = data.get("summary", "")
        if (
            not isinstance(complete, bool)
            or not isinstance(code, int)
            or not isinstance(summary, str)
        ):
            raise TypeError("malformed check outcome")
        return cls(complete=complete, exit_code=code, summary=summary)


OUTCOME: Kind[CheckOutcome] = Kind("check-outcome", CheckOutcome.from_json, CheckOutcome.to_json)
"""The last `check:run`'s outcome, vouching for the report.json it wrote."""


def _report_view(data: Any) -> ReportView:
    from trailblaze.report.record import ReportView  # noqa: PLC0415 - only when a view is read

    return ReportView.from_json(data)


def _view_json(view: ReportView) -> dict[str, Any]:
    return view.to_json()


REPORT_VIEW: Kind[ReportView] = Kind("report-view", _report_view, _view_json)
"""The view of the last `check:run`'s report (what `check` shows), vouching for the
report.json it was recorded with."""

_UNREADABLE = (OSError, ValueError, KeyError, TypeError, AttributeError)
"""What reading a report file that is gone, damaged or of another shape raises."""


def recorded_outcome(layout: Layout) -> CheckOutcome | None:
    """What the last `check:run` recorded of its outcome (None: unknown, gone or stale)."""
    with Store.open(layout) as store:
        return store.get(OUTCOME, "")


def forget_outcome(layout: Layout) -> None:
    """Drop the recorded outcome, so that the next `doit check` checks again."""
    with Store.open(layout) as store:
        store.drop(OUTCOME, "")
        store.commit()


def recorded_view(ws: Workspace) -> ReportView | None:
    """The view recorded with the last report, else one read from the report itself (the
    view could not be recorded, or was lost); None when neither can be read."""
    from trailblaze.report.console import source_lines  # noqa: PLC0415
    from trailblaze.report.record import ReportView  # noqa: PLC0415

    layout = Layout(ws.scratch)
    with Store.open(layout) as store:
        view = store.get(REPORT_VIEW, "")
    if view is not None:
        return view
    try:
        view = ReportView.from_json(json.loads(layout.report.read_bytes()))
    except _UNREADABLE:
        return None
    return replace(view, frames=source_lines(ws.root, view.findings))


def recorded_report(ws: Workspace) -> Report | None:
    """The full report of the last `check:run` (None: gone or unreadable)."""
    from trailblaze.report.record import Report  # noqa: PLC0415

    try:
        return Report.from_json(json.loads(Layout(ws.scratch).report.read_bytes()))
    except _UNREADABLE:
        return None


def check_and_record(
    ws: Workspace,
    found: Scan,
    stats: Mapping[str, os.stat_result | None],
    listed: Sequence[str] | None = None,
) -> None:
    """Run the check of `ws` as the environment configures it, and record its outcome.

    `found` is the scan the task was created from, the one its inputs digest was worked out
    from; `stats` holds the `os.stat` of those inputs, `listed` their paths as the digest
    listed them (`check_inputs`). A setting that cannot work raises its `TrailblazeError`
    before any work.
    """
    from trailblaze.check.typegate.primed import prime  # noqa: PLC0415
    from trailblaze.report.console import RichProgress, toolchain_progress  # noqa: PLC0415
    from trailblaze.runs.monorepo import check_remote  # noqa: PLC0415
    from trailblaze.state.gcpause import gc_paused  # noqa: PLC0415

    options = CheckOptions.from_env()
    if options.remote_cache:
        # With a remote cache only: its client (HTTP, TLS) is no part of a local check.
        from trailblaze.state.remote import RemoteConfig  # noqa: PLC0415

        RemoteConfig.resolve(
            options.remote_cache, read_only=options.remote_read_only, public_keys=ws.remote_keys
        )
    # While the pipeline loads, a compiler loads its program on the other core (a local check).
    primed = prime(ws.scratch, options) if not options.remote_cache else None
    # As in run_check: writing the report of ten thousand trails builds as many dicts, and the
    # cyclic collector would walk every object of the run again and again to free nothing.
    closing = contextlib.closing(primed) if primed is not None else contextlib.nullcontext()
    with gc_paused(), closing:
        with toolchain_progress(sys.stderr):
            # A fresh clone may find the whole run in the remote cache (`trailblaze/runs/runcache/`):
            # then nothing is parsed, generated or compiled, and the pipeline never loads.
            report = check_remote(
                ws,
                options,
                _shared_remote(),
                progress=RichProgress.for_terminal(),
                found=found,
                stats=stats,
                listed=listed,
                primed=primed,
            )
        record(ws, report, stats)


@functools.cache
def _shared_remote() -> SharedRemote:
    """The remote cache of this doit process's checks: after a fault in one workspace's,
    warned about once, the others work locally. The workers of `doit -n N` are processes of their
    own, each with its own; the first of them to warn is the run's one warning
    (`runs.warnonce.RUN`)."""
    from trailblaze.runs.monorepo import SharedRemote  # noqa: PLC0415
    from trailblaze.runs.warnonce import RUN  # noqa: PLC0415 - loaded with the tasks

    return SharedRemote(RUN)


def record(ws: Workspace, report: Report, stats: Mapping[str, os.stat_result | None]) -> None:
    """Write `report` as the workspace's report.json, with its view and outcome."""
    from trailblaze.report.console import one_line_summary  # noqa: PLC0415
    from trailblaze.report.escaping import json_bytes  # noqa: PLC0415
    from trailblaze.report.frames import frames_of  # noqa: PLC0415

    layout = Layout(ws.scratch)
    with Store.open(layout) as store:
        previous = store.get(REPORT_VIEW, "")
        # Compact: the report of a large workspace is megabytes, read back by programs
        # (`trailblaze check --format json` prints it indented, for people).
        text = json_bytes(report.to_json(seconds=True)) + b"\n"
        write_scratch(layout.report, text, ws.scratch, always=True)
        # What `check` shows, on every run while there are findings: kept small.
        frames, stamps = frames_of(ws.root, report.findings, stats=stats, previous=previous)
        view = report.view(frames, stamps)
        outcome = CheckOutcome(
            complete=report.complete,
            exit_code=report.exit_code,
            summary=one_line_summary(view),
        )
        vouched = [layout.report]
        store.put(REPORT_VIEW, "", view, files=vouched)
        store.put(OUTCOME, "", outcome, files=vouched)
        # Not recorded (locked, say): the outcome and view no longer vouch for the new report,
        # so the next run checks again and `check` reads the report itself.
        store.commit()
