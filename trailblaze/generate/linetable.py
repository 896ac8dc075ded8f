"""The line table of a generated trail module: each generated line back to its call and property."""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

import msgspec

from trailblaze.finding import join_key

KEY_CODES = frozenset({"TS2353", "TS2561"})
"""Diagnostics about a property's name ("may only specify known properties"): the key is at
fault. Every other diagnostic on a property line is about its value."""


class GenLine(msgspec.Struct, frozen=True):
    """What a generated line is: the recorded call it came from and, on a property line, the
    property (its path in the call's arguments, where its key and scalar value are)."""

    step: int
    classifier: str | None
    tool: str
    line: int
    column: int
    key_path: str
    position: str | None = None
    property: str | None = None
    value_line: int = 0
    """Where the property's value is, when it is a scalar (0: it is not)."""
    value_column: int = 0

    def at(self, tsc_code: str) -> tuple[int, int]:
        """The YAML line and column a compiler diagnostic with this code points at."""
        if self.value_line and tsc_code not in KEY_CODES:
            return self.value_line, self.value_column
        return self.line, self.column


Row = tuple[int, int, str | None, str, int, int, str, str | None, tuple[Any, ...]]
PackedLines = tuple[Row, ...]
"""A line table as plain tuples, what worker processes send back (ten times cheaper to send
than GenLine objects, and most tables are never looked at: only trails with diagnostics are).

One row per call: `(line, step, classifier, tool, yaml line, yaml column, key path, position,
props)`, where `props` holds `property, key line, key column, value line, value column` (flat,
five items each: a third cheaper to send than a tuple each) for each following line of the
call's statement."""


Lines = PackedLines | msgspec.Raw
"""A line table as it was made (`PackedLines`), or as it arrived from a parse worker, still
encoded (`msgspec.Raw`, `check.workers`): ten thousand tables decoded cost the main process
0.12 s, and 0.05 s to free at its end, and only those of trails with a diagnostic are read."""

_ROWS = msgspec.msgpack.Decoder(PackedLines)


def packed(lines: Lines) -> PackedLines:
    """The rows of a line table, decoded if they arrived encoded."""
    return _ROWS.decode(lines) if isinstance(lines, msgspec.Raw) else lines


def pack_lines(table: Mapping[int, GenLine]) -> PackedLines:
    """A table of call lines (no property lines), packed: how tests and tools build one."""
    return tuple(
        (n, g.step, g.classifier, g.tool, g.line, g.column, g.key_path, g.position, ())
        for n, g in table.items()
    )


def unpack_lines(lines: Lines) -> dict[int, GenLine]:
    table: dict[int, GenLine] = {}
    for n, step, classifier, tool, line, column, key_path, position, props in packed(lines):
        table[n] = GenLine(
            step=step,
            classifier=classifier,
            tool=tool,
            line=line,
            column=column,
            key_path=key_path,
            position=position,
        )
        base = join_key(key_path, tool)
        for i in range(0, len(props), 5):
            prop, kline, kcolumn, vline, vcolumn = props[i : i + 5]
            table[n + 1 + i // 5] = GenLine(
                step=step,
                classifier=classifier,
                tool=tool,
                line=kline,
                column=kcolumn,
                key_path=join_key(base, prop),
                position=position,
                property=prop,
                value_line=vline,
                value_column=vcolumn,
            )
    return table


class LineTable:
    """`unpack_lines` looked up line by line: only the lines asked for are unpacked (a trail's
    module has a hundred lines; a diagnostic is about one of them, and an editor's check looks
    one up per edit)."""

    __slots__ = ("_made", "_rows", "_starts")

    def __init__(self, lines: Lines) -> None:
        ordered = sorted(packed(lines), key=lambda row: row[0])
        self._rows = ordered
        self._starts = [row[0] for row in ordered]
        self._made: dict[int, GenLine | None] = {}

    def get(self, n: int) -> GenLine | None:
        """What `unpack_lines(rows).get(n)` is."""
        if n in self._made:
            return self._made[n]
        found: GenLine | None = None
        at = bisect.bisect_right(self._starts, n) - 1
        if at >= 0:
            first, step, classifier, tool, line, column, key_path, position, props = self._rows[at]
            if n == first:
                found = GenLine(step, classifier, tool, line, column, key_path, position)
            else:
                i = (n - first - 1) * 5
                if i < len(props):
                    prop, kline, kcolumn, vline, vcolumn = props[i : i + 5]
                    found = GenLine(
                        step=step,
                        classifier=classifier,
                        tool=tool,
                        line=kline,
                        column=kcolumn,
                        key_path=join_key(join_key(key_path, tool), prop),
                        position=position,
                        property=prop,
                        value_line=vline,
                        value_column=vcolumn,
                    )
        self._made[n] = found
        return found
