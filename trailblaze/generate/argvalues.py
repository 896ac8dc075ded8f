"""Recorded argument values as JSON values: the same for the type gate and for replay.

- a quoted scalar is a string; a plain scalar is a YAML 1.2 value, except where the tool
  declares a string, where it is its source text (`index: 007` is "007");
- enum values are matched case-insensitively, as the reference's runtime decodes them
  (`direction: down` is `"DOWN"`);
- a quoted canonical number given to a number or integer argument (`'3'`) is converted, as the
  reference's runtime converts it, with a non-fatal `quoted-number` lint (`codegen`).

`codegen` writes these values into the generated modules; replay dispatches them (`json_args`,
`runtime_values`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from trailblaze.yaml.node import YNode, YScalar, YSeq


def _kinds(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    return {str(k) for k in (kind if isinstance(kind, list) else [kind]) if k is not None}


def _string_typed(kinds: set[str]) -> bool:
    return "string" in kinds and not ({"integer", "number", "boolean"} & kinds)


def _numeric(kinds: set[str]) -> str | None:
    """`integer` or `number` when the schema takes numbers and nothing else but null."""
    rest = kinds - {"null"}
    if rest == {"integer"}:
        return "integer"
    if rest and rest <= {"integer", "number"}:
        return "number"
    return None


def _folding(schema: Mapping[str, Any]) -> Mapping[str, str] | None:
    """An enum's values by their lower case (values that differ only in case are left out)."""
    values = schema.get("enum")
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        return None
    folded: dict[str, str] = {}
    clashes: set[str] = set()
    for value in values:
        lower = value.lower()
        if lower in folded and folded[lower] != value:
            clashes.add(lower)
        folded[lower] = value
    for lower in clashes:
        del folded[lower]
    return folded


_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+")


def canonical_number(text: str, kind: str) -> int | float | None:
    """The number a quoted value is converted to at replay, or None.

    The reference's runtime converts only canonical text, that prints back the same: `5`, `-4`
    and (for a number) `3.5` or `1.0`, not `007`, `+5`, `1e3` or `1.50`.
    """
    if _INT.fullmatch(text):
        return int(text)
    if kind == "number" and _DECIMAL.fullmatch(text):
        value = float(text)
        # Java's Double.toString switches to exponent notation outside [1e-3, 1e7).
        if repr(value) == text and (value == 0 or 1e-3 <= abs(value) < 1e7):
            return value
    return None


class ValuePlan(msgspec.Struct, frozen=True):
    """What converting values under one schema needs, worked out once per schema object."""

    string_typed: bool
    items: Any
    properties: Mapping[str, Any]
    additional: Mapping[str, Any] | None
    numeric: str | None = None
    enum: Mapping[str, str] | None = None


NO_PLAN = ValuePlan(string_typed=False, items=None, properties={}, additional=None)
_NUMBER = ValuePlan(
    string_typed=False, items=None, properties={}, additional=None, numeric="number"
)
_PLANS: dict[int, tuple[Any, Any, ValuePlan]] = {}
"""Plans by schema identity. Each entry holds its schema (and defs), so no other object can
take that id while the entry lives; bounded, since callers may pass short-lived schemas."""
_PLANS_MAX = 4096


class ArgValues:
    """Turns located YAML values into JSON values, quote- and schema-aware."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs

    def resolve(self, schema: Any) -> Any:
        if isinstance(schema, Mapping) and "$ref" in schema:
            name = str(schema["$ref"]).rsplit("/", 1)[-1]
            return self.defs.get(name, {})
        if isinstance(schema, Mapping):
            for combinator in ("anyOf", "oneOf"):
                options = schema.get(combinator)
                if isinstance(options, list):
                    rest = [
                        o
                        for o in options
                        if not (isinstance(o, Mapping) and o.get("type") == "null")
                    ]
                    if len(rest) == 1:
                        return self.resolve(rest[0])
        return schema

    def plan(self, schema: Any) -> ValuePlan:
        if schema is None:
            return NO_PLAN
        hit = _PLANS.get(id(schema))
        if hit is not None and hit[0] is schema and hit[1] is self.defs:
            return hit[2]
        resolved = self.resolve(schema)
        if isinstance(resolved, Mapping):
            properties = resolved.get("properties")
            additional = resolved.get("additionalProperties")
            kinds = _kinds(resolved)
            plan = ValuePlan(
                string_typed=_string_typed(kinds),
                items=resolved.get("items"),
                properties=properties if isinstance(properties, Mapping) else {},
                additional=additional if isinstance(additional, Mapping) else None,
                numeric=_numeric(kinds),
                enum=_folding(resolved),
            )
        else:
            plan = NO_PLAN
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[id(schema)] = (schema, self.defs, plan)
        return plan

    @staticmethod
    def scalar(node: YScalar, plan: ValuePlan) -> Any:
        value = node.value
        if plan.string_typed and not node.quoted and value is not None:
            value = node.text
        if plan.enum is not None and isinstance(value, str):
            return plan.enum.get(value.lower(), value)
        if plan.numeric is not None and node.quoted:
            number = canonical_number(node.text, plan.numeric)
            if number is not None:
                return number
        return value

    def value(self, node: YNode | None, schema: Any, depth: int = 0) -> Any:
        if node is None:
            return {}
        return self._value(node, self.plan(schema) if depth < 40 else NO_PLAN, depth)

    def _value(self, node: YNode, plan: ValuePlan, depth: int) -> Any:
        if isinstance(node, YScalar):
            return self.scalar(node, plan)
        if isinstance(node, YSeq):
            items = self.plan(plan.items) if depth < 40 else NO_PLAN
            return [self._value(item, items, depth + 1) for item in node.items]
        properties = plan.properties
        additional = plan.additional
        convert = self._value
        if depth >= 40:
            return {key.text: convert(item, NO_PLAN, depth + 1) for key, item in node.items}
        plan_of = self.plan
        return {
            key.text: convert(item, plan_of(properties.get(key.text, additional)), depth + 1)
            for key, item in node.items
        }

    def runtime(self, value: Any, schema: Any, depth: int = 0) -> Any:
        """A JSON value as the reference's runtime decodes it: enum values in their declared
        case, canonical numbers in strings as numbers where only a number fits."""
        plan = self.plan(schema) if depth < 40 else NO_PLAN
        if isinstance(value, str):
            if plan.enum is not None:
                return plan.enum.get(value.lower(), value)
            if plan.numeric is not None:
                number = canonical_number(value, plan.numeric)
                return value if number is None else number
            return value
        if isinstance(value, list):
            return [self.runtime(item, plan.items, depth + 1) for item in value]
        if isinstance(value, dict):
            properties = plan.properties
            additional = plan.additional
            return {
                key: self.runtime(item, properties.get(key, additional), depth + 1)
                for key, item in value.items()
            }
        return value


def json_args(args: YNode | None, schema: Mapping[str, Any] | None, defs: Mapping[str, Any]) -> Any:
    """A call's arguments as JSON values, by the same quote- and schema-aware rules as codegen.

    Replay parses what it dispatches with exactly the values the type gate checked.
    """
    return ArgValues(defs).value(args, schema) if args is not None else {}


def runtime_values(value: Any, schema: Mapping[str, Any] | None, defs: Mapping[str, Any]) -> Any:
    """`value` (JSON, tokens already substituted) as the reference's runtime decodes it.

    Replay applies it after token substitution: a token's text is a string, and `{{args.dir}}`
    may well be `down` for an enum or `3` for a number.
    """
    return ArgValues(defs).runtime(value, schema)
