"""What a trailmap directory defines: its tools, its module exports and its tool sets."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trailblaze.finding import Finding
from trailblaze.toolmodel.manifest import Named

ToolKind = Literal["class", "yaml", "descriptor", "module"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDef:
    """One workspace tool. `input_schema` is None for module tools: tsc owns their type."""

    name: str
    kind: ToolKind
    description: str | None
    input_schema: dict[str, Any] | None
    recordable: bool
    surface_to_llm: bool
    requires_host: bool
    is_verification: bool
    path: str
    line: int
    column: int
    module: Path | None = None
    auto: bool = False
    """A module export declared with `trailblaze.tool(...)`: discovered without a manifest entry."""
    implements: str | None = None
    """For a `class:` tool: the framework tool whose class it registers."""
    trailhead_to: str | None = None
    body: tuple[tuple[str, Any], ...] = ()
    """For composed tools: the (tool name, raw args) calls it runs, for replay."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSetDef:
    id: str
    description: str | None
    always_enabled: bool
    drivers: tuple[str, ...]
    tools: tuple[Named, ...]
    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TrailmapTools:
    """What one trailmap directory defines: tools by name, module exports, tool sets."""

    tools: dict[str, ToolDef] = field(default_factory=dict)
    modules: dict[str, ToolDef] = field(default_factory=dict)
    toolsets: dict[str, ToolSetDef] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    files: tuple[Path, ...] = ()
