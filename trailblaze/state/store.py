"""The state store: all of a workspace's incremental state, in one SQLite database.

`Store` is the one way in. It holds two tables (`scratch.Layout.store` names the file):

- `trails`: one row per trail, what the last check knew of it (`state.TrailRecord`);
- `memos`: small records addressed by `(kind, slot)`, each with the `key` it was made under
  and, optionally, the stamps of the files it vouches for. A `Kind` names one sort of memo and
  says how its stored JSON is read back (the kinds live next to their users: the surface and
  declaration memos, the validated documents, the surfaces plan, the report view, stats).

The rules, for every entry of every kind:

- **Reading never fails.** A store that is missing, truncated, corrupt, of another format,
  locked for longer than `LOCK_TIMEOUT`, or replaced by a directory reads as empty; an entry
  made under another key, whose files changed, or whose value does not decode is missing. A
  miss costs work, never a verdict: everything a check trusts from the store is re-derived
  when it is gone.
- **Writes are one transaction.** `put`, `drop` and the trail rows are buffered and written by
  `commit` in one `BEGIN IMMEDIATE` transaction: two concurrent checks each leave a consistent
  store (every row is some run's complete record), and a run killed before its commit leaves
  the previous run's store. A store in the way (corrupt, foreign, a directory) is replaced
  then: the next run finds a healthy one.
- **Nothing is fatal.** A store that cannot be written (locked, read-only, disk full) costs a
  warning; the next run does the work again.

The per-trail type-gate results are content-addressed and live apart, in the result cache
(`trailblaze.state.results`), which can be shared between workspaces and machines.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from trailblaze.fsutil import Stamp, clear_way, stamp_of
from trailblaze.state.keys import code_stamps_digest
from trailblaze.state.owned import Scratch
from trailblaze.state.scratch import Layout

log = logging.getLogger(__name__)

T = TypeVar("T")

LOCK_TIMEOUT = 10.0
"""Seconds to wait for another process's write lock before treating the store as unavailable.
Writes hold it for milliseconds; a lock held longer is a stuck or foreign process."""

_GENERATION = "trails-generation"
"""The memo whose key is the trail rows' generation (`Store.trails_generation`)."""
_DECODE_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError)
"""What a value that is not what its kind expects raises while it is decoded: a miss."""


