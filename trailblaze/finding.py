"""Findings: every problem the product reports, as data, and the one `Location` type.

A finding points at the input (`path:line:col`), names the key path inside the document, and
says what is wrong. `Location` is that place on its own: replay's results carry it, and
`Finding.location` gives a finding's. Rendering lives in `report/console.py`; serialization in `report/record.py`. The one-line
text form (`Finding.text`) is the shape users grep for and tests pin.
"""

from __future__ import annotations

import builtins
import difflib
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

Kind = Literal["parse", "manifest", "type", "tool", "runif", "infra", "warning"]
"""`tool`: a diagnostic in a scripted tool's own source, apart from the findings of trails."""


@dataclass(frozen=True, slots=True)
class Location:
    """A place in the input: `path` relative to the workspace root (POSIX), 1-based line and
    column, and the key path inside the document (`trail[2].recording`)."""

    path: str
    line: int
    column: int
    key_path: str = ""

    @property
    def text(self) -> str:
        """`path:line:col`."""
        return f"{self.path}:{self.line}:{self.column}"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "key_path": self.key_path,
        }


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem at one place. `path` is relative to the workspace root, POSIX separators."""

    kind: Kind
    path: str
    line: int
    column: int
    message: str
    key_path: str = ""
    code: str = ""
    fatal: bool = True
    step: int | None = None
    classifier: str | None = None
    tool: str | None = None
    trailmap: str | None = None
    position: str | None = None
    """Where a call sits inside a runIf tree, e.g. `runIf.then[1]`."""
    property: str | None = None
    """The argument at fault, as a path in the call's arguments (`nodeSelector.androidAccessibility.textRegex`)."""

    @builtins.property  # `property` is a field's name here
    def location(self) -> Location:
        """Where the finding points, as the `Location` replay's results carry."""
        return Location(self.path, self.line, self.column, self.key_path)

    @builtins.property
    def text(self) -> str:
        """`path:line:col: key.path: message`, the form every message shape is pinned in."""
        where = f"{self.path}:{self.line}:{self.column}"
        if self.key_path:
            return f"{where}: {self.key_path}: {self.message}"
        return f"{where}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        # Every field is a scalar or None: no deep copy (`asdict`) needed, at a fifteenth of
        # its cost.
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(**data)

    def with_(self, **changes: Any) -> Finding:
        return replace(self, **changes)


_FIELDS = tuple(f.name for f in fields(Finding))
FINDING_FIELDS = _FIELDS
"""The fields of a finding, in the order `to_json` writes them."""


def did_you_mean(word: str, candidates: list[str] | tuple[str, ...] | frozenset[str]) -> str:
    """`" (did you mean 'x'?)"` when a candidate is close to `word`, else the empty string."""
    close = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=0.75)
    if not close:
        lowered = {c.lower(): c for c in candidates}
        if word.lower() in lowered:
            close = [lowered[word.lower()]]
    return f" (did you mean '{close[0]}'?)" if close else ""


def join_key(parent: str, key: str | int) -> str:
    """Extend a key path: `trail[2]` + `recording` -> `trail[2].recording`."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if not parent:
        return key
    return f"{parent}.{key}"
