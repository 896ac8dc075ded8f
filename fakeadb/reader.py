"""Walking spec data, YAML nodes or plain values, with a key path for every error.

``Reader`` is what ``loader`` reads a device spec with: each method checks one value's kind
(a mapping with known keys, text, a number, a list, bounds) and fails with a ``ModelError``
that names the source, the key path and, for a value from a file, its line and column.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from typing import Any

from fakeadb.spec import ModelError
from trailblaze.replay.hierarchy import Bounds
from trailblaze.yaml.node import YMap, YScalar, YSeq

_NODES = (YScalar, YSeq, YMap)


def python_value(value: Any) -> Any:
    """The Python value of a YAML node (a container as a whole); anything else as it is."""
    return value.to_python() if isinstance(value, _NODES) else value


def is_null(value: Any) -> bool:
    """Whether a value is YAML's null (``~``, nothing) or Python's None."""
    return value is None or (isinstance(value, YScalar) and value.value is None)


class Reader:
    """Walks spec data (YAML nodes, or plain values from a mapping) with a key path.

    Every error says where it is: the key path always, the line and column when the value came
    from a file.
    """

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, message: str, at: Any = None) -> ModelError:
        place = self.source
        if isinstance(at, _NODES):
            place = f"{place}:{at.line}:{at.column}"
        return ModelError(f"{place}: {where}: {message}" if where else f"{place}: {message}")

    def _kind(self, value: Any) -> str:
        return type(python_value(value)).__name__

    def mapping(self, value: Any, where: str, allowed: Sequence[str]) -> dict[str, Any]:
        keys: list[tuple[str, YScalar | None]]
        if isinstance(value, YMap):
            keys = [(key.text, key) for key, _ in value]
        elif isinstance(value, Mapping):
            keys = [(key, None) for key in value]
        else:
            raise self.fail(where, f"expected a mapping, got {self._kind(value)}", value)
        for key, node in keys:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise self.fail(where, f"unknown key '{key}'{hint}", node)
        return self.table(value, where)

    def table(self, value: Any, where: str) -> dict[str, Any]:
        """A mapping whose keys are the user's own names (screens, vars, properties)."""
        if isinstance(value, YMap):
            return {key.text: item for key, item in value}
        if not isinstance(value, Mapping):
            raise self.fail(where, f"expected a mapping, got {self._kind(value)}", value)
        return {str(key): item for key, item in value.items()}

    def str_(self, value: Any, where: str) -> str:
        # `text: 42` in a spec means the text "42" (as written); booleans and mappings are
        # mistakes.
        plain = python_value(value)
        if isinstance(plain, bool) or not isinstance(plain, str | int | float):
            raise self.fail(where, f"expected text, got {type(plain).__name__}", value)
        return value.text if isinstance(value, YScalar) else str(plain)

    def int_(self, value: Any, where: str, minimum: int = 0) -> int:
        plain = python_value(value)
        if isinstance(plain, bool) or not isinstance(plain, int) or plain < minimum:
            raise self.fail(where, f"expected a whole number >= {minimum}, got {plain!r}", value)
        return plain

    def float_(self, value: Any, where: str) -> float:
        # `delay: "0.5"` has always meant half a second; booleans and lists are mistakes.
        plain = python_value(value)
        try:
            if isinstance(plain, bool) or not isinstance(plain, str | int | float):
                raise ValueError
            number = float(plain)
        except ValueError:
            message = f"expected a number of seconds, got {plain!r}"
            raise self.fail(where, message, value) from None
        if not math.isfinite(number):
            raise self.fail(where, f"expected a number of seconds, got {plain!r}", value)
        return number

    def bool_(self, value: Any, where: str) -> bool:
        plain = python_value(value)
        if not isinstance(plain, bool):
            raise self.fail(where, f"expected true or false, got {plain!r}", value)
        return plain

    def list_(self, value: Any, where: str) -> Sequence[Any]:
        if isinstance(value, YSeq):
            return value.items
        if isinstance(value, YScalar | YMap | str) or not isinstance(value, Sequence):
            raise self.fail(where, f"expected a list, got {self._kind(value)}", value)
        return value

    def names(self, value: Any, where: str) -> tuple[str, ...]:
        plain = python_value(value)
        if isinstance(plain, str):
            return (plain,)
        return tuple(self.str_(v, f"{where}[{i}]") for i, v in enumerate(self.list_(value, where)))

    def bounds(self, value: Any, where: str) -> Bounds:
        plain = python_value(value)
        if isinstance(plain, str):
            parts = plain.replace("][", ",").strip("[]").split(",")
        else:
            parts = [python_value(p) for p in self.list_(value, where)]
        try:
            left, top, right, bottom = (int(p) for p in parts)
        except (TypeError, ValueError):
            message = f"expected [left, top, right, bottom], got {plain!r}"
            raise self.fail(where, message, value) from None
        if right < left or bottom < top:
            message = f"right/bottom must not be less than left/top in {plain!r}"
            raise self.fail(where, message, value)
        return Bounds(left, top, right, bottom)
