"""The trail JSON Schema of one trailmap: both trail formats, every tool's arguments.

`doit surfaces` writes it as `tools/trail.schema.json` and `trailblaze schema` prints it; an
editor (`yaml-language-server`) validates trail files with it. Each argument schema is widened
by `editorschema.as_checked` to what the check accepts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from trailblaze.catalog import Catalog
from trailblaze.editorschema import as_checked
from trailblaze.resolve import Resolution, ToolEntry

_STRINGS = {"type": "string"}
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_SCALAR_MAP = {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}}


def _call_schema(entries: Iterable[ToolEntry]) -> dict[str, Any]:
    properties = {}
    for entry in entries:
        ref = {"$ref": f"#/$defs/tool.{entry.name}"}
        schema = entry.input_schema
        nullable = schema is None or not schema.get("required")
        properties[entry.name] = {"anyOf": [ref, {"type": "null"}]} if nullable else ref
    return {
        "type": "object",
        "description": "One recorded tool call: {toolName: {arguments}}.",
        "minProperties": 1,
        "maxProperties": 1,
        "properties": properties,
        "additionalProperties": False,
    }


def _tool_args(entry: ToolEntry) -> dict[str, Any]:
    if entry.input_schema is None:
        return {"type": "object", "description": "Typed by the tool's TypeScript module."}
    schema = _copy(entry.input_schema)
    if entry.name == "runIf":
        call = {"$ref": "#/$defs/call"}
        props = schema.get("properties", {})
        for branch in ("then", "else"):
            if branch in props:
                props[branch]["items"] = call
        for option in props.get("condition", {}).get("oneOf", []):
            if "tool" in option.get("properties", {}):
                option["properties"]["tool"] = call
    if entry.description:
        schema.setdefault("description", entry.description)
    return as_checked(schema)  # type: ignore[no-any-return]


def trail_schema(resolution: Resolution, catalog: Catalog) -> dict[str, Any]:
    """A JSON Schema (2020-12) for trail files targeting this trailmap, both formats."""
    target = {"const": resolution.trailmap, "description": "The trailmap this trail belongs to."}
    arg_decl = {
        "anyOf": [
            {"enum": ["string", "integer", "boolean", "array", "object"]},
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "type": {"enum": ["string", "integer", "boolean", "array", "object"]},
                    "description": _STRINGS,
                    "default": {},
                },
            },
        ]
    }
    common_config = {
        "id": _STRINGS,
        "target": target,
        "title": _STRINGS,
        "description": _STRINGS,
        "priority": {"type": ["string", "number"]},
        "context": _STRINGS,
        "tags": {"type": "array", "items": _STRINGS},
        "memory": _SCALAR_MAP,
        "metadata": _STRING_MAP,
        "args": {
            "type": "object",
            "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
            "additionalProperties": {"$ref": "#/$defs/argDecl"},
        },
    }
    defs: dict[str, Any] = {
        "argDecl": arg_decl,
        "config": {
            "type": "object",
            "additionalProperties": False,
            "properties": {**common_config, "devices": _STRING_MAP, "skip": _STRING_MAP},
        },
        "legacyConfig": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                **common_config,
                "platform": _STRINGS,
                "driver": _STRINGS,
                "skip": {"type": ["string", "object"]},
                "source": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"type": _STRINGS, "reason": _STRINGS},
                },
            },
        },
        "call": _call_schema(resolution.entries),
        "calls": {"type": "array", "items": {"$ref": "#/$defs/call"}},
        "text": {"type": "string", "minLength": 1},
        "step": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "step": {"$ref": "#/$defs/text"},
                "verify": {"$ref": "#/$defs/text"},
                "recording": {
                    "type": "object",
                    "description": "Recorded calls per device classifier (android, ios-iphone, web...).",
                    "additionalProperties": {"$ref": "#/$defs/calls"},
                },
                "recordable": {"type": "boolean"},
                "maxRetries": {"type": "integer"},
            },
            "oneOf": [{"required": ["step"]}, {"required": ["verify"]}],
        },
        "trailhead": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "step": {"$ref": "#/$defs/text"},
                "recording": {
                    "type": "object",
                    "additionalProperties": {
                        "anyOf": [{"$ref": "#/$defs/call"}, {"type": "object", "maxProperties": 0}]
                    },
                },
                "maxRetries": {"type": "integer"},
            },
        },
        "unified": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "config": {"$ref": "#/$defs/config"},
                "trailhead": {"$ref": "#/$defs/trailhead"},
                "trail": {"type": "array", "items": {"$ref": "#/$defs/step"}},
            },
            # A stepless document (a config and `trail: []`) is a trail; without a config, or
            # after a trailhead, the steps must be there.
            "if": {"required": ["config"], "not": {"required": ["trailhead"]}},
            "then": {},
            "else": {"required": ["trail"], "properties": {"trail": {"minItems": 1}}},
        },
        "legacyStep": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "step": {"$ref": "#/$defs/text"},
                "verify": {"$ref": "#/$defs/text"},
                "recordable": {"type": "boolean"},
                "maxRetries": {"type": "integer"},
                "recording": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["tools"],
                    "properties": {"tools": {"$ref": "#/$defs/calls"}},
                },
            },
            "anyOf": [{"required": ["step"]}, {"required": ["verify"]}],
        },
        "legacyItem": {
            "oneOf": [
                _one_key("config", {"$ref": "#/$defs/legacyConfig"}),
                _one_key("prompts", {"type": "array", "items": {"$ref": "#/$defs/legacyStep"}}),
                _one_key("tools", {"$ref": "#/$defs/calls"}),
                _one_key(
                    "trailhead",
                    {
                        "anyOf": [
                            {"type": "string", "minLength": 1},
                            {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {
                                    "step": _STRINGS,
                                    "tools": {"$ref": "#/$defs/calls"},
                                    "maxRetries": {"type": "integer"},
                                },
                            },
                        ]
                    },
                ),
            ]
        },
        "legacy": {"type": "array", "items": {"$ref": "#/$defs/legacyItem"}},
    }
    for entry in resolution.entries:
        defs[f"tool.{entry.name}"] = _tool_args(entry)
    defs.update({name: as_checked(item) for name, item in _copy(dict(catalog.defs)).items()})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Trail of trailmap '{resolution.trailmap}'",
        "description": (
            "Generated by trailblaze-doit from the trailmap's tools. Point an editor at it with "
            "'# yaml-language-server: $schema=<path to this file>'."
        ),
        "anyOf": [{"$ref": "#/$defs/unified"}, {"$ref": "#/$defs/legacy"}],
        "$defs": defs,
    }


def _copy(data: dict[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps(data))
    return copied


def _one_key(key: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": [key],
        "additionalProperties": False,
        "properties": {key: schema},
    }
