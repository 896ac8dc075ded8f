"""One workspace, kept warm between edits: the check of a trail from its unsaved text.

The verdict is `trailblaze check FILE`'s, by construction: the same scope (`cli.scope`, the
workspace's `files/` state and result caches), the same pipeline (`check.run.run_check`), the
same options; the only difference is where the trail's bytes come from (the editor's buffer,
through `run_check(texts=...)`). Between edits the process keeps what a command pays again
every time: the imports, the catalog, the compiler found and its version, the type gate's
per-trail result cache (keyed by the generated module, so an edit that generates a module the
command line already checked compiles nothing) and the surfaces. Its runs read and write no
trail records of the state store (`check.run`): a buffer's record stands for no file on disk,
and a warm compile's verdict is never cached; the store stays as the last command left it.

The workspace's own stages (manifests, tool models, surfaces, the type gate's preparation) are
kept too, for every file, in a `check.phase.WorkspacePhase`, while their inputs are as they
were (every manifest and tool file, and every file the compiles read beyond them, by `os.stat`):
a new text costs its own parse and compile only. The compile is made by a warm compiler
(`check.typegate.warm`: TypeScript 7's language server, kept open, its answers proven by
canaries); a change of the inputs starts a new phase and a new compiler.

On top of it, a verdict per text: the findings of a text already checked, while every input of
the check (the trailmaps' manifests and tool files, as `os.stat` sees them) is as it was, are
given again without running the pipeline. An edit to a `tools/` file or a manifest changes
those stamps, and the client's notice of it (`refresh`) drops every verdict at once.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeAlias

from trailblaze.check.phase import WorkspacePhase
from trailblaze.check.run import run_check
from trailblaze.check.typegate.warm import WarmCompiler
from trailblaze.cli.scope import FILES_SCRATCH, Scope, check_scope
from trailblaze.finding import Finding
from trailblaze.lsp.toolinfo import ToolModel
from trailblaze.options import CheckOptions
from trailblaze.state.keys import digest, stamped_digest, stamps_digest
from trailblaze.state.scratch import Layout
from trailblaze.toolmodel.sources import check_inputs, entry_point_dirs
from trailblaze.workspace import (
    EXCLUDED_DIRS,
    NESTED_TSCONFIG,
    TOOL_DIRS,
    Scan,
    TrailmapDir,
    Workspace,
    scan_trailmaps,
)

KEPT_VERDICTS = 512
"""Verdicts kept per workspace (the oldest go first): a few edits back and forth on many files."""


@dataclass(frozen=True, slots=True)
class Verdict:
    findings: tuple[Finding, ...]
    """Every finding `trailblaze check FILE` gives for the text, with workspace-relative paths
    (absolute for a file outside the workspace)."""
    compiled: bool
    """Whether the pipeline ran for it (False: the verdict of the same text, kept)."""


class Session:
    """The warm check of one workspace. Not thread-safe: the server calls it from one thread."""

    def __init__(self, ws: Workspace, options: CheckOptions | None = None) -> None:
        self.ws = ws
        # As `trailblaze check FILE` runs with no flags; the remote cache is not asked on every
        # keystroke (it can only give the verdict the local check gives).
        self.options = dataclasses.replace(
            options if options is not None else CheckOptions.from_env(), remote_cache=None
        )
        self._verdicts: OrderedDict[str, tuple[Finding, ...]] = OrderedDict()
        self._model: ToolModel | None = None
        self._lock = threading.Lock()
        self._phase: WorkspacePhase | None = None
        self._listing: _Listing | None = None
        self._phase_stamp = ""
        """The stamp of the inputs the phase was made with (`_stamp`)."""
        self._warm: WarmCompiler | None = None
        self._reads: tuple[str, ...] = ()
        """What the last phase's compiles read beyond the inputs: told before the next's."""
        self.runs = 0
        self.phases_made = 0
        self._real_root = os.path.realpath(ws.root) + os.sep

    def check(self, path: Path, text: str) -> Verdict:
        """The findings of the trail at `path` if it held `text`."""
        with self._lock:
            file = self._file_of(path)
            stamp = self._stamp(self._phase)
            key = digest(file, text, stamp)
            kept = self._verdicts.get(key)
            if kept is not None:
                self._verdicts.move_to_end(key)
                return Verdict(kept, compiled=False)
            phase = self._phase
            if phase is None or stamp != self._phase_stamp:
                phase = self._new_phase()
                self._model = None  # completion and hover: the tools as the inputs are now
            unprepared = phase.prepared is None
            data = text.encode("utf-8", "surrogateescape")
            listing = self._listing
            scoped = check_scope(
                Scope(self.ws, files=(Path(file),)),
                self.options,
                run=partial(run_check, texts={file: data}, phase=phase),
                # The trailmaps as the kept listing found them (its directories as they were
                # when the stamp above was taken), or scanned again.
                trailmaps=listing.trailmaps if listing is not None else None,
            )
            self.runs += 1
            findings = scoped.report.findings
            if phase is not self._phase or unprepared:
                # Stamped as the run left the inputs (it may have written a surface), with
                # what its compiles read as they were when they read it: a read changed
                # since (saved while the check ran) makes a new phase at the next check.
                stamp = self._told_stamp(phase)
                self._phase, self._phase_stamp = phase, stamp
                self._reads = tuple(phase.stamp_paths())
            self._verdicts[digest(file, text, stamp)] = findings
            while len(self._verdicts) > KEPT_VERDICTS:
                self._verdicts.popitem(last=False)
            return Verdict(findings, compiled=True)

    def refresh(self) -> None:
        """A tool, a manifest or another input changed: every verdict and the tool model go."""
        with self._lock:
            self._verdicts.clear()
            self._model = None
            self._phase = None
            if self._warm is not None:
                self._warm.restart()

    @property
    def warm_starts(self) -> int:
        """How many warm compiler processes the session started."""
        return self._warm.starts if self._warm is not None else 0

    def close(self) -> None:
        """Stop the warm compiler (the server is exiting)."""
        with self._lock:
            if self._warm is not None:
                self._warm.close()
                self._warm = None

    def model(self) -> ToolModel:
        with self._lock:
            if self._model is None:
                self._model = ToolModel(self.ws, self.ws.scratch / FILES_SCRATCH)
            return self._model

    def absolute(self, finding: Finding) -> Path:
        """The file a finding is in."""
        return Path(finding.path if os.path.isabs(finding.path) else self.ws.root / finding.path)

    def _file_of(self, path: Path) -> str:
        """The path the file scope checks the trail under (`cli.scope`: by its real path)."""
        real = os.path.realpath(path)
        root = self._real_root
        if real.startswith(root):
            return os.path.join(str(self.ws.root), real[len(root) :])
        return str(path)

    def _new_phase(self) -> WorkspacePhase:
        """A phase for a first check, or for inputs that changed: then the warm compiler,
        which read the old surfaces, is started again."""
        self.phases_made += 1
        if self._warm is None:
            self._warm = WarmCompiler(Layout(self.ws.scratch / FILES_SCRATCH))
        elif self._phase is not None:
            self._warm.restart()
        return WorkspacePhase(compile=self._warm, known_reads=self._reads)

    def _stamp(self, phase: WorkspacePhase | None) -> str:
        """The stamp of every input of the check (manifests, tool files), and of what the
        phase's compiles read beyond them, as `os.stat` sees them now."""
        extra = phase.stamp_paths() if phase is not None else []
        return stamps_digest("lsp-inputs", [*self._input_files(), *extra], {})

    def _told_stamp(self, phase: WorkspacePhase) -> str:
        """`_stamp` of a phase just made, its reads stamped as the preparation told them;
        empty (no stamp `_stamp` gives) when it could not tell one as a compile read it."""
        reads = phase.told_reads()
        if reads is None:
            return ""
        inputs = [(path, _stat(path)) for path in self._input_files()]
        return stamped_digest("lsp-inputs", [*inputs, *reads])

    def _input_files(self) -> list[str]:
        """Every manifest and tool file of the workspace, its baked targets and installed
        packages' trailmaps (`check_inputs`), walked again only when `sys.path` or one of the
        directories the walk lists has changed since (a file added, removed or renamed in it
        changes its `st_mtime`; a package installed changes its directory of `sys.path`:
        `_package_dirs`): at 10,000 trails the walk costs more than the rest of a keystroke's
        check. A directory changed just before the walk is read again on each use until it is
        settled (`_Listing.recent`)."""
        kept = self._listing
        if (
            kept is not None
            and kept.path == tuple(sys.path)
            and all(_dir_stamp(d) == stamp for d, stamp in kept.dirs)
        ):
            if not kept.recent:
                return kept.files
            recent = _unsettled(kept.recent)
            if recent is not None:
                if recent != kept.recent:
                    self._listing = dataclasses.replace(kept, recent=recent)
                return kept.files
        trailmaps, _ = scan_trailmaps(self.ws)
        dirs = [str(self.ws.trailmaps_dir)]
        for trailmap in trailmaps:
            dirs.append(str(trailmap.path))
            dirs.extend(_walked(trailmap.path))
        targets = self.ws.targets_dir
        if targets is not None:
            dirs.append(str(targets))  # a baked target added there (or the directory made)
        path = tuple(sys.path)
        dirs.extend(_package_dirs())
        before = [(d, _dir_stamp(d)) for d in dirs]
        # Read before the walk that lists the files: a change after it is a change since.
        recent = _recent(before)
        files = check_inputs(Scan(trailmaps=trailmaps, trail_paths=(), findings=()), targets)
        self._listing = (
            _Listing(tuple(before), files, trailmaps, path, recent)
            if recent is not None and _trusted(before, files)
            else None
        )
        return files


