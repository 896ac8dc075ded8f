"""The per-trail state a run entry's hit does not leave, brought back when the next run needs it.

A hit (`runcache`) writes the surfaces and records the report, and nothing of the per-trail
state: without it the next run that misses (one trail edited) would parse every trail again. So
a run that stores its run entry also stores its trail rows (`state.TrailRecord`, without the
local stamps) and its trails' generated modules (a verdict from the state stands only while its
module is on disk) as one CAS body, named by `ac/<digest of the run key>` (`encode_rows`: the
rows as one JSON line, then the modules' bytes as they are on disk, at zlib's fastest level, for
storing it costs every run that stores an entry and helps only the run after a hit). A shard
stores none: the run after a sharded build is answered by the shards' entries merged, under the
whole run's key. A hit remembers the run key it was answered for (a memo of the state store,
nothing fetched); and the next run, when the state has no trail rows, fetches them before its
check. The rows were made from exactly the inputs that key names, so they are what a local run
of those inputs would have left: each is reused only while its trail's content hash is the one
it was made from (its stamp is unknown, so the parse stage reads and hashes every trail once)
and its surface and compiler keys are the run's; anything else is parsed and checked as usual.

Everything read is checked: the entry against its key, the body against its digest, every row
and module against the trails of the workspace (each module's length, its UTF-8), every field
against its type. A fault is the run's one warning (`SharedRemote`); rows never decide anything
a run without them would not.
"""

from __future__ import annotations

import json
import logging
import re
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trailblaze.finding import position_in_range
from trailblaze.options import CheckOptions
from trailblaze.report.escaping import printable
from trailblaze.state.keys import digest
from trailblaze.state.results import decode_findings
from trailblaze.state.scratch import Layout, ScratchError, write_module
from trailblaze.state.signing import Trust
from trailblaze.state.store import STATS, TRAIL_FIELDS, Kind, Store
from trailblaze.state.transport import inflate_within
from trailblaze.workspace import Scan, Workspace

if TYPE_CHECKING:
    from trailblaze.report.record import Report

ROWS_FORMAT = 3
"""The layout of the rows entry and body: a change makes every old one a miss."""
ROWS_LIMIT = 256 * 1024 * 1024
"""The most a rows body may inflate to unless the caller says otherwise (the default of
`TRAILBLAZE_REMOTE_CACHE_MAX_MB`, `RemoteConfig.max_bytes`): a body past it is not usable."""
_HEX64 = re.compile(r"[0-9a-f]{64}")
log = logging.getLogger(__name__)


def _wanted(value: Any) -> str:
    if not isinstance(value, str) or not _HEX64.fullmatch(value):
        raise TypeError("a run key")
    return value


WANTED: Kind[str] = Kind("run-rows-wanted", _wanted)
"""The run key the last check was answered for by the remote: its rows are fetched by the next
run that finds no trail state."""


def rows_key(run_key: str) -> str:
    """`ac/<rows key>`: the trail rows of the run stored under `ac/<run key>`."""
    return digest("trailblaze-run-rows", str(ROWS_FORMAT), ",".join(TRAIL_FIELDS), run_key)


Warn = Callable[[str], None]
Rows = tuple[list[tuple[Any, ...]], dict[str, str]]
"""Trail rows, and the generated module of each row's trail that has one."""


