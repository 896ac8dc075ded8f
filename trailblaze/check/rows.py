"""What the last check knew about each trail, so an unchanged trail costs one `stat`.

The `trails` table of the state store (`trailblaze.state.store`), one row per trail: its file stamp (size, mtime, inode) and content hash, its
parse outcome (status, target, number of calls, findings) and the key and findings of its last
completed type check.

Rows rather than one document: a check that changed one trail of ten thousand writes one row,
not six megabytes. The store's commit is one transaction, so two concurrent checks leave a
consistent state (each row is some run's complete record of that trail, and a record is only
trusted while its stamp and content hash match the file). Unreadable, corrupt or from another
format version: empty, and everything is re-read.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import msgspec

from trailblaze.finding import Finding
from trailblaze.fsutil import Stamp
from trailblaze.fsutil import stamp_of as stamp_of  # noqa: PLC0414 - re-exported (PEP 484 form)
from trailblaze.generate.codegen import emitted_calls
from trailblaze.state.store import Store
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.trail.hostcalls import noted_tools, plain_names
from trailblaze.trail.model import ParseOutcome

log = logging.getLogger(__name__)


class TrailRecord(msgspec.Struct, frozen=True):
    """What a check knows about one trail. Immutable: changes make a new record (the pipeline
    tells a changed trail by identity). Frozen costs a Struct nothing (as a frozen dataclass it
    was built three times slower, and a full run reads ten thousand)."""

    path: str
    stamp: Stamp | None
    content: str
    strict: bool
    status: str
    target: str | None
    calls: int
    """The calls the type gate checks of it (`codegen.emitted_calls`), not the recorded ones."""
    key: str | None = None
    surface_key: str | None = None
    base_key: str | None = None
    tools: str | None = None
    """The names it calls that are not plain framework tools, a sorted JSON list
    (`hostcalls.noted_tools`): what tells, without reading it again, whether it may reach the
    host in the current tool model. None when it calls only plain framework tools."""
    parse: tuple[dict[str, Any], ...] = ()
    runif: tuple[dict[str, Any], ...] = ()
    types: tuple[dict[str, Any], ...] = ()
    branches: tuple[tuple[str, int, int], ...] = ()
    """(signature, line, column) of every valid runIf tree, for the repetition lint."""
    runif_shipped: bool = False
    """Parsed while its target shipped its own `runIf` (our runIf grammar not applied): the
    record holds only while that is still so (`parse.Parser`)."""

    @classmethod
    def from_outcome(
        cls,
        *,
        path: str,
        stamp: Stamp | None,
        content: str,
        outcome: ParseOutcome,
        runif: list[Finding],
        strict: bool,
        branches: tuple[tuple[str, int, int], ...] = (),
        runif_shipped: bool = False,
    ) -> TrailRecord:
        trail = outcome.trail
        return cls(
            path=path,
            stamp=stamp,
            content=content,
            strict=strict,
            status="rejected" if trail is None else "parsed",
            target=trail.config.target if trail is not None else None,
            calls=emitted_calls(trail, ours=not runif_shipped) if trail is not None else 0,
            tools=noted_tools(trail, plain_names(load_catalog())) if trail is not None else None,
            parse=tuple(f.to_json() for f in outcome.findings),
            runif=tuple(f.to_json() for f in runif),
            branches=branches,
            runif_shipped=runif_shipped,
        )

    def restamp(self, stamp: Stamp | None) -> TrailRecord:
        return msgspec.structs.replace(self, stamp=stamp)

    def with_result(
        self,
        key: str | None,
        findings: Any,
        surface_key: str | None = None,
        base_key: str | None = None,
    ) -> TrailRecord:
        return msgspec.structs.replace(
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
        signatures together in one JSON column that is NULL for most trails (and the rare
        `runif_shipped`, a fifth item only when set, so the rows of other trails do not change)."""
        extra = (
            json.dumps(
                [self.parse, self.runif, self.types, self.branches]
                + ([True] if self.runif_shipped else []),
                ensure_ascii=False,
                separators=(",", ":"),
            )
            if self.parse or self.runif or self.types or self.branches or self.runif_shipped
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
            self.tools,
            extra,
        )

    @classmethod
    def from_rows(cls, rows: list[tuple[Any, ...]]) -> dict[str, TrailRecord]:
        """Records from database rows, keyed by path (the common row costs one constructor call)."""
        out: dict[str, TrailRecord] = {}
        for row in rows:
            # SQLite keeps any type in any column
            if not isinstance(row[6], int) or not isinstance(row[10], (str, type(None))):
                raise TypeError("malformed trail state row")
            if row[11] is None:
                out[row[0]] = cls(*row[:11])
                continue
            parse, runif, types, branches, *shipped = json.loads(row[11])
            # The row's columns, then the JSON column's parts in field order (parse, runif,
            # types, branches, runif_shipped): one constructor call.
            extra = (tuple(parse), tuple(runif), tuple(types), tuple(map(tuple, branches)))
            out[row[0]] = cls(*(*row[:11], *extra, shipped == [True]))
        return out


class TrailState(msgspec.Struct):
    """Every trail's record from the store, and what changed since it was read."""

    trails: dict[str, TrailRecord] = msgspec.field(default_factory=dict)
    _saved: dict[str, TrailRecord] = msgspec.field(default_factory=dict)
    """The records as they are in the store: `save` stages only what differs."""

    @classmethod
    def load(cls, store: Store) -> TrailState:
        rows = store.trail_rows()
        if not rows:
            return cls()
        try:
            trails = TrailRecord.from_rows(rows)
        except (ValueError, TypeError, IndexError, AttributeError) as exc:
            log.info("trail state in %s unreadable (%s); starting from nothing", store.db.path, exc)
            return cls()
        return cls(trails, dict(trails))

    def save(self, store: Store) -> bool:
        """Stage the records that changed since `load` (or the last save) for the store's next
        commit; True when any did."""
        changed = [r.to_row() for p, r in self.trails.items() if self._saved.get(p) is not r]
        gone = list(self._saved.keys() - self.trails.keys())
        if not changed and not gone:
            return False
        store.stage_trails(changed, gone)
        self._saved = dict(self.trails)
        return True
