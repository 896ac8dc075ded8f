"""Which tool a recorded name is, for one trail: its trailmap's tools, else the framework's.

The trailmap's resolution (``resolve.Resolver``) decides first, so a trail sees exactly the
tools its surface declares (composed YAML tools with their bodies, scripted tools); names it
does not know fall back to the framework catalog. Schemas come back self-contained (``$defs``
attached), ready for ``arguments.parse_arguments``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trailblaze.catalog import JSON_SCHEMA_DIALECT, Catalog
from trailblaze.finding import did_you_mean
from trailblaze.resolve import Resolution


@dataclass(frozen=True, slots=True)
class ResolvedTool:
    name: str
    kind: str
    """``framework``, ``yaml`` (composed), or a scripted kind (``module``, ``descriptor``, ...)."""
    schema: dict[str, Any] | None
    body: tuple[tuple[str, Any], ...] = ()
    implementation: str | None = None
    """The framework tool that runs it (its own name, or the one a `class:` tool registers)."""


class ToolSource:
    def __init__(self, catalog: Catalog, resolution: Resolution | None = None) -> None:
        self.catalog = catalog
        self.resolution = resolution

    @property
    def trailmap(self) -> str | None:
        return self.resolution.trailmap if self.resolution else None

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
            return ResolvedTool(name, entry.kind, schema, entry.body, implementation)
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
