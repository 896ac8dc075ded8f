"""The line table of a generated trail module: each generated line back to its call and property."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trailblaze.finding import join_key

KEY_CODES = frozenset({"TS2353", "TS2561"})
"""Diagnostics about a property's name ("may only specify known properties"): the key is at
fault. Every other diagnostic on a property line is about its value."""


@dataclass(frozen=True, slots=True)
class GenLine:
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


PackedLines = tuple[tuple[Any, ...], ...]
"""A line table as plain tuples, what worker processes send back (ten times cheaper to pickle
than GenLine objects, and most tables are never looked at: only trails with diagnostics are).

One row per call: `(line, step, classifier, tool, yaml line, yaml column, key path, position,
props)`, where `props` holds `property, key line, key column, value line, value column` (flat,
five items each: a third cheaper to send than a tuple each) for each following line of the
call's statement."""


def pack_lines(table: Mapping[int, GenLine]) -> PackedLines:
    """A table of call lines (no property lines), packed: how tests and tools build one."""
    return tuple(
        (n, g.step, g.classifier, g.tool, g.line, g.column, g.key_path, g.position, ())
        for n, g in table.items()
    )


def unpack_lines(rows: PackedLines) -> dict[int, GenLine]:
    table: dict[int, GenLine] = {}
    for n, step, classifier, tool, line, column, key_path, position, props in rows:
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
