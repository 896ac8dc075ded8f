"""`waypoints/**/*.waypoint.yaml`: a named place in the app, recognised on screen.

Decoded as the reference's `WaypointDefinitionSerializer` decodes it: `id` (required),
`description` and `route` are text; the legacy top-level `required`, `forbidden` and
`platforms` are refused; every other top-level key is a device classifier (`android`, `ios`,
`web`, `android-tablet`, ...) whose value is a block of `required`/`forbidden` conditions, a
`route` override and an `example`. The reference decodes the blocks leniently: a key it does not
know is dropped, so here it is a warning, and so is a scalar of another type where the reference
reads the scalar's text. What it cannot decode (a list where a mapping belongs, text where a
list does) is a finding.

`read_waypoint` gives the decoded definition as well (`Waypoint`: the blocks with their
conditions, as replay's `assertWaypoint` matches them) when the file has no error; the check
keeps only the findings. `load_waypoints` reads every waypoint file of some trailmap
directories into one set, by id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trailblaze import codes
from trailblaze.finding import Finding
from trailblaze.toolmodel.catalog import Catalog
from trailblaze.toolmodel.tooldefs.loader import WAYPOINT_SUFFIX, Loader, RelPath
from trailblaze.yaml.node import YamlError, YMap, YNode, YScalar, YSeq, load, read_text
from trailblaze.yaml.schema import check

TEXT_KEYS = ("id", "description", "route")
V1_KEYS = ("required", "forbidden", "platforms")


@dataclass(frozen=True, slots=True)
class WaypointCondition:
    """One `required`/`forbidden` entry: a selector that must (not) match `min_count` nodes."""

    description: str | None
    selector: Mapping[str, Any] | None
    """None: a condition of a kind this matcher does not evaluate (it counts 0 matches)."""
    min_count: int = 1


@dataclass(frozen=True, slots=True)
class WaypointVariant:
    """One device-classifier block; a field it does not write is None (resolved elsewhere)."""

    required: tuple[WaypointCondition, ...] | None = None
    forbidden: tuple[WaypointCondition, ...] | None = None
    route: str | None = None


@dataclass(frozen=True, slots=True)
class Waypoint:
    """A decoded waypoint definition and where it is written."""

    id: str
    path: str
    description: str | None = None
    route: str | None = None
    by_classifier: Mapping[str, WaypointVariant] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Waypoints:
    """The waypoints of some trailmaps, by id, and the files that did not decode."""

    by_id: Mapping[str, Waypoint]
    broken: Mapping[str, Finding]
    """A waypoint id (when the file names one) -> its file's first error."""
    findings: tuple[Finding, ...] = ()


def load_waypoints(directories: Iterable[Path], rel: RelPath, catalog: Catalog) -> Waypoints:
    """Every `waypoints/**/*.waypoint.yaml` of the given trailmap directories; of two files
    with one id, the first (in directory order) is the waypoint."""
    loader = Loader(rel, catalog)
    by_id: dict[str, Waypoint] = {}
    broken: dict[str, Finding] = {}
    for directory in directories:
        base = directory / "waypoints"
        if not base.is_dir():
            continue
        for path in sorted(base.rglob(f"*{WAYPOINT_SUFFIX}")):
            if not path.is_file():
                continue
            before = len(loader.findings)
            waypoint = read_waypoint(loader, path)
            if waypoint is not None:
                by_id.setdefault(waypoint.id, waypoint)
                continue
            errors = [f for f in loader.findings[before:] if f.fatal]
            named = _id_of(path)
            if named is not None and errors:
                broken.setdefault(named, errors[0])
    return Waypoints(by_id, broken, tuple(loader.findings))


def _id_of(path: Path) -> str | None:
    """The id a waypoint file names, if it can be read that far."""
    try:
        root = load(read_text(path))
    except (YamlError, OSError, UnicodeDecodeError):
        return None
    if isinstance(root, YMap):
        node = root.get("id")
        if isinstance(node, YScalar) and node.value is not None:
            return node.text
    return None


_SCHEMAS: dict[int, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}


def variant_schema(catalog: Catalog) -> Mapping[str, Any]:
    """The schema of one classifier block, with the catalog's selector grammar (one object per
    catalog: validators and memo digests key on it)."""
    cached = _SCHEMAS.get(id(catalog.defs))
    if cached is None or cached[0] is not catalog.defs:
        cached = (catalog.defs, _variant_schema(catalog.defs))
        _SCHEMAS[id(catalog.defs)] = cached
    return cached[1]


def _variant_schema(defs: Mapping[str, Any]) -> Mapping[str, Any]:
    condition = {
        "type": "object",
        "properties": {
            "description": {"type": ["string", "null"]},
            "selector": {"anyOf": [{"$ref": "#/$defs/TrailblazeNodeSelector"}, {"type": "null"}]},
            "minCount": {"type": "integer"},
        },
    }
    conditions = {"type": "array", "items": condition}
    return {
        "$defs": dict(defs),
        "type": "object",
        "properties": {
            "required": conditions,
            "forbidden": conditions,
            "route": {"type": ["string", "null"]},
            "example": {"type": ["object", "null"]},
        },
    }


