"""What a tool implementation is, and the argument readers tools share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import ToolError

ToolFn = Callable[[ExecutionContext, dict[str, Any]], "str | None"]


@dataclass(frozen=True, slots=True)
class ToolImpl:
    name: str
    run: ToolFn
    mutates: bool = True
    """False for verifications and queries: the screen snapshot stays valid after them."""


def opt_str(args: dict[str, Any], name: str) -> str | None:
    value = args.get(name)
    return value if isinstance(value, str) else None


def opt_bool(args: dict[str, Any], name: str) -> bool | None:
    value = args.get(name)
    return value if isinstance(value, bool) else None


def index_arg(args: dict[str, Any], name: str = "index") -> int | None:
    """An index argument; some tools declare it a string (as Kotlin does), e.g. ``"2"``."""
    value = args.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ToolError(f"'{name}' must not be negative, got {value}")
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise ToolError(f"'{name}' must be a whole number >= 0, got {value!r}")
