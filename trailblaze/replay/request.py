"""What a replay is asked to do (``ReplayRequest``), and the usage errors of asking.

``ReplayUsageError`` is a request that cannot run as given (no workspace, a missing trail file,
a bad ``--arg`` or classifier, no adb, no device or several without ``--device``): exit 2 with
its message, raised before anything is sent to a device.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from trailblaze.errors import TrailblazeError
from trailblaze.finding import did_you_mean
from trailblaze.replay.plan import TrailPlan

ARG_PATTERN_HELP = "NAME=VALUE"


class ReplayUsageError(TrailblazeError):
    """The request cannot run as given: exit 2 with the message."""


@dataclass(frozen=True, slots=True)
class ReplayRequest:
    trails: tuple[Path, ...] = ()
    """Trail files or directories; empty means every trail of the workspace."""
    workspace: Path | None = None
    """Where to look for the workspace when no trails are named (default: the current dir)."""
    serials: tuple[str, ...] = ()
    """The devices (``--device``, repeatable); default ``ANDROID_SERIAL``, else the only one."""
    all_devices: bool = False
    """Replay on every ready device (``--all-devices``), with ``serials`` or without."""
    args: tuple[str, ...] = ()
    """``NAME=VALUE`` trail arguments."""
    classifier: str | None = None
    json_path: Path | None = None
    junit_path: Path | None = None


def parse_arg_values(values: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ReplayUsageError(f"--arg {value!r}: expected {ARG_PATTERN_HELP}")
        out[name] = text
    return out


def check_args(args: Mapping[str, str], plans: Sequence[TrailPlan]) -> None:
    """Every ``--arg`` name must be declared by a trail of the run."""
    declared = frozenset().union(*(p.declared_args for p in plans))
    for name in args:
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise ReplayUsageError(
                f"--arg {name}: no trail here declares argument '{name}'"
                f"{did_you_mean(name, declared)} (declared: {known})"
            )
