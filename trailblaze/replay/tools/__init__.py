"""The Android implementations of the recordable tools replay supports, by name.

Each tool is a function ``(context, args) -> detail`` that receives arguments already parsed
with its JSON Schema (defaults applied) and raises a ``failure.ToolFailure`` (or a device-layer
error, which the engine classifies) when it does not succeed. ``mutates`` says whether the
screen snapshot must be dropped afterwards; verifications and queries leave it.

``REFUSED`` names the Android-recordable tools Android replay cannot perform, with the reason;
a trail that would call one is refused before it starts. Any other tool not in
``ANDROID_TOOLS`` is "not supported by this device" (``runIf`` and composed YAML tools are the
engine's own).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from trailblaze.replay.tools import (
    apps,
    commands,
    files,
    gestures,
    keys,
    maestro,
    memory,
    queries,
    screen,
    system,
    trails,
    waypoint,
)
from trailblaze.replay.tools.base import ToolFn, ToolImpl
from trailblaze.replay.tools.refused import REFUSED

__all__ = ["ANDROID_TOOLS", "REFUSED", "ToolFn", "ToolImpl"]


def _registry() -> Mapping[str, ToolImpl]:
    tools: dict[str, ToolImpl] = {}
    for module in (
        apps,
        commands,
        files,
        gestures,
        keys,
        maestro,
        memory,
        queries,
        screen,
        system,
        trails,
        waypoint,
    ):
        for impl in module.TOOLS:
            if impl.name in tools:
                raise RuntimeError(f"tool {impl.name!r} is implemented twice")
            if impl.name in REFUSED:
                raise RuntimeError(f"tool {impl.name!r} is both implemented and refused")
            tools[impl.name] = impl
    return MappingProxyType(tools)


ANDROID_TOOLS: Mapping[str, ToolImpl] = _registry()
