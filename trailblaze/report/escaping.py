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

import json
import json.encoder
import re
from collections.abc import Callable
from itertools import chain
from typing import Any

_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_UNPRINTABLE_BUT_LINE_BREAKS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
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
    return _NOT_XML.sub(_escape, text) if _NOT_XML.search(text) else text


def json_text(value: Any, *, indent: int | None = None) -> str:
    """A JSON document of `value` that any UTF-8 writer accepts."""
    if indent is None or _make_encoder is None:
        text = json.dumps(value, indent=indent, ensure_ascii=False)
    else:
        parts: list[str] = []
        _indented(value, " " * indent, "\n", parts)
        text = "".join(parts)
    return _SURROGATE.sub(_escape_u, text) if _SURROGATE.search(text) else text


_make_encoder: Callable[..., Any] | None = getattr(json.encoder, "c_make_encoder", None)
_CONTAINERS = (dict, list, tuple)
_CONTAINER_SET = frozenset(_CONTAINERS)
_flat_encoders: dict[str, Callable[[Any, int], list[str]]] = {}


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _flat(separator: str) -> Callable[[Any, int], list[str]]:
    """The C encoder with `separator` between items (what `json.dumps` builds on every call)."""
    encoder = _flat_encoders.get(separator)
    if encoder is None:
        assert _make_encoder is not None
        encoder = _flat_encoders[separator] = _make_encoder(
            None,
            _not_json,
            json.encoder.encode_basestring,
            None,
            ": ",
            separator,
            False,
            False,
            True,
        )
    return encoder


def _indented(value: Any, step: str, pad: str, out: list[str]) -> None:
    """`json.dumps(value, indent=len(step), ensure_ascii=False)` into `out`, byte for byte.

    The standard library writes indented JSON in Python, value by value (a report of ten
    thousand trails took a fifth of a second); here each container of scalars (a trail's
    status, a finding) goes to the C encoder in one call, the indentation as its item
    separator, and only the containers above them are walked in Python.
    """
    kind = type(value)
    inner = pad + step
    if kind is dict and value:
        if any(type(v) in _CONTAINERS for v in value.values()):
            if not all(type(k) is str for k in value):
                out.append(
                    json.dumps(value, indent=len(step), ensure_ascii=False).replace("\n", pad)
                )
                return
            out.append("{")
            first = True
            for key, item in value.items():
                out.append(
                    ("" if first else ",") + inner + json.encoder.encode_basestring(key) + ": "
                )
                _indented(item, step, inner, out)
                first = False
            out.append(pad + "}")
            return
    elif (kind is list or kind is tuple) and value:
        if any(type(v) in _CONTAINERS for v in value):
            rows = _rows(value, step, inner)
            if rows is not None:
                out.append("[" + inner + rows + pad + "]")
                return
            out.append("[")
            first = True
            for item in value:
                out.append(("" if first else ",") + inner)
                _indented(item, step, inner, out)
                first = False
            out.append(pad + "]")
            return
    elif kind is not dict and kind is not list and kind is not tuple:
        out.append(json.dumps(value, ensure_ascii=False))  # a scalar (or what json makes of it)
        return
    else:
        out.append("{}" if kind is dict else "[]")
        return
    text = "".join(_flat("," + inner)(value, 0))
    out.append(text[0] + inner + text[1:-1] + pad + text[-1])


def _rows(value: list[Any] | tuple[Any, ...], step: str, pad: str) -> str | None:
    """The items of `value`, indented at `pad` and joined, when every item is a dict with the
    same keys and only scalars (a report's trails and findings), else None. All their values go
    to the C encoder in one call (a NUL between them: JSON writes a NUL in a string as
    `\u0000`), and the rows are one `%` of a template made of the keys; every step is one call
    over all the items, not a Python loop."""
    if set(map(type, value)) != {dict}:
        return None
    keys = tuple(value[0])
    if not keys or set(map(type, keys)) != {str} or set(map(tuple, value)) != {keys}:
        return None
    flat = list(chain.from_iterable(map(dict.values, value)))
    if not _CONTAINER_SET.isdisjoint(map(type, flat)):
        return None
    tokens = "".join(_flat("\x00")(flat, 0))[1:-1].split("\x00")
    if len(tokens) != len(flat):
        return None  # cannot be: no value's JSON holds a NUL
    deeper = pad + step
    entries = (deeper + json.encoder.encode_basestring(k).replace("%", "%%") + ": %s" for k in keys)
    row = "{" + ",".join(entries) + pad + "}"
    return str(("," + pad).join([row] * len(value)) % tuple(tokens))


def _escape_u(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"
