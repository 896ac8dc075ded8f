"""What the last check knew about each trail, so an unchanged trail costs one `stat`.

One SQLite database per workspace (`<scratch>/state/trails-v4.sqlite3`, numbered by
`STATE_VERSION`), one row per trail: its file stamp (size, mtime, inode) and content hash, its
parse outcome (status, target, number of calls, findings) and the key and findings of its last
completed type check.

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
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trailblaze.finding import Finding
from trailblaze.fsutil import Stamp
from trailblaze.fsutil import stamp_of as stamp_of  # noqa: PLC0414 - re-exported (PEP 484 form)
from trailblaze.parse import ParseOutcome

log = logging.getLogger(__name__)

STATE_VERSION = 4


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
    key: str | None = None
    surface_key: str | None = None
    base_key: str | None = None
    parse: tuple[dict[str, Any], ...] = ()
    runif: tuple[dict[str, Any], ...] = ()
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
        """The database row: the fields in order, the rarely non-empty findings and runIf
        signatures together in one JSON column that is NULL for most trails."""
        extra = (
            json.dumps(
                [self.parse, self.runif, self.types, self.branches],
                ensure_ascii=False,
                separators=(",", ":"),
            )
            if self.parse or self.runif or self.types or self.branches
            else None
        )
        return (
            self.path,
            self.stamp,
            self.content,
            int(self.strict),
            self.status,
            self.target,
            self.calls,
            self.key,
            self.surface_key,
            self.base_key,
            extra,
        )

    @classmethod
    def from_rows(cls, rows: list[tuple[Any, ...]]) -> dict[str, TrailRecord]:
        """Records from database rows, keyed by path (the common row costs one constructor call)."""
        out: dict[str, TrailRecord] = {}
        for row in rows:
            if not isinstance(row[6], int):  # SQLite keeps any type in any column
                raise TypeError("malformed trail state row")
            record = out[row[0]] = cls(*row[:10])
            if row[10] is not None:  # a fresh record, not yet shared: filled in place
                parse, runif, types, branches = json.loads(row[10])
                record.parse = tuple(parse)
                record.runif = tuple(runif)
                record.types = tuple(types)
                record.branches = tuple(map(tuple, branches))
        return out


_COLUMN_NAMES = (
    "path", "stamp", "content", "strict", "status", "target", "calls", "key", "surface_key",
    "base_key", "extra",
)  # fmt: skip
_COLUMNS = (
    "path TEXT PRIMARY KEY, stamp TEXT, content TEXT NOT NULL, strict INTEGER NOT NULL, "
    "status TEXT NOT NULL, target TEXT, calls INTEGER NOT NULL, key TEXT, surface_key TEXT, "
    "base_key TEXT, extra TEXT"
)
_UPSERT = "INSERT OR REPLACE INTO trails VALUES (" + ",".join("?" * len(_COLUMN_NAMES)) + ")"


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
            _remove_earlier_versions(scratch / "state")
            return cls()
        try:
            with _connect(path) as db:
                rows = db.execute(f"SELECT {', '.join(_COLUMN_NAMES)} FROM trails").fetchall()
            trails = TrailRecord.from_rows(rows)
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


def _remove_earlier_versions(directory: Path) -> None:
    """The states of other format versions (JSON up to 2, then one database per version)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            name = entry.name
            if name == "trails.json" or (
                name.startswith("trails-v") and not name.startswith(f"trails-v{STATE_VERSION}.")
            ):
                os.unlink(entry.path)


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            path.with_name(path.name + suffix).unlink()
