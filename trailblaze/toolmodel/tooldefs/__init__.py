"""Tools a workspace trailmap defines itself, read from its `tools/`, `shortcuts/`,
`trailheads/` and `toolsets/` directories, and its waypoints (`waypoints/`).

- `*.tool.yaml` (and `*.shortcut.yaml`, `*.trailhead.yaml`): a framework class registered under
  an id (`class:`), or a tool composed of other tool calls (`tools:`) with `parameters:`
  (`yamltool`);
- `<name>.yaml` next to a script: a scripted tool declared by YAML, typed by its `inputSchema`
  (`descriptor`);
- `*.ts` / `*.js` modules: scripted tools declared in code. Their input types belong to
  TypeScript: we only find which module exports which name, and the surfaces refer to the
  module's own declared type (`modules`);
- `toolsets/*.yaml`: named tool sets;
- `waypoints/**/*.waypoint.yaml`: named places in the app, validated and decoded (`waypoint`:
  replay matches them at `assertWaypoint`); the
  `shortcut:`/`trailhead:` blocks of tool files that name them are checked in `navigation`.

Every file is validated against `data/toolfiles.schema.json`; every problem is a located
manifest finding. The records are in `toolmodel.records`; what every file shares, in `loader`.
"""

from __future__ import annotations

from pathlib import Path

from trailblaze.toolmodel.catalog import Catalog
from trailblaze.toolmodel.records import Named, ToolSetDef, TrailmapTools
from trailblaze.toolmodel.tooldefs.descriptor import read_descriptor
from trailblaze.toolmodel.tooldefs.loader import WAYPOINT_SUFFIX, Loader, RelPath, flag, text_of
from trailblaze.toolmodel.tooldefs.modules import MODULE_SUFFIXES, is_tool_module, read_module
from trailblaze.toolmodel.tooldefs.yamltool import PARAM_TYPES, YAML_TOOL_SUFFIXES, read_yaml_tool
from trailblaze.workspace import tool_files
from trailblaze.yaml.node import YScalar, YSeq

__all__ = [
    "MODULE_SUFFIXES",
    "PARAM_TYPES",
    "YAML_TOOL_SUFFIXES",
    "RelPath",
    "load_trailmap_tools",
]


def load_trailmap_tools(directory: Path, rel: RelPath, catalog: Catalog) -> TrailmapTools:
    """Read every tool file of one trailmap directory."""
    loader = Loader(rel, catalog)
    files: list[Path] = []
    # The walk doit's up-to-date check stamps too (`trailmap_files`): what is read is tracked.
    for sub, path in tool_files(directory):
        if _read(loader, sub, path):
            files.append(path)
    return TrailmapTools(
        tools=loader.tools,
        modules=loader.modules,
        toolsets=loader.toolsets,
        findings=tuple(loader.findings),
        files=tuple(files),
    )


def _read(loader: Loader, sub: str, path: Path) -> bool:
    """Read one file if it is a tool file; True when it is one (an input of the surfaces)."""
    name = path.name
    if sub == "toolsets":
        if name.endswith((".yaml", ".yml")):
            _read_toolset(loader, path)
            return True
        return False
    if sub == "waypoints":
        if name.endswith(WAYPOINT_SUFFIX):
            # Loaded with the first waypoint: most trailmaps have none.
            from trailblaze.toolmodel.tooldefs.waypoint import read_waypoint  # noqa: PLC0415

            read_waypoint(loader, path)
            return True
        return False
    if name.endswith(YAML_TOOL_SUFFIXES):
        read_yaml_tool(loader, path)
        return True
    if sub == "tools" and name.endswith((".yaml", ".yml")):
        read_descriptor(loader, path)
        return True
    if sub == "tools" and is_tool_module(name):
        read_module(loader, path)
        return True
    return False


def _read_toolset(loader: Loader, path: Path) -> None:
    file = loader.load(path, "toolset", "id")
    if file is None:
        return
    root, id_node = file.root, file.name
    tools = root.get("tools")
    drivers = root.get("drivers")
    loader.toolsets[id_node.text] = ToolSetDef(
        id=id_node.text,
        description=text_of(root.get("description")),
        always_enabled=flag(root, "always_enabled", False),
        drivers=tuple(i.text for i in drivers.items if isinstance(i, YScalar))
        if isinstance(drivers, YSeq)
        else (),
        tools=tuple(
            Named(value=item.text, line=item.line, column=item.column)
            for item in (tools.items if isinstance(tools, YSeq) else ())
            if isinstance(item, YScalar)
        ),
        path=file.rel,
    )
