"""The result cache: per-trail type-gate verdicts, addressed by everything that decides them.

A trail's verdict (its type findings, possibly none) depends only on what the compiler was
given and how, and on where its findings land in the YAML: `ResultKey` holds those parts, the
digest of the generated module and of the trail's content, the surface digest of its
trailmap, the compiler's version, the options (compiler options, generator and product
versions) and the format version of the stored value. No part holds a path or an mtime, so a
key is the same on every checkout and machine. `ResultKey.digest` addresses the result, in
this cache and in the remote one (`trailblaze.state.remote`, `/ac/<digest>`): a hit skips the
compiler for that trail. The value is `encode_result(findings)`, canonical
JSON bytes, so a remote cache can hold it content-addressed (Bazel's HTTP protocol: the bytes
under `/cas/<sha256 of the bytes>`, an action result under `/ac/<ResultKey.digest>` naming
them) and a reader can check what it got with `decode_result`.

`ResultCache` is the protocol the type gate uses; `LocalResults` is the implementation over one
SQLite file in the cache directory (`scratch.Layout.results`: `TRAILBLAZE_CACHE_DIR`, else the
scratch directory's `cache/`), which can be shared between workspaces. Like black's cache: the
key covers every input that changes the output, an unreadable or corrupt entry is a miss, the
directory describes itself (`CACHEDIR.TAG`, `.gitignore`, `README`), and only verdicts of a
compile that really ran are stored (the type gate's business).

One database rather than one file per key: creating ten thousand small files costs seconds on
a slow disk, and SQLite gives atomic, concurrent-safe writes.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, get_args

import orjson

from trailblaze.finding import FINDING_FIELDS, Finding, position_in_range
from trailblaze.finding import Kind as FindingKind
from trailblaze.fsutil import write_atomic
from trailblaze.state.keys import digest
from trailblaze.state.owned import CACHEDIR_TAG, Scratch
from trailblaze.state.scratch import RESULTS_VERSION, Layout, make_dir
from trailblaze.state.store import Database

log = logging.getLogger(__name__)

RESULT_FORMAT = str(RESULTS_VERSION)
"""The format of a stored result (its bytes and its key): part of every `ResultKey`."""


def describe_cache_dir(directory: Path, gitignore: str, readme: str) -> None:
    """Make a cache directory say what it is (backup tools, git, a curious human).

    `CACHEDIR.TAG`, `.gitignore` and `README`, each written only when missing.
    """
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in (
        ("CACHEDIR.TAG", CACHEDIR_TAG),
        (".gitignore", gitignore),
        ("README", readme),
    ):
        path = directory / name
        if not path.exists():
            write_atomic(path, text)


@dataclass(frozen=True, slots=True)
class ResultKey:
    """Every input of one trail's type-gate verdict; `digest` is the address of its result."""

    trail: str
    """Digest of the trail's generated module (its calls and arguments as the compiler sees
    them, and the trail's path) and of the trail file's content, which decides the line table
    (where each finding lands in the YAML)."""
    surface: str
    """Digest of its trailmap's module surface and of the declarations that surface uses."""
    compiler: str
    """The compiler's version and the size of its binary (the same build everywhere)."""
    options: str
    """Digest of the compiler options, the generator's and our version, our SDK declarations
    and the finding fields."""
    format: str = RESULT_FORMAT
    digest: str = field(init=False, repr=False, compare=False)
    """The key of the verdict: the format, compiler, options, surface and trail digests. Made
    once, with the key: a cold check asks for it three times a trail (the local cache, the
    job, the store)."""

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "digest",
            digest(
                "trailblaze-result",
                self.format,
                self.compiler,
                self.options,
                self.surface,
                self.trail,
            ),
        )


def options_digest(
    generator_version: str, product_version: str, compiler_options: Mapping[str, Any], sdk: str
) -> str:
    """The `options` part of a `ResultKey`: everything about how a verdict is made and stored,
    our SDK declarations (`sdk`, a digest of their content) included."""
    return digest(
        generator_version,
        product_version,
        json.dumps(compiler_options, sort_keys=True),
        sdk,
        ",".join(FINDING_FIELDS),
    )


def encode_result(findings: Iterable[Finding]) -> bytes:
    """A verdict as canonical JSON bytes (what is stored, locally and remotely): compact, keys
    sorted, UTF-8. Most verdicts are empty; the others are written by orjson, the same bytes
    as `json.dumps(..., ensure_ascii=False, sort_keys=True, separators=(",", ":"))` (what
    orjson refuses, a lone surrogate, goes to json.dumps)."""
    data = [f.to_json() for f in findings]
    if not data:
        return b"[]"
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def decode_result(data: bytes | str) -> list[Finding] | None:
    """The findings of a stored verdict, or None when the bytes are not one."""
    try:
        return decode_findings(json.loads(data))
    except (ValueError, RecursionError):  # RecursionError: JSON nested past the parser's depth
        return None


