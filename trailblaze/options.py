"""Options of a check, and the environment variables that set them.

Kept free of heavy imports: doit's task creation reads them on every run, even a no-op.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

DISABLE_ENV = "TRAILBLAZE_DISABLE_TRAIL_RECORDING_VALIDATION"
REQUIRE_ENV = "TRAILBLAZE_REQUIRE_TYPECHECK"


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

    @classmethod
    def from_env(cls, *, strict: bool = True, require_typecheck: bool = False) -> CheckOptions:
        return cls(
            strict=strict,
            typecheck=not env_flag(DISABLE_ENV),
            require_typecheck=require_typecheck or env_flag(REQUIRE_ENV),
        )