class RowsCache:
    """The trail rows of one workspace's runs in one remote cache."""

    def __init__(self, options: CheckOptions, ws: Workspace, warn: Warn) -> None:
        from trailblaze.state.remote import HttpCache, RemoteConfig  # noqa: PLC0415

        config = RemoteConfig.resolve(
            options.remote_cache, read_only=options.remote_read_only, public_keys=ws.remote_keys
        )
        assert config is not None
        self.config = config
        self.http = HttpCache(config)
        self.ws = ws
        self.layout = Layout(ws.scratch)
        self.shard = options.shard
        self._warn = warn

    def close(self) -> None:
        self.http.close()

    def _fault(self, message: str) -> None:
        self._warn(  # a peer's words may be in it: escaped, whoever prints it
            printable(
                f"remote cache {self.config.shown}: {message}; working locally for the rest of "
                "this run"
            )
        )

    # -- before a check ---------------------------------------------------------------------

    def restore(self, found: Scan) -> int | None:
        """Fetch the rows a hit left wanted into a state without trail rows: how many were
        restored (None: none wanted, or the state has its own)."""
        if not self.layout.store.is_file():
            return None  # a fresh clone: nothing wanted (and a hit's path creates no store)
        with Store.open(self.layout) as store:
            run_key = store.get(WANTED)
            if run_key is None:
                return None
            store.drop(WANTED)
            have = store.trail_rows()
            if have is None or have:
                store.commit()
                return None  # unreadable (the check starts afresh) or its own rows: kept
            trails = frozenset(self.ws.rel(Path(p)) for p in found.trail_paths)
            rows, modules = self._fetch(run_key, trails)
            try:
                for path, text in sorted(modules.items()):
                    write_module(self.layout.trail_file(path), text, self.ws.scratch)
            except (OSError, ScratchError):
                rows = []  # the check writes them itself, and says what is wrong
            if rows:
                store.stage_trails(rows, [])
            store.commit()
            return len(rows)

    def _fetch(self, run_key: str, trails: frozenset[str]) -> Rows:
        from trailblaze.state.remote import RemoteFault  # noqa: PLC0415

        key = rows_key(run_key)
        try:
            raw = self.http.get_ac(key)
            if raw is None:
                return [], {}
            value = _entry(raw, key, self.config.trust)
            packed = self.http.get_cas(value)  # checked against its digest
            if packed is None:
                return [], {}  # evicted: a miss
            return decode_rows(packed, trails, self.config.max_bytes)
        except RemoteFault as exc:
            self._fault(str(exc))
        except ValueError as exc:
            self._fault(f"the trail rows under ac/{key[:12]}… are not usable: {exc}")
        return [], {}

    # -- after a check ----------------------------------------------------------------------

    def after(self, report: Report, restored: int | None, *, faulted: bool) -> None:
        """After `runcache.cached_run`: a hit leaves its run key wanted, a stored run entry
        gets its rows (neither after a fault); what was restored and shared joins the check's
        stats."""
        with Store.open(self.layout) as store:
            stats = store.get(STATS) or {}
            extra: dict[str, Any] = {"remote_rows_restored": restored or 0}
            run_key = stats.get("remote_run_key") if not faulted else None
            if isinstance(run_key, str) and stats.get("remote_run") == "hit":
                store.put(WANTED, "", run_key)
            elif isinstance(run_key, str) and stats.get("remote_run") == "stored":
                # A shard's rows are never wanted: the run after a sharded build is answered
                # by the shards' entries merged, and wants the rows of the whole run's key.
                mine = [t.path for t in report.trails]
                extra["remote_rows_stored"] = self.shard is None and self.store(
                    run_key, mine, store.trail_rows() or []
                )
            extra["remote_rows_requests"] = self.http.requests
            store.put(STATS, "", {**stats, **extra})
            store.commit()

    def store(self, run_key: str, trails: Iterable[str], rows: list[tuple[Any, ...]]) -> bool:
        """Share the `rows` of the run just stored under `run_key` (those of its `trails`);
        False after a fault or when the state has not every trail's."""
        from trailblaze.state.remote import RemoteFault, sealed_entry  # noqa: PLC0415

        if self.config.read_only:
            return False
        mine = frozenset(trails)
        shared = [[row[0], None, *row[2:]] for row in rows if row[0] in mine]
        if len(shared) != len(mine):
            return False  # not every trail's row was written: nothing half shared
        try:
            for row in shared:
                _findings_of(row)  # as a reader will check them
        except (ValueError, TypeError) as exc:
            log.info("trail rows not shared: %s", exc)
            return False
        # A verdict from the state stands only while its generated module is there (the type
        # gate): the modules travel with their rows, as the bytes on disk.
        modules: dict[str, bytes] = {}
        for row in shared:
            try:
                modules[row[0]] = self.layout.trail_file(row[0]).read_bytes()
            except OSError:
                continue  # not type-checked, or gone: generated again where it is needed
        body = encode_rows(shared, modules)
        key = rows_key(run_key)
        try:
            value = self.http.put_cas(body)  # the body first: an entry never points at nothing
            entry = {"format": ROWS_FORMAT, "key": key, "sha256": value}
            self.http.put_ac(key, sealed_entry(entry, key, self.config.trust))
        except RemoteFault as exc:
            self._fault(str(exc))
            return False
        return True