def decode_findings(raw: Any) -> list[Finding]:
    """Findings from their JSON form, checked field by field; ValueError when they are not."""
    if not isinstance(raw, list):
        raise ValueError("not a list of findings")
    try:
        return [_finding(item) for item in raw]
    except (TypeError, KeyError) as exc:
        raise ValueError(str(exc)) from None


_KINDS = frozenset(get_args(FindingKind))
_CHECKS: dict[str, Callable[[Any], bool]] = {
    "Kind": lambda v: v in _KINDS,
    "str": lambda v: isinstance(v, str),
    "str | None": lambda v: v is None or isinstance(v, str),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "int | None": lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
    "bool": lambda v: isinstance(v, bool),
}
_FIELD_CHECKS = {
    name: _CHECKS.get(str(Finding.__annotations__[name])) for name in Finding.__struct_fields__
}
"""Each field of a finding and how its JSON value is checked (by its annotation)."""


def _finding(item: Any) -> Finding:
    if not isinstance(item, dict) or "kind" not in item:
        raise ValueError("not a finding")
    for name, value in item.items():
        check = _FIELD_CHECKS.get(name)
        if check is None or not check(value):
            raise ValueError(f"finding field {name!r}")
    if not position_in_range(item.get("line", 0), item.get("column", 0)):
        raise ValueError("a finding's line or column out of range")
    return Finding.from_json(item)


class ResultCache(Protocol):
    """Where the type gate finds and keeps verdicts. Every method is best effort: a cache
    that fails is a miss (`get`) or forgets (`put_many`), never an error."""

    def get(self, key: ResultKey) -> list[Finding] | None:
        """The findings stored for `key`, or None."""
        ...

    def put_many(self, entries: Sequence[tuple[ResultKey, Sequence[Finding]]]) -> None:
        """Store verdicts of trails that were really compiled."""
        ...

    def close(self) -> None: ...


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;"
)
_README = "Type-gate results of trailblaze-doit, keyed by content. Safe to delete.\n"


class LocalResults:
    """The result cache in one SQLite file (see the module docstring)."""

    def __init__(self, path: Path, *, ours: Path | None = None, scope: str = "") -> None:
        self.path = path
        self.scope = scope
        """`signing.trust_scope` of the run: verdicts kept under other keys (a remote's
        included) are not this run's."""
        self.directory = path.parent
        self.ours = ours
        """The scratch directory the cache directory is part of, where a file in its way may
        be removed; None for a directory the user named (`TRAILBLAZE_CACHE_DIR`), where
        nothing that is not ours is ever removed."""
        self.db = Database(path, _SCHEMA, f"trailblaze-results {path.name}", scratch=ours)

    def get(self, key: ResultKey) -> list[Finding] | None:
        rows = self.db.read("SELECT value FROM results WHERE key = ?", (self._address(key),))
        if not rows or not isinstance(rows[0][0], bytes | str):
            return None
        return decode_result(rows[0][0])

    def put_many(self, entries: Sequence[tuple[ResultKey, Sequence[Finding]]]) -> None:
        if not entries:
            return
        rows = [(self._address(key), encode_result(findings)) for key, findings in entries]
        try:
            describe = True
            if self.ours is not None:
                make_dir(self.directory, self.ours)
                owned = Scratch.of(self.ours)
                # A cache directory we found (Trailblaze's analyzer cache, a user's `cache/`)
                # is not described: its marks would hide its owner's files from git and backups.
                describe = owned.ours(self.directory)
                for name in ("CACHEDIR.TAG", ".gitignore", "README"):
                    if describe and not os.path.isfile(self.directory / name):
                        owned.clear(self.directory / name)
            if describe:
                describe_cache_dir(self.directory, "# Generated by trailblaze-doit.\n*\n", _README)
        except OSError as exc:
            log.warning("result cache %s unusable: %s", self.directory, exc)
            return

        def apply(db: sqlite3.Connection) -> None:
            db.executemany("INSERT OR REPLACE INTO results (key, value) VALUES (?, ?)", rows)

        self.db.write(apply)

    def close(self) -> None:
        self.db.close()

    def _address(self, key: ResultKey) -> str:
        return key.digest if not self.scope else digest(self.scope, key.digest)


def open_results(
    layout: Layout, env: Mapping[str, str] | None = None, *, scope: str = ""
) -> ResultCache:
    """The result cache a check of this scratch directory uses; `scope`: `LocalResults.scope`."""
    path = layout.results(env)
    default = path.parent == layout.scratch / "cache"
    return LocalResults(path, ours=layout.scratch if default else None, scope=scope)
