"""What the text at a cursor is about, read from the lines of a trail.

A buffer being typed rarely parses, so this does not parse: it reads indentation, list dashes
and keys, as an author sees them. Three answers:

- a tool name: the key of a list item (`- inputT|`) under a `recording`'s classifier, a
  `tools:` list or a `runIf` branch;
- an argument key: a key (or a word being typed where a key goes) inside the mapping under a
  call (`- inputText:` then, more indented, `te|`), with the tool's name;
- a word: what is under the cursor, with the keys above it (for hover and definition).
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

_KEY = re.compile(r"^(?P<indent>\s*)(?P<dash>-\s+)?(?P<key>[A-Za-z_$][\w$.-]*)\s*:(?:\s|$)")
_TYPING = re.compile(r"^(?P<indent>\s*)(?P<dash>-\s+)?(?P<word>[A-Za-z_$][\w$.-]*)?$")
_WORD = re.compile(r"[A-Za-z_$][\w$.-]*")


@dataclass(frozen=True, slots=True)
class ToolSlot:
    """The cursor is where a tool's name goes; `prefix` is what is typed of it."""

    prefix: str


@dataclass(frozen=True, slots=True)
class ArgumentSlot:
    """The cursor is where an argument key of `tool` goes."""

    tool: str
    prefix: str
    present: frozenset[str]
    """The keys the call already has."""


@dataclass(frozen=True, slots=True)
class Word:
    """The word under the cursor, and the tool whose call holds it as a key (if any)."""

    text: str
    start: int
    end: int
    is_key: bool
    parent: str | None
    """The key of the line that holds this one (its mapping's owner): a tool for an argument."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _key_column(line: str) -> int | None:
    """The column of a line's key, after its dash: where the mapping's keys line up."""
    match = _KEY.match(line)
    if match is None:
        return None
    return len(match.group("indent")) + len(match.group("dash") or "")


def _owner(lines: list[str], row: int, column: int) -> tuple[str, int] | None:
    """The key that owns a key at `column` of line `row`: the nearest line above with a key at
    a smaller column (a list item's dash counts as indentation for its key)."""
    for above in range(row - 1, -1, -1):
        text = lines[above]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        match = _KEY.match(text)
        key_col = _key_column(text)
        if match is not None and key_col is not None and key_col < column:
            return match.group("key"), above
        if match is None and _indent(text) < column:
            return None
    return None


def _siblings(lines: list[str], row: int, column: int) -> frozenset[str]:
    """The keys at `column` in the same mapping as line `row` (above and below it)."""
    found: set[str] = set()
    for step in (-1, 1):
        other = row + step
        while 0 <= other < len(lines):
            text = lines[other]
            if not text.strip() or text.lstrip().startswith("#"):
                other += step
                continue
            match = _KEY.match(text)
            if match is not None and not match.group("dash") and _key_column(text) == column:
                found.add(match.group("key"))
            elif _indent(text) < column:
                break
            other += step
    return frozenset(found)


_NOT_CALLS = frozenset(
    {"trail", "config", "trailhead", "prompts", "context", "memory", "devices", "tags", "steps"}
)
"""Keys whose list items are not tool calls (a trail's steps, its config)."""


def slot_at(
    lines: list[str], row: int, character: int, tools: Container[str]
) -> ToolSlot | ArgumentSlot | None:
    """What goes at the cursor (`character` in code points): a tool name, an argument key of a
    tool, or neither. `tools` are the names of the tools the trail may call."""
    if row >= len(lines):
        return None
    typing = _TYPING.match(lines[row][:character])
    if typing is None:
        return None
    prefix = typing.group("word") or ""
    column = len(typing.group("indent")) + len(typing.group("dash") or "")
    owner = _owner(lines, row, column)
    owner_name = owner[0] if owner is not None else None
    if typing.group("dash"):
        # A list item's key: a call, under a classifier, a `tools:` list or a runIf branch.
        return None if owner_name in _NOT_CALLS else ToolSlot(prefix)
    if owner_name is not None and owner_name in tools:
        return ArgumentSlot(owner_name, prefix, _siblings(lines, row, column) - {prefix})
    return None


def word_at(lines: list[str], row: int, character: int) -> Word | None:
    """The word under the cursor (`character` in code points), and its owner key."""
    if row >= len(lines):
        return None
    text = lines[row]
    for match in _WORD.finditer(text):
        if match.start() <= character <= match.end():
            after = text[match.end() :].lstrip()
            is_key = after.startswith(":")
            key_column = match.start()
            owner = _owner(lines, row, key_column) if is_key else None
            if not is_key:
                # A value: its owner is this line's key.
                line_key = _KEY.match(text)
                owner = (line_key.group("key"), row) if line_key is not None else None
            return Word(
                match.group(0),
                match.start(),
                match.end(),
                is_key,
                owner[0] if owner is not None else None,
            )
    return None
