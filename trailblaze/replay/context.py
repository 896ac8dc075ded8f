"""The execution context tools run in, and the knobs that bound their waits.

One ``ExecutionContext`` lives as long as the batch scope says (replay.md §1.5): normally one per
step recording, shared by its tools; with ``TRAILBLAZE_DISABLE_BATCHED_TOOL_EXECUTION`` one per
tool. It carries what tools share across a recording: the device connection, the clipboard
cache (there is no portable adb command that reads the clipboard back, so paste types what the
last ``mobile_setClipboard`` of the same context set), the screen snapshot (a parsed dump that
query tools reuse until a mutating tool invalidates it) and the trace id of its logs.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from trailblaze.replay.device import Device
from trailblaze.replay.failure import Cancelled, ExpectedFailure, ToolError, screen_summary
from trailblaze.replay.hierarchy import Hierarchy, parse_hierarchy
from trailblaze.replay.timing import Phase, TimedDevice, Timeline
from trailblaze.replay.waypoints import WaypointScope
from trailblaze.trail.hostpolicy import NO_WORKSPACE, HostPolicy

RunTools = Callable[[Sequence[Any], str], None]
"""Runs calls nested in the current tool (each a ``trail.model.ToolCall`` or a ``(name, raw_args)``
pair): same context, hooks and logs; the first failure raises."""

T = TypeVar("T")

_TRACE_IDS = itertools.count(1)


@dataclass(frozen=True, slots=True)
class ReplayOptions:
    """Timeouts (seconds) of the waits tools do. Tests shorten them; devices need the defaults."""

    find_timeout: float = 5.0
    """How long taps and assertions poll the screen for their element (upstream: 5 s)."""
    condition_timeout: float = 1.0
    """The same, for a ``runIf`` condition tool: a false condition should not cost 5 s."""
    poll_interval: float = 0.25
    launch_timeout: float = 10.0
    """How long ``launchApp`` waits for the app's window to have the focus."""
    settle: float = 0.3
    """Pause after a key press that navigates (BACK), as Maestro does."""
    max_scrolls: int = 20
    device_timeout: float = 10.0
    """Bound of every adb socket read, so a wedged device fails instead of hanging."""
    device_deadline: float = 60.0
    """Bound of one framework command (or one file pulled or pushed) as a whole, however its
    output flows: past it the device is lost (``TRAILBLAZE_REPLAY_COMMAND_DEADLINE_MS``)."""
    command_timeout: float = 60.0
    """How long ``android_adbShell`` waits for a scripted tool's command to finish."""
    exec_timeout: float = 600.0
    """How long ``exec`` waits for a host program called without ``timeoutSeconds``."""
    snapshot_dir: Path | None = None
    """Where ``takeSnapshot`` saves its captures (None: capture, keep nothing)."""
    classifiers: tuple[str, ...] = ("android-phone", "android")
    """The device's classifier chain, most specific first (``runTrail`` plans with it)."""
    host: HostPolicy = NO_WORKSPACE
    """What a recording may do on the host: the workspace's ``allow-host-programs`` and where
    ``runTrail`` may read (``replay`` sets the workspace's; by default nothing is allowed)."""


