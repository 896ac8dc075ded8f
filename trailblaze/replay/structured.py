"""A tool's detail text that also carries a typed value, for scripted tools that call it.

A tool returns its detail as text (the log line, the report). A scripted tool's
``ctx.tools.X()`` resolves to X's typed result where X has one (``@trailblaze/scripting``
unwraps ``structuredContent``): ``mobile_listInstalledApps`` resolves to ``{appIds: [...]}``,
a scripted tool to the object it returned. ``Structured`` is that text with the value attached,
so neither the engine nor the reports need to know.
"""

from __future__ import annotations

from typing import Any


class Structured(str):
    """``str`` (the detail) with ``value``, the JSON value a scripted caller receives."""

    value: Any

    def __new__(cls, text: str, value: Any) -> Structured:
        made = super().__new__(cls, text)
        made.value = value
        return made


def structured_value(detail: str | None) -> Any:
    """The typed value carried by ``detail``, or None when it is plain text."""
    return detail.value if isinstance(detail, Structured) else None
