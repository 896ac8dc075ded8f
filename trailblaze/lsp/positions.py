"""Finding positions as LSP positions.

A finding's `line` and `column` count from 1, the column in characters (code points) of its
line. LSP counts from 0, and its column in UTF-16 code units unless the client and server agree
on another encoding (we announce none, so it is UTF-16): a character outside the Basic
Multilingual Plane (an emoji) is two units.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A range in LSP units: 0-based lines, UTF-16 columns, the end exclusive."""

    line: int
    start: int
    end_line: int
    end: int


def utf16_units(text: str) -> int:
    """How many UTF-16 code units `text` is."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def character_of(line_text: str, units: int) -> int:
    """The index (code points) of the character at UTF-16 column `units` of a line; the
    line's length past its end."""
    seen = 0
    for index, ch in enumerate(line_text):
        if seen >= units:
            return index
        seen += 2 if ord(ch) > 0xFFFF else 1
    return len(line_text)


def finding_span(lines: list[str], line: int, column: int) -> Span:
    """The range of a finding at `line:column` (1-based, characters): from its column to the end
    of the line's text (the argument, its value and what follows on that line, comments and
    blanks at its end left out). Past the end of the text: the last line's end; a file-level
    finding (line 0) is its first line."""
    if not lines:
        return Span(0, 0, 0, 0)
    index = min(max(line, 1), len(lines)) - 1
    text = lines[index]
    if line > len(lines):
        end = utf16_units(text)
        return Span(index, end, index, end)
    start_char = min(max(column, 1) - 1, len(text))
    start = utf16_units(text[:start_char])
    content = _without_comment(text).rstrip()
    end = max(start, utf16_units(content))
    if end == start:
        end = max(start, utf16_units(text.rstrip()))
    return Span(index, start, index, end)


def _without_comment(text: str) -> str:
    """The line up to a YAML comment (`#` at its start or after a blank, outside quotes)."""
    quote: str | None = None
    for index, ch in enumerate(text):
        if quote is not None:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (index == 0 or text[index - 1] in " \t"):
            return text[:index]
    return text
