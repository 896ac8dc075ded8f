"""The tools a trail may record, as its target trailmap's resolved tool model has them.

The same model the check renders the surface from (`toolmodel.resolution`): each recordable
tool with its description and arguments, typed as the surface types them (`generate.tsrender`);
a scripted `.ts` tool with the file and line of the export that defines it, and its argument
types as the type gate's compiler gives them (`check.typegate.tooltypes`, asked once per
trailmap, when a hover or a completion first needs them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trailblaze.check.discover import load_manifests
from trailblaze.check.typegate.settings import timeout_seconds
from trailblaze.check.typegate.tooltypes import ToolTypes, Untyped, scripted_tool_types
from trailblaze.generate.tsrender import ordered_params, ts_type
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import ToolchainError, find_compiler
from trailblaze.toolmodel.bundled import discover
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.toolmodel.records import ToolEntry
from trailblaze.toolmodel.resolution import Resolver
from trailblaze.workspace import Scan, Workspace, scan_trailmaps

_TARGET = re.compile(r"""^\s*(?:-\s+)?target:\s*['"]?(?P<id>[^'"\s#]+)""", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Argument:
    name: str
    type: str
    required: bool
    description: str | None


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str | None
    kind: str
    arguments: tuple[Argument, ...] | None
    """None: typed by its module, and the compiler gave no types (`untyped` says why)."""
    definition: tuple[Path, int] | None
    """A scripted tool's source file and the line (1-based) of its export."""
    untyped: str | None = None

    def signature(self) -> str:
        if self.arguments is None:
            return f"{self.name}(typed by its module)"
        shown = ", ".join(f"{a.name}{'' if a.required else '?'}: {a.type}" for a in self.arguments)
        return f"{self.name}({shown})"


class ToolModel:
    """Every target trailmap's tools in one workspace, resolved as a check resolves them."""

    def __init__(self, ws: Workspace, scratch: Path) -> None:
        self.ws = ws
        self.scratch = scratch
        """The scratch directory of the checks whose type gate made the module surfaces."""
        listed, _ = scan_trailmaps(ws)
        manifests = load_manifests(ws, Scan(trailmaps=listed, trail_paths=(), findings=()))
        catalog = load_catalog()
        bundled = discover(catalog, workspace_targets=ws.targets_dir)
        self._resolver = Resolver(manifests.with_dirs(), ws.root, catalog, bundled.trailmaps)
        self._ids = {tm.id: name for name, tm in manifests.trailmaps.items() if tm.is_target}
        self._dirs = {name: Path(path) for name, path in manifests.dirs.items()}
        self._tools: dict[str, dict[str, Tool]] = {}

    def target_of(self, path: Path, text: str) -> str | None:
        """The trailmap a trail's text targets (`config.target`), else the one whose directory
        holds it."""
        match = _TARGET.search(text)
        if match is not None and match.group("id") in self._ids:
            return self._ids[match.group("id")]
        for name, directory in self._dirs.items():
            if path.resolve().is_relative_to(directory.resolve()) and name in self._ids.values():
                return name
        return None

    def tools(self, trailmap: str) -> Mapping[str, Tool]:
        known = self._tools.get(trailmap)
        if known is None:
            known = self._resolve(trailmap)
            if all(tool.untyped is None for tool in known.values()):
                # Kept once the compiler typed every scripted tool: before the first check
                # there is no module surface to ask, and a broken tool may be mended.
                self._tools[trailmap] = known
        return known

    def _resolve(self, trailmap: str) -> dict[str, Tool]:
        entries = [e for e in self._resolver.resolve(trailmap).entries if e.recordable]
        scripted = [e.name for e in entries if e.input_schema is None]
        typed: dict[str, ToolTypes | Untyped] = {}
        if scripted:
            try:
                compiler = find_compiler()
            except ToolchainError as exc:
                typed = dict.fromkeys(scripted, Untyped(f"no compiler: {exc}"))
            else:
                typed = scripted_tool_types(
                    Layout(self.scratch), trailmap, scripted, compiler, timeout=timeout_seconds()
                )
        return {e.name: self._tool(e, typed.get(e.name)) for e in entries}

    def _tool(self, entry: ToolEntry, typed: ToolTypes | Untyped | None) -> Tool:
        if entry.input_schema is not None:
            return Tool(
                entry.name, entry.description, entry.kind, _arguments(entry.input_schema), None
            )
        where = self._resolver.module_def(entry)
        definition = (self.ws.root / where.path, where.line) if where is not None else None
        if isinstance(typed, ToolTypes):
            arguments = tuple(Argument(f.name, f.type, not f.optional, None) for f in typed.fields)
            return Tool(entry.name, entry.description, entry.kind, arguments, definition)
        why = typed.reason if typed is not None else "the compiler was not asked"
        return Tool(entry.name, entry.description, entry.kind, None, definition, why)


def _arguments(schema: Mapping[str, Any]) -> tuple[Argument, ...]:
    found = []
    for name, sub, required in ordered_params(schema):
        description = sub.get("description") if isinstance(sub, Mapping) else None
        found.append(
            Argument(
                name, ts_type(sub), required, description if isinstance(description, str) else None
            )
        )
    return tuple(found)
