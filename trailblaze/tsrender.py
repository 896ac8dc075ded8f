"""JSON Schema to TypeScript: the tool map entries every surface is made of.

One renderer for every artifact that speaks TypeScript (the trailmap's `trailblaze-client.d.ts`,
the type gate's module surfaces, the SDK's selector types), so they cannot drift apart. Types are
the real ones: item types of arrays, nested objects, enums and selectors, where the reference
degrades to `unknown[]` and `Record<string, unknown>`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from trailblaze.resolve import ToolEntry

IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_REF = re.compile(r"#/(?:\$defs|definitions)/(.+)")
MAX_DEPTH = 32
_TYPE_KEYS = frozenset(
    {"type", "properties", "items", "enum", "const", "$ref", "additionalProperties"}
)


def ts_name(name: str) -> str:
    """A property name as TypeScript accepts it: bare when an identifier, else a string literal."""
    return name if IDENTIFIER.fullmatch(name) else json.dumps(name)


def doc_escape(text: str) -> str:
    """Text safe inside a `/** ... */` comment."""
    return text.replace("*/", "* /")


def ts_type(schema: Any, depth: int = 0) -> str:
    """The TypeScript type of a JSON Schema (`$ref`s become the referenced type's name).

    The boolean schemas: `true` accepts anything (`unknown`), `false` nothing (`never`).
    """
    if schema is False and depth <= MAX_DEPTH:
        return "never"
    if depth > MAX_DEPTH or not isinstance(schema, Mapping) or not schema:
        return "unknown"
    if "$ref" in schema:
        match = _REF.fullmatch(str(schema["$ref"]))
        return match.group(1) if match else "unknown"
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if "enum" in schema:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"]) or "never"
    for combinator, joiner in (("oneOf", " | "), ("anyOf", " | "), ("allOf", " & ")):
        options = schema.get(combinator)
        if isinstance(options, list) and options:
            parts = list(dict.fromkeys(_wrap(ts_type(o, depth + 1)) for o in options))
            base = {k: v for k, v in schema.items() if k in _TYPE_KEYS}
            if base.get("type") == "object" and not base.get("properties"):
                base = {}
            combined = joiner.join(parts)
            return combined if not base else f"{_wrap(ts_type(base, depth + 1))} & ({combined})"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(dict.fromkeys(ts_type({**schema, "type": k}, depth + 1) for k in kind))
    if kind == "string":
        return "string"
    if kind in ("integer", "number"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "null":
        return "null"
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, Mapping) and items:
            return f"{_wrap(ts_type(items, depth + 1))}[]"
        return "unknown[]"
    if kind == "object" or "properties" in schema:
        return _object(schema, depth)
    return "unknown"


def _wrap(text: str) -> str:
    return f"({text})" if (" | " in text or " & " in text) and not text.startswith("{") else text


def _object(schema: Mapping[str, Any], depth: int) -> str:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    additional = schema.get("additionalProperties", True)
    if not properties:
        if additional is False:
            return "Record<string, never>"
        if isinstance(additional, Mapping) and additional:
            return f"Record<string, {ts_type(additional, depth + 1)}>"
        return "Record<string, unknown>"
    required = set(schema.get("required") or ())
    fields = [
        f"{ts_name(name)}{'' if name in required else '?'}: {ts_type(sub, depth + 1)};"
        for name, sub in properties.items()
    ]
    if isinstance(additional, Mapping) and additional:
        fields.append(f"[key: string]: {ts_type(additional, depth + 1)} | undefined;")
    elif additional is not False:
        fields.append("[key: string]: unknown;")
    return "{ " + " ".join(fields) + " }"


def ordered_params(schema: Mapping[str, Any]) -> list[tuple[str, Any, bool]]:
    """Required params, then optional ones, then selector params (`$ref`), each in declaration order.

    A param's schema is a mapping or a boolean schema (`true`, `false`).
    """
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    plain = [(n, s) for n, s in properties.items() if not (isinstance(s, Mapping) and "$ref" in s)]
    refs = [(n, s) for n, s in properties.items() if isinstance(s, Mapping) and "$ref" in s]
    out = [(n, s, True) for n, s in plain if n in required]
    out += [(n, s, False) for n, s in plain if n not in required]
    out += [(n, s, n in required) for n, s in refs]
    return out


def render_entry(entry: ToolEntry, module_ref: str | None = None, indent: int = 4) -> str:
    """One `name: { args: ...; result: ...; };` block with its doc comment (reference §4.2).

    `module_ref` is the import specifier of the entry's TypeScript module, for tools whose
    input type the module itself declares.
    """
    pad = " " * indent
    lines = [f"{pad}/**"]
    description = (entry.description or "").strip()
    tags = []
    if not entry.surface_to_llm:
        tags.append("@trailblazeHiddenFromLlm")
    if not entry.recordable:
        tags.append("@trailblazeNotRecordable")
    if entry.requires_host:
        tags.append("@trailblazeHostOnly")
    if entry.trailhead_to:
        tags.append(f"@trailblazeTrailheadTo {entry.trailhead_to}")
    if description:
        lines += [f"{pad} * {doc_escape(line)}".rstrip() for line in description.splitlines()]
        if tags:
            lines.append(f"{pad} *")
    lines += [f"{pad} * {tag}" for tag in tags]
    lines.append(f"{pad} */")
    lines.append(f"{pad}{ts_name(entry.name)}: {{")
    inner = " " * (indent + 2)
    field_pad = " " * (indent + 4)
    if entry.input_schema is None:
        assert module_ref is not None, f"{entry.name} needs its module"
        # What the runtime calls a tool export with, `(args, ctx, client)`: a typed tool's
        # definition and a plain exported function alike. Written without helper types so
        # that it means the same against any SDK, ours or the workspace's own.
        tool = f'typeof import("{module_ref}").{entry.name}'
        lines.append(
            f"{inner}args: {tool} extends (args: infer A, ...rest: any[]) => unknown ? A : never;"
        )
        lines.append(
            f"{inner}result: {tool} extends (...args: any[]) => infer R ? Awaited<R> : never;"
        )
    else:
        params = ordered_params(entry.input_schema)
        if not params and entry.input_schema.get("additionalProperties") is not True:
            lines.append(f"{inner}args: Record<string, never>;")
        elif not params:
            lines.append(f"{inner}args: Record<string, unknown>;")
        else:
            lines.append(f"{inner}args: {{")
            for name, schema, required in params:
                doc = schema.get("description") if isinstance(schema, Mapping) else None
                if doc:
                    lines.append(f"{field_pad}/** {doc_escape(str(doc))} */")
                mark = "" if required else "?"
                lines.append(f"{field_pad}{ts_name(name)}{mark}: {ts_type(schema)};")
            if entry.input_schema.get("additionalProperties") is True:
                lines.append(f"{field_pad}[key: string]: unknown;")
            lines.append(f"{inner}}};")
        lines.append(f"{inner}result: {entry.result or 'string'};")
    lines.append(f"{pad}}};")
    return "\n".join(lines)


def render_def(name: str, schema: Mapping[str, Any]) -> str:
    """An exported interface (or type alias) for a named definition, e.g. a selector type."""
    description = schema.get("description")
    head = f"/** {doc_escape(str(description))} */\n" if description else ""
    properties = schema.get("properties")
    if schema.get("type") == "object" and isinstance(properties, Mapping):
        required = set(schema.get("required") or ())
        lines = [f"{head}export interface {name} {{"]
        for prop, sub in properties.items():
            doc = sub.get("description") if isinstance(sub, Mapping) else None
            if doc:
                lines.append(f"  /** {doc_escape(str(doc))} */")
            mark = "" if prop in required else "?"
            lines.append(f"  {ts_name(prop)}{mark}: {ts_type(sub)};")
        lines.append("}")
        return "\n".join(lines)
    return f"{head}export type {name} = {ts_type(schema)};"


NAMED_TYPE = re.compile(r"\b[A-Z][A-Za-z0-9]*\b")
