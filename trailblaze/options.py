"""Options of a check, and the environment variables that set them.

Kept free of heavy imports: doit's task creation reads them on every run, even a no-op.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

DISABLE_ENV = "TRAILBLAZE_DISABLE_TRAIL_RECORDING_VALIDATION"
REQUIRE_ENV = "TRAILBLAZE_REQUIRE_TYPECHECK"
REMOTE_ENV = "TRAILBLAZE_REMOTE_CACHE"
REMOTE_READ_ONLY_ENV = "TRAILBLAZE_REMOTE_CACHE_READ_ONLY"


def env_flag(name: str, env: Mapping[str, str] | None = None) -> bool:
    """`1` or `true` (any case, surrounding spaces ignored); anything else is off."""
    value = (env if env is not None else os.environ).get(name, "")
    return value.strip().lower() in ("1", "true")


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
        require_typecheck: bool = False,
        remote_cache: str | None = None,
        remote_read_only: bool = False,
    ) -> CheckOptions:
        remote = remote_cache if remote_cache is not None else os.environ.get(REMOTE_ENV, "")
        return cls(
            strict=strict,
            typecheck=not env_flag(DISABLE_ENV),
            require_typecheck=require_typecheck or env_flag(REQUIRE_ENV),
            remote_cache=remote.strip() or None,
            remote_read_only=remote_read_only or env_flag(REMOTE_READ_ONLY_ENV),
        )