def read_waypoint(loader: Loader, path: Path) -> Waypoint | None:
    """Validate one waypoint file into `loader`'s findings; the definition when it has no
    error."""
    before = len(loader.findings)
    rel = loader.rel(path)
    try:
        root = load(read_text(path))
    except YamlError as exc:
        loader.error(rel, exc, "", exc.message, code=codes.YAML)
        return None
    if root is None:
        loader.error(
            rel, YMap((), 1, 1), "", "empty waypoint file: it needs an 'id'", code=codes.EMPTY
        )
        return None
    if not isinstance(root, YMap):
        loader.error(
            rel,
            root,
            "",
            "a waypoint file is a mapping ('id:', 'description:', then one block per device "
            "classifier)",
            code=codes.WRONG_TYPE,
        )
        return None
    if root.get("id") is None:
        loader.error(rel, root, "", "a waypoint needs an 'id:'", code=codes.MISSING_KEY)
    schema = variant_schema(loader.catalog)
    for key, value in root:
        name = key.text
        if name in TEXT_KEYS:
            if not isinstance(value, YScalar) or value.value is None:
                loader.error(rel, value, name, f"'{name}' must be text", code=codes.WRONG_TYPE)
            continue
        if name in V1_KEYS:
            loader.error(
                rel,
                key,
                "",
                f"'{name}' at the top is the legacy (v1) waypoint format: move "
                f"'required'/'forbidden' under a device classifier block ('android:', 'ios:', "
                f"'web:', ...) and drop 'platforms'",
                code=codes.WAYPOINT_LEGACY_KEY,
            )
            continue
        if not isinstance(value, YMap):
            loader.error(
                rel,
                value,
                name,
                f"'{name}' is a device classifier block: expected a mapping ('required:', "
                f"'forbidden:', 'route:', 'example:')",
                code=codes.WRONG_TYPE,
            )
            continue
        for issue in check(value, schema, key_path=name, at=(value.line, value.column)):
            lenient = issue.code == codes.UNKNOWN_KEY or (
                issue.code == codes.WRONG_TYPE
                and _reads_as(issue.message, _scalar_at(value, issue.line, issue.column))
            )
            if not lenient:
                loader.error(rel, issue_at(issue), issue.key_path, issue.message, code=issue.code)
            else:
                loader.warn(
                    rel,
                    issue_at(issue),
                    issue.key_path,
                    f"{issue.message}; the reference's lenient decoding "
                    f"{'drops it' if issue.code == codes.UNKNOWN_KEY else 'reads the text'}",
                    code=issue.code,
                )
    if any(f.fatal for f in loader.findings[before:]):
        return None
    return _decode(root, rel)


def _text(node: YNode | None) -> str | None:
    return node.text if isinstance(node, YScalar) and node.value is not None else None


def _conditions(node: YNode | None) -> tuple[WaypointCondition, ...] | None:
    if not isinstance(node, YSeq):
        return None if node is None or (isinstance(node, YScalar) and node.is_null) else ()
    out: list[WaypointCondition] = []
    for item in node.items:
        if not isinstance(item, YMap):
            continue
        selector = item.get("selector")
        count = item.get("minCount")
        out.append(
            WaypointCondition(
                description=_text(item.get("description")),
                selector=selector.to_python() if isinstance(selector, YMap) else None,
                # The validator let only a whole number (or its text) through.
                min_count=_count(count),
            )
        )
    return tuple(out)


def _count(node: YNode | None) -> int:
    """`minCount` (default 1); the validation let only a whole number or its text through."""
    if not isinstance(node, YScalar):
        return 1
    if isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return int(node.text.strip())


def _decode(root: YMap, rel: str) -> Waypoint:
    """The definition of a file the validation passed, read as the reference decodes it."""
    blocks: dict[str, WaypointVariant] = {}
    for key, value in root:
        if key.text in TEXT_KEYS or not isinstance(value, YMap):
            continue
        blocks[key.text] = WaypointVariant(
            required=_conditions(value.get("required")),
            forbidden=_conditions(value.get("forbidden")),
            route=_text(value.get("route")),
        )
    return Waypoint(
        id=_text(root.get("id")) or "",
        path=rel,
        description=_text(root.get("description")),
        route=_text(root.get("route")),
        by_classifier=blocks,
    )


def _scalar_at(node: YNode, line: int, column: int) -> YScalar | None:
    """The scalar written at `line:column` under `node`, if there is one."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, YScalar):
            if (current.line, current.column) == (line, column):
                return current
        elif isinstance(current, YMap):
            stack.extend(v for _, v in current)
        elif isinstance(current, YSeq):
            stack.extend(current.items)
    return None


def _reads_as(message: str, scalar: YScalar | None) -> bool:
    """Whether the reference's decoder reads the scalar's text as the type the message says
    was expected (it decodes a scalar from its text, whatever its YAML type)."""
    if scalar is None or scalar.value is None:
        return False
    text = scalar.text.strip()
    if "expected a string" in message:
        return True
    if "expected true or false" in message:
        return text in ("true", "false")
    if "expected an integer" in message:
        return re.fullmatch(r"[-+]?\d+", text) is not None
    if "expected a number" in message:
        try:
            float(text)
        except ValueError:
            return False
        return True
    return False


def issue_at(issue: Any) -> YScalar:
    """A located stand-in for where a schema issue points."""
    return YScalar(value=None, text="", style="", line=issue.line, column=issue.column)
