"""What the last check knew about each trail, so an unchanged trail costs one `stat`.

One SQLite database per workspace (`<scratch>/state/trails-v3.sqlite3`), one row per trail: its
file stamp (size, mtime, inode) and content hash, its parse outcome (status, target, number of
calls, findings) and the key and findings of its last completed type check.

A database rather than one JSON document: a check that changed one trail of ten thousand
writes one row, not six megabytes, and reading the rows back is twice as fast as decoding the
document. Writes are transactions, so two concurrent checks leave a consistent state (each row
is some run's complete record of that trail, and a record is only trusted while its stamp and
content hash match the file). Unreadable, corrupt or from another format version: empty, and
everything is re-read.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trailblaze.finding import Finding
from trailblaze.parse import ParseOutcome

log = logging.getLogger(__name__)

STATE_VERSION = 3
Stamp = tuple[int, int, int]


@dataclass(slots=True)
class TrailRecord:
    """What a check knows about one trail. Treated as immutable (changes make a new record:
    the pipeline tells a changed trail by identity); not `frozen` because a frozen dataclass
    is built three times slower, and ten thousand are read on every run."""

    path: str
    stamp: Stamp | None
    content: str
    strict: bool
    status: str
    target: str | None
    calls: int
    parse: tuple[dict[str, Any], ...] = ()
    runif: tuple[dict[str, Any], ...] = ()
    key: str | None = None
    surface_key: str | None = None
    base_key: str | None = None
    types: tuple[dict[str, Any], ...] = ()
    branches: tuple[tuple[str, int, int], ...] = ()
    """(signature, line, column) of every valid runIf tree, for the repetition lint."""

    @classmethod
    def from_outcome(
        cls,
        path: str,
        stamp: Stamp | None,
        content: str,
        outcome: ParseOutcome,
        runif: list[Finding],
        strict: bool,
        branches: tuple[tuple[str, int, int], ...] = (),
    ) -> TrailRecord:
        trail = outcome.trail
        return cls(
            path=path,
            stamp=stamp,
            content=content,
            strict=strict,
            status="rejected" if trail is None else "parsed",
            target=trail.config.target if trail is not None else None,
            calls=trail.call_count if trail is not None else 0,
            parse=tuple(f.to_json() for f in outcome.findings),
            runif=tuple(f.to_json() for f in runif),
            branches=branches,
        )

    def restamp(self, stamp: Stamp | None) -> TrailRecord:
        return replace(self, stamp=stamp)

    def with_result(
        self,
        key: str | None,
        findings: Any,
        surface_key: str | None = None,
        base_key: str | None = None,
    ) -> TrailRecord:
        return replace(
            self,
            key=key,
            types=tuple(f.to_json() for f in findings),
            surface_key=surface_key,
            base_key=base_key,
        )

    def parse_findings(self) -> list[Finding]:
        return [Finding.from_json(f) for f in self.parse]

    def runif_findings(self) -> list[Finding]:
        return [Finding.from_json(f) for f in self.runif]

    def type_findings(self) -> list[Finding]:
        return [Finding.from_json(f) for f in self.types]

    def to_row(self) -> tuple[Any, ...]:
        size, mtime, inode = self.stamp if self.stamp else (None, None, None)
        return (
            self.path,
            size,
            mtime,
            inode,
            self.content,
            int(self.strict),
            self.status,
            self.target,
            self.calls,
            _dump(self.parse),
            _dump(self.runif),
            self.key,
            self.surface_key,
            self.base_key,
            _dump(self.types),
            _dump(self.branches),
        )

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> TrailRecord:
        (path, size, mtime, inode, content, strict, status, target, calls) = row[:9]
        (parse, runif, key, surface_key, base_key, types, branches) = row[9:]
        if not isinstance(calls, int) or not isinstance(content, str):
            raise TypeError("malformed trail state row")
        return cls(
            path,
            (size, mtime, inode) if size is not None else None,
            content,
            strict == 1,
            status,
            target,
            calls,
            () if parse == "[]" else _load(parse),
            () if runif == "[]" else _load(runif),
            key,
            surface_key,
            base_key,
            () if types == "[]" else _load(types),
            ()
            if branches == "[]"
            else tuple((str(b[0]), int(b[1]), int(b[2])) for b in _load(branches)),
        )


def _dump(items: tuple[Any, ...]) -> str:
    return json.dumps(items, ensure_ascii=False, separators=(",", ":")) if items else "[]"


def _load(text: str) -> tuple[Any, ...]:
    if text == "[]":
        return ()
    items = json.loads(text)
    if not isinstance(items, list):
        raise ValueError("not a list")
    return tuple(items)


_COLUMNS = (
    "path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, inode INTEGER, content TEXT NOT NULL, "
    "strict INTEGER NOT NULL, status TEXT NOT NULL, target TEXT, calls INTEGER NOT NULL, "
    "parse TEXT NOT NULL, runif TEXT NOT NULL, key TEXT, surface_key TEXT, base_key TEXT, "
    "types TEXT NOT NULL, branches TEXT NOT NULL"
)
_UPSERT = "INSERT OR REPLACE INTO trails VALUES (" + ",".join("?" * 16) + ")"


@dataclass
class TrailState:
    trails: dict[str, TrailRecord] = field(default_factory=dict)
    _saved: dict[str, TrailRecord] = field(default_factory=dict, repr=False)
    """The records as they are in the database: `save` writes only what differs."""

    @staticmethod
    def path(scratch: Path) -> Path:
        return scratch / "state" / f"trails-v{STATE_VERSION}.sqlite3"

    @classmethod
    def load(cls, scratch: Path) -> TrailState:
        path = cls.path(scratch)
        if not path.exists():
            with contextlib.suppress(OSError):  # the JSON state of earlier versions
                (scratch / "state" / "trails.json").unlink()
            return cls()
        try:
            with _connect(path) as db:
                rows = db.execute("SELECT * FROM trails").fetchall()
            trails = {row[0]: TrailRecord.from_row(row) for row in rows}
        except (sqlite3.Error, ValueError, TypeError, IndexError, AttributeError) as exc:
            log.info("trail state %s unreadable (%s); starting from nothing", path, exc)
            _remove(path)
            return cls()
        return cls(trails, dict(trails))

    def save(self, scratch: Path) -> bool:
        """Write the records that changed since `load` (or the last save); True when any did."""
        changed = [r.to_row() for p, r in self.trails.items() if self._saved.get(p) is not r]
        gone = [(p,) for p in self._saved.keys() - self.trails.keys()]
        if not changed and not gone:
            return False
        path = self.path(scratch)
        for attempt in (1, 2):
            try:
                with _connect(path) as db:
                    db.execute("BEGIN IMMEDIATE")
                    db.executemany("DELETE FROM trails WHERE path = ?", gone)
                    db.executemany(_UPSERT, changed)
                    db.execute("COMMIT")
                break
            except sqlite3.DatabaseError as exc:
                if attempt == 2 or isinstance(exc, sqlite3.OperationalError):
                    # Locked for longer than the timeout, or a disk error: the next check
                    # re-reads what this one could not record; nothing it reports is lost.
                    log.warning("could not record the trail state in %s: %s", path, exc)
                    return False
                _remove(path)  # corrupt: start a new database and write everything
                changed = [r.to_row() for r in self.trails.values()]
                gone = []
        self._saved = dict(self.trails)
        return True


@contextlib.contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"CREATE TABLE IF NOT EXISTS trails ({_COLUMNS}) WITHOUT ROWID")
        yield db
    finally:
        db.close()


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            path.with_name(path.name + suffix).unlink()
