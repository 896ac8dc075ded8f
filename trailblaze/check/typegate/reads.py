"""The files this run's compilers read beyond the check's inputs, and whether the keys covered them.

Every compiler run of the type gate lists the files it read (`--listFiles`: the declaration
emit of each trailmap's scripted tools, the surface check, each batch of trails). What is
neither ours (what we write for the compilers in the scratch directory, the files we generate
into `tools/`), nor the pinned toolchain's, nor an input the keys hold already (a manifest or
tool file) is a *read*: a type a tool imports from `tools/build/` or from a package in a
`node_modules`, a declaration file anywhere else in the workspace or outside it. `ReadFiles` keeps the run's account of them:

- the reads the last run recorded (`state.reads.COMPILE_READS`) are read first, before any
  compiler runs, and their digest (`key`) is part of the memo keys of the declaration emit and
  the surface check: a memo stands only while they are as it saw them;
- each compile's list is `observe`d: a read the keys made before it did not cover makes its
  memo unrecorded, and is told now (`read_token`) for the result keys, provided it did not
  change since that compile began (its mtime is older, by `MARGIN_NS`; else the run caches no
  verdict);
- `seal` gives the digest of every read told so far, part of every trail's result key; a batch
  that reads anything else, or a read that changed since it was told (`unchanged`), keeps the
  run's verdicts out of every cache (`covered`);
- `record` is what the run leaves for the next one and for the stamp keys (the command line's
  no-op, doit's up-to-date check) and the run entry of the remote cache.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

from trailblaze.fsutil import stamp_of
from trailblaze.state.reads import read_token, reads_digest, told
from trailblaze.workspace import is_generated_tool

MARGIN_NS = 2_000_000_000
"""How long before a compile began a file must have last changed for its content read after the
compile to count as what the compile read: file systems keep mtimes at up to two seconds'
grain, and the kernel stamps them from a clock that lags the one we read."""


def _prefixes(directories: Iterable[Path]) -> tuple[str, ...]:
    """Each directory as given and as its real path, with a trailing separator."""
    found: set[str] = set()
    for directory in directories:
        for form in (os.path.abspath(directory), os.path.realpath(directory)):
            found.add(form.rstrip(os.sep) + os.sep)
    return tuple(sorted(found))


class ReadFiles:
    """The reads of one run of the type gate (see the module docstring)."""

    def __init__(
        self,
        *,
        root: Path,
        ours: Iterable[Path],
        inputs: Iterable[str],
        tools_dirs: Iterable[Path],
        known: Iterable[str],
        compiler_home: Path | None = None,
    ) -> None:
        self.root = root
        self._ours = _prefixes(ours)
        """What we write for the compilers (the type gate's directory and the SDKs in the
        scratch directory) and the toolchain: never reads."""
        self._home = _prefixes([compiler_home]) if compiler_home is not None else ()
        """A compiler named by `TRAILBLAZE_TSC`: its default libraries are the compiler's."""
        self._inputs = frozenset(inputs)
        self._tools = frozenset(str(d) for d in tools_dirs) | frozenset(
            os.path.realpath(d) for d in tools_dirs
        )
        self.tokens: dict[str, str] = {}
        self.stats: dict[str, os.stat_result | None] = {}
        self.observed: set[str] = set()
        self.covered = True
        """False once a read could not be covered: no verdict of the run is cached."""
        self.reused = False
        """Some compile was not run again (its memo held): its reads are the known ones."""
        self.sealed = False
        self._lock = threading.Lock()
        for path in sorted(set(known)):
            token, st = read_token(path)
            self._take(path, token, st, trusted=told(token))
        self.known = frozenset(self.tokens)
        self.key = reads_digest(self.tokens, root) if self.tokens else ""
        """The digest of the known reads as read before any compile, part of the memo keys
        (empty when there are none: the keys of a workspace that reads nothing else are as
        they were before reads were recorded)."""

    def extras(self, listed: Iterable[str]) -> set[str]:
        """The reads among the files a compiler listed, with the `package.json` of each
        package one belongs to."""
        found: set[str] = set()
        for raw in listed:
            path = os.path.normpath(raw)
            if self._read(path):
                found.add(path)
                manifest = _package_json(path)
                if manifest is not None and self._read(manifest):
                    found.add(manifest)
        return found

    def _read(self, path: str) -> bool:
        if path.startswith(self._ours) or path in self._inputs:
            return False
        name = os.path.basename(path)
        if self._home and path.startswith(self._home) and name.startswith("lib."):
            return False
        return not (is_generated_tool(name) and os.path.dirname(path) in self._tools)

    def observe(self, listed: Iterable[str], started_ns: int) -> bool:
        """The files a compile that began at `started_ns` listed; whether the reads known
        before the run covered them (else its memo must not be recorded)."""
        found = self.extras(listed)
        with self._lock:
            self.observed |= found
            new = sorted(found - self.known)
            for path in new:
                if path in self.tokens:
                    continue
                token, st = read_token(path)
                trusted = (
                    not self.sealed
                    and st is not None
                    and told(token)
                    and st.st_mtime_ns < started_ns - MARGIN_NS
                    and _stamp(path) == stamp_of(st)
                )
                self._take(path, token, st, trusted=trusted)
        return not new

    def _take(self, path: str, token: str, st: os.stat_result | None, *, trusted: bool) -> None:
        self.tokens[path] = token
        self.stats[path] = st
        if not trusted:
            self.covered = False

    def seal(self) -> str:
        """The digest of every read told so far, for the result keys (empty when there is
        none): a read first seen after this is not covered by them."""
        with self._lock:
            self.sealed = True
            return reads_digest(self.tokens, self.root) if self.tokens else ""

    def covers(self, listed: Iterable[str]) -> bool:
        """Whether the result keys cover what a batch listed, and every read is as told."""
        found = self.extras(listed)
        with self._lock:
            known = found <= self.tokens.keys()
        return known and self.covered and self.unchanged()

    def unchanged(self) -> bool:
        """Whether every read told is as it was then (a stat each)."""
        for path, st in list(self.stats.items()):
            now = _stamp(path)
            if now != (stamp_of(st) if st is not None else None):
                return False
        return True

    def record(self) -> dict[str, tuple[str, os.stat_result | None]]:
        """What the next run and the stamp keys are to cover: every read seen this run, and,
        when a compile was not run again, the known ones (its reads are among them)."""
        with self._lock:
            paths = self.observed | (self.known if self.reused else frozenset())
            return {path: (self.tokens[path], self.stats[path]) for path in sorted(paths)}


def _stamp(path: str) -> str | None:
    try:
        return stamp_of(os.stat(path))
    except OSError:
        return None


def _package_json(path: str) -> str | None:
    """The `package.json` of the package under a `node_modules` that `path` belongs to."""
    parts = path.split(os.sep)
    if "node_modules" not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index("node_modules")
    size = 2 if at + 1 < len(parts) and parts[at + 1].startswith("@") else 1
    if at + 1 + size >= len(parts):
        return None  # not inside a package
    return os.sep.join([*parts[: at + 1 + size], "package.json"])
