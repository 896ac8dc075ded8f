"""`trailblaze check --show-typed-tools`: each trailmap's typed tools, as the surface has them.

A debug listing, as in the reference: never fatal, and it changes nothing in the work tree. One
line per tool: its name, its arguments (`?` marks an optional one), what kind of tool it is and
where it comes from. A scripted tool, typed by its TypeScript module, is shown as the type gate's
compiler types it (`check/typegate/tooltypes.py`): each field with its type, the result type,
and the file and line of the export that defines it; where the compiler gave no type, why.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from trailblaze.check.typegate.tooltypes import ToolTypes, Untyped
from trailblaze.toolmodel.records import ToolDef, ToolEntry
from trailblaze.workspace import Workspace, scan_trailmaps


def typed_tools_listing(ws: Workspace, trailmaps: Iterable[str]) -> str:
    from trailblaze.check.discover import load_manifests  # noqa: PLC0415
    from trailblaze.check.typegate.settings import timeout_seconds  # noqa: PLC0415
    from trailblaze.check.typegate.tooltypes import scripted_tool_types  # noqa: PLC0415
    from trailblaze.state.scratch import Layout  # noqa: PLC0415
    from trailblaze.toolchain.compilers import (  # noqa: PLC0415
        Compiler,
        ToolchainError,
        find_compiler,
    )
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
    # Looked up once, by the first trailmap with scripted tools: finding it asks the compiler
    # its version (a process). A str: why there is none.
    compiler: Compiler | str | None = None
    for trailmap in trailmaps:
        if trailmap not in manifests.trailmaps:
            lines.append(f"typed tools of trailmap '{trailmap}': none (its manifest did not load)")
            continue
        entries = [e for e in resolver.resolve(trailmap).entries if e.recordable]
        scripted = [e.name for e in entries if e.input_schema is None]
        typed: dict[str, ToolTypes | Untyped] = {}
        if scripted:
            if compiler is None:
                try:
                    compiler = find_compiler()
                except ToolchainError as exc:
                    compiler = f"no compiler: {exc}"
            if isinstance(compiler, str):
                typed = dict.fromkeys(scripted, Untyped(compiler))
            else:
                typed = scripted_tool_types(
                    Layout(ws.scratch), trailmap, scripted, compiler, timeout=timeout_seconds()
                )
        lines.append(f"typed tools of trailmap '{trailmap}': {len(entries)}")
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.input_schema is None:
                lines.append(
                    f"  {_scripted(entry, typed.get(entry.name), resolver.module_def(entry))}"
                )
            else:
                lines.append(f"  {_line(entry)}")
    return "".join(f"{line}\n" for line in lines)


def _line(entry: ToolEntry) -> str:
    return f"{entry.name}({_arguments(entry)})  [{entry.kind}, {entry.source}]"


def _scripted(entry: ToolEntry, typed: ToolTypes | Untyped | None, where: ToolDef | None) -> str:
    source = f"{where.path}:{where.line}" if where is not None else entry.source
    if not isinstance(typed, ToolTypes):
        why = typed.reason if typed is not None else "the compiler was not asked"
        return f"{entry.name}(typed by its module; not shown: {why})  [{entry.kind}, {source}]"
    fields = [f"{f.name}{'?' if f.optional else ''}: {f.type}" for f in typed.fields]
    if typed.index is not None:
        fields.append(typed.index)
    return f"{entry.name}({', '.join(fields)}) -> {typed.result}  [{entry.kind}, {source}]"


def _arguments(entry: ToolEntry) -> str:
    schema: dict[str, Any] | None = entry.input_schema
    if schema is None:
        return "typed by its module"
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return "..." if schema.get("additionalProperties", True) is not False else ""
    required = set(schema.get("required") or ())
    return ", ".join(f"{name}{'' if name in required else '?'}" for name in properties)
