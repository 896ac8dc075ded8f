"""Text from the user's files made safe for each output that cannot carry every character.

File names, tool names, messages and YAML lines can hold control characters (an escape sequence
would recolour or rewrite the terminal), line breaks (a finding would read as two), bidi
overrides (text that displays in another order than it reads) and lone surrogates (file names
that are not UTF-8; no encoder accepts them).

- `printable`: the terminal and GitHub annotations. Such characters read as `\\xNN` / `\\uNNNN`
  (in annotations line breaks are the runner's own `%0A` / `%0D`).
- `xml_text`: JUnit XML. What XML 1.0 forbids is written the same way; what it allows is kept.
- `json_text`: JSON documents (JSON itself escapes control characters; lone surrogates are
  written as their `\\u` escape).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Collection
from itertools import chain, compress
from operator import not_
from typing import Any

import orjson

_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_UNPRINTABLE_BUT_LINE_BREAKS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


@functools.cache
def _not_xml() -> re.Pattern[str]:
    # Compiled on first use: the character class spans all of Unicode, which costs every
    # command a few milliseconds to compile, and only a JUnit report needs it.
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, newlines: bool = False) -> str:
    """`text` with every control, line-break, bidi and lone-surrogate character escaped.

    `newlines=True` keeps line feeds and carriage returns, for a caller that escapes them its
    own way (GitHub annotations: `%0A`, `%0D`).
    """
    pattern = _UNPRINTABLE_BUT_LINE_BREAKS if newlines else _UNPRINTABLE
    return pattern.sub(_escape, text) if pattern.search(text) else text


def xml_text(text: str) -> str:
    """`text` with the characters XML 1.0 forbids (most C0 controls, lone surrogates, U+FFFE,
    U+FFFF) escaped, so the document stays well-formed."""
    not_xml = _not_xml()
    return not_xml.sub(_escape, text) if not_xml.search(text) else text


def json_text(value: Any, *, indent: int | None = None, built: Collection[str] = ()) -> str:
    """A JSON document of `value` that any UTF-8 writer accepts: byte for byte what
    `json.dumps(value, indent=indent, ensure_ascii=False)` writes, lone surrogates escaped.

    Indented by two (every report, the schema, the artifacts), a value of plain JSON types goes
    to orjson, which writes that layout in one call: a report of ten thousand trails in 4.6 ms
    with the type scan, against 22 ms for the C encoder driven by hand before and 45 ms for
    `json.dumps`. What orjson would write otherwise goes to `json.dumps`: a float that either
    writes in exponent form (`1e-05`; orjson: `0.00001`), NaN and the infinities (orjson:
    `null`), any type but the plain ones (orjson takes dataclasses, enums, dates), and, refused
    by orjson, a key that is not a string, an integer past 64 bits, a lone surrogate.

    `built`: keys of `value` (a dict) whose values the caller built of nothing but dicts, lists,
    strings, integers, booleans and None: left out of the walk for other types.
    """
    if indent == 2 and _plain(
        {k: v for k, v in value.items() if k not in built} if built else value
    ):
        try:
            text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONEncodeError:  # a lone surrogate, an integer past 64 bits
            pass
        else:
            return text
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return _SURROGATE.sub(_escape_u, text) if _SURROGATE.search(text) else text


def json_bytes(value: Any) -> bytes:
    """A compact JSON document of `value` (no spaces), UTF-8, for files our own code reads back
    (the report of `doit check`): orjson writes it in one call, a report of ten thousand trails
    in a millisecond where `json.dumps` takes thirteen. What orjson refuses (a lone surrogate,
    an integer past 64 bits, a key that is not a string) is written by `json_text` instead. A
    NaN or an infinity, for which JSON has no word, is written as null (`json.dumps` wrote
    `NaN`, which strict JSON readers refuse); a report holds none."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return json_text(value).encode("utf-8")


_SCALARS = frozenset({str, int, bool, type(None), float})
_CONTAINERS = frozenset({dict, list, tuple})
_PLAIN = _SCALARS | _CONTAINERS
_DICT = frozenset({dict})


def _plain(value: Any) -> bool:
    """`value` holds only the exact types orjson writes as the standard library does (dicts,
    lists, tuples, strings, integers, booleans, None) and only floats that both write without
    an exponent. Keys are left to orjson, which refuses what is not a string. Walked a level at a time, each level's values in C (a report's
    ten thousand rows are one level, not ten thousand Python steps)."""
    values: list[Any] = [value]
    while values:
        types = set(map(type, values))
        if not types <= _PLAIN:
            return False
        if float in types and not all(
            x == 0 or 1e-4 <= abs(x) < 1e16 for x in values if type(x) is float
        ):
            return False  # NaN and the infinities fail both comparisons
        if types.isdisjoint(_CONTAINERS):
            return True
        level = list(compress(values, map(_CONTAINERS.__contains__, map(type, values))))
        is_dict = list(map(_DICT.__contains__, map(type, level)))
        values = list(chain.from_iterable(map(dict.values, compress(level, is_dict))))
        values.extend(chain.from_iterable(compress(level, map(not_, is_dict))))
    return True


def _escape_u(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"
