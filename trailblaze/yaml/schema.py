"""Validate located YAML nodes against a JSON Schema and point every error at its node.

jsonschema reports an error by the path of the instance that failed; this module walks that
path back through the `YNode` tree to a line and column, and words the message for people
("unknown key 'textRegx' (did you mean 'textRegex'?)", "expected an integer, found a string").
Manifests, tool files and replay's argument parsing all go through here, so a schema and its
messages are defined once.

Inside `remembering(path)` (what a check does), a document already found valid against the
same schema by an earlier run is not validated again: the pairs are remembered by digest in the
state store. Then a check of an unchanged workspace neither validates its manifests nor imports
jsonschema (a twentieth of a second, on every run).
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from trailblaze import __version__, codes
from trailblaze.finding import did_you_mean, join_key
from trailblaze.state.keys import digest
from trailblaze.state.store import Kind, Store
from trailblaze.yaml.node import YMap, YNode, YScalar, YSeq, kind_of

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


class SchemaIssue(msgspec.Struct, frozen=True, kw_only=True):
    """A place in a YAML document that does not fit its schema, with the finding code it becomes."""

    line: int
    column: int
    key_path: str
    message: str
    code: str


@functools.cache
def _validator_for(schema_json: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - see the module docstring

    schema = json.loads(schema_json)
    defs = schema.get("$defs") if isinstance(schema, dict) else None
    if isinstance(defs, dict):
        # Tool schemas share one big `$defs` block (the selector grammar): check each definition
        # against the metaschema once per process, not once per tool (~0.15 s each time).
        Draft202012Validator.check_schema({k: v for k, v in schema.items() if k != "$defs"})
        for name, definition in defs.items():
            _check_definition(name, json.dumps(definition, sort_keys=True))
    else:
        Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@functools.cache
def _check_definition(name: str, definition_json: str) -> None:
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - see the module docstring

    Draft202012Validator.check_schema({"$defs": {name: json.loads(definition_json)}})


def _digests(value: Any) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
        raise TypeError("not a list of digests")
    return frozenset(value)


VALID: Kind[frozenset[str]] = Kind("valid-documents", _digests, sorted)
"""Digests of the (schema, document) pairs that validated clean, keyed by our version."""


class ValidMemo:
    """The pairs known valid from earlier runs, and those this run saw."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.known = store.get(VALID, key=__version__) or frozenset()
        self.used: set[str] = set()

    def save(self) -> None:
        # Only what this run saw: the documents of earlier versions of the files are dropped.
        if self.used != self.known:
            self.store.put(VALID, "", frozenset(self.used), key=__version__)


_MEMO: list[ValidMemo] = []
_SCHEMA_TEXTS: dict[int, tuple[Mapping[str, Any], str, str]] = {}
"""id(schema) -> (schema, its canonical JSON, its digest); the schema is kept so its id stays its own."""


@contextlib.contextmanager
def remembering(store: Store) -> Iterator[None]:
    """Skip validating documents that an earlier run found valid (see the module docstring);
    what this run found valid is staged in `store` for its owner to commit."""
    memo = ValidMemo(store)
    _MEMO.append(memo)
    try:
        yield
    finally:
        _MEMO.remove(memo)
    memo.save()


def _schema_text(schema: Mapping[str, Any]) -> tuple[str, str]:
    """A schema's canonical JSON and its digest, worked out once per schema object."""
    cached = _SCHEMA_TEXTS.get(id(schema))
    if cached is None or cached[0] is not schema:
        if len(_SCHEMA_TEXTS) > 1024:
            _SCHEMA_TEXTS.clear()  # callers that build a schema per call must not grow it forever
        text = json.dumps(schema, sort_keys=True)
        cached = (schema, text, digest("trailblaze-schema", text))
        _SCHEMA_TEXTS[id(schema)] = cached
    return cached[1], cached[2]


def _memo_key(schema: Mapping[str, Any], instance: Any) -> str:
    """The key of a document in the validated-documents memo: the schema (the digest of its
    canonical JSON) and the document as `repr` shows it (not JSON: it tells 1 from "1" and
    True from "true", in keys too). Our version is the memo's own key (`ValidMemo.save`)."""
    _, schema_digest = _schema_text(schema)
    return digest("trailblaze-valid-document", schema_digest, repr(instance))


