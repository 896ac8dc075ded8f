"""Trailmaps and baked targets that ship outside the workspace.

- Installed Python packages declare an entry point in the group `trailblaze.trailmaps`. Its
  object is a directory (a `str`/`Path`, a callable returning one, or a module, whose own
  directory is used) laid out like Trailblaze's `trails/config/`: `trailmaps/<id>/trailmap.yaml`
  and/or baked `targets/<id>.yaml`.
- A Trailblaze workspace may keep baked targets in `trails/config/targets/<id>.yaml` (the
  legacy location).

They become trailmaps the resolver knows (as dependencies, and as targets whose trails get
validation-only surfaces in the scratch directory, `trail-validation/<id>/tools/`). A workspace
trailmap with the same id always wins.
"""

from __future__ import annotations

from pathlib import Path

from trailblaze import codes
from trailblaze.finding import Finding
from trailblaze.toolmodel.catalog import Catalog
from trailblaze.toolmodel.manifest import (
    is_safe_id,
    load_manifest,
    manifest_finding,
    names_of,
    schema_findings,
)
from trailblaze.toolmodel.records import (
    Bundled,
    BundledTrailmap,
    Named,
    PlatformConfig,
    ToolDef,
    Trailmap,
    TrailmapTools,
)
from trailblaze.toolmodel.sources import entry_point_dirs
from trailblaze.yaml.node import YamlError, YMap, YScalar, YSeq, load, read_text
from trailblaze.yaml.schema import check

_BAKED_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id"],
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "display_name": {"type": ["string", "null"]},
        "platforms": {"type": ["object", "null"]},
        "has_custom_ios_driver": {"type": "boolean"},
        "system_prompt": {"type": ["string", "null"]},
        "icon": {"type": ["string", "null"]},
        "electron": {"type": ["object", "null"]},
        "tools": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_.\\-]*$"},
                    "script": {"type": ["string", "null"]},
                    "description": {"type": ["string", "null"]},
                    "requiresHost": {"type": "boolean"},
                    "surfaceToLlm": {"type": "boolean"},
                    "isRecordable": {"type": "boolean"},
                    "runtime": {"type": ["string", "null"]},
                    "_meta": {"type": ["object", "null"]},
                    "inputSchema": {"type": ["object", "null"]},
                    "trailhead": {},
                },
            },
        },
    },
}


def discover(
    catalog: Catalog,
    *,
    workspace_targets: Path | None = None,
    sources: list[tuple[str, Path]] | None = None,
) -> Bundled:
    """Every bundled trailmap and baked target, first source wins for an id."""
    found: dict[str, BundledTrailmap] = {}
    findings: list[Finding] = []
    for origin, config_dir in sources if sources is not None else entry_point_dirs():
        trailmaps_dir = config_dir / "trailmaps"
        if trailmaps_dir.is_dir():
            for manifest in sorted(trailmaps_dir.glob("*/trailmap.yaml")):
                dir_name = manifest.parent.name
                outcome = load_manifest(manifest, manifest.as_posix(), dir_name)
                findings.extend(outcome.findings)
                if outcome.trailmap is not None:
                    found.setdefault(
                        dir_name,
                        BundledTrailmap(
                            manifest=outcome.trailmap, directory=manifest.parent, origin=origin
                        ),
                    )
        for baked in _baked_targets(config_dir / "targets", origin, catalog, findings):
            found.setdefault(baked.manifest.id, baked)
    if workspace_targets is not None:
        for baked in _baked_targets(workspace_targets, "workspace targets/", catalog, findings):
            found.setdefault(baked.manifest.id, baked)
    return Bundled(trailmaps=found, findings=tuple(findings))


def _baked_targets(
    directory: Path, origin: str, catalog: Catalog, findings: list[Finding]
) -> list[BundledTrailmap]:
    if not directory.is_dir():
        return []
    out = []
    for path in sorted(directory.glob("*.yaml")):
        rel = path.as_posix()
        try:
            root = load(read_text(path))
        except YamlError as exc:
            findings.append(
                manifest_finding(rel, exc.line, exc.column, message=exc.message, code=codes.YAML)
            )
            continue
        issues = check(root, _BAKED_SCHEMA)
        findings.extend(schema_findings(rel, issues))
        if issues or not isinstance(root, YMap):
            continue
        target_id = str(root.to_python()["id"])
        if not is_safe_id(target_id):
            findings.append(
                manifest_finding(
                    rel,
                    1,
                    1,
                    key_path="id",
                    message=f"'{target_id}' is not a valid target id",
                    code=codes.INVALID_VALUE,
                )
            )
            continue
        out.append(_baked(root, rel, target_id, origin))
    return out


def _baked(root: YMap, rel: str, target_id: str, origin: str) -> BundledTrailmap:
    platforms = []
    platform_node = root.get("platforms")
    if isinstance(platform_node, YMap):
        for key, value in platform_node:
            sets = value.get("tool_sets") if isinstance(value, YMap) else None
            platforms.append(PlatformConfig(name=key.text, tool_sets=names_of(sets)))
    tools: dict[str, ToolDef] = {}
    names: list[Named] = []
    tool_nodes = root.get("tools")
    for item in tool_nodes.items if isinstance(tool_nodes, YSeq) else ():
        assert isinstance(item, YMap)
        raw = item.to_python()
        name_node = item.get("name")
        assert isinstance(name_node, YScalar)
        schema = raw.get("inputSchema") or {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }
        tools[name_node.text] = ToolDef(
            name=name_node.text,
            kind="descriptor",
            description=raw.get("description"),
            input_schema=schema,
            recordable=raw.get("isRecordable", True),
            surface_to_llm=raw.get("surfaceToLlm", True),
            requires_host=raw.get("requiresHost", False),
            is_verification=False,
            path=rel,
            line=name_node.line,
            column=name_node.column,
        )
        names.append(Named(value=name_node.text, line=name_node.line, column=name_node.column))
    display = root.get("display_name")
    manifest = Trailmap(
        id=target_id,
        dir_name=target_id,
        path=rel,
        is_target=True,
        display_name=display.text if isinstance(display, YScalar) else None,
        dependencies=(),
        exports=(),
        toolset_files=(),
        platforms=tuple(platforms),
        defaults=(),
        target_tools=tuple(names),
        exempt_reason=None,
    )
    return BundledTrailmap(
        manifest=manifest, directory=None, origin=origin, tools=TrailmapTools(tools=tools)
    )