def encode_rows(rows: list[list[Any]], modules: dict[str, bytes]) -> bytes:
    """A rows body: one JSON line (the format, the rows, each module's trail and length), then
    the modules' bytes one after the other, compressed at zlib's fastest level.

    The modules are most of the body (about nine tenths): kept out of the JSON they are neither
    decoded nor escaped, and level 1 deflates them in about a quarter of the default level's
    time for a body about two fifths larger."""
    head = json.dumps(
        {"format": ROWS_FORMAT, "rows": rows, "modules": [[p, len(b)] for p, b in modules.items()]},
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode()
    packer = zlib.compressobj(1)
    parts = [packer.compress(head), packer.compress(b"\n")]
    parts.extend(packer.compress(data) for data in modules.values())
    parts.append(packer.flush())
    return b"".join(parts)


def _entry(raw: bytes, key: str, trust: Trust) -> str:
    """The digest of the rows body the entry `raw` under `ac/<key>` names (RemoteFault)."""
    from trailblaze.state.remote import RemoteFault, decoded_entry  # noqa: PLC0415

    entry = decoded_entry(raw, key, ROWS_FORMAT, "the trail rows entry", trust)
    value = entry.get("sha256")
    if not isinstance(value, str) or not _HEX64.fullmatch(value):
        raise RemoteFault("the trail rows entry names no body")
    return value


_OPTIONAL = (str, type(None))


def decode_rows(packed: bytes, trails: frozenset[str], limit: int = ROWS_LIMIT) -> Rows:
    """The rows of a rows body and their trails' generated modules, every field checked
    (ValueError when one is not what a row of `trails` holds); each row's stamp is unknown.
    The body inflates to at most `limit` bytes (a bomb is refused as it grows)."""
    try:
        inflated = inflate_within(packed, limit)
    except zlib.error as exc:
        raise ValueError(f"does not inflate: {exc}") from None
    if inflated.past:
        raise ValueError(
            f"inflates past the {limit / 1048576:g} MiB a body may inflate to "
            "(TRAILBLAZE_REMOTE_CACHE_MAX_MB)"
        )
    if not inflated.ended:
        raise ValueError("is cut short")
    data = inflated.data
    head, _, blob = data.partition(b"\n")  # JSON as written holds no raw line break
    try:
        body = json.loads(head)
        raw = body["rows"] if body.get("format") == ROWS_FORMAT else None
        sizes = body["modules"]
    except (ValueError, AttributeError, KeyError, TypeError, RecursionError):
        raw = sizes = None
    if not isinstance(raw, list) or not isinstance(sizes, list):
        raise ValueError("not a rows body")
    rows: list[tuple[Any, ...]] = []
    seen: set[str] = set()
    for row in raw:
        if not isinstance(row, list) or len(row) != len(TRAIL_FIELDS):
            raise ValueError("a row of another shape")
        path, stamp, content, strict, status, target, calls, key, surface, base, tools, extra = row
        if (
            not isinstance(path, str)
            or path not in trails
            or path in seen
            or stamp is not None
            or not isinstance(content, str)
            or strict not in (0, 1)
            or isinstance(strict, bool)
            or status not in ("parsed", "rejected")
            or not isinstance(target, _OPTIONAL)
            or not isinstance(calls, int)
            or isinstance(calls, bool)
            or calls < 0
            or not all(isinstance(v, _OPTIONAL) for v in (key, surface, base, tools, extra))
        ):
            raise ValueError("a row that is not one of this workspace's trails")
        seen.add(path)
        rows.append(tuple(row))
    from trailblaze.check.rows import TrailRecord  # noqa: PLC0415 - the check loads it anyway

    try:
        for row in rows:
            if row[10] is not None:
                names = json.loads(row[10])
                if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                    raise TypeError("tool names")
            _findings_of(row)  # each about its own trail, every field checked
        TrailRecord.from_rows(rows)  # what the state will read
    except (ValueError, TypeError, IndexError, AttributeError, RecursionError) as exc:
        raise ValueError(f"a row's findings are not usable: {exc}") from None
    modules: dict[str, str] = {}
    at = 0
    for item in sizes:
        if (
            not isinstance(item, list)
            or len(item) != 2  # a trail and its module's length
            or item[0] not in seen
            or item[0] in modules
            or not isinstance(item[1], int)
            or isinstance(item[1], bool)
            or not 0 <= item[1] <= len(blob) - at
        ):
            raise ValueError("a module that is not one of its rows' trails")
        try:
            modules[item[0]] = blob[at : at + item[1]].decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"the module of {item[0]} is not UTF-8") from None
        at += item[1]
    if at != len(blob):
        raise ValueError("bytes after the last module")
    return rows, modules


def _findings_of(row: list[Any] | tuple[Any, ...]) -> None:
    """Check a row's findings and runIf signatures (its JSON column) as the state will read
    them: every finding a whole one, about the row's own trail, at a line and column in range;
    every signature a string at a line and column in range (ValueError / TypeError)."""
    if row[11] is None:
        return
    parse, runif, types, branches, *shipped = json.loads(row[11])
    if shipped not in ([], [True]):
        raise ValueError(f"a runIf grammar flag of {row[0]} that is not one")
    for findings in (parse, runif, types):
        for finding in decode_findings(findings):
            if finding.path != row[0]:
                raise ValueError(f"a finding of {row[0]} about {finding.path!r}")
    if not isinstance(branches, list) or not all(
        isinstance(b, list)
        and len(b) == 3
        and isinstance(b[0], str)
        and position_in_range(b[1], b[2])
        for b in branches
    ):
        raise ValueError(f"a runIf signature of {row[0]} that is not one")
