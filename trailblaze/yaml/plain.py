"""How a plain (unquoted) YAML scalar reads: the YAML 1.2 core schema, with our one exception.

A quoted or block scalar is always a string and never comes here. Integers written with leading
zeros (``0007``, ``007.5``) stay strings, because their text would not survive the round trip;
``7:30`` is a string (no YAML 1.1 sexagesimals). `yaml.node` calls this for every plain scalar.
"""

from __future__ import annotations

import math
import re
from typing import TypeAlias

Scalar: TypeAlias = str | int | float | bool | None

_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_INT_BASED = re.compile(r"0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)")
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})


MAYBE_NOT_TEXT = frozenset("~nNtTfF0123456789-+.") | {""}
"""The first characters (`text[:1]`) of every plain scalar that may resolve to something other
than its text: a caller that sees another first character has the answer (the text) without
calling `resolve_plain`, as for most plain scalars of a trail."""


def resolve_plain(text: str) -> Scalar:
    """YAML 1.2 core resolution of a plain scalar (leading-zero integers stay strings)."""
    if text in _NULLS:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    first = text[0]
    if first.isdigit() or first in "-+.":
        if _INT.fullmatch(text):
            return int(text)
        if _INT_BASED.fullmatch(text):
            return int(text, 0)
        if _FLOAT.fullmatch(text):
            if text.lstrip("-+").startswith("0") and text.lstrip("-+")[1:2].isdigit():
                return text  # 007.5: keep the text, as for integers with leading zeros
            return float(text)
        if _INF.fullmatch(text):
            return -math.inf if text.startswith("-") else math.inf
        if _NAN.fullmatch(text):
            return math.nan
    return text
