"""The workspace-level stages of a check, kept by a caller that checks again and again.

`run_check` redoes the workspace's stages on every run: discover (manifests), resolve (every
target's tool model), surfaces (each trailmap's artifacts) and the type gate's preparation (the
compiler found, the scripted tools' declarations, the module surfaces and their strict check).
A command runs once, so it never notices; an editor's checker runs on every keystroke, and at
10,000 trails these stages cost far more than the one edited trail's parse and compile.

A `WorkspacePhase` handed to `run_check` is filled by the first run and reused by the next ones
(whatever trails they check: only the scan's trails are taken from each run): its holder (`trailblaze.lsp.session`) keeps it only while every input the stages read
is as it was (the trailmaps' manifests and tool files, and the files the compiles read beyond
them, `stamp_paths`), and starts a new one otherwise. It may also carry `compile`, a compiler
for the type gate's batches that stays warm between runs (`typegate.warm`), in place of a new
compiler process per batch. A run given a phase leaves the state store alone (no trail records
read or written, no stats, no compile reads: an editor's buffers are no files on disk) and
walks the generated modules for orphans only when its trails differ from the phase's last run's.
The command line never passes one: its runs are unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import msgspec

from trailblaze.check.discover import Discovery
from trailblaze.check.resolve import Targets
from trailblaze.check.typegate.jobs import GateResult, Job
from trailblaze.check.typegate.preparation import NoCompiler, Prepared
from trailblaze.finding import Finding

BatchCompile = Callable[[list[Job], Prepared], GateResult]
"""Compiles one batch of the type gate's jobs with the prepared compiler (`compile_jobs`'s
place): a verdict for each job, or each job failed with the reason."""


class Stages(msgspec.Struct, frozen=True):
    """What the workspace's stages made, as the first run left it."""

    discovery: Discovery
    targets: Targets
    artifacts: tuple[Finding, ...]


class WorkspacePhase(msgspec.Struct):
    """The workspace's stages of one run, for the next runs over the same inputs."""

    stages: Stages | None = None
    prepared: Prepared | NoCompiler | None = None
    """The type gate's preparation, once a run needed it."""
    compile: BatchCompile | None = None
    """The type gate's compiler for the runs given this phase; None: `compile_jobs`."""
    known_reads: tuple[str, ...] = ()
    """Files an earlier phase's compiles read beyond the inputs: the preparation tells them
    before its compiles (as it does the state store's record), so that one changed while a
    compile ran is not taken for what it read."""
    generated: frozenset[str] | None = None
    """The trails whose generated modules the last run left alone on disk (it removed the
    others): a run that keeps the same ones does not walk the modules again for orphans."""

    def stamp_paths(self) -> list[str]:
        """The files the compiles read beyond the check's inputs, as the preparation told them:
        a change to one ends this phase as a change to an input does."""
        if isinstance(self.prepared, Prepared):
            return sorted(self.prepared.reads.stats)
        return []

    def told_reads(self) -> list[tuple[str, os.stat_result | None]] | None:
        """`stamp_paths`, each with the `os.stat` the preparation took when it told the file
        (None: missing), to stamp the phase with what its compiles saw rather than with what
        is on disk after the run; None when a compile may have read a file other than as told
        (`ReadFiles.covered`: it changed while the compile ran): the phase is not to be kept."""
        if not isinstance(self.prepared, Prepared):
            return []
        reads = self.prepared.reads
        if not reads.covered:
            return None
        return sorted(reads.stats.items())
