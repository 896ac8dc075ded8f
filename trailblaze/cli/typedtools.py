"""`trailblaze check --show-typed-tools`: each trailmap's typed tools, as the surface has them.

A debug listing, as in the reference: never fatal, and it changes nothing. One line per tool:
its name, its arguments (`?` marks an optional one; a tool typed by its TypeScript module says
so), what kind of tool it is and where it comes from.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from trailblaze.toolmodel.records import ToolEntry
from trailblaze.workspace import Workspace, scan_trailmaps


def typed_tools_listing(ws: Workspace, trailmaps: Iterable[str]) -> str:
    from trailblaze.check.discover import load_manifests  # noqa: PLC0415
    from trailblaze.toolmodel.bundled import discover  # noqa: PLC0415 - only this listing needs them
    from trailblaze.toolmodel.catalog import load_catalog  # noqa: PLC0415
    from trailblaze.toolmodel.resolution import Resolver  # noqa: PLC0415
    from trailblaze.workspace import Scan  # noqa: PLC0415

    listed, _ = scan_trailmaps(ws)
    manifests = load_manifests(ws, Scan(trailmaps=listed, trail_paths=(), findings=()))
    catalog = load_catalog()
    bundled = discover(catalog, workspace_targets=ws.targets_dir)
    resolver = Resolver(manifests.with_dirs(), ws.root, catalog, bundled.trailmaps)
    lines: list[str] = []
    for trailmap in trailmaps:
        if trailmap not in manifests.trailmaps:
            lines.append(f"typed tools of trailmap '{trailmap}': none (its manifest did not load)")
            continue
        entries = [e for e in resolver.resolve(trailmap).entries if e.recordable]
        lines.append(f"typed tools of trailmap '{trailmap}': {len(entries)}")
        lines.extend(f"  {_line(entry)}" for entry in sorted(entries, key=lambda e: e.name))
    return "".join(f"{line}\n" for line in lines)


def _line(entry: ToolEntry) -> str:
    return f"{entry.name}({_arguments(entry)})  [{entry.kind}, {entry.source}]"


def _arguments(entry: ToolEntry) -> str:
    schema: dict[str, Any] | None = entry.input_schema
    if schema is None:
        return "typed by its module"
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return "..." if schema.get("additionalProperties", True) is not False else ""
    required = set(schema.get("required") or ())
    return ", ".join(f"{name}{'' if name in required else '?'}" for name in properties)