def validator(schema: Mapping[str, Any]) -> Draft202012Validator:
    """A (cached) validator; the schema itself is checked against the meta-schema once."""
    return _validator_for(_schema_text(schema)[0])


def check(
    node: YNode | None,
    schema: Mapping[str, Any],
    *,
    key_path: str = "",
    at: tuple[int, int] = (1, 1),
) -> list[SchemaIssue]:
    """Every problem of `node` against `schema`, located, sorted by position."""
    instance = node.to_python() if node is not None else None
    memo = _MEMO[-1] if _MEMO else None
    key = _memo_key(schema, instance) if memo is not None else ""
    if memo is not None and key in memo.known:
        memo.used.add(key)
        return []
    issues: list[SchemaIssue] = []
    for error in _leaves(validator(schema).iter_errors(instance)):
        issues.extend(_describe(error, node, key_path, at))
    if memo is not None and not issues:
        memo.used.add(key)
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
            name = key.text
            if name in known:
                continue
            issues.append(
                SchemaIssue(
                    line=key.line,
                    column=key.column,
                    key_path=key_path,
                    message=f"unknown key '{name}'{did_you_mean(name, known)}",
                    code=codes.UNKNOWN_KEY,
                )
            )
        if issues:
            return issues
    if validator_name == "required":
        missing = [
            name for name in error.validator_value if not (isinstance(node, YMap) and name in node)
        ]
        return [
            SchemaIssue(
                line=line,
                column=column,
                key_path=key_path,
                message=f"missing required key '{name}' in {_where(key_path)}",
                code=codes.MISSING_KEY,
            )
            for name in missing
        ]
    if validator_name == "type":
        expected = error.validator_value
        names = expected if isinstance(expected, list) else [expected]
        words = " or ".join(_TYPE_WORDS.get(str(n), str(n)) for n in names if n != "null")
        found = _found(node)
        return [
            SchemaIssue(
                line=line,
                column=column,
                key_path=key_path,
                message=f"expected {words}, found {found}",
                code=codes.WRONG_TYPE,
            )
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
                line=name_key.line,
                column=name_key.column,
                key_path=key_path,
                message=f"unknown key '{error.instance}'{did_you_mean(error.instance, allowed)}; "
                f"expected one of {', '.join(allowed)}",
                code=codes.UNKNOWN_KEY,
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
                line=line,
                column=column,
                key_path=key_path,
                message=f"'{value}' is not one of {shown}{hint}",
                code=codes.INVALID_VALUE,
            )
        ]
    if validator_name == "pattern":
        value = node.text if isinstance(node, YScalar) else kind_of(node)
        if value == "":
            return []  # minLength says it better: "must not be empty"
        return [
            SchemaIssue(
                line=line,
                column=column,
                key_path=key_path,
                message=f"'{value}' is not a valid name",
                code=codes.INVALID_VALUE,
            )
        ]
    if validator_name in ("minLength", "minItems", "minProperties") and error.validator_value == 1:
        return [
            SchemaIssue(
                line=line,
                column=column,
                key_path=key_path,
                message="must not be empty",
                code=codes.EMPTY,
            )
        ]
    if validator_name == "not" and error.validator_value == {"required": ["platforms"]}:
        platforms = node.key_node("platforms") if isinstance(node, YMap) else None
        where_line, where_col = (
            (platforms.line, platforms.column) if platforms is not None else (line, column)
        )
        return [
            SchemaIssue(
                line=where_line,
                column=where_col,
                key_path=key_path,
                message="'platforms' belongs to library trailmaps; a target declares them under "
                "'target.platforms'",
                code=codes.INVALID_VALUE,
            )
        ]
    return [
        SchemaIssue(
            line=line,
            column=column,
            key_path=key_path,
            message=_plain(error.message),
            code=codes.INVALID_VALUE,
        )
    ]


def _where(key_path: str) -> str:
    return f"'{key_path}'" if key_path else "the document"


def _found(node: YNode | None) -> str:
    if isinstance(node, YScalar) and node.quoted and isinstance(node.value, str):
        return f"the quoted string '{node.value}'"
    return kind_of(node)


def _plain(message: str) -> str:
    return message.replace("None", "null").replace("True", "true").replace("False", "false")
