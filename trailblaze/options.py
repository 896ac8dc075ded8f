"""Options of a check, and the environment variables that set them.

Kept free of heavy imports: doit's task creation reads them on every run, even a no-op.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)

DISABLE_ENV = "TRAILBLAZE_DISABLE_TRAIL_RECORDING_VALIDATION"
REQUIRE_ENV = "TRAILBLAZE_REQUIRE_TYPECHECK"
REMOTE_ENV = "TRAILBLAZE_REMOTE_CACHE"
REMOTE_READ_ONLY_ENV = "TRAILBLAZE_REMOTE_CACHE_READ_ONLY"
CI_ENV = "CI"
_ON = ("1", "true")
_OFF = ("0", "false")


def env_flag(name: str, env: Mapping[str, str] | None = None) -> bool:
    """`1` or `true` (any case, surrounding spaces ignored); anything else is off."""
    value = (env if env is not None else os.environ).get(name, "")
    return value.strip().lower() in _ON


def env_milliseconds(
    name: str, default: float, *, floor: float, env: Mapping[str, str] | None = None
) -> float:
    """Seconds from a `*_MS` variable: `default` when unset, at least `floor`. A value that is
    not a finite number of milliseconds (`abc`, `nan`, `inf`) is `default`, with a warning
    (as the reference's timeouts fall back): `nan` or `inf` reached the clock as a traceback."""
    raw = (env if env is not None else os.environ).get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw) / 1000.0
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        log.warning(
            "%s=%r is not a number of milliseconds; using %s", name, raw, f"{default * 1000:g}"
        )
        return default
    return max(value, floor)


def in_ci(env: Mapping[str, str] | None = None) -> bool:
    """`CI` is set to anything but empty, `0` or `false` (CI services set `CI=true`)."""
    value = (env if env is not None else os.environ).get(CI_ENV, "").strip().lower()
    return value not in ("", *_OFF)


def typecheck_required(explicit: bool | None = None, env: Mapping[str, str] | None = None) -> bool:
    """Whether a type check that could not run fails the check (exit 3).

    The command line wins (`--require-typecheck` / `--no-require-typecheck`), then
    `TRAILBLAZE_REQUIRE_TYPECHECK` (`1`/`true` on, `0`/`false` off), then `CI`: in CI a
    check that did not really check must not pass.
    """
    if explicit is not None:
        return explicit
    value = (env if env is not None else os.environ).get(REQUIRE_ENV, "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    return in_ci(env)


@dataclass(frozen=True, slots=True)
class CheckOptions:
    strict: bool = True
    typecheck: bool = True
    require_typecheck: bool = False
    install: bool = True
    """Install the pinned compiler through npm when it is missing."""
    remote_cache: str | None = None
    """Base URL of a shared result cache (Bazel's HTTP remote-cache protocol; `remote.py`)."""
    remote_read_only: bool = False
    shard: tuple[int, int] | None = None
    """(K, N): check only the K-th of N shards of the trails (`shard.py`)."""

    @classmethod
    def from_env(
        cls,
        *,
        strict: bool = True,
        require_typecheck: bool | None = None,
        remote_cache: str | None = None,
        remote_read_only: bool = False,
    ) -> CheckOptions:
        remote = remote_cache if remote_cache is not None else os.environ.get(REMOTE_ENV, "")
        return cls(
            strict=strict,
            typecheck=not env_flag(DISABLE_ENV),
            require_typecheck=typecheck_required(require_typecheck),
            remote_cache=remote.strip() or None,
            remote_read_only=remote_read_only or env_flag(REMOTE_READ_ONLY_ENV),
        )
