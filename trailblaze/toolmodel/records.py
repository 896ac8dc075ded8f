"""The tool model's records: manifests, the tools a trailmap defines, bundled trailmaps and a
trailmap's resolved surface.

They sit at the bottom of `toolmodel/` so that a module that only reads a record (a renderer,
a stage that passes one along) imports the record and not the code that computes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import msgspec

from trailblaze.finding import Finding
from trailblaze.toolmodel.catalog import Tool
from trailblaze.toolmodel.identity import ByIdentity


class Named(msgspec.Struct, frozen=True, kw_only=True):
    """A name from a manifest list, with where it was written."""

    value: str
    line: int
    column: int


class PlatformConfig(msgspec.Struct, frozen=True, kw_only=True):
    """One platform of a target: its app ids and the tool sets and tools it enables or excludes."""

    name: str
    app_ids: tuple[str, ...] = ()
    tool_sets: tuple[Named, ...] = ()
    tools: tuple[Named, ...] = ()
    excluded_tools: tuple[str, ...] = ()
    drivers: tuple[str, ...] = ()


class Trailmap(msgspec.Struct, frozen=True, kw_only=True):
    """A trailmap's manifest. `dir_name` is what trails target; `id` is what the manifest says."""

    id: str
    dir_name: str
    path: str
    is_target: bool
    display_name: str | None
    dependencies: tuple[Named, ...]
    exports: tuple[Named, ...]
    toolset_files: tuple[Named, ...]
    platforms: tuple[PlatformConfig, ...]
    defaults: tuple[PlatformConfig, ...]
    target_tools: tuple[Named, ...]
    exempt_reason: str | None
    line: int = 1
    column: int = 1

    @property
    def own_tool_sets(self) -> tuple[Named, ...]:
        """Union of `tool_sets` over the trailmap's own platforms, first occurrence wins."""
        seen: dict[str, Named] = {}
        for platform in self.platforms:
            for name in platform.tool_sets:
                seen.setdefault(name.value, name)
        return tuple(seen.values())

    @property
    def scripted_tools(self) -> tuple[Named, ...]:
        """`target.tools` plus every platform's `tools` (the loader hoists them), deduplicated."""
        seen: dict[str, Named] = {}
        for name in self.target_tools:
            seen.setdefault(name.value, name)
        for platform in self.platforms:
            for name in platform.tools:
                seen.setdefault(name.value, name)
        return tuple(seen.values())


class ManifestOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """A `trailmap.yaml` read: the trailmap, when it is one, and what was wrong with it."""

    trailmap: Trailmap | None
    findings: tuple[Finding, ...]


ToolKind = Literal["class", "yaml", "descriptor", "module"]


class ToolDef(msgspec.Struct, frozen=True, kw_only=True):
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


class ToolSetDef(msgspec.Struct, frozen=True, kw_only=True):
    """A tool set: the tools it names, the drivers it is for, whether it is always on."""

    id: str
    description: str | None
    always_enabled: bool
    drivers: tuple[str, ...]
    tools: tuple[Named, ...]
    path: str


class TrailmapTools(msgspec.Struct, frozen=True, kw_only=True):
    """What one trailmap directory defines: tools by name, module exports, tool sets."""

    tools: dict[str, ToolDef] = msgspec.field(default_factory=dict)
    modules: dict[str, ToolDef] = msgspec.field(default_factory=dict)
    toolsets: dict[str, ToolSetDef] = msgspec.field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    files: tuple[Path, ...] = ()


class BundledTrailmap(msgspec.Struct, frozen=True):
    """A trailmap from outside the workspace; `tools` is set for baked targets (inline tools)."""

    manifest: Trailmap
    directory: Path | None
    origin: str
    tools: TrailmapTools | None = None


class Bundled(msgspec.Struct, frozen=True):
    """The trailmaps shipped with us and installed packages', with what was wrong with them."""

    trailmaps: dict[str, BundledTrailmap]
    findings: tuple[Finding, ...]


EntryKind = Literal["framework", "class", "yaml", "descriptor", "module", "open"]


class ToolEntry(msgspec.Struct, frozen=True):
    """One tool of a trailmap's surface. `input_schema` is None when a TS module types it."""

    name: str
    kind: EntryKind
    description: str | None
    input_schema: dict[str, Any] | None
    recordable: bool
    surface_to_llm: bool
    requires_host: bool
    result: str | None
    source: str
    module: Path | None = None
    trailhead_to: str | None = None
    body: tuple[tuple[str, Any], ...] = ()
    implements: str | None = None
    """For a `class:` tool: the framework tool whose class it registers (replay runs that)."""


class Resolution(msgspec.Struct, frozen=True):
    """A target's tool model: every tool a trail may call, and the files it was resolved from."""

    trailmap: str
    entries: tuple[ToolEntry, ...]
    findings: tuple[Finding, ...]
    dependencies: tuple[str, ...]
    inputs: tuple[Path, ...]

    def entry(self, name: str) -> ToolEntry | None:
        for entry in self.entries:
            if entry.name == name:
                return entry
        return None


def framework_entry(tool: Tool, source: str) -> ToolEntry:
    """The tool map entry of a catalog tool, attributed to `source` (framework, sdk, a toolset).

    One entry per catalog tool and source, shared by every trailmap that has the tool (frozen;
    nothing changes its schema): what is worked out from an entry for a trailmap's surfaces
    (`tsrender.render_entry`, `trailschema`) is then worked out once for all of them."""
    return _FRAMEWORK_ENTRIES.get(
        tool,
        lambda: ToolEntry(
            name=tool.name,
            kind="framework",
            description=tool.description,
            input_schema=dict(tool.input_schema),
            recordable=tool.recordable,
            surface_to_llm=tool.surface_to_llm,
            requires_host=tool.requires_host,
            result=tool.result,
            source=source,
        ),
        source,
    )


_FRAMEWORK_ENTRIES: ByIdentity[ToolEntry] = ByIdentity()
"""`framework_entry` by (catalog tool, source)."""
