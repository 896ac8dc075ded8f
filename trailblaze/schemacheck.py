"""Validate located YAML nodes against a JSON Schema and point every error at its node.

jsonschema reports an error by the path of the instance that failed; this module walks that
path back through the `YNode` tree to a line and column, and words the message for people
("unknown key 'textRegx' (did you mean 'textRegex'?)", "expected an integer, found a string").
Manifests, tool files and replay's argument parsing all go through here, so a schema and its
messages are defined once.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from trailblaze.finding import did_you_mean, join_key
from trailblaze.yamlnode import YMap, YNode, YScalar, YSeq, kind_of

_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    line: int
    column: int
    key_path: str
    message: str
    code: str


@functools.cache
def _validator_for(schema_json: str) -> Draft202012Validator:
    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def validator(schema: Mapping[str, Any]) -> Draft202012Validator:
    """A (cached) validator; the schema itself is checked against the meta-schema once."""
    return _validator_for(json.dumps(schema, sort_keys=True))


def check(
    node: YNode | None,
    schema: Mapping[str, Any],
    *,
    key_path: str = "",
    at: tuple[int, int] = (1, 1),
) -> list[SchemaIssue]:
    """Every problem of `node` against `schema`, located, sorted by position."""
    instance = node.to_python() if node is not None else None
    issues: list[SchemaIssue] = []
    for error in _leaves(validator(schema).iter_errors(instance)):
        issues.extend(_describe(error, node, key_path, at))
    issues.sort(key=lambda i: (i.line, i.column, i.message))
    unique: list[SchemaIssue] = []
    for issue in issues:
        if not unique or unique[-1] != issue:
            unique.append(issue)
    return unique


def _leaves(errors: Iterable[ValidationError]) -> Iterable[ValidationError]:
    """Prefer the most specific error of a oneOf/anyOf over the "is not valid under" summary."""
    for error in errors:
        if error.validator in ("oneOf", "anyOf") and error.context:
            best = _best_branch(error)
            if best is not None:
                yield from best
                continue
        yield error


def _best_branch(error: ValidationError) -> list[ValidationError] | None:
    """The errors of the alternative that got furthest (deepest path, fewest errors)."""
    branches: dict[int, list[ValidationError]] = {}
    for sub in error.context or ():
        index = sub.schema_path[0] if sub.schema_path else 0
        branches.setdefault(int(index), []).append(sub)
    if not branches:
        return None

    # A branch that failed only on a type mismatch at the top did not apply at all.
    def score(errs: list[ValidationError]) -> tuple[int, int]:
        depth = max(len(e.relative_path) for e in errs)
        shallow_type = all(e.validator == "type" and not e.relative_path for e in errs)
        return (0 if shallow_type else 1, depth * 100 - len(errs))

    ranked = sorted(branches.values(), key=score, reverse=True)
    if len(ranked) > 1 and score(ranked[0]) == score(ranked[1]):
        return None
    return list(_leaves(ranked[0]))


def locate(
    node: YNode | None, path: Iterable[str | int], base: str
) -> tuple[YNode | None, YScalar | None, str]:
    """Follow an instance path: (value node, key node of the last step, key path)."""
    current = node
    key_node: YScalar | None = None
    key_path = base
    for part in path:
        if isinstance(current, YMap) and isinstance(part, str):
            key_node = current.key_node(part)
            current = current.get(part)
            key_path = join_key(key_path, part)
        elif isinstance(current, YSeq) and isinstance(part, int) and part < len(current.items):
            current = current.items[part]
            key_node = None
            key_path = join_key(key_path, part)
        else:
            break
    return current, key_node, key_path


def _describe(
    error: ValidationError, root: YNode | None, base: str, at: tuple[int, int]
) -> list[SchemaIssue]:
    node, key_node, key_path = locate(root, error.absolute_path, base)
    anchor: YNode | YScalar | None = node if node is not None else key_node
    line, column = (anchor.line, anchor.column) if anchor is not None else at
    validator_name = error.validator
    schema = error.schema if isinstance(error.schema, Mapping) else {}

    if validator_name in ("additionalProperties", "unevaluatedProperties") and isinstance(
        node, YMap
    ):
        known = tuple(schema.get("properties", {}))
        issues = []
        for key, _ in node:
            name = str(key.value)
            if name in known:
                continue
            issues.append(
                SchemaIssue(
                    key.line,
                    key.column,
                    key_path,
                    f"unknown key '{name}'{did_you_mean(name, known)}",
                    "unknown-key",
                )
            )
        if issues:
            return issues
    if validator_name == "required":
        missing = [
            name for name in error.validator_value if not (isinstance(node, YMap) and name in node)
        ]
        where = key_path or "document"
        return [
            SchemaIssue(
                line,
                column,
                key_path,
                f"missing required key '{name}' in {_where(where)}",
                "missing-key",
            )
            for name in missing
        ]
    if validator_name == "type":
        expected = error.validator_value
        names = expected if isinstance(expected, list) else [expected]
        words = " or ".join(_TYPE_WORDS.get(str(n), str(n)) for n in names if n != "null")
        found = _found(node)
        return [
            SchemaIssue(line, column, key_path, f"expected {words}, found {found}", "wrong-type")
        ]
    if (
        validator_name == "enum"
        and isinstance(node, YMap)
        and isinstance(error.instance, str)
        and (name_key := node.key_node(error.instance)) is not None
    ):
        # A `propertyNames` failure: jsonschema reports it at the mapping, not at the key.
        allowed = tuple(str(v) for v in error.validator_value)
        return [
            SchemaIssue(
                name_key.line,
                name_key.column,
                key_path,
                f"unknown key '{error.instance}'{did_you_mean(error.instance, allowed)}; "
                f"expected one of {', '.join(allowed)}",
                "unknown-key",
            )
        ]
    if validator_name in ("enum", "const"):
        allowed_values = (
            error.validator_value if validator_name == "enum" else [error.validator_value]
        )
        shown = ", ".join(json.dumps(v) for v in allowed_values)
        value = node.text if isinstance(node, YScalar) else kind_of(node)
        hint = (
            did_you_mean(value, [str(v) for v in allowed_values])
            if isinstance(node, YScalar)
            else ""
        )
        return [
            SchemaIssue(
                line, column, key_path, f"'{value}' is not one of {shown}{hint}", "invalid-value"
            )
        ]
    if validator_name == "pattern":
        value = node.text if isinstance(node, YScalar) else kind_of(node)
        if value == "":
            return []  # minLength says it better: "must not be empty"
        return [
            SchemaIssue(line, column, key_path, f"'{value}' is not a valid name", "invalid-value")
        ]
    if validator_name in ("minLength", "minItems", "minProperties") and error.validator_value == 1:
        return [SchemaIssue(line, column, key_path, "must not be empty", "empty")]
    if validator_name == "not" and error.validator_value == {"required": ["platforms"]}:
        platforms = node.key_node("platforms") if isinstance(node, YMap) else None
        where_line, where_col = (
            (platforms.line, platforms.column) if platforms is not None else (line, column)
        )
        return [
            SchemaIssue(
                where_line,
                where_col,
                key_path,
                "'platforms' belongs to library trailmaps; a target declares them under "
                "'target.platforms'",
                "invalid-value",
            )
        ]
    return [SchemaIssue(line, column, key_path, _plain(error.message), "invalid-value")]


def _where(key_path: str) -> str:
    return f"'{key_path}'" if key_path != "document" else "the document"


def _found(node: YNode | None) -> str:
    if isinstance(node, YScalar) and node.quoted and isinstance(node.value, str):
        return f"the quoted string '{node.value}'"
    return kind_of(node)


def _plain(message: str) -> str:
    return message.replace("None", "null").replace("True", "true").replace("False", "false")
