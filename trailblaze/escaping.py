"""Text from the user's files made safe for each output that cannot carry every character.

File names, tool names, messages and YAML lines can hold control characters (an escape sequence
would recolour or rewrite the terminal), line breaks (a finding would read as two), bidi
overrides (text that displays in another order than it reads) and lone surrogates (file names
that are not UTF-8; no encoder accepts them).

- `printable`: the terminal and GitHub annotations. Such characters read as `\\xNN` / `\\uNNNN`.
- `xml_text`: JUnit XML. What XML 1.0 forbids is written the same way; what it allows is kept.
- `json_text`: JSON documents (JSON itself escapes control characters; lone surrogates are
  written as their `\\u` escape).
"""

from __future__ import annotations

import json
import re
from typing import Any

_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_UNPRINTABLE_BUT_NEWLINE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, newlines: bool = False) -> str:
    """`text` with every control, line-break, bidi and lone-surrogate character escaped.

    `newlines=True` keeps line feeds (a multi-line message stays multi-line).
    """
    pattern = _UNPRINTABLE_BUT_NEWLINE if newlines else _UNPRINTABLE
    return pattern.sub(_escape, text) if pattern.search(text) else text


def xml_text(text: str) -> str:
    """`text` with the characters XML 1.0 forbids (most C0 controls, lone surrogates, U+FFFE,
    U+FFFF) escaped, so the document stays well-formed."""
    return _NOT_XML.sub(_escape, text) if _NOT_XML.search(text) else text


def json_text(value: Any, *, indent: int | None = None) -> str:
    """A JSON document of `value` that any UTF-8 writer accepts."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return _SURROGATE.sub(_escape_u, text) if _SURROGATE.search(text) else text


def _escape_u(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"
