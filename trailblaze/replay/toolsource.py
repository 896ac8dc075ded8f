"""Which tool a recorded name is, for one trail: its trailmap's tools, else the framework's.

The trailmap's resolution (``resolution.Resolver``) decides first, so a trail sees exactly the
tools its surface declares (composed YAML tools with their bodies, scripted tools); names it
does not know fall back to the framework catalog. Schemas come back self-contained (``$defs``
attached), ready for ``arguments.parse_arguments``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trailblaze.finding import did_you_mean
from trailblaze.toolmodel.catalog import JSON_SCHEMA_DIALECT, Catalog
from trailblaze.toolmodel.records import Resolution
from trailblaze.toolmodel.resolution import ships_runif
from trailblaze.trail.model import ToolCall

#: Composed tools inside composed tools: the engine stops at a cycle, so does this check.
_MAX_BODY_DEPTH = 8

if TYPE_CHECKING:
    from trailblaze.replay.scripted import TrailmapScripts
    from trailblaze.replay.waypoints import WaypointScope


@dataclass(frozen=True, slots=True)
class ResolvedTool:
    name: str
    kind: str
    """``framework``, ``yaml`` (composed), or a scripted kind (``module``, ``descriptor``, ...)."""
    schema: dict[str, Any] | None
    body: tuple[tuple[str, Any], ...] = ()
    implementation: str | None = None
    """The framework tool that runs it (its own name, or the one a `class:` tool registers)."""
    module: Path | None = None
    """For a scripted tool: the module that defines it."""
    source: str | None = None
    """Where the tool is defined (workspace-relative), e.g. a descriptor's YAML file."""


class ToolSource:
    def __init__(
        self,
        catalog: Catalog,
        resolution: Resolution | None = None,
        scripts: TrailmapScripts | None = None,
        waypoints: WaypointScope | None = None,
    ) -> None:
        self.catalog = catalog
        self.resolution = resolution
        self.scripts = scripts
        self.waypoints = waypoints
        """What ``assertWaypoint`` sees (None: no workspace, no waypoints)."""
        """Runs the trailmap's scripted tools (None: no workspace, so no scripted tools)."""

    @property
    def trailmap(self) -> str | None:
        return self.resolution.trailmap if self.resolution else None

    @property
    def ships_runif(self) -> bool:
        """The trailmap's `runIf` is its own (or a dependency's): it runs, not our conditional."""
        return ships_runif(self.resolution)

    def lookup(self, name: str) -> ResolvedTool | None:
        entry = self.resolution.entry(name) if self.resolution else None
        if entry is not None:
            schema = None
            if entry.input_schema is not None:
                schema = {
                    "$schema": JSON_SCHEMA_DIALECT,
                    **entry.input_schema,
                    "$defs": dict(self.catalog.defs),
                }
            if entry.kind == "class" and entry.implements is not None:
                # A workspace *.tool.yaml registering a framework class under its own id.
                return ResolvedTool(name, "framework", schema, implementation=entry.implements)
            implementation = name if entry.kind == "framework" else None
            return ResolvedTool(
                name,
                entry.kind,
                schema,
                entry.body,
                implementation,
                module=entry.module,
                source=entry.source,
            )
        return self.lookup_framework(name)

    def lookup_framework(self, name: str) -> ResolvedTool | None:
        """``name`` in the framework catalog only, whatever the trailmap defines."""
        tool = self.catalog.tool(name)
        if tool is None:
            return None
        return ResolvedTool(name, "framework", self.catalog.schema_for(tool), implementation=name)

    def unknown(self, name: str) -> str:
        """Why ``name`` names no tool, with a "did you mean"."""
        names = set(self.catalog.tools)
        if self.resolution is not None:
            names |= {entry.name for entry in self.resolution.entries}
        where = f"trailmap '{self.trailmap}' or the framework" if self.trailmap else "the framework"
        return f"no tool of that name in {where}{did_you_mean(name, frozenset(names))}"


def unreplayable(call: ToolCall, source: ToolSource, depth: int = 0) -> str | None:
    """Why Android replay cannot perform ``call`` at all, or None (checked before a trail runs).

    A refused framework tool (``tools.REFUSED``), a composed tool whose body reaches one, a
    ``mobile_maestro`` command Android replay does not know and a recorded selector with a
    field no uiautomator dump carries are all known before anything is sent; everything else
    is decided when the call runs.
    """
    # Imported here: the tool registry imports the device layer, which `lookup` never needs.
    from trailblaze.replay.tools import REFUSED  # noqa: PLC0415
    from trailblaze.replay.tools.maestro import COMMANDS  # noqa: PLC0415

    return _why_not(
        call.name,
        call.args.to_python() if call.args is not None else None,
        source=source,
        refused=REFUSED,
        maestro=frozenset(COMMANDS),
        depth=depth,
    )


def _why_not(
    name: str,
    raw: Any,
    *,
    source: ToolSource,
    refused: Mapping[str, str],
    maestro: frozenset[str],
    depth: int,
) -> str | None:
    resolved = source.lookup(name)
    if resolved is None or depth > _MAX_BODY_DEPTH:
        return None
    implementation = resolved.implementation or name
    if resolved.kind == "framework" and implementation in refused:
        return f"tool '{name}' cannot run on Android replay: {refused[implementation]}"
    if resolved.kind == "yaml":
        for inner, inner_raw in resolved.body:
            why = _why_not(
                inner, inner_raw, source=source, refused=refused, maestro=maestro, depth=depth + 1
            )
            if why is not None:
                return f"composed tool '{name}' calls {inner}, which {why.split(': ', 1)[-1]}"
    if implementation == "mobile_maestro" and isinstance(raw, dict):
        commands = raw.get("commands")
        for i, command in enumerate(commands if isinstance(commands, list) else []):
            if isinstance(command, dict) and len(command) == 1:
                (command_name,) = command
                if command_name not in maestro:
                    return (
                        f"mobile_maestro commands[{i}]: Maestro command '{command_name}' is not "
                        f"supported by Android replay (supported: {', '.join(sorted(maestro))})"
                    )
    if resolved.kind == "framework" and isinstance(raw, dict):
        return _unreadable_selector(name, raw)
    return None


#: The arguments of the framework tools that hold a ``TrailblazeNodeSelector``.
_SELECTOR_ARGS = ("nodeSelector", "selector")


def _unreadable_selector(name: str, raw: Mapping[str, Any]) -> str | None:
    """Why a recorded selector can never be found on a uiautomator dump (a field the dump
    does not carry, such as ``collectionItemRowIndex``), or None; the call would fail the
    same way when it runs, after the calls before it."""
    # Imported here: planning never needs the matcher otherwise.
    from trailblaze.replay.selector import SelectorError, compile_selector  # noqa: PLC0415

    for key in _SELECTOR_ARGS:
        selector = raw.get(key)
        if not isinstance(selector, Mapping):
            continue
        try:
            compile_selector(selector)
        except SelectorError as exc:
            if "cannot be resolved from a uiautomator dump" in str(exc):
                return (
                    f"tool '{name}' {key}: {exc}, which is what Android replay reads the "
                    "screen from, so the element the recording names cannot be found"
                )
    return None
