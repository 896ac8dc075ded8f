"""`tools/<name>.yaml` beside a script: a scripted tool declared by YAML, typed by its
`inputSchema` (the flat `name: {type, required, ...}` form, or a full JSON Schema whose
references name the framework's definitions)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trailblaze import codes
from trailblaze.finding import did_you_mean, join_key
from trailblaze.toolmodel.manifest import schema_findings
from trailblaze.toolmodel.records import ToolDef
from trailblaze.toolmodel.tooldefs.loader import Loader, file_schema, flag, text_of
from trailblaze.toolmodel.tooldefs.navigation import check_spec_trailhead
from trailblaze.toolmodel.tooldefs.yamltool import PARAM_TYPES, object_schema
from trailblaze.yaml.node import YMap, YNode, YScalar, YSeq
from trailblaze.yaml.schema import check

_DEF_REF = re.compile(r"#/(?:\$defs|definitions)/([A-Za-z_][A-Za-z0-9_]*)")


def read_descriptor(loader: Loader, path: Path) -> None:
    file = loader.load(path, "descriptor", "name")
    if file is None:
        return
    root, rel, name_node = file.root, file.rel, file.name
    trailhead_to = check_spec_trailhead(loader, rel, root)
    schema = _input_schema(loader, root.get("inputSchema"), rel)
    if schema is None:
        return
    loader.add(
        ToolDef(
            name=name_node.text,
            kind="descriptor",
            description=text_of(root.get("description")),
            input_schema=schema,
            recordable=flag(root, "isRecordable", True),
            surface_to_llm=flag(root, "surfaceToLlm", True),
            requires_host=flag(root, "requiresHost", False),
            is_verification=False,
            path=rel,
            line=name_node.line,
            column=name_node.column,
            trailhead_to=trailhead_to,
        ),
        name_node,
    )


def _input_schema(loader: Loader, node: YNode | None, rel: str) -> dict[str, Any] | None:
    """A descriptor's `inputSchema`: the flat `name: {type, required, ...}` form or full JSON Schema."""
    if node is None:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    assert isinstance(node, YMap)
    if isinstance(node.get("properties"), YMap) or node.get("type") is not None:
        # Already a JSON Schema object. Its references are resolved here or rejected: the
        # renderer writes a definition's name, never a reference's text.
        if not _refs_resolve(loader, node, rel, "inputSchema"):
            return None
        return node.to_python()
    properties: dict[str, Any] = {}
    required: list[str] = []
    ok = True
    for key, value in node:
        path = join_key("inputSchema", key.text)
        if not isinstance(value, YMap):
            loader.error(rel, value, path, "expected a mapping with 'type'", code=codes.WRONG_TYPE)
            ok = False
            continue
        issues = check(value, file_schema("inputProperty"), key_path=path)
        if issues:
            loader.findings.extend(schema_findings(rel, issues))
            ok = False
        type_name = text_of(value.get("type")) or "string"
        mapped = PARAM_TYPES.get(type_name.lower())
        if mapped is None:
            loader.error(
                rel,
                value.get("type") or value,
                join_key(path, "type"),
                f"unknown type '{type_name}'{did_you_mean(type_name, tuple(PARAM_TYPES))}",
                code=codes.INVALID_VALUE,
            )
            ok = False
            continue
        prop = dict(mapped)
        raw = value.to_python()
        for extra in ("description", "enum", "items", "default"):
            if raw.get(extra) is not None:
                prop[extra] = raw[extra]
        properties[key.text] = prop
        if raw.get("required", True):
            required.append(key.text)
    return object_schema(properties, required) if ok else None


def _refs_resolve(loader: Loader, node: YNode, rel: str, path: str) -> bool:
    """Every `$ref` under `node` names one of the framework's definitions; else an error."""
    ok = True
    if isinstance(node, YSeq):
        for index, item in enumerate(node.items):
            ok = _refs_resolve(loader, item, rel, f"{path}[{index}]") and ok
    elif isinstance(node, YMap):
        for key, value in node:
            where = join_key(path, key.text)
            if key.text != "$ref":
                ok = _refs_resolve(loader, value, rel, where) and ok
                continue
            target = value.text if isinstance(value, YScalar) else ""
            name = _DEF_REF.fullmatch(target)
            if name is None or name.group(1) not in loader.catalog.defs:
                known = ", ".join(f"#/$defs/{n}" for n in sorted(loader.catalog.defs))
                loader.error(
                    rel,
                    value,
                    where,
                    f"cannot resolve $ref {target!r}: a tool schema may refer to the "
                    f"framework's definitions only ({known})",
                    code=codes.INVALID_VALUE,
                )
                ok = False
    return ok