Recent: TypeAlias = tuple[tuple[str, int, frozenset[tuple[str, bool]]], ...]
"""Directories changed just before a walk: each path, its `st_mtime_ns` and its entries (name,
is a directory) as they were then (`_Listing.recent`)."""


@dataclass(frozen=True, slots=True)
class _Listing:
    """The input files as a walk listed them, and the directories it listed, as they were."""

    dirs: tuple[tuple[str, tuple[int, int] | None], ...]
    files: list[str]
    trailmaps: tuple[TrailmapDir, ...]
    path: tuple[str, ...]
    """`sys.path` as it was: where installed packages were looked for (`_package_dirs`)."""
    recent: Recent = ()
    """The directories changed less than `LISTING_MARGIN_NS` before the walk, each with its
    `st_mtime_ns` and its entries (name, is a directory) as they were before the walk: one may
    change again within the same tick of the file system's clock with its `st_mtime` unchanged,
    so its entries are read again on each use of the listing (a difference: walked again),
    until a reading made past the margin finds them as they were."""


LISTING_MARGIN_NS = 2_000_000_000
"""A directory changed less than this long ago may change again within the same tick of the
file system's clock, its `st_mtime` unchanged (`_Listing.recent`)."""


def _entries(path: str) -> frozenset[tuple[str, bool]] | None:
    try:
        with os.scandir(path) as found:
            return frozenset((e.name, e.is_dir(follow_symlinks=False)) for e in found)
    except OSError:
        return None


