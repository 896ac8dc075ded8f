"""Fault injection: which received command lines reach the device, when, and with what answer.

The knobs are ``spec.Faults`` (tests may change them while a server runs); ``admit`` applies
the transport faults (a dropped connection, delays) to each received line, ``override`` the
per-command answers. Both the fake adb server and ``ModelDevice`` go through here, so a fault
behaves the same with and without sockets.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import NamedTuple

from fakeadb.result import CommandResult
from fakeadb.state import DeviceState, Event


class Admission(NamedTuple):
    """Whether a received command line runs: ``dropped`` means the transport dies now."""

    dropped: bool
    delay: float


class FaultInjector:
    """The fault knobs of one device (``state.faults``) applied to what it receives."""

    def __init__(self, state: DeviceState) -> None:
        self.state = state
        self._served = 0

    def admit(self, line: str) -> Admission:
        """Record a received shell line and decide whether and when it runs."""
        state = self.state
        with state.lock:
            state.commands.append(line)
            limit = state.faults.disconnect_after
            if limit is not None and self._served >= limit:
                state.status = "gone"
                state.events.append(Event(kind="disconnect", detail=line))
                return Admission(dropped=True, delay=0.0)
            self._served += 1
            delay = state.faults.delay + sum(
                seconds
                for prefix, seconds in state.faults.delays.items()
                if line.startswith(prefix)
            )
            return Admission(dropped=False, delay=delay)

    def override(self, argv: Sequence[str]) -> CommandResult | None:
        """The override answering this command, if any (consumes one use)."""
        line = shlex.join(argv)
        with self.state.lock:
            for rule in self.state.faults.overrides:
                if line.startswith(rule.match) and rule.times != 0:
                    if rule.times is not None:
                        rule.times -= 1
                    return CommandResult.of(rule.stdout, rule.stderr, rule.returncode)
        return None
