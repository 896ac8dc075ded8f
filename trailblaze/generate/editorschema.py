"""The editor's verdict equals the check's: argument schemas as the check reads values.

The trail JSON Schema (`tools/trail.schema.json`, `trailblaze schema`) is what an editor such as
`yaml-language-server` validates a trail with. A tool's input JSON Schema says what the *value*
must be; the check reads YAML by its source (DESIGN.md §4), so the editor's schema widens each
argument schema by exactly what the check accepts:

- a string argument takes any plain scalar but null (`text: 12345` is the text "12345", `true`
  the text "true");
- an enum value matches in any case (`direction: down`), as the reference's runtime decodes it;
- a number or integer argument also takes a string holding a canonical number (`'3'`), which
  the check converts with a `quoted-number` warning, as the runtime does.

What a schema cannot express, so the two may still disagree (`EXPRESSIBLE_LIMITS`), is listed
in docs/editors.md and pinned by the comparison test.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

INTEGER_TEXT = "^-?(0|[1-9][0-9]*)$"
NUMBER_TEXT = "^-?(0|[1-9][0-9]*)(\\.(0|[0-9]*[1-9]))?$"
"""Canonical numbers as text (`codegen.canonical_number`, except its exponent bounds)."""

EXPRESSIBLE_LIMITS = (
    "quote style: the editor sees '5' and 5 alike only as JSON, so a quoted string for a string "
    "argument and a plain one agree, but a leading-zero plain integer (index: 007) is the text "
    "'007' for the check (a type finding for an integer) and the number 7 for the editor",
    "a scripted tool's arguments are typed by its TypeScript module: the schema accepts any "
    "object for them",
    "canonical numbers: a quoted decimal the runtime would print differently (below 0.001, "
    "1e7 and above, more digits than a double holds) is a string for the check",
)


def as_checked(schema: Any, depth: int = 0) -> Any:
    """`schema` (a tool's input, or a definition) widened to what the check accepts."""
    if depth > 60 or not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "$defs", "patternProperties"):
            out[key] = (
                {name: as_checked(item, depth + 1) for name, item in value.items()}
                if isinstance(value, Mapping)
                else value
            )
        elif key in ("items", "additionalProperties", "not", "if", "then", "else"):
            out[key] = as_checked(value, depth + 1)
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            out[key] = [as_checked(item, depth + 1) for item in value]
        else:
            out[key] = value
    return _widen(out)


def _kinds(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type")
    return [str(k) for k in (kind if isinstance(kind, list) else [kind]) if k is not None]


def _widen(schema: dict[str, Any]) -> dict[str, Any]:
    kinds = _kinds(schema)
    values = schema.get("enum")
    if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
        alternatives = "|".join(_any_case(v) for v in values)
        rest = {k: v for k, v in schema.items() if k not in ("enum", "type")}
        return {
            **rest,
            "anyOf": [
                {"enum": values},
                {"type": "string", "pattern": f"^(?:{alternatives})$"},
            ],
        }
    if "string" in kinds and not {"number", "integer", "boolean"} & set(kinds):
        return {**schema, "type": [*kinds, "number", "boolean"]}
    rest_kinds = set(kinds) - {"null"}
    if rest_kinds and rest_kinds <= {"integer", "number"}:
        pattern = INTEGER_TEXT if rest_kinds == {"integer"} else NUMBER_TEXT
        meta = {k: v for k, v in schema.items() if k in ("description", "default", "title")}
        value = {k: v for k, v in schema.items() if k not in meta}
        return {**meta, "anyOf": [value, {"type": "string", "pattern": pattern}]}
    return schema


def _any_case(value: str) -> str:
    parts = []
    for char in value:
        upper, lower = char.upper(), char.lower()
        if upper != lower and len(upper) == 1 and len(lower) == 1:
            parts.append(f"[{re.escape(upper)}{re.escape(lower)}]")
        elif char.isalnum() or char == "_":
            parts.append(char)
        else:
            parts.append(f"\\u{ord(char):04x}" if ord(char) < 0x10000 else re.escape(char))
    return "".join(parts)
