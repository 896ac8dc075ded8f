"""`waypoints/**/*.waypoint.yaml`: a named place in the app, recognised on screen.

Decoded as the reference's `WaypointDefinitionSerializer` decodes it: `id` (required),
`description` and `route` are text; the legacy top-level `required`, `forbidden` and
`platforms` are refused; every other top-level key is a device classifier (`android`, `ios`,
`web`, `android-tablet`, ...) whose value is a block of `required`/`forbidden` conditions, a
`route` override and an `example`. The reference decodes the blocks leniently: a key it does not
know is dropped, so here it is a warning, and so is a scalar of another type where the reference
reads the scalar's text. What it cannot decode (a list where a mapping belongs, text where a
list does) is a finding.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trailblaze import codes
from trailblaze.toolmodel.catalog import Catalog
from trailblaze.toolmodel.tooldefs.loader import Loader
from trailblaze.yaml.node import YamlError, YMap, YNode, YScalar, YSeq, load, read_text
from trailblaze.yaml.schema import check

WAYPOINT_SUFFIX = ".waypoint.yaml"
TEXT_KEYS = ("id", "description", "route")
V1_KEYS = ("required", "forbidden", "platforms")


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


def read_waypoint(loader: Loader, path: Path) -> None:
    rel = loader.rel(path)
    try:
        root = load(read_text(path))
    except YamlError as exc:
        loader.error(rel, exc, "", exc.message, code=codes.YAML)
        return
    if root is None:
        loader.error(
            rel, YMap((), 1, 1), "", "empty waypoint file: it needs an 'id'", code=codes.EMPTY
        )
        return
    if not isinstance(root, YMap):
        loader.error(
            rel,
            root,
            "",
            "a waypoint file is a mapping ('id:', 'description:', then one block per device "
            "classifier)",
            code=codes.WRONG_TYPE,
        )
        return
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
