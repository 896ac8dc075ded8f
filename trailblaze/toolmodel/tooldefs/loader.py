"""What reading one trailmap's tool files collects, and the steps every file shares: load the
YAML, validate it against `data/toolfiles.schema.json`, add the tool or report a duplicate."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from trailblaze import DATA_DIR, codes
from trailblaze.finding import Finding
from trailblaze.toolmodel.catalog import Catalog
from trailblaze.toolmodel.manifest import manifest_finding, schema_findings
from trailblaze.toolmodel.records import ToolDef, ToolSetDef
from trailblaze.yaml.node import YamlError, YMap, YNode, YScalar, load, read_text
from trailblaze.yaml.schema import check

WAYPOINT_SUFFIX = ".waypoint.yaml"
"""The name ending of a waypoint file (`waypoint.py`) under a trailmap's `waypoints/`."""


@functools.cache
def _schemas() -> dict[str, Any]:
    text = Path(DATA_DIR, "toolfiles.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@functools.cache
def file_schema(name: str) -> Mapping[str, Any]:
    """One schema object per name (never mutated): validators and memo digests key on it."""
    return {"$defs": _schemas()["$defs"], "$ref": f"#/$defs/{name}"}


class ToolFile(msgspec.Struct, frozen=True, kw_only=True):
    """A tool file that is valid against its schema."""

    root: YMap
    rel: str
    name: YScalar
    """What names the tool or tool set the file defines (its `id:` or `name:`)."""


class RelPath:
    """Turns absolute paths into the workspace-relative form findings use."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


class Loader:
    """The tools, module exports, tool sets and findings of one trailmap's files so far."""

    def __init__(self, rel: RelPath, catalog: Catalog) -> None:
        self.rel = rel
        self.catalog = catalog
        self.tools: dict[str, ToolDef] = {}
        self.modules: dict[str, ToolDef] = {}
        self.toolsets: dict[str, ToolSetDef] = {}
        self.findings: list[Finding] = []

    def error(
        self,
        path: str,
        at: YNode | YScalar | YamlError,
        key_path: str,
        message: str,
        *,
        code: str,
    ) -> None:
        """A manifest finding at the line and column of `at`."""
        self.findings.append(
            manifest_finding(
                path, at.line, at.column, key_path=key_path, message=message, code=code
            )
        )

    def warn(
        self, path: str, at: YNode | YScalar, key_path: str, message: str, *, code: str
    ) -> None:
        """A warning (not fatal) at the line and column of `at`."""
        self.findings.append(
            Finding(
                kind="warning",
                path=path,
                line=at.line,
                column=at.column,
                message=message,
                key_path=key_path,
                code=code,
                fatal=False,
            )
        )

    def load(self, path: Path, schema: str, name_key: str) -> ToolFile | None:
        """The file when it is YAML valid against `schema`; else None, reported."""
        rel = self.rel(path)
        try:
            root = load(read_text(path))
        except YamlError as exc:
            self.error(rel, exc, "", exc.message, code=codes.YAML)
            return None
        if root is None:
            self.findings.append(
                manifest_finding(rel, 1, 1, key_path="", message="empty file", code=codes.EMPTY)
            )
            return None
        issues = check(root, file_schema(schema))
        self.findings.extend(schema_findings(rel, issues))
        if issues or not isinstance(root, YMap):
            return None
        name = root.get(name_key)
        assert isinstance(name, YScalar)  # the schema requires it
        return ToolFile(root=root, rel=rel, name=name)

    def add(self, tool: ToolDef, node: YNode) -> None:
        """Add a tool, unless one of its name came first (a finding)."""
        previous = self.tools.get(tool.name)
        if previous is not None:
            self.error(
                tool.path,
                node,
                "id",
                f"tool '{tool.name}' is already defined in {previous.path}:{previous.line}",
                code=codes.DUPLICATE_TOOL,
            )
            return
        self.tools[tool.name] = tool


def text_of(node: YNode | None) -> str | None:
    if isinstance(node, YScalar) and node.value is not None:
        return node.text
    return None


def flag(node: YMap, key: str, default: bool) -> bool:
    value = node.get(key)
    if isinstance(value, YScalar) and isinstance(value.value, bool):
        return value.value
    return default
