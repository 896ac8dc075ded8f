"""The unit-test result cache: the passing result of one test file, by the key of its inputs.

Like the type gate's result cache (`state.results`), in one SQLite file of the cache directory
(`Layout.test_results`, beside `results-v<N>.sqlite3`, under `TRAILBLAZE_CACHE_DIR` when set),
and best effort: a cache that fails is a miss or forgets. Only a file whose every test passed
(or was skipped) is ever stored: a failure, a timeout or a crash is run again next time.

The value is the file's test cases as JSON (name, line, status, duration), checked field by
field when read back: anything else is a miss.

With a remote cache (`state.remote`), passing results are shared under the same key, as the
type gate's verdicts are: an action-cache entry `ac/<key>` holding the cases, signed where
signing is configured, checked against its key (and signature) when fetched, stored only for a
file that really ran and passed, never in read-only mode. A fault is one warning and the run
goes on locally.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trailblaze.state.keys import digest
from trailblaze.state.owned import Scratch
from trailblaze.state.results import describe_cache_dir
from trailblaze.state.scratch import make_dir
from trailblaze.state.signing import SigningError
from trailblaze.state.store import Database

if TYPE_CHECKING:
    from trailblaze.state.remote import RemoteResults

# `state.remote` (an HTTP client, TLS) is imported only where a remote cache is named: a check
# without one, a one-trail edit above all, does not pay for its import.

log = logging.getLogger(__name__)

TEST_RESULTS_VERSION = 1
TEST_FORMAT = "trailblaze-test-result-1"
"""Part of every key: a change of what is stored (or how a result is made) is a new key."""
CACHED_STATUSES = frozenset({"passed", "skipped", "todo"})
"""The statuses of a file that may be stored: nothing failed."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS tests (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;"
)
_README = "Unit-test results of trailblaze-doit, keyed by their inputs. Safe to delete.\n"


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One test of a file, as run (or as stored)."""

    name: str
    """Its describe blocks and its own name, joined by ` > `."""
    line: int
    status: str
    """`passed`, `failed`, `skipped` or `todo`."""
    duration: float
    """Seconds."""
    message: str = ""
    """A failure's message (empty otherwise)."""
    column: int = 1
    """Where a failure was raised, when bun's stack names the test file; else the test's line."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "line": self.line,
            "status": self.status,
            "duration": self.duration,
        }


def result_key(*, file: str, inputs: str, bun: str, runtime: str, env: str) -> str:
    """The key of one test file's result: the file (its workspace path and the digest of its
    content and of everything it imports), bun's identity, our runtime and SDK, and the
    environment the phase passes on."""
    return digest("trailblaze-test", TEST_FORMAT, bun, runtime, env, file, inputs)


def encode_cases(cases: Sequence[CaseResult]) -> bytes:
    data = [c.to_json() for c in cases]
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def decode_cases(data: bytes | str) -> list[CaseResult] | None:
    """The cases of a stored result, or None when the bytes are not one (a miss)."""
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(raw, list):
        return None
    out = []
    for item in raw:
        if not isinstance(item, dict) or set(item) != {"name", "line", "status", "duration"}:
            return None
        name, line, status, duration = item["name"], item["line"], item["status"], item["duration"]
        if (
            not isinstance(name, str)
            or type(line) is not int
            or line < 1
            or status not in CACHED_STATUSES
            or not isinstance(duration, int | float)
            or isinstance(duration, bool)
        ):
            return None
        out.append(CaseResult(name, line, status, float(duration)))
    return out


class TestResults:
    """The cache in one SQLite file; `ours` as for `state.results.LocalResults`."""

    __test__ = False  # not a pytest class

    def __init__(self, path: Path, *, ours: Path | None = None) -> None:
        self.path = path
        self.directory = path.parent
        self.ours = ours
        self.db = Database(path, _SCHEMA, f"trailblaze-tests {path.name}", scratch=ours)

    def get(self, key: str) -> list[CaseResult] | None:
        rows = self.db.read("SELECT value FROM tests WHERE key = ?", (key,))
        if not rows or not isinstance(rows[0][0], bytes | str):
            return None
        return decode_cases(rows[0][0])

    def put_many(self, entries: Sequence[tuple[str, Sequence[CaseResult]]]) -> None:
        """Store passing results; a case of another status is a bug of the caller's."""
        rows = []
        for key, cases in entries:
            assert all(c.status in CACHED_STATUSES for c in cases), key
            rows.append((key, encode_cases(cases)))
        if not rows:
            return
        try:
            describe = True
            if self.ours is not None:
                make_dir(self.directory, self.ours)
                describe = Scratch.of(self.ours).ours(self.directory)
            if describe:
                describe_cache_dir(self.directory, "# Generated by trailblaze-doit.\n*\n", _README)
        except OSError as exc:
            log.warning("test result cache %s unusable: %s", self.directory, exc)
            return

        def apply(db: sqlite3.Connection) -> None:
            db.executemany("INSERT OR REPLACE INTO tests (key, value) VALUES (?, ?)", rows)

        self.db.write(apply)

    def close(self) -> None:
        self.db.close()