class Database:
    """One SQLite file of ours that heals: opened for reading without creating anything, for
    writing after clearing whatever is in its way. `schema` creates its tables; `tag` is
    stored in its `meta` table, and a file without it (another format, a foreign file) is
    treated as absent and replaced on the next write."""

    def __init__(self, path: Path, schema: str, tag: str, *, scratch: Path | None = None) -> None:
        self.path = path
        self.scratch = scratch
        """The scratch directory the file is in (`state.owned`: only what we created there is
        replaced); None for a directory the user named, where only the file itself may be."""
        self.schema = schema
        self.tag = tag
        self._db: sqlite3.Connection | None = None
        self._read_failed = False
        self.fresh = False
        """True when the file did not exist (or was replaced) when it was opened for writing."""

    def _connect(self) -> sqlite3.Connection:
        # Used by one thread at a time, not always the one that opened it (the type gate's).
        db = sqlite3.connect(
            self.path, timeout=LOCK_TIMEOUT, isolation_level=None, check_same_thread=False
        )
        try:
            # No fsync: a commit costs a fraction of a millisecond instead of ten on a disk that
            # syncs slowly. A process killed mid-commit still leaves a consistent file (the
            # rollback journal); only an OS crash can corrupt it, and a corrupt store heals.
            db.execute("PRAGMA synchronous=OFF")
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _tagged(self, db: sqlite3.Connection) -> bool:
        try:
            row = db.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise  # locked, I/O: not a verdict on the file
            return False
        return row is not None and row[0] == self.tag

    def reader(self) -> sqlite3.Connection | None:
        """A connection to the existing database, or None (missing, unusable: a miss)."""
        if self._db is not None or self._read_failed:
            return self._db
        try:
            # Not through a link: SQLite would write where it leads (`state.owned`).
            if not stat.S_ISREG(os.lstat(self.path).st_mode):
                raise OSError("not a file")
            db = self._connect()
        except (OSError, sqlite3.Error):
            self._read_failed = True
            return None
        try:
            if not self._tagged(db):
                raise sqlite3.DatabaseError("not a store of this format")
        except sqlite3.Error as exc:
            db.close()
            self._read_failed = True
            if isinstance(exc, sqlite3.OperationalError):
                log.warning("state %s unavailable (%s); working without it", self.path, exc)
            return None
        self._db = db
        return db

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[Any] | None:
        """The rows of a query, or None when the database cannot be read."""
        db = self.reader()
        if db is None:
            return None
        try:
            return db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            log.info("state %s unreadable (%s); treated as empty", self.path, exc)
            self.close()
            self._read_failed = True
            return None

    def write(self, apply: Callable[[sqlite3.Connection], None]) -> bool:
        """Run `apply` in one write transaction; False (and a warning) when it could not be."""
        for attempt in (1, 2):
            try:
                db = self._writer()
                db.execute("BEGIN IMMEDIATE")
                try:
                    apply(db)
                    db.execute("COMMIT")
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                    raise
                return True
            except sqlite3.OperationalError as exc:
                # Locked past the timeout, read-only, disk full: left for the next run.
                log.warning("could not record state in %s: %s", self.path, exc)
                self.close()
                return False
            except (sqlite3.ProgrammingError, sqlite3.InterfaceError) as exc:
                # Our mistake, not the file's: never a reason to delete it.
                log.warning("could not record state in %s: %s", self.path, exc)
                self.close()
                return False
            except sqlite3.DatabaseError as exc:
                self.close()
                if attempt == 2:
                    log.warning("could not record state in %s: %s", self.path, exc)
                    return False
                self._remove()  # corrupt: start a new database
            except OSError as exc:
                log.warning("could not record state in %s: %s", self.path, exc)
                self.close()
                return False
        return False  # pragma: no cover - the loop always returns

    def _writer(self) -> sqlite3.Connection:
        if self._db is not None and not self._read_failed and self._tagged(self._db):
            return self._db
        self.close()
        if self.scratch is not None:
            Scratch.of(self.scratch).claim(self.path)
            Scratch.of(self.scratch).no_link(self.path)
        if self._clear(self.path):
            self._remove()
        self.fresh = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in (1, 2):
            db = self._connect()
            try:
                # Under the write lock: two processes creating the store at once take turns.
                db.execute("BEGIN IMMEDIATE")
                if self._tagged(db):
                    db.execute("COMMIT")
                    break
                if db.execute("SELECT name FROM sqlite_master").fetchall() and attempt == 1:
                    db.execute("ROLLBACK")
                    db.close()
                    self._remove()  # a foreign or older file: start a new one
                    self.fresh = True
                    continue
                db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
                for statement in self.schema.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (self.tag,))
                db.execute("COMMIT")
                break
            except BaseException:
                db.close()
                raise
        self._db = db
        self._read_failed = False
        return db

    def _clear(self, path: Path) -> bool:
        """Clear the way of one of the database's files; True when anything was removed."""
        if self.scratch is not None:
            return Scratch.of(self.scratch).clear(path)
        return clear_way(path, path.parent)

    def _remove(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            path = self.path.with_name(self.path.name + suffix)
            self._clear(path)
            if self.scratch is None or Scratch.of(self.scratch).ours(path):
                with contextlib.suppress(OSError):
                    path.unlink()

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None


@dataclass(frozen=True, slots=True)
class Kind(Generic[T]):
    """One sort of memo: its name, and how its stored JSON becomes a value again.

    `decode` may raise ValueError, TypeError, KeyError, IndexError or AttributeError on a
    value that is not what it expects: the entry is then missing. `encode` makes the value
    JSON (by default it already is).
    """

    name: str
    decode: Callable[[Any], T]
    encode: Callable[[T], Any] = lambda value: value


def _stats(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError("stats are a mapping")
    return value


STATS: Kind[dict[str, Any]] = Kind("stats", _stats)
"""What the last check did (counts, compiler runs, phase timings, the remote cache's share):
the benchmark reads them. Written by the check, or by a run answered by the remote cache."""


@dataclass(frozen=True, slots=True)
class _Entry:
    """One row of the store, as read: its key, the files it vouches for, its value."""

    key: str
    files: str | None
    value: str


_TRAIL_COLUMNS = (
    "path TEXT PRIMARY KEY, stamp TEXT, content TEXT NOT NULL, strict INTEGER NOT NULL, "
    "status TEXT NOT NULL, target TEXT, calls INTEGER NOT NULL, key TEXT, surface_key TEXT, "
    "base_key TEXT, tools TEXT, extra TEXT"
)
TRAIL_FIELDS = (
    "path", "stamp", "content", "strict", "status", "target", "calls", "key", "surface_key",
    "base_key", "tools", "extra",
)  # fmt: skip
"""The columns of a trail row, in the order `state.TrailRecord.to_row` gives them."""
_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS trails ({_TRAIL_COLUMNS}) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS memos (kind TEXT NOT NULL, slot TEXT NOT NULL, key TEXT NOT NULL,"
    " files TEXT, value TEXT NOT NULL, PRIMARY KEY (kind, slot)) WITHOUT ROWID;"
)
_TAG = f"trailblaze-state {Layout(Path()).store.name}"
"""The format part of the store's tag; `Store` adds the stamps of our own code to it."""


class Store:
    """A workspace's state store (see the module docstring). Open one per run; `commit` once."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        # A store made by other code (an upgrade, an edit of ours) is another format: its trail
        # rows hold what that code's parse gate said, which a new parser may say otherwise
        # of the same unchanged file, so it reads as empty and is replaced.
        tag = f"{_TAG} {code_stamps_digest()}"
        self.db = Database(layout.store, _SCHEMA, tag, scratch=layout.scratch)
        self._memos: dict[str, dict[str, _Entry]] = {}
        self._puts: dict[tuple[str, str], _Entry | None] = {}
        self._trail_rows: list[tuple[Any, ...]] = []
        self._trail_gone: list[str] = []

    @classmethod
    def open(cls, scratch: Path | Layout) -> Store:
        return cls(scratch if isinstance(scratch, Layout) else Layout(scratch))

    # -- memos ----------------------------------------------------------------------------------

    def _entries(self, kind: str) -> dict[str, _Entry]:
        entries = self._memos.get(kind)
        if entries is None:
            rows = self.db.read("SELECT slot, key, files, value FROM memos WHERE kind = ?", (kind,))
            entries = {}
            for slot, key, files, value in rows or ():
                if isinstance(key, str) and isinstance(value, str):
                    entries[slot] = _Entry(key, files if isinstance(files, str) else None, value)
            self._memos[kind] = entries
        return entries

    def _entry(self, kind: str, slot: str) -> _Entry | None:
        pending = self._puts.get((kind, slot), False)
        if pending is not False:
            return pending  # type: ignore[return-value]  # an _Entry, or None: dropped
        return self._entries(kind).get(slot)

    def get(self, kind: Kind[T], slot: str = "", key: str | None = None) -> T | None:
        """The value stored for `slot`, if it was made under `key` (any key when None) and the
        files it vouches for are as they were; None otherwise."""
        entry = self._entry(kind.name, slot)
        if entry is None or (key is not None and entry.key != key):
            return None
        if entry.files is not None and not _files_unchanged(entry.files):
            return None
        try:
            return kind.decode(json.loads(entry.value))
        except _DECODE_ERRORS:
            return None

    def fresh(self, kind: Kind[Any], slot: str, key: str) -> bool:
        """True when `slot` holds an entry made under `key` whose files are as they were."""
        entry = self._entry(kind.name, slot)
        return (
            entry is not None
            and entry.key == key
            and (entry.files is None or _files_unchanged(entry.files))
        )

    def slots(self, kind: Kind[Any]) -> list[str]:
        """Every slot that holds an entry of `kind` (whatever its key or files)."""
        names = set(self._entries(kind.name))
        for (name, slot), entry in self._puts.items():
            if name == kind.name:
                if entry is None:
                    names.discard(slot)
                else:
                    names.add(slot)
        return sorted(names)

    def put(
        self,
        kind: Kind[T],
        slot: str,
        value: T,
        *,
        key: str = "",
        files: Iterable[Path | str] = (),
    ) -> None:
        """Record `value` for `slot` under `key`, vouching for `files` as they are now (a file
        that changes, or is missing now or later, makes the entry missing). Written by `commit`."""
        stamps: dict[str, Stamp | None] = {}
        for path in files:
            stamps[str(path)] = _stamp(str(path))
        text = json.dumps(kind.encode(value), ensure_ascii=False, separators=(",", ":"))
        encoded_files = json.dumps(stamps, ensure_ascii=False) if stamps else None
        entry = _Entry(key, encoded_files, text)
        if self._entries(kind.name).get(slot) == entry:
            self._puts.pop((kind.name, slot), None)  # stored already, as it is
        else:
            self._puts[(kind.name, slot)] = entry

    def drop(self, kind: Kind[Any], slot: str = "") -> None:
        if slot in self._entries(kind.name) or (kind.name, slot) in self._puts:
            self._puts[(kind.name, slot)] = None

    # -- trails ---------------------------------------------------------------------------------

    def trail_rows(self) -> list[tuple[Any, ...]] | None:
        """Every trail row as stored, or None when the store cannot be read."""
        rows = self.db.read(f"SELECT {', '.join(TRAIL_FIELDS)} FROM trails")
        return None if rows is None else rows

    def some_trail_rows(self, paths: Iterable[str]) -> list[tuple[Any, ...]] | None:
        """The rows of `paths` (those stored), or None when the store cannot be read."""
        wanted = list(paths)
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(wanted), 500):  # SQLite's bound on one statement's parameters
            chunk = wanted[start : start + 500]
            found = self.db.read(
                f"SELECT {', '.join(TRAIL_FIELDS)} FROM trails WHERE path IN "
                f"({','.join('?' * len(chunk))})",
                chunk,
            )
            if found is None:
                return None
            rows.extend(found)
        return rows

    def trails_generation(self) -> str | None:
        """A token that every commit writing or removing a trail row replaces (None: no such
        commit yet): equal tokens, unchanged rows, whichever run wrote them last."""
        entry = self._entry(_GENERATION, "")
        return entry.key if entry is not None else None

    def stage_trails(self, changed: list[tuple[Any, ...]], gone: list[str]) -> None:
        """Trail rows to write and paths to forget, at `commit`."""
        self._trail_rows.extend(changed)
        self._trail_gone.extend(gone)

    # -- writing --------------------------------------------------------------------------------

    @property
    def pending(self) -> bool:
        return bool(self._puts or self._trail_rows or self._trail_gone)

    def commit(self) -> bool:
        """Write everything staged since the last commit in one transaction; True when it was
        written (or there was nothing to write)."""
        if not self.pending:
            return True
        puts = [(k, s, e.key, e.files, e.value) for (k, s), e in self._puts.items() if e]
        drops = [(k, s) for (k, s), e in self._puts.items() if e is None]
        rows, gone = self._trail_rows, [(p,) for p in self._trail_gone]
        if rows or gone:
            # In the same transaction as the rows: a record made of them names this token.
            token = os.urandom(16).hex()
            self._puts[(_GENERATION, "")] = _Entry(token, None, "null")
            puts.append((_GENERATION, "", token, None, "null"))

        def apply(db: sqlite3.Connection) -> None:
            for sql, params in (
                ("DELETE FROM trails WHERE path = ?", gone),
                (
                    f"INSERT OR REPLACE INTO trails VALUES ({','.join('?' * len(TRAIL_FIELDS))})",
                    rows,
                ),
                ("DELETE FROM memos WHERE kind = ? AND slot = ?", drops),
                ("INSERT OR REPLACE INTO memos VALUES (?, ?, ?, ?, ?)", puts),
            ):
                if params:
                    db.executemany(sql, params)

        written = self.db.write(apply)
        if self.db.fresh:
            _remove_obsolete(self.layout)
        if written:
            for (kind, slot), entry in self._puts.items():
                entries = self._memos.setdefault(kind, {})
                if entry is None:
                    entries.pop(slot, None)
                else:
                    entries[slot] = entry
        self._puts = {}
        self._trail_rows = []
        self._trail_gone = []
        return written

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stamp(path: str) -> Stamp | None:
    try:
        return stamp_of(os.stat(path))
    except OSError:
        return None


def _files_unchanged(encoded: str) -> bool:
    try:
        stamps = json.loads(encoded)
        return isinstance(stamps, dict) and all(
            stamp is not None and _stamp(path) == stamp for path, stamp in stamps.items()
        )
    except _DECODE_ERRORS:
        return False


OBSOLETE = (
    "state/trails.json",
    "state/valid-documents.json",
    "state/surfaces-written.json",
    "state/surfaces-plan.json",
    "typegate/stats.json",
    "typegate/module-surfaces.json",
    "typegate/surfaces-checked.json",
    "check-state.json",
    "report-view.json",
    "state/cli-outputs.json",
)
"""The state files of earlier versions, each with its own format, now all in the store."""


def _remove_obsolete(layout: Layout) -> None:
    """The state files of earlier versions (and earlier stores): a new store replaces them.
    Only where they are ours (`state.owned`)."""
    owned = Scratch.of(layout.scratch)
    for name in OBSOLETE:
        with contextlib.suppress(OSError):
            owned.remove(layout.scratch / name)
    with contextlib.suppress(OSError):
        for entry in os.scandir(layout.state_dir):
            name = entry.name
            if (name.startswith(("trails-v", "store-v"))) and not name.startswith(
                layout.store.name
            ):
                owned.remove(Path(entry.path))
    with contextlib.suppress(OSError):
        for entry in os.scandir(layout.root / "tooldecl"):
            with contextlib.suppress(OSError):
                owned.remove(Path(entry.path) / ".emitted.json")
