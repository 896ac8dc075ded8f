"""Where replay time goes: every tool's time split into five phases (issue 16.5).

- ``startup``: before the tool acts: resolving it, parsing and checking its arguments, starting a
  runtime: a scripted tool's time until its module is loaded (compiling it, starting Node) is
  startup, the rest its own act; its ``ctx.tools`` calls count in their own phases.
- ``launch``: starting, stopping and resetting apps, and waiting for the app to show.
- ``act``: the tool's own work: input commands (tap, text, keys, swipes), other device commands,
  and the matching done on the host.
- ``settle``: waiting for the screen: pauses after navigation and between polls.
- ``capture``: reading the screen (``uiautomator dump`` and its pull, screenshots, parsing).

A ``Timeline`` belongs to one execution context (one thread). It has one current phase; each
``phase(name)`` switches to it and back. Each dispatched tool opens a ``meter``; the time of a
tool nested in another (a ``runIf`` branch, a composed tool) counts in both meters, so a tool's
phases always add up to its duration. ``TimedDevice`` puts the device's own calls in their
phase, so tools need not.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

from trailblaze.replay.device import Device

Phase = Literal["startup", "launch", "act", "settle", "capture"]
PHASES: tuple[Phase, ...] = ("startup", "launch", "act", "settle", "capture")

#: Inside ``launch`` everything is launch time: the waits and polls of starting an app are the
#: price of the launch, not settling or acting.
_STICKY: frozenset[Phase] = frozenset({"launch"})


def empty() -> dict[Phase, float]:
    return dict.fromkeys(PHASES, 0.0)


class Timeline:
    def __init__(self) -> None:
        self._phase: Phase = "act"
        self._since = time.perf_counter()
        self._meters: list[dict[Phase, float]] = []

    @property
    def current(self) -> Phase:
        return self._phase

    def _accrue(self) -> None:
        now = time.perf_counter()
        spent, self._since = now - self._since, now
        for meter in self._meters:
            meter[self._phase] += spent

    @contextmanager
    def phase(self, name: Phase) -> Iterator[None]:
        """Count the time inside in ``name`` (unless an enclosing phase is sticky)."""
        if self._phase in _STICKY or self._phase == name:
            yield
            return
        self._accrue()
        outer, self._phase = self._phase, name
        try:
            yield
        finally:
            self._accrue()
            self._phase = outer

    @contextmanager
    def meter(self, start: Phase = "startup") -> Iterator[dict[Phase, float]]:
        """A fresh split of the time spent inside, starting in phase ``start``."""
        self._accrue()
        meter = empty()
        self._meters.append(meter)
        try:
            with self.phase(start):
                yield meter
        finally:
            self._accrue()
            self._meters.remove(meter)


def add(total: dict[Phase, float], part: Mapping[Phase, float]) -> None:
    for name in PHASES:
        total[name] += part.get(name, 0.0)


# Which phase each device call belongs to; anything not named is ``act``.
_DEVICE_PHASES: dict[str, Phase] = {
    "dump_hierarchy": "capture",
    "screenshot": "capture",
    "start_app": "launch",
    "force_stop": "launch",
    "clear_app_data": "launch",
}


class TimedDevice:
    """A ``Device`` whose calls are counted in their phase of ``timeline``."""

    def __init__(self, device: Device, timeline: Timeline) -> None:
        self._device = device
        self._timeline = timeline

    @property
    def serial(self) -> str:
        return self._device.serial

    @property
    def wrapped(self) -> Device:
        return self._device

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._device, name)
        if not callable(target):
            return target
        phase = _DEVICE_PHASES.get(name, "act")
        timeline = self._timeline

        def timed(*args: Any, **kwargs: Any) -> Any:
            with timeline.phase(phase):
                return target(*args, **kwargs)

        return timed