class ExecutionContext:
    """What the tools of one batch share. Not thread-safe: one replay thread uses it."""

    def __init__(
        self,
        device: Device,
        options: ReplayOptions,
        cancel: threading.Event,
        *,
        batched: bool,
        memory: MutableMapping[str, str] | None = None,
    ) -> None:
        self.timeline = Timeline()
        self.raw_device = device
        self.device: Device = cast(Device, TimedDevice(device, self.timeline))
        self.options = options
        self.cancel = cancel
        self.batched = batched
        self.trace_id = f"trace-{next(_TRACE_IDS):04d}"
        self.clipboard: str | None = None
        self.memory: MutableMapping[str, str] = {} if memory is None else memory
        """The trail's memory values (``{{memory.x}}``): shared by its steps, set by tools."""
        self.trail_path: str | None = None
        """The workspace-relative path of the trail being replayed."""
        self.trail_file: Path | None = None
        """The trail's file, when it has one (``runTrail`` resolves paths next to it)."""
        self.running_trails: list[Path] = []
        """The ``runTrail`` files being replayed, outermost first (a cycle is an error)."""
        self.driver_type = "android-ondevice-accessibility"
        """The driver scripted tools see (``ctx.device.driverType``): ``drivers``."""
        self.sensitive: frozenset[str] = frozenset()
        """The memory names that hold secrets: never handed to a scripted tool."""
        self.ships_runif = False
        """The trailmap ships its own ``runIf``: a ``runTrail``'s trail, whose calls resolve in
        the same tools, is planned without our runIf grammar."""
        self.waypoints: WaypointScope | None = None
        """The waypoints ``assertWaypoint`` sees and the target's app ids (None: none)."""
        self._snapshot: Hierarchy | None = None
        self._condition_depth = 0
        self._nested: list[RunTools] = []

    # -- time --

    def phase(self, name: Phase) -> AbstractContextManager[None]:
        """Count the time inside in ``name`` (see ``timing``)."""
        return self.timeline.phase(name)

    # -- tools calling tools --

    @contextmanager
    def nesting(self, run: RunTools) -> Iterator[None]:
        """The engine installs how the running tool's nested calls are dispatched."""
        self._nested.append(run)
        try:
            yield
        finally:
            self._nested.pop()

    def run_tools(self, calls: Sequence[Any], label: str) -> None:
        """Run ``calls`` nested in the current tool, reported under ``label``.

        Each is a ``ToolCall`` or a ``(name, raw_args)`` pair. The first failure raises the
        failure kind of the nested tool, with its position and message.
        """
        if not self._nested:
            raise ToolError(f"{label}: nested calls can only run inside a dispatched tool")
        self._nested[-1](calls, label)

    # -- the screen snapshot --

    def screen(self, *, fresh: bool = False) -> Hierarchy:
        """The current screen; a cached snapshot unless ``fresh`` or a mutating tool ran."""
        if fresh or self._snapshot is None:
            with self.timeline.phase("capture"):
                self._snapshot = parse_hierarchy(self.device.dump_hierarchy())
        return self._snapshot

    def invalidate(self) -> None:
        self._snapshot = None

    def close(self) -> None:
        """Leave the scope: forget the snapshot and the clipboard (idempotent)."""
        self._snapshot = None
        self.clipboard = None

    # -- waiting --

    @property
    def find_timeout(self) -> float:
        if self._condition_depth:
            return min(self.options.find_timeout, self.options.condition_timeout)
        return self.options.find_timeout

    @property
    def in_condition(self) -> bool:
        """Whether a ``runIf`` condition is being evaluated (its waits are shorter)."""
        return self._condition_depth > 0

    def evaluating_condition(self) -> _ConditionScope:
        """Within it, polls use the shorter ``condition_timeout``."""
        return _ConditionScope(self)

    def check_cancelled(self) -> None:
        if self.cancel.is_set():
            raise Cancelled

    def sleep(self, seconds: float) -> None:
        """Sleep, waking up (and raising ``Cancelled``) when the run is cancelled."""
        with self.timeline.phase("settle"):
            if seconds > 0 and self.cancel.wait(seconds):
                raise Cancelled
        self.check_cancelled()

    def poll(
        self,
        attempt: Callable[[Hierarchy], T | None],
        what: str | Callable[[], str],
        *,
        timeout: float | None = None,
        interval: float | None = None,
    ) -> T:
        """Dump until ``attempt`` returns a value, or fail with ``ExpectedFailure`` naming ``what``.

        The first attempt may use the cached snapshot; every later one dumps afresh.
        """
        limit = self.find_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        fresh = False
        while True:
            self.check_cancelled()
            screen = self.screen(fresh=fresh)
            found = attempt(screen)
            if found is not None:
                return found
            if fresh and time.monotonic() >= deadline:
                message = what() if callable(what) else what
                raise ExpectedFailure(f"{message} (waited {limit:g}s; {screen_summary(screen)})")
            if fresh:
                self.sleep(self.options.poll_interval if interval is None else interval)
            fresh = True


class _ConditionScope:
    def __init__(self, context: ExecutionContext) -> None:
        self.context = context

    def __enter__(self) -> None:
        self.context._condition_depth += 1

    def __exit__(self, *exc: object) -> None:
        self.context._condition_depth -= 1