def _recent(
    dirs: list[tuple[str, tuple[int, int] | None]],
) -> Recent | None:
    """`_Listing.recent` of directories stamped just now; None when one cannot be read."""
    margin = time.time_ns() - LISTING_MARGIN_NS
    found = []
    for path, stamp in dirs:
        if stamp is not None and stamp[1] >= margin:
            entries = _entries(path)
            if entries is None:
                return None
            found.append((path, stamp[1], entries))
    return tuple(found)


def _unsettled(
    recent: Recent,
) -> Recent | None:
    """The recent directories still to be read on the next use, once each was read again
    and found as it was (those changed longer than the margin ago are settled); None when
    one was not: the listing no longer holds."""
    margin = time.time_ns() - LISTING_MARGIN_NS
    still = []
    for path, mtime, entries in recent:
        if _entries(path) != entries:
            return None
        if mtime >= margin:
            still.append((path, mtime, entries))
    return tuple(still)


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _dir_stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns)


def _package_dirs() -> list[str]:
    """Where installed packages' trailmaps show (`sources.source_files`): each directory of
    `sys.path` (installing or removing a distribution changes its listing) and each directory
    under a declaring package's `trailmaps/` and `targets/` (a file added there)."""
    found = [os.path.abspath(entry or ".") for entry in sys.path if os.path.isdir(entry or ".")]
    for _, directory in entry_point_dirs():
        for sub in ("trailmaps", "targets"):
            found.extend(dirpath for dirpath, _, _ in os.walk(directory / sub))
    return found


def _walked(trailmap: Path) -> list[str]:
    """The directories `workspace.tool_files` walks for a trailmap (the same exclusions)."""
    found: list[str] = []
    for sub in TOOL_DIRS:
        base = trailmap / sub
        if not base.is_dir():
            continue
        for dirpath, dirnames, _ in os.walk(base):
            dirnames[:] = [d for d in dirnames if d not in EXCLUDED_DIRS]
            found.append(dirpath)
    return found


def _trusted(dirs: list[tuple[str, tuple[int, int] | None]], files: list[str]) -> bool:
    """Whether a listing may be kept: every directory there, and no nested tool project (its
    dependency manifests are found by a module resolution, not by a walk)."""
    if any(os.path.basename(f) == NESTED_TSCONFIG for f in files):
        return False
    return all(stamp is not None for _, stamp in dirs)
