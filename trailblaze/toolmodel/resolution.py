"""Which tools a trailmap's trails may record: the per-trailmap tool resolution.

Sources are merged in the reference's order, first write wins by name:

1. tools of the trailmap's own tool sets (`tool_sets:` of its platforms; the always-enabled
   sets come with them), recordable or not;
2. every recordable framework tool, whatever the tool sets say;
3. the trailmap's own YAML-defined tools (`*.tool.yaml`, shortcuts, trailheads);
4. the trailmap's own scripted tools (`target.tools`, each platform's `tools`, and every
   `export const x = trailblaze.tool(...)` of its `tools/` modules, which need no manifest entry);
5. the tools its dependencies export, breadth first, each dependency once;
6. our own tools the reference does not have (`runIf`): a trailmap or a dependency that ships
   a tool of that name replaces ours, as the seed design says a target may ("a target that
   wants a different conditional can ship its own"); `ships_runif` tells which one a trailmap
   gets;
7. the SDK's hand-typed author utilities (`findMatches`, `exec`, ...), as the reference's SDK
   always declares them.

Unknown dependencies, dependency cycles, unknown tool sets, unresolvable exports and two
dependencies exporting one name are located errors. A scripted tool the manifest names but no
module or descriptor defines is a loud warning and gets open arguments, so calls to it are
still checked by name.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from trailblaze import __version__, codes
from trailblaze.finding import Finding, did_you_mean
from trailblaze.state.keys import digest
from trailblaze.toolmodel.catalog import Catalog, ToolSet
from trailblaze.toolmodel.records import (
    BundledTrailmap,
    EntryKind,
    Named,
    Resolution,
    ToolDef,
    ToolEntry,
    ToolSetDef,
    Trailmap,
    TrailmapTools,
    framework_entry,
)
from trailblaze.toolmodel.tooldefs import RelPath, load_trailmap_tools

OPEN_ARGS: dict[str, Any] = {"type": "object", "additionalProperties": True}


class Node(msgspec.Struct, frozen=True):
    """A trailmap as the resolver sees it: from the workspace, or built into the catalog."""

    id: str
    manifest: Trailmap | None
    directory: Path | None
    baked: TrailmapTools | None = None
    """Tools known without reading a directory (a baked target's inline tools)."""

    @property
    def dependencies(self) -> tuple[Named, ...]:
        return self.manifest.dependencies if self.manifest else ()


class Resolver:
    """Resolves the trailmaps of a workspace, reading each trailmap's tool files once.

    Tool files are read when a resolution first needs them (the trailmap itself or one of
    its dependencies), so resolving one trailmap does not read the whole workspace.
    """

    def __init__(
        self,
        trailmaps: dict[str, tuple[Trailmap, Path]],
        root: Path,
        catalog: Catalog,
        bundled: Mapping[str, BundledTrailmap] | None = None,
    ) -> None:
        self.catalog = catalog
        self.rel = RelPath(root)
        self.nodes: dict[str, Node] = {}
        for dir_name, (manifest, directory) in trailmaps.items():
            self.nodes[dir_name] = Node(id=dir_name, manifest=manifest, directory=directory)
        for bundled_id, item in (bundled or {}).items():
            if bundled_id in self.nodes:
                continue  # a workspace trailmap with the same id wins
            self.nodes[bundled_id] = Node(
                id=bundled_id, manifest=item.manifest, directory=item.directory, baked=item.tools
            )
        for builtin in catalog.trailmaps:
            self.nodes.setdefault(builtin, Node(id=builtin, manifest=None, directory=None))
        self._tools: dict[str, TrailmapTools] = {}
        self._reported: set[str] = set()

    def _tools_of(self, node_id: str) -> TrailmapTools:
        """A trailmap's tools, read from its directory the first time they are asked for."""
        tools = self._tools.get(node_id)
        if tools is None:
            node = self.nodes[node_id]
            if node.baked is not None:
                tools = node.baked
            elif node.directory is not None:
                tools = load_trailmap_tools(node.directory, self.rel, self.catalog)
            else:
                tools = TrailmapTools()
            self._tools[node_id] = tools
        return tools

    def module_def(self, entry: ToolEntry) -> ToolDef | None:
        """The module export a scripted entry of a resolved model came from: where it is
        defined (`--show-typed-tools`)."""
        for tools in self._tools.values():
            for found in (tools.modules.get(entry.name), tools.tools.get(entry.name)):
                if found is not None and found.module == entry.module:
                    return found
        return None

    def resolve(self, dir_name: str) -> Resolution:
        node = self.nodes[dir_name]
        assert node.manifest is not None
        own = self._tools_of(dir_name)
        findings: list[Finding] = self._once(own.findings)
        deps = self._dependencies(node, findings)
        entries: dict[str, ToolEntry] = {}

        def add(entry: ToolEntry) -> None:
            entries.setdefault(entry.name, entry)

        # 1. own tool sets, with the always-enabled sets they bring
        own_sets = node.manifest.own_tool_sets
        if own_sets:
            for toolset_ref in own_sets:
                self._add_toolset(node, deps, toolset_ref, findings, add)
            for toolset in self.catalog.toolsets.values():
                if toolset.always_enabled:
                    self._add_catalog_set(toolset, add)
        # 2. every recordable framework tool (ours, which the reference lacks, come at 6)
        for tool in self.catalog.recordable_tools():
            if tool.surface and tool.origin != "builtin":
                add(framework_entry(tool, "framework"))
        # 3. own YAML-defined tools
        for tool_def in own.tools.values():
            if tool_def.kind in ("yaml", "class") and tool_def.recordable:
                add(_from_def(tool_def, tool_def.path))
        # 4. own scripted tools
        manifest_path = node.manifest.path
        for declared in node.manifest.scripted_tools:
            found = _scripted(own, declared.value)
            if found is not None:
                self._shadow_warning(entries, found, findings)
                add(_from_def(found, found.path))
                continue
            findings.append(
                Finding(
                    "warning",
                    manifest_path,
                    declared.line,
                    declared.column,
                    f"scripted tool '{declared.value}' is declared but no module in tools/ "
                    f"exports it and no descriptor names it; its arguments are not type-checked",
                    code=codes.TOOL_SOURCE_MISSING,
                    fatal=False,
                    trailmap=dir_name,
                )
            )
            add(
                ToolEntry(
                    name=declared.value,
                    kind="open",
                    description=None,
                    input_schema=dict(OPEN_ARGS),
                    recordable=True,
                    surface_to_llm=True,
                    requires_host=False,
                    result=None,
                    source=manifest_path,
                )
            )
        for module_tool in sorted(own.modules.values(), key=lambda t: t.name):
            if module_tool.auto:
                add(_from_def(module_tool, module_tool.path))
        # 5. dependencies' exports
        exporters: dict[str, str] = {}
        for dep_id in deps:
            dep = self.nodes[dep_id]
            if dep.manifest is None:
                continue
            dep_tools = self._tools_of(dep_id)
            for export in dep.manifest.exports:
                found = _scripted(dep_tools, export.value) or dep_tools.tools.get(export.value)
                if found is None:
                    findings += self._once(
                        [
                            Finding(
                                "manifest",
                                dep.manifest.path,
                                export.line,
                                export.column,
                                f"exported tool '{export.value}' is not defined by trailmap "
                                f"'{dep_id}'",
                                key_path="exports",
                                code=codes.UNKNOWN_EXPORT,
                            )
                        ]
                    )
                    continue
                if export.value in exporters and exporters[export.value] != dep_id:
                    # At the dependency entry that brings the second exporter in, when direct.
                    where = next(
                        (d for d in node.dependencies if d.value == dep_id),
                        Named(value=dep_id, line=1, column=1),
                    )
                    findings.append(
                        Finding(
                            "manifest",
                            node.manifest.path,
                            where.line,
                            where.column,
                            f"tool '{export.value}' is exported by both '{exporters[export.value]}' "
                            f"and '{dep_id}'; trailmap '{dir_name}' cannot depend on both",
                            key_path="dependencies",
                            code=codes.EXPORT_CONFLICT,
                        )
                    )
                    continue
                exporters[export.value] = dep_id
                add(_from_def(found, f"export of {dep_id}"))
        # 6. our own tools, unless the trailmap or a dependency ships one of the name
        for tool in self.catalog.recordable_tools():
            if tool.surface and tool.origin == "builtin":
                add(framework_entry(tool, "framework"))
        # 7. the SDK's hand-typed author utilities
        for tool in self.catalog.tools.values():
            if tool.origin == "hand" and tool.surface:
                add(framework_entry(tool, "sdk"))
        inputs: list[Path] = [*self._files(node)]
        for dep_id in deps:
            inputs.extend(self._files(self.nodes[dep_id]))
        return Resolution(
            trailmap=dir_name,
            entries=tuple(sorted(entries.values(), key=lambda e: e.name)),
            findings=tuple(findings),
            dependencies=tuple(deps),
            inputs=tuple(dict.fromkeys(inputs)),
        )

    def _files(self, node: Node) -> list[Path]:
        if node.directory is None:
            return []
        return [node.directory / "trailmap.yaml", *self._tools_of(node.id).files]

    def _once(self, findings: list[Finding] | tuple[Finding, ...]) -> list[Finding]:
        """Findings about a shared file are reported once per run, not once per dependent."""
        out = []
        for finding in findings:
            if finding.text not in self._reported:
                self._reported.add(finding.text)
                out.append(finding)
        return out

    def _dependencies(self, node: Node, findings: list[Finding]) -> list[str]:
        """The transitive dependencies, breadth first; unknown ids and cycles are errors."""
        order: list[str] = []
        seen = {node.id}
        queue: deque[tuple[Node, tuple[str, ...]]] = deque([(node, (node.id,))])
        while queue:
            current, chain = queue.popleft()
            for dep in current.dependencies:
                if dep.value in chain:
                    # One finding per cycle, whichever trailmap it is reached from: only the
                    # trailmaps on the loop, starting at the smallest id, located at the
                    # dependency that closes it.
                    loop = list(chain[chain.index(dep.value) :])
                    first = loop.index(min(loop))
                    loop = loop[first:] + loop[:first]
                    closing = self.nodes[loop[-1]]
                    edge = next(d for d in closing.dependencies if d.value == loop[0])
                    cycle = " -> ".join((*loop, loop[0]))
                    findings += self._once(
                        [
                            self._manifest_error(
                                closing,
                                edge,
                                f"dependency cycle: {cycle}",
                                code=codes.DEPENDENCY_CYCLE,
                            )
                        ]
                    )
                    continue
                target = self.nodes.get(dep.value)
                if target is None:
                    hint = did_you_mean(dep.value, tuple(self.nodes))
                    findings += self._once(
                        [
                            self._manifest_error(
                                current,
                                dep,
                                f"unknown trailmap '{dep.value}'{hint}",
                                code=codes.UNKNOWN_DEPENDENCY,
                            )
                        ]
                    )
                    continue
                if dep.value in seen:
                    continue
                seen.add(dep.value)
                order.append(dep.value)
                queue.append((target, (*chain, dep.value)))
        return order

    @staticmethod
    def _manifest_error(node: Node, name: Named, message: str, *, code: str) -> Finding:
        assert node.manifest is not None
        return Finding(
            "manifest",
            node.manifest.path,
            name.line,
            name.column,
            message,
            key_path="dependencies",
            code=code,
            trailmap=node.id,
        )

    def _add_toolset(
        self,
        node: Node,
        deps: list[str],
        ref: Named,
        findings: list[Finding],
        add: Callable[[ToolEntry], None],
    ) -> None:
        assert node.manifest is not None
        # The trailmap's own set wins, then the first dependency (breadth first) defining it.
        workspace_set: ToolSetDef | None = next(
            (
                found
                for owner in (node.id, *deps)
                if (found := self._tools_of(owner).toolsets.get(ref.value)) is not None
            ),
            None,
        )
        if workspace_set is not None:
            for name in workspace_set.tools:
                entry = self._toolset_tool(node, name.value)
                if entry is None:
                    findings += self._once(
                        [
                            Finding(
                                "manifest",
                                workspace_set.path,
                                name.line,
                                name.column,
                                f"tool set '{workspace_set.id}' names unknown tool '{name.value}'",
                                key_path="tools",
                                code=codes.UNKNOWN_TOOL,
                            )
                        ]
                    )
                    continue
                add(entry)
            return
        toolset = self.catalog.toolsets.get(ref.value)
        if toolset is None:
            known = (*self.catalog.toolsets, *self._tools_of(node.id).toolsets)
            findings.append(
                Finding(
                    "manifest",
                    node.manifest.path,
                    ref.line,
                    ref.column,
                    f"unknown tool set '{ref.value}'{did_you_mean(ref.value, known)}",
                    key_path="tool_sets",
                    code=codes.UNKNOWN_TOOLSET,
                    trailmap=node.id,
                )
            )
            return
        self._add_catalog_set(toolset, add)

    def _add_catalog_set(self, toolset: ToolSet, add: Callable[[ToolEntry], None]) -> None:
        """The tools of a catalog tool set that surfaces show."""
        for tool_name in toolset.tools:
            tool = self.catalog.tool(tool_name)
            if tool is not None and tool.surface:
                add(framework_entry(tool, f"toolset {toolset.id}"))

    def _toolset_tool(self, node: Node, name: str) -> ToolEntry | None:
        tool = self.catalog.tool(name)
        if tool is not None:
            return framework_entry(tool, "toolset") if tool.surface else None
        own = self._tools_of(node.id)
        found = own.tools.get(name) or own.modules.get(name)
        return _from_def(found, found.path) if found is not None else None

    def _shadow_warning(
        self, entries: dict[str, ToolEntry], found: ToolDef, findings: list[Finding]
    ) -> None:
        existing = entries.get(found.name)
        if existing is not None and existing.kind == "framework":
            findings.append(
                Finding(
                    "warning",
                    found.path,
                    found.line,
                    found.column,
                    f"scripted tool '{found.name}' has the name of a framework tool, which wins; "
                    f"recordings of '{found.name}' are checked against the framework tool",
                    code=codes.SHADOWED_TOOL,
                    fatal=False,
                )
            )


RUNIF = "runIf"


def ships_runif(resolution: Resolution | None) -> bool:
    """True when the trailmap's `runIf` is its own (or a dependency's), not ours.

    Then a recorded `runIf` is a call like any other: checked against that tool's input type,
    run by that tool at replay, and none of our runIf grammar applies to it.
    """
    if resolution is None:
        return False
    entry = resolution.entry(RUNIF)
    return entry is not None and entry.kind != "framework"


def _scripted(tools: TrailmapTools, name: str) -> ToolDef | None:
    found = tools.tools.get(name)
    if found is not None and found.kind == "descriptor":
        return found
    return tools.modules.get(name)


def _from_def(tool: ToolDef, source: str) -> ToolEntry:
    kind: EntryKind = tool.kind
    return ToolEntry(
        name=tool.name,
        kind=kind,
        description=tool.description,
        input_schema=tool.input_schema,
        recordable=tool.recordable,
        surface_to_llm=tool.surface_to_llm,
        requires_host=tool.requires_host,
        result=None,
        source=source,
        module=tool.module,
        trailhead_to=tool.trailhead_to,
        body=tool.body,
        implements=tool.implements,
    )


_MODEL_DIGESTS: dict[int, tuple[Resolution, str]] = {}


def model_digest(resolution: Resolution) -> str:
    """A digest of a resolved tool model: everything any surface of it is rendered from.

    Remembered per model object: a check asks twice (its artifacts, its module surface).
    """
    cached = _MODEL_DIGESTS.get(id(resolution))
    if cached is not None and cached[0] is resolution:
        return cached[1]
    if len(_MODEL_DIGESTS) > 512:
        _MODEL_DIGESTS.clear()
    value = _model_digest(resolution)
    _MODEL_DIGESTS[id(resolution)] = (resolution, value)
    return value


def _model_digest(resolution: Resolution) -> str:
    # Every field of every entry (paths become strings, tuples lists), so a field added to
    # ToolEntry cannot leave stale artifacts behind.
    names = ToolEntry.__struct_fields__
    entries = [[getattr(e, name) for name in names] for e in resolution.entries]
    model = json.dumps([resolution.trailmap, list(resolution.dependencies), entries], default=str)
    return digest(__version__, model)
