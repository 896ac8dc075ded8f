"""Trails spread over devices: in parallel, one trail per device at a time, into one report.

``spread`` gives each device a worker that takes the next trail when it is free. A device that
is lost (a trail of it ended with a fatal failure) stops taking trails: the trail it was running
is its only cost, the others go on elsewhere; what no device is left to run is reported as not
run, with the reason. ``Report`` keeps the results in plan order whatever order they finish in,
and hands each to ``on_trail`` as it comes, one at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from trailblaze.replay.device import Device
from trailblaze.replay.plan import TrailPlan
from trailblaze.replay.results import TrailResult
from trailblaze.replay.toolsource import ToolSource
from trailblaze.replay.trailrun import RunSettings, not_run, run_trail


@dataclass(frozen=True, slots=True)
class QueuedTrail:
    """A trail waiting for a device: its place in the report, its plan, its tools."""

    index: int
    plan: TrailPlan
    source: ToolSource


class Report:
    """Trail results in plan order, whatever order they finish in; ``on_trail`` one at a time."""

    def __init__(self, size: int, on_trail: Callable[[TrailResult], None] | None) -> None:
        self._results: list[TrailResult | None] = [None] * size
        self._on_trail = on_trail
        self._lock = threading.Lock()

    def put(self, index: int, result: TrailResult) -> None:
        with self._lock:
            self._results[index] = result
            if self._on_trail is not None:
                self._on_trail(result)

    def results(self) -> tuple[TrailResult, ...]:
        done = tuple(r for r in self._results if r is not None)
        assert len(done) == len(self._results), "a trail was neither run nor reported"
        return done


def _lost_reason(result: TrailResult) -> str | None:
    fatal = [s.failure for s in result.steps if s.failure and s.failure.kind == "fatal"]
    return fatal[0].error if fatal else None


def spread(
    work: Sequence[QueuedTrail], devices: Sequence[Device], report: Report, settings: RunSettings
) -> None:
    """Run the trails on the devices in parallel, one trail per device at a time."""
    queue = list(reversed(work))
    lock = threading.Lock()
    lost: dict[str, str] = {}

    def take() -> QueuedTrail | None:
        with lock:
            return queue.pop() if queue else None

    def serve(device: Device) -> None:
        while (item := take()) is not None:
            if settings.cancel.is_set():
                report.put(
                    item.index, not_run(item.plan, "cancelled", "cancelled before it started")
                )
                continue
            result = run_trail(item.plan, device, item.source, settings)
            report.put(item.index, replace(result, device=device.serial))
            reason = _lost_reason(result)
            if reason is not None:
                with lock:
                    lost[device.serial] = reason
                return

    if len(devices) == 1:
        serve(devices[0])  # no thread: one device replays in the caller's thread
    else:
        threads = [
            threading.Thread(target=serve, args=(d,), name=f"replay-{d.serial}", daemon=True)
            for d in devices
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if not queue:
        return
    if len(devices) == 1:
        why = f"not run: the device was lost ({lost[devices[0].serial]})"
    else:
        gone = "; ".join(f"{serial}: {reason}" for serial, reason in sorted(lost.items()))
        why = f"not run: every device was lost ({gone})"
    for item in reversed(queue):
        report.put(item.index, not_run(item.plan, "skipped", why))
