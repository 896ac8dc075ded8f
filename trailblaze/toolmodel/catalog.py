"""The framework tool catalog: one typed, read-only model of every built-in Trailblaze tool.

This module owns loading ``trailblaze/data/catalog.json``: the framework tools (names, flags,
JSON-Schema inputs), the selector grammar as JSON-Schema ``$defs``, the built-in tool sets and
the built-in library trailmap manifests. Surfaces, trail JSON Schemas, the arg-type sidecar and
replay argument validation are all derived from it; none of them should read the JSON directly.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal

import msgspec

from trailblaze import DATA_DIR
from trailblaze.state.keys import content_digest

FORMAT_VERSION: Final = 1
"""The ``format_version`` this loader understands."""

JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

Origin = Literal["class", "hand", "yaml", "script", "builtin"]
_ORIGINS: Final = frozenset({"class", "hand", "yaml", "script", "builtin"})


class CatalogError(Exception):
    """The catalog data is not in the shape this loader expects (a packaging bug)."""


@dataclass(frozen=True, slots=True)
class Tool:
    """One framework tool.

    ``platforms`` is empty for tools that no tool set delivers (the selector tools, ``exec``, ...):
    they carry no platform restriction in the catalog and are dispatched by name.
    ``surface`` is False for tools that are never emitted into a generated typed surface;
    ``note`` says why (and carries other caveats worth knowing about the tool).
    """

    name: str
    description: str
    origin: Origin
    kotlin_class: str | None
    recordable: bool
    surface_to_llm: bool
    requires_host: bool
    is_verification: bool
    platforms: tuple[str, ...]
    result: str | None
    deprecated: bool
    surface: bool
    note: str | None
    input_schema: Mapping[str, Any] = field(hash=False, repr=False)

    @property
    def required(self) -> tuple[str, ...]:
        """Names of the required arguments, in declaration order."""
        return tuple(self.input_schema.get("required", ()))

    @property
    def properties(self) -> tuple[tuple[str, Mapping[str, Any]], ...]:
        """``(name, schema)`` for every argument, in Kotlin declaration order."""
        return tuple(self.input_schema.get("properties", {}).items())


class ToolSet(msgspec.Struct, frozen=True):
    """A built-in tool set. An empty ``drivers`` means the set applies to every driver."""

    id: str
    description: str
    always_enabled: bool
    drivers: tuple[str, ...]
    tools: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BuiltinTrailmap:
    """A library trailmap shipped with the framework, as its ``trailmap.yaml`` would read."""

    id: str
    manifest: Mapping[str, Any] = field(hash=False)


@dataclass(frozen=True, slots=True)
class Catalog:
    """All framework tools, tool sets, selector definitions and built-in trailmaps."""

    tools: Mapping[str, Tool]
    toolsets: Mapping[str, ToolSet]
    trailmaps: Mapping[str, BuiltinTrailmap]
    defs: Mapping[str, Any]
    hand_curated_recordable: frozenset[str]
    version: str
    _by_class: Mapping[str, Tool] = field(repr=False, compare=False, hash=False)

    def tool(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def by_kotlin_class(self, fqn: str) -> Tool | None:
        """The tool backed by the Kotlin class ``fqn`` (as written in a ``*.tool.yaml``)."""
        return self._by_class.get(fqn)

    def recordable_tools(self) -> list[Tool]:
        """Every tool that may appear in a recording, sorted by name.

        This includes tools whose ``surface`` is False; a surface generator filters on it.
        """
        return sorted((t for t in self.tools.values() if t.recordable), key=lambda t: t.name)

    def resolve_toolsets(self, names: Iterable[str]) -> list[Tool]:
        """Tools of the named sets plus of every always-enabled set, each tool once.

        Named sets come first in the given order, then the always-enabled sets by id; within
        that order the first occurrence of a tool wins. An unknown set name raises ``KeyError``
        carrying that name.
        """
        chosen: list[ToolSet] = []
        for name in names:
            toolset = self.toolsets.get(name)
            if toolset is None:
                raise KeyError(name)
            chosen.append(toolset)
        chosen.extend(ts for ts in self.toolsets.values() if ts.always_enabled)
        seen: set[str] = set()
        resolved: list[Tool] = []
        for toolset in chosen:
            for tool_name in toolset.tools:
                if tool_name not in seen:
                    seen.add(tool_name)
                    resolved.append(self.tools[tool_name])
        return resolved

    def schema_for(self, tool: Tool) -> dict[str, Any]:
        """A self-contained JSON Schema (draft 2020-12) for ``tool``'s arguments.

        The result is a fresh copy; callers may modify it.
        """
        schema: dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT, "title": tool.name}
        schema.update(copy.deepcopy(dict(tool.input_schema)))
        schema["$defs"] = copy.deepcopy(dict(self.defs))
        return schema


def _tool(raw: Mapping[str, Any]) -> Tool:
    origin = raw["origin"]
    if origin not in _ORIGINS:
        raise CatalogError(f"tool {raw['name']!r}: unknown origin {origin!r}")
    return Tool(
        name=raw["name"],
        description=raw["description"],
        origin=origin,
        kotlin_class=raw["kotlin_class"],
        recordable=raw["recordable"],
        surface_to_llm=raw["surface_to_llm"],
        requires_host=raw["requires_host"],
        is_verification=raw["is_verification"],
        platforms=tuple(raw["platforms"]),
        result=raw["result"],
        deprecated=raw["deprecated"],
        surface=raw["surface"],
        note=raw.get("note"),
        input_schema=raw["input"],
    )


def parse_catalog(data: bytes) -> Catalog:
    """Build a :class:`Catalog` from the bytes of a catalog JSON file."""
    raw = json.loads(data)
    if raw.get("format_version") != FORMAT_VERSION:
        raise CatalogError(
            f"catalog format_version {raw.get('format_version')!r}, expected {FORMAT_VERSION}"
        )
    tools: dict[str, Tool] = {}
    by_class: dict[str, Tool] = {}
    for entry in raw["tools"]:
        tool = _tool(entry)
        if tool.name in tools:
            raise CatalogError(f"duplicate tool {tool.name!r}")
        tools[tool.name] = tool
        if tool.kotlin_class is not None:
            by_class[tool.kotlin_class] = tool
    toolsets: dict[str, ToolSet] = {}
    for entry in raw["toolsets"]:
        toolset = ToolSet(
            id=entry["id"],
            description=entry["description"],
            always_enabled=entry["always_enabled"],
            drivers=tuple(entry["drivers"]),
            tools=tuple(entry["tools"]),
        )
        unknown = [name for name in toolset.tools if name not in tools]
        if unknown:
            raise CatalogError(f"tool set {toolset.id!r} lists unknown tools {unknown}")
        toolsets[toolset.id] = toolset
    trailmaps = {m["id"]: BuiltinTrailmap(id=m["id"], manifest=m) for m in raw["trailmaps"]}
    return Catalog(
        tools=MappingProxyType(tools),
        toolsets=MappingProxyType(toolsets),
        trailmaps=MappingProxyType(trailmaps),
        defs=MappingProxyType(raw["defs"]),
        hand_curated_recordable=frozenset(raw["hand_curated_recordable"]),
        version=content_digest(data),
        _by_class=MappingProxyType(by_class),
    )


@functools.cache
def load_catalog() -> Catalog:
    """The catalog bundled with this package (read once per process)."""
    data = Path(DATA_DIR, "catalog.json").read_bytes()
    return parse_catalog(data)
