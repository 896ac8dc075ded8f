"""Trails on devices: in parallel across devices, one trail per device at a time, one report.

``fan_out`` (the default, as Trailblaze runs them) gives each device a worker that runs every
trail in plan order: each trail runs once on each device. ``spread`` (``--spread``) gives each
device a worker that takes the next trail of one shared queue when it is free: each trail runs
once, on whichever device was free.

Each worker first reads its device's model (``getprop ro.product.model``; a device that does not
say is named by its serial alone). A device that is lost (a trail of it ended with the transport
gone) stops: fanned out, its remaining trails are reported as not run
on that device, with the reason, while the others go on; spread, the trail it was running is its
only cost, the others go on elsewhere, and what no device is left to run is reported as not
run. ``Report`` keeps the results in plan order (then device order) whatever order they finish
in, and hands each to ``on_trail`` as it comes, one at a time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from trailblaze.replay.device import Device, DeviceError
from trailblaze.replay.plan import TrailPlan
from trailblaze.replay.results import TrailResult
from trailblaze.replay.toolsource import ToolSource
from trailblaze.replay.trailrun import RunSettings, not_run, run_trail

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class QueuedTrail:
    """A trail waiting for a device: its place in the report, its plan, its tools."""

    index: int
    plan: TrailPlan
    source: ToolSource


class Report:
    """Trail results in plan order, then device order, whatever order they finish in;
    ``on_trail`` one at a time, as they come."""

    def __init__(self, on_trail: Callable[[TrailResult], None] | None) -> None:
        self._results: dict[tuple[int, int], TrailResult] = {}
        self._on_trail = on_trail
        self._lock = threading.Lock()

    def put(self, index: int, result: TrailResult, *, seat: int = 0) -> None:
        """The result of plan entry ``index`` on the device at position ``seat`` of the run."""
        with self._lock:
            assert (index, seat) not in self._results, "a trail was reported twice"
            self._results[index, seat] = result
            if self._on_trail is not None:
                self._on_trail(result)

    def results(self) -> tuple[TrailResult, ...]:
        return tuple(self._results[key] for key in sorted(self._results))


def read_model(device: Device) -> str | None:
    """The device's model, None when it does not say or cannot be asked.

    The model only names the device, so a failure here decides nothing: a device that is lost
    (``DeviceLostError``) stays lost, and its first trail fails on it, attributed to that
    trail's first tool, as it would have without the question.
    """
    try:
        return device.product_model()
    except DeviceError as exc:
        logger.warning("%s: cannot read the model: %s", device.serial, exc)
        return None


def _lost_reason(result: TrailResult) -> str | None:
    fatal = [s.failure for s in result.steps if s.failure and s.failure.kind == "fatal"]
    return fatal[0].error if fatal else None


@dataclass
class _Seat:
    """One device of the run, as its worker knows it."""

    device: Device
    position: int
    model: str | None = None
    lost: str | None = None
    """Why the device was lost, once it is."""

    def open(self, settings: RunSettings) -> None:
        model = read_model(self.device)
        # Shown wherever the device is named: kept to the run's redaction like any device text.
        self.model = settings.secrets.redact(model) if model is not None else None

    def mark(self, result: TrailResult) -> TrailResult:
        return replace(result, device=self.device.serial, device_model=self.model)

    def run(self, item: QueuedTrail, settings: RunSettings) -> TrailResult:
        """Run one trail here (or report it cancelled); note a loss of the device."""
        if settings.cancel.is_set():
            return self.mark(not_run(item.plan, "cancelled", "cancelled before it started"))
        result = self.mark(run_trail(item.plan, self.device, item.source, settings))
        self.lost = _lost_reason(result)
        return result


def _in_parallel(seats: Sequence[_Seat], serve: Callable[[_Seat], None]) -> None:
    """``serve`` each seat, each in its own thread; a worker's exception (a bug) is raised
    here once every worker has ended, so that a run never ends short of a result unnoticed."""
    if len(seats) == 1:
        serve(seats[0])  # no thread: one device replays in the caller's thread
        return
    errors: list[BaseException] = []

    def guarded(seat: _Seat) -> None:
        try:
            serve(seat)
        except BaseException as exc:  # handed to the caller's thread, which raises it
            errors.append(exc)

    threads = [
        threading.Thread(target=guarded, args=(s,), name=f"replay-{s.device.serial}", daemon=True)
        for s in seats
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def _seats(devices: Sequence[Device]) -> list[_Seat]:
    return [_Seat(device, position) for position, device in enumerate(devices, start=1)]


def fan_out(
    work: Sequence[QueuedTrail], devices: Sequence[Device], report: Report, settings: RunSettings
) -> dict[str, str | None]:
    """Run every trail on every device, in parallel across devices, one trail per device at a
    time; the devices' models by serial."""
    seats = _seats(devices)

    def serve(seat: _Seat) -> None:
        seat.open(settings)
        for item in work:
            if seat.lost is not None:
                why = f"not run: the device was lost ({seat.lost})"
                report.put(
                    item.index, seat.mark(not_run(item.plan, "skipped", why)), seat=seat.position
                )
                continue
            report.put(item.index, seat.run(item, settings), seat=seat.position)

    _in_parallel(seats, serve)
    return {seat.device.serial: seat.model for seat in seats}


def spread(
    work: Sequence[QueuedTrail], devices: Sequence[Device], report: Report, settings: RunSettings
) -> dict[str, str | None]:
    """Run each trail once, on the next free device, in parallel, one trail per device at a
    time; the devices' models by serial."""
    seats = _seats(devices)
    queue = list(reversed(work))
    lock = threading.Lock()

    def take() -> QueuedTrail | None:
        with lock:
            return queue.pop() if queue else None

    def serve(seat: _Seat) -> None:
        seat.open(settings)
        while seat.lost is None and (item := take()) is not None:
            report.put(item.index, seat.run(item, settings))

    _in_parallel(seats, serve)
    if queue:
        if len(seats) == 1:
            why = f"not run: the device was lost ({seats[0].lost})"
        else:
            gone = "; ".join(
                f"{s.device.serial}: {s.lost}" for s in sorted(seats, key=lambda s: s.device.serial)
            )
            why = f"not run: every device was lost ({gone})"
        for item in reversed(queue):
            report.put(item.index, not_run(item.plan, "skipped", why))
    return {seat.device.serial: seat.model for seat in seats}
