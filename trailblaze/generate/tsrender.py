"""JSON Schema to TypeScript: the tool map entries every surface is made of.

One renderer for every artifact that speaks TypeScript (the trailmap's `trailblaze-client.d.ts`,
the type gate's module surfaces, the SDK's selector types), so they cannot drift apart. Types are
the real ones: item types of arrays, nested objects, enums and selectors, where the reference
degrades to `unknown[]` and `Record<string, unknown>`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from trailblaze.report import escaping
from trailblaze.toolmodel.identity import ByIdentity
from trailblaze.toolmodel.records import ToolEntry

IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_REF = re.compile(r"#/(?:\$defs|definitions)/(.+)")
MAX_DEPTH = 32
_TYPE_KEYS = frozenset(
    {"type", "properties", "items", "enum", "const", "$ref", "additionalProperties"}
)


# -- escaping: one function per output context -----------------------------------------------
#
# Every string from a user's files (names, descriptions, enum values, paths, tags) reaches
# generated code through exactly one of these: `ts_string` (a string literal), `ts_comment` (the
# text of a `//` or `/** */` comment), `ts_key` (a property key), `import_path` (a module
# specifier) and `json_text` (a JSON document).

_STRING_UNSAFE = re.compile("[\u2028\u2029\ud800-\udfff]")
_COMMENT_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]|\\*/")


def _u_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def ts_string(text: str) -> str:
    """`text` as a TypeScript string literal, on one line and encodable as UTF-8.

    JSON's escapes, plus the line separators (they end a line in older parsers) and lone
    surrogates (from file names that are not UTF-8), which become `\\u` escapes of their value.
    """
    literal = json.dumps(text, ensure_ascii=False)
    return _STRING_UNSAFE.sub(_u_escape, literal) if _STRING_UNSAFE.search(literal) else literal


def _comment_escape(match: re.Match[str]) -> str:
    found = match.group(0)
    if found == "*/":
        return "* /"
    if found in "\r\n\u2028\u2029":
        return " "
    return f"\\x{ord(found):02x}" if ord(found) < 0x100 else f"\\u{ord(found):04x}"


def ts_comment(text: str) -> str:
    """`text` made safe inside a `//` or `/** */` comment: one line that cannot end the comment.

    Line breaks become spaces, other control characters read as `\\xNN` / `\\uNNNN` (a comment
    has no escapes: that is only how they are shown), `*/` becomes `* /`.
    """
    return _COMMENT_UNSAFE.sub(_comment_escape, text) if _COMMENT_UNSAFE.search(text) else text


doc_escape = ts_comment


def ts_key(name: str) -> str:
    """A property key: bare when an identifier, else a string literal."""
    return name if IDENTIFIER.fullmatch(name) else ts_string(name)


ts_name = ts_key


def import_path(specifier: str) -> str:
    """A module specifier, quoted, as `import ... from` and `import("...")` take it."""
    return ts_string(specifier)


def json_text(value: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """A JSON document of `value`, encodable as UTF-8 (lone surrogates escaped)."""
    text = (
        json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=sort_keys)
        if sort_keys or indent is None
        else escaping.json_text(value, indent=indent)  # the same bytes, written by orjson
    )
    return _STRING_UNSAFE.sub(_u_escape, text) if _STRING_UNSAFE.search(text) else text


def _literal_type(value: Any, depth: int = 0) -> str:
    """The TypeScript type of exactly one JSON value (`const`, `enum` members)."""
    if isinstance(value, str):
        return ts_string(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "number"
    if depth > MAX_DEPTH:
        return "unknown"
    if isinstance(value, list):
        return "[" + ", ".join(_literal_type(v, depth + 1) for v in value) + "]"
    if isinstance(value, Mapping):
        fields = [f"{ts_key(str(k))}: {_literal_type(v, depth + 1)};" for k, v in value.items()]
        return "{ " + " ".join(fields) + " }" if fields else "Record<string, never>"
    return "unknown"


def ts_type(schema: Any, depth: int = 0) -> str:
    """The TypeScript type of a JSON Schema (`$ref`s become the referenced type's name).

    The boolean schemas: `true` accepts anything (`unknown`), `false` nothing (`never`).
    """
    if schema is False and depth <= MAX_DEPTH:
        return "never"
    if depth > MAX_DEPTH or not isinstance(schema, Mapping) or not schema:
        return "unknown"
    if "$ref" in schema:
        # Only a definition's name is ever written, never the reference's text: user schemas
        # are checked when they are read (`tooldefs`: a `$ref` is resolved or rejected there).
        match = _REF.fullmatch(str(schema["$ref"]))
        return match.group(1) if match and IDENTIFIER.fullmatch(match.group(1)) else "unknown"
    if "const" in schema:
        return _literal_type(schema["const"])
    if "enum" in schema:
        values = schema["enum"]
        if not isinstance(values, list):
            return "unknown"
        return " | ".join(_literal_type(v) for v in values) or "never"
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
    """One `name: { args: ...; result: ...; };` block with its doc comment, laid out as upstream Trailblaze lays out its client surface.

    `module_ref` is the import specifier of the entry's TypeScript module, for tools whose
    input type the module itself declares. Kept per entry object: a framework tool's entry is
    one object in every trailmap (`records.framework_entry`), rendered once for all.
    """
    return _RENDERED.get(
        entry, lambda: _render_entry(entry, module_ref, indent), module_ref, indent
    )


_RENDERED: ByIdentity[str] = ByIdentity()


def _render_entry(entry: ToolEntry, module_ref: str | None, indent: int) -> str:
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
        tags.append(f"@trailblazeTrailheadTo {ts_comment(entry.trailhead_to)}")
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
        module = f"typeof import({import_path(module_ref)})"
        tool = (
            f"{module}.{entry.name}"
            if IDENTIFIER.fullmatch(entry.name)
            else f"({module})[{ts_string(entry.name)}]"
        )
        # An input type without properties (`EmptyInput`) takes no arguments, as the reference's
        # runtime validates it (`additionalProperties: false`).
        lines.append(
            f"{inner}args: {tool} extends (args: infer A, ...rest: any[]) => unknown"
            " ? (keyof A extends never ? (A extends object ? Record<string, never> : A) : A)"
            " : never;"
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
        lines.append(f"{inner}result: {_result_type(entry.result)};")
    lines.append(f"{pad}}};")
    return "\n".join(lines)


def _result_type(result: str | None) -> str:
    # Results are the catalog's type names (ours); anything else is not pasted.
    return result if result and _RESULT.fullmatch(result) else "string"


_RESULT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(\[\])?")


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
