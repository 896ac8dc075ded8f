"""Findings: every problem the product reports, as data, and the one `Location` type.

A finding points at the input (`path:line:col`), names the key path inside the document, and
says what is wrong. `Location` is that place on its own: replay's results carry it, and
`Finding.location` gives a finding's. Rendering lives in `report/console.py`; serialization in `report/record.py`. The one-line
text form (`Finding.text`) is the shape users grep for and tests pin.
"""

from __future__ import annotations

import builtins
import difflib
from typing import Any, Literal

import msgspec

Kind = Literal["parse", "manifest", "type", "tool", "runif", "test", "infra", "warning"]
"""`tool`: a diagnostic in a scripted tool's own source, apart from the findings of trails."""


class Location(msgspec.Struct, frozen=True, gc=False):
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


class Finding(msgspec.Struct, frozen=True, gc=False):
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
        return msgspec.structs.replace(self, **changes)


_FIELDS = Finding.__struct_fields__
FINDING_FIELDS = _FIELDS
"""The fields of a finding, in the order `to_json` writes them."""

MAX_POSITION = 1 << 24
"""The largest line or column a finding may name. Far past any file a check reads (5 MiB at
most), and small enough that a caret under it is no danger to the terminal showing it."""


def position_in_range(line: Any, column: Any) -> bool:
    """Whether `line` and `column` are what a finding can point at: whole numbers (not a bool)
    from 1 to `MAX_POSITION`."""
    return (
        type(line) is int
        and type(column) is int
        and 1 <= line <= MAX_POSITION
        and 1 <= column <= MAX_POSITION
    )


def is_workspace_path(path: str) -> bool:
    """Whether `path` is a workspace-relative path as reports name files: POSIX, relative,
    without an empty, `.` or `..` part and without a NUL. Lexically inside the workspace; a
    symlink on the way is the reader's business (`console.source_lines`)."""
    if not path or "\0" in path or path.startswith("/") or len(path) > 4096:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


class Owned(msgspec.Struct, frozen=True):
    """The files of one workspace that a finding from outside it (a remote entry, a shard's
    report) may name: its trails, anything under its trailmap directories (manifests, tool
    files, their generated files), and the paths its own scan reported (a directory that could
    not be listed, a misnamed manifest). Everything else is not the workspace's to report."""

    trails: frozenset[str]
    dirs: tuple[str, ...] = ()
    """Workspace-relative directories, each ending in `/`."""
    files: frozenset[str] = frozenset()

    def names(self, path: str) -> bool:
        if path in self.trails or path in self.files:
            return True
        return path.startswith(self.dirs) and is_workspace_path(path)

    def refuses(self, finding: Finding) -> str | None:
        """Why `finding` cannot be this workspace's, or None when it can."""
        if not position_in_range(finding.line, finding.column):
            return f"a finding at line {finding.line!r}, column {finding.column!r}"
        if not self.names(finding.path):
            return f"a finding about {finding.path!r}, not a trail or tool file of this workspace"
        return None


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