REMOTE_FORMAT = 1
"""The format of a shared test result entry (`ac/<key>`)."""


class RemoteTests:
    """Passing test results in a remote cache, over the type gate's client (`RemoteResults`:
    its connection, bounds, budget and one-warning fault handling)."""

    def __init__(self, remote: RemoteResults) -> None:
        self.remote = remote
        self.hits = 0
        self.stored = 0

    @classmethod
    def open(
        cls, url: str | None, *, read_only: bool, public_keys: Sequence[str] = ()
    ) -> RemoteTests | None:
        if not url:
            return None
        from trailblaze.state.remote import (  # noqa: PLC0415 - see the imports
            RemoteConfig,
            RemoteConfigError,
            RemoteResults,
        )

        try:
            config = RemoteConfig.resolve(url, read_only=read_only, public_keys=public_keys)
        except (RemoteConfigError, SigningError):
            return None
        return None if config is None else cls(RemoteResults(config))

    def fetch(self, keys: Sequence[str]) -> dict[str, list[CaseResult]]:
        """The verified passing results the remote holds, by key."""
        if not keys or not self.remote.usable:
            return {}
        found: dict[str, list[CaseResult]] = {}
        for key, cases in self.remote.each(self._fetch_one, keys):
            if cases is not None:
                found[key] = cases
        self.hits += len(found)
        return found

    def store(self, entries: Sequence[tuple[str, Sequence[CaseResult]]]) -> None:
        """Results of files that really ran and passed; nothing in read-only mode."""
        if self.remote.config.read_only or not self.remote.usable or not entries:
            return
        self.stored += sum(self.remote.each(self._store_one, entries))

    def close(self) -> dict[str, Any]:
        stats = {
            "test_remote_hits": self.hits,
            "test_remote_stored": self.stored,
            "test_remote_fault": self.remote.fault,
        }
        self.remote.close()
        return stats

    def _fetch_one(self, key: str) -> tuple[str, list[CaseResult] | None]:
        from trailblaze.state.remote import RemoteFault, decoded_entry  # noqa: PLC0415

        if not self.remote.usable:
            return key, None
        try:
            body = self.remote.http.get_ac(key)
            if body is None:
                return key, None
            entry = decoded_entry(
                body, key, REMOTE_FORMAT, "a test result entry", self.remote.config.trust
            )
            cases = decode_cases(json.dumps(entry.get("cases")))
            if cases is None:
                raise RemoteFault("a test result entry holds no passing test cases")
            return key, cases
        except RemoteFault as exc:
            self.remote.give_up(str(exc))
            return key, None

    def _store_one(self, entry: tuple[str, Sequence[CaseResult]]) -> int:
        from trailblaze.state.remote import RemoteFault, sealed_entry  # noqa: PLC0415

        key, cases = entry
        if not self.remote.usable:
            return 0
        record = {"format": REMOTE_FORMAT, "key": key, "cases": [c.to_json() for c in cases]}
        try:
            self.remote.http.put_ac(key, sealed_entry(record, key, self.remote.config.trust))
        except RemoteFault as exc:
            self.remote.give_up(str(exc))
            return 0
        return 1
