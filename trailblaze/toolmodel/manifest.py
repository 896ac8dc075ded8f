"""`trailmap.yaml`: validated against the JSON Schema we ship, turned into a `Trailmap` record.

Validation is strict (every key of the reference's grammar, nothing else) and every error is
located at the offending key. Keys the format removed get a specific hint instead of a bare
"unknown key".
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trailblaze import DATA_DIR, codes
from trailblaze.finding import Finding
from trailblaze.toolmodel.records import ManifestOutcome, Named, PlatformConfig, Trailmap
from trailblaze.yaml.node import YamlError, YMap, YNode, YScalar, YSeq, load, read_text
from trailblaze.yaml.schema import SchemaIssue, check

MANIFEST_NAME = "trailmap.yaml"
PLATFORMS = ("android", "ios", "web", "compose", "desktop")
_REMOVED_KEYS = {
    "use": "'use' was removed from trailmap.yaml; list trailmaps under 'dependencies'",
    "extend": "'extend' was removed from trailmap.yaml; list trailmaps under 'dependencies'",
    "replace": "'replace' was removed from trailmap.yaml",
    "mcp_servers": "'mcp_servers' was removed from trailmap.yaml",
    "system_prompt": (
        "an inline 'system_prompt' is not allowed; point 'system_prompt_file' at a file"
    ),
}
_SAFE_ID = re.compile(r"(?!\.{1,2}$)[A-Za-z0-9_][A-Za-z0-9_.-]*")


@functools.cache
def manifest_schema() -> dict[str, Any]:
    text = Path(DATA_DIR, "trailmap.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def is_safe_id(value: str) -> bool:
    """A trailmap id that names one directory: no separators, not `.`/`..`, not empty."""
    return bool(_SAFE_ID.fullmatch(value))


def load_manifest(manifest: Path, rel_path: str, dir_name: str) -> ManifestOutcome:
    """Read and validate one `trailmap.yaml`."""
    try:
        root = load(read_text(manifest))
    except YamlError as exc:
        finding = manifest_finding(
            rel_path, exc.line, exc.column, message=exc.message, code=codes.YAML
        )
        return ManifestOutcome(trailmap=None, findings=(finding,))
    return parse_manifest(root, rel_path, dir_name)


def parse_manifest(root: YNode | None, rel_path: str, dir_name: str) -> ManifestOutcome:
    if root is None:
        finding = manifest_finding(rel_path, 1, 1, message="empty trailmap.yaml", code=codes.EMPTY)
        return ManifestOutcome(trailmap=None, findings=(finding,))
    findings: list[Finding] = []
    removed_at = _removed(root, rel_path, findings)
    findings.extend(
        schema_findings(
            rel_path,
            (
                issue
                for issue in check(root, manifest_schema())
                # a removed key has its own hint, not also "unknown key"
                if not (
                    issue.code == codes.UNKNOWN_KEY and (issue.line, issue.column) in removed_at
                )
            ),
        )
    )
    if isinstance(root, YMap):
        _waypoints_list(root, rel_path, findings)
    if not isinstance(root, YMap) or any(f.fatal for f in findings):
        return ManifestOutcome(trailmap=None, findings=tuple(findings))
    trailmap = _record(root, rel_path, dir_name)
    if trailmap.id != dir_name:
        node = root.get("id") or root
        findings.append(
            Finding(
                kind="warning",
                path=rel_path,
                line=node.line,
                column=node.column,
                message=f"trailmap id '{trailmap.id}' differs from its directory name '{dir_name}'; "
                f"trails target the directory name",
                key_path="id",
                code=codes.ID_MISMATCH,
                fatal=False,
            )
        )
    return ManifestOutcome(trailmap=trailmap, findings=tuple(findings))


def _waypoints_list(root: YMap, rel_path: str, findings: list[Finding]) -> None:
    """A `waypoints:` list is deprecated and ignored (the files are found by walking
    `waypoints/`): on a target it is left alone, as the reference does (upstream's own targets
    still list their files); a library trailmap must leave it empty. A library may still ship
    waypoint files, and trailheads: only the list is refused."""
    listed = root.get("waypoints")
    if root.get("target") is not None or not isinstance(listed, YSeq) or not listed.items:
        return
    key = root.key_node("waypoints")
    assert key is not None
    findings.append(
        manifest_finding(
            rel_path,
            key.line,
            key.column,
            message="a library trailmap (no 'target') must leave 'waypoints' empty: the list is "
            "deprecated, and waypoint files are found under the trailmap's waypoints/ without it",
            code=codes.WAYPOINTS_LIST,
        )
    )


def _removed(root: YNode, rel_path: str, findings: list[Finding]) -> set[tuple[int, int]]:
    """Report the keys the format removed; returns where they are written (line, column)."""
    positions: set[tuple[int, int]] = set()
    if not isinstance(root, YMap):
        return positions
    maps = [(root, "")]
    target = root.get("target")
    if isinstance(target, YMap):
        maps.append((target, "target"))
    for mapping, key_path in maps:
        for key, _ in mapping:
            name = key.text
            if name in _REMOVED_KEYS and not (name == "system_prompt" and key_path == ""):
                positions.add((key.line, key.column))
                findings.append(
                    manifest_finding(
                        rel_path,
                        key.line,
                        key.column,
                        key_path=key_path,
                        message=_REMOVED_KEYS[name],
                        code=codes.REMOVED_KEY,
                    )
                )
    return positions


def manifest_finding(
    path: str, line: int, column: int, *, key_path: str = "", message: str, code: str
) -> Finding:
    """A (fatal) finding about a manifest or tool file."""
    return Finding(
        kind="manifest",
        path=path,
        line=line,
        column=column,
        message=message,
        key_path=key_path,
        code=code,
    )


def schema_findings(path: str, issues: Iterable[SchemaIssue]) -> list[Finding]:
    """The manifest findings of schema issues found in the file at `path`."""
    return [
        manifest_finding(
            path, i.line, i.column, key_path=i.key_path, message=i.message, code=i.code
        )
        for i in issues
    ]


def names_of(node: YNode | None) -> tuple[Named, ...]:
    """The scalar items of a YAML list, each with where it is written."""
    if not isinstance(node, YSeq):
        return ()
    return tuple(
        Named(value=item.text, line=item.line, column=item.column)
        for item in node.items
        if isinstance(item, YScalar)
    )


def _texts(node: YNode | None) -> tuple[str, ...]:
    return tuple(n.value for n in names_of(node))


def _platforms(node: YNode | None) -> tuple[PlatformConfig, ...]:
    if not isinstance(node, YMap):
        return ()
    out = []
    for key, value in node:
        body = value if isinstance(value, YMap) else YMap((), key.line, key.column)
        out.append(
            PlatformConfig(
                name=key.text,
                app_ids=_texts(body.get("app_ids")),
                tool_sets=names_of(body.get("tool_sets")),
                tools=names_of(body.get("tools")),
                excluded_tools=_texts(body.get("excluded_tools")),
                drivers=_texts(body.get("drivers")),
            )
        )
    return tuple(out)


def _record(root: YMap, rel_path: str, dir_name: str) -> Trailmap:
    target = root.get("target")
    target_map = target if isinstance(target, YMap) else None
    exempt = None
    validation = root.get("trail_validation")
    if isinstance(validation, YMap):
        reason = validation.get("exempt")
        if isinstance(reason, YScalar) and isinstance(reason.value, str) and reason.value.strip():
            exempt = reason.value.strip()
    display = target_map.get("display_name") if target_map else None
    id_node = root.get("id")
    return Trailmap(
        id=id_node.text if isinstance(id_node, YScalar) else dir_name,
        dir_name=dir_name,
        path=rel_path,
        is_target=target_map is not None,
        display_name=display.text if isinstance(display, YScalar) else None,
        dependencies=names_of(root.get("dependencies")),
        exports=names_of(root.get("exports")),
        toolset_files=names_of(root.get("toolsets")),
        platforms=_platforms(target_map.get("platforms") if target_map else root.get("platforms")),
        defaults=_platforms(root.get("defaults")),
        target_tools=names_of(target_map.get("tools") if target_map else None),
        exempt_reason=exempt,
        line=root.line,
        column=root.column,
    )
