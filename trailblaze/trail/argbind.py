"""Trail argument values: a value coerced to its declared type, and a trail's arguments bound.

Trailblaze binds a parameterized trail's arguments before any device work (its
`TrailArgBinder`), and so does replay here: every declared argument gets the value given for
it (an `--args-file` entry, overridden by `--arg`), else its `default:`, else the trail is
refused as missing a required argument. Coercion follows the DECLARED type, never the value's
shape: `'123'` for an integer is 123, a plain `123` for a string is `"123"`, `TRUE` for a
boolean is true. There is no null: a null value, given or declared as the default, is refused.

A value is held as its scalar text (`str`), a list, a mapping, or `None` for a null, so that a
value from the command line, from an args file and from a `default:` coerce alike. A bound
value is the text a token becomes: an integer's digits, `true`/`false`, an array's or
object's JSON.

The check uses `coerce` too: a `default:` replay would refuse is a warning there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from trailblaze.trail.argtokens import (
    TOKEN,
    is_args_body,
    malformed_message,
    parse_token,
    token_body,
)
from trailblaze.trail.model import ArgDecl
from trailblaze.yaml.node import YMap, YNode, YScalar, YSeq

_LONG = re.compile(r"[+-]?[0-9]+")
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
NULL_HINT = "write '' for an empty text, or leave the argument out to take its default"


class Null:
    """The null value (`~`, `null` or nothing in YAML): there is none among argument values."""


NULL = Null()

Raw = str | list[Any] | dict[str, Any] | Null
"""A value before coercion: scalar text, a list, a mapping, or NULL."""


def raw_value(node: YNode) -> Raw:
    """A YAML node as a value to coerce: a scalar's text (a plain null is NULL)."""
    if isinstance(node, YScalar):
        if node.is_null:
            return NULL
        return node.text
    if isinstance(node, YSeq | YMap):
        return node.to_python()
    raise TypeError(node)  # pragma: no cover - YNode is one of the three


def shape(value: Raw) -> str:
    if isinstance(value, Null):
        return "null"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"'{value}'"


def coerce(type_: str, value: Raw) -> str:
    """`value` as the token text of a `type_` argument; `ValueError` says why it is not one."""
    if isinstance(value, Null):
        raise ValueError(f"null is not a value: {NULL_HINT}")
    if type_ == "string":
        if isinstance(value, str):
            return value
        raise ValueError(f"expected text, got {shape(value)}")
    if type_ == "integer":
        if isinstance(value, str) and _LONG.fullmatch(value):
            number = int(value)
            if _LONG_MIN <= number <= _LONG_MAX:
                return str(number)
        raise ValueError(f"expected an integer, got {shape(value)}")
    if type_ == "boolean":
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower()
        raise ValueError(f"expected a boolean (true or false), got {shape(value)}")
    if type_ == "array":
        if isinstance(value, list):
            return json.dumps(value, ensure_ascii=False)
        raise ValueError(f"expected a list, got {shape(value)}")
    if type_ == "object":
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False)
        raise ValueError(f"expected a mapping, got {shape(value)}")
    raise ValueError(f"has the unknown type '{type_}'")


class Given(msgspec.Struct, frozen=True):
    """A value given for an argument, and where: `--arg NAME` or `path:line:col` in a file."""

    value: Raw
    source: str


class BindError(msgspec.Struct, frozen=True):
    """Why a trail's arguments do not bind: the declaration (or None) at fault, and what."""

    decl: ArgDecl | None
    message: str


def bind(declared: Sequence[ArgDecl], given: Mapping[str, Given]) -> dict[str, str] | BindError:
    """Every declared argument's token text, or the first reason the trail may not start.

    `given` holds only names the trail declares: which other names a run may carry is the
    caller's business (an argument of no trail of the run is a usage error).
    """
    bound: dict[str, str] = {}
    missing: list[ArgDecl] = []
    for decl in declared:
        if decl.name in given:
            value = given[decl.name]
            try:
                bound[decl.name] = coerce(decl.type, value.value)
            except ValueError as exc:
                hint = ""
                if decl.type in ("array", "object") and isinstance(value.value, str):
                    hint = " (a list or a mapping can only be given in an --args-file)"
                return BindError(decl, f"argument '{decl.name}' ({value.source}): {exc}{hint}")
        elif decl.has_default and decl.default is not None:
            try:
                bound[decl.name] = coerce(decl.type, raw_value(decl.default))
            except ValueError as exc:
                return BindError(
                    decl,
                    f"argument '{decl.name}' was not given and its default is not of type "
                    f"{decl.type}: {exc}; pass --arg {decl.name}=VALUE or fix the default",
                )
        else:
            missing.append(decl)
    if missing:
        names = ", ".join(d.name for d in missing)
        plural = "s" if len(missing) > 1 else ""
        return BindError(
            missing[0],
            f"missing required argument{plural} {names}: pass --arg {missing[0].name}=VALUE "
            "(or put it in an --args-file), or declare a default: to make it optional",
        )
    for decl in declared:
        problem = malformed_arg_token(bound[decl.name])
        if problem is not None:
            return BindError(decl, f"argument '{decl.name}' has a {problem} in its value")
    return bound


def malformed_arg_token(text: str) -> str | None:
    """The message of the first malformed `{{args...}}` token of `text`, or None."""
    if "{" not in text:
        return None
    for match in TOKEN.finditer(text):
        body = token_body(match)
        if is_args_body(body) and parse_token(body) is None:
            return malformed_message(match.group(0))
    return None
