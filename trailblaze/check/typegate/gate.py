"""The type gate stage: one run over a workspace's trails, fed while they are still being parsed.

The check offers every eligible trail as soon as its parse outcome is known. A trail whose last
result still holds (same generated text, surface, compiler and generator) costs nothing; one
whose key is in the result cache costs a lookup; the others become compiler jobs. Jobs are
compiled in batches by a background thread as soon as a batch is full, so the compiler runs
while the workers go on parsing; one batch at a time bounds memory.

Everything the compiler needs before the first batch (the compiler itself, the scripted
tools' declarations, the module surfaces and their strict check) is prepared when the first
trail is offered: a workspace without recordings never installs or starts a compiler.

The check's orchestrator opens the gate after the resolve stage, hands it each chunk of parsed
trails (`offer_parsed`), then the unchanged ones (`offer_unchanged`) and the modules it asked to
have generated again (`stale`), and takes its verdicts with `finish`: a `GateOutcome` holding
the record of every trail whose result changed. It closes the gate (`close`) however the run
ends.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from trailblaze import codes
from trailblaze.check.context import CheckContext
from trailblaze.check.resolve import Targets
from trailblaze.check.rows import TrailRecord
from trailblaze.check.typegate.compilation import compile_jobs
from trailblaze.check.typegate.jobs import GateOutcome, GateResult, Job
from trailblaze.check.typegate.orphans import modules_on_disk, remove_orphans
from trailblaze.check.typegate.preparation import NoCompiler, Prepared, prepare, tools_dirs
from trailblaze.check.typegate.reads import ReadFiles
from trailblaze.check.typegate.remoteverdicts import RemoteVerdicts
from trailblaze.check.typegate.settings import (
    BATCH_SIZE,
    TAIL_BATCH,
    infra_finding,
    timeout_seconds,
)
from trailblaze.check.workers import Parsed
from trailblaze.finding import Finding
from trailblaze.generate.linetable import unpack_lines
from trailblaze.state.keys import digest
from trailblaze.state.reads import record_reads
from trailblaze.state.results import ResultCache, ResultKey, open_results
from trailblaze.state.scratch import generated_name
from trailblaze.state.signing import trust_scope
from trailblaze.toolchain.compilers import (
    Compiler,
    compiler_location,
)

if TYPE_CHECKING:
    from trailblaze.check.phase import WorkspacePhase


class _Collected(msgspec.Struct):
    """What the run collects on its way to a `GateOutcome`."""

    failed: set[str] = msgspec.field(default_factory=set)
    infra: list[Finding] = msgspec.field(default_factory=list)
    findings: list[Finding] = msgspec.field(default_factory=list)
    stats: dict[str, Any] = msgspec.field(
        default_factory=lambda: {
            "compiler_runs": 0,
            "files_compiled": [],
            "cache_hits": 0,
            "decl_runs": 0,
            "batches": [],
            "primed_compiles": 0,  # batches a compiler started before the run checked
        }
    )


def batch_due(pending: int, to_come: int, *, compiler_free: bool) -> int:
    """How many of the `pending` jobs go to the compiler now (0: none yet), with `to_come`
    trails still to be parsed (0: the parse is over, `finish` compiles the rest).

    A full batch always goes, and half of one when the compiler is free (it starts sooner, and
    a compiler run's start-up is some 40 ms against 0.6 ms a trail). Near the end of the parse,
    once the compiler is free and what is pending is at least what is to come, a batch goes
    that ends about when the rest, pending when the parse ends, ends beside it on the core the
    workers leave (`TypeGate._submit_last`): half of what is pending, and as many as are still
    to be parsed (the compiler gets through about as many while they are).
    """
    if pending >= BATCH_SIZE or (compiler_free and pending >= BATCH_SIZE // 2):
        return pending
    if compiler_free and pending >= TAIL_BATCH and 0 < to_come <= pending:
        return max(TAIL_BATCH, min(pending, pending // 2 + to_come))
    return 0


SPLIT_MIN = 100
"""The fewest trails worth a compiler run of their own at the end (`beside_share`): its
start-up (some 40 ms) is what about 70 trails take."""


def beside_share(pending: int, left: float, rate: float | None) -> int:
    """How many of the `pending` jobs left when the parse ends go to the second compiler now,
    while the first is busy for about `left` seconds more: the rest queue behind the first, so
    that both end about together, each taking about `rate` seconds a trail. All of them when
    the rate is not known yet, or when the first's share would be too small for a run."""
    if rate is None or rate <= 0:
        return pending
    share = math.ceil((pending + left / rate) / 2)
    return pending if pending - share < SPLIT_MIN else share


class TypeGate:
    """One run of the type gate over a workspace's trails (see the module docstring)."""

    def __init__(
        self,
        ctx: CheckContext,
        targets: Targets,
        *,
        trailmap_dirs: Mapping[str, Path],
        seen: dict[str, os.stat_result | None] | None = None,
        phase: WorkspacePhase | None = None,
        prepared: Prepared | None = None,
        snapshot: Callable[[Prepared], Any] | None = None,
    ) -> None:
        self.ctx = ctx
        self._phase = phase
        """The caller's kept workspace phase: its preparation is reused, or made and kept."""
        self._given = prepared
        """A preparation kept by an earlier run (`check.keptphase`), taken instead of one made."""
        self._snapshot = snapshot
        self.snapshot: Any = None
        """What `snapshot` made of the preparation as soon as it was made (not a given one)."""
        self.root = ctx.ws.root
        self.layout = ctx.layout
        self.options = ctx.options
        self.catalog = ctx.catalog
        self.targets = targets.resolutions
        self.trailmap_dirs = dict(trailmap_dirs)
        self.store = ctx.store
        self.phase = ctx.timer.phase
        self.sdks: dict[str, str] = {}
        self.results: dict[str, TrailRecord] = {}
        """The records this run changed, by trail path."""
        self.collected = _Collected()
        self.offered: set[str] = set()
        self.stale: list[str] = []
        """Trails whose outcome came from the state but whose module must be generated again."""
        self._prepared = False
        self._ready: Prepared | NoCompiler | None = None
        self._compiler: Compiler | None = None
        self._toolchain_error: str | None = None
        self._toolchain_failed: list[str] = []
        """The trails not type-checked because there is no compiler: one finding says so."""
        self._toolchain_tools: list[str] = []
        """The trailmaps whose scripted tools were not compiled for the same reason."""
        self._broken: dict[str, str] = {}
        self._unresolved: dict[str, dict[str, str]] = {}
        self._surface_keys: dict[str, str] = {}
        self._base_key = ""
        self._options = ""
        self._compiler_key = ""
        self._keys: dict[str, ResultKey] = {}
        self._cache: ResultCache | None = None
        self._pending: list[Job] = []
        self._to_come = 0
        """Trails the parse has still to hand over (`expect`): the batches shrink as it ends."""
        self._jobs: list[Job] = []
        self._batches: list[Future[GateResult]] = []
        self._compiling = ThreadPoolExecutor(1, thread_name_prefix="tsc")
        self._beside: ThreadPoolExecutor | None = None
        self._queued: list[tuple[Future[GateResult], int]] = []
        """The first compiler thread's batches, each with its size."""
        self._running: tuple[float, int] | None = None
        """When the first compiler thread's batch began (`time.monotonic`), and its size."""
        self._rate: float | None = None
        """Seconds a trail of the first compiler thread's last finished batch took."""
        """The second compiler thread, for the batch left when the parse ends (`_submit_last`)."""
        self._timeout = timeout_seconds()
        self._remote: RemoteVerdicts | None = None
        self._reads: ReadFiles | None = None
        """What the compiles read beyond the inputs (`reads.py`), once prepared."""
        self._seen = seen
        """The caller's `os.stat` of the inputs taken before the run: the reads are added to
        it when the run could tell them as they were then (its no-op key covers them)."""
        self._on_disk: set[str] | None = None
        """The generated modules found on disk, looked for once, by the first trail whose
        verdict came from the state (its module must be there too, else it is generated again)."""

    # -- preparing ------------------------------------------------------------------------------

    def _prepare(self) -> None:
        if self._prepared:
            return
        self._prepared = True
        phase = self._phase
        ready = phase.prepared if phase is not None else self._given
        if ready is None:
            ready = prepare(
                self.ctx,
                self.targets,
                tools=tools_dirs(self.trailmap_dirs, self.targets),
                trailmap_dirs=self.trailmap_dirs,
                timeout=self._timeout,
                known=phase.known_reads if phase is not None else (),
            )
            if phase is not None:
                phase.prepared = ready
            if self._snapshot is not None and isinstance(ready, Prepared):
                self.snapshot = self._snapshot(ready)
        self._ready = ready
        if isinstance(ready, NoCompiler):
            # One finding for the run (in `finish`), not the same install error per trail and
            # per tools directory.
            self._toolchain_error = ready.error
            self._toolchain_tools = list(ready.tools)
            return
        self._compiler = ready.compiler
        self.sdks = ready.sdks
        decls = ready.declarations
        self.collected.stats["decl_runs"] = decls.runs
        for finding in decls.findings:
            if finding.kind == "infra":
                self.collected.infra.append(finding)
            else:
                # Fatal whatever the trailmap's exemption, as in the reference's typecheck phase:
                # an exemption is about recordings, not about the tools' own code.
                self.collected.findings.append(finding.with_(fatal=True))
        self._surface_keys = ready.surface_keys
        self._options = ready.options
        self._compiler_key = ready.compiler_key
        # Remote verdicts live on in the trail rows and the result cache: kept under the keys
        # that vouched for them (`signing.trust_scope`), never reused under others.
        scope = trust_scope(self.ctx.ws.remote_keys)
        self._base_key = digest(ready.base_key, scope) if scope else ready.base_key
        self._broken = ready.broken
        self._unresolved = ready.unresolved
        self._reads = ready.reads
        self._cache = open_results(self.layout, scope=scope)
        self._remote = RemoteVerdicts.open(self.options, self.ctx.ws.remote_keys)

    @property
    def preparation(self) -> Prepared | None:
        """The preparation this run made or took, once made; None without a compiler."""
        return self._ready if isinstance(self._ready, Prepared) else None

    @property
    def prepared(self) -> bool:
        """Whether the gate has prepared its compiler and surfaces (a trail was offered, or
        `verdict_keys` asked)."""
        return self._prepared

    def verdict_keys(self) -> str | None:
        """What every verdict of this run is keyed by besides its trail's module (the base key
        and each target's surface key), the gate prepared now if it was not; None when it
        cannot check (no compiler, a target whose surface is broken). `check.narrow` keeps a
        verdict of an earlier run only under the same keys."""
        if not self.options.typecheck:
            return "off"
        self._prepare()
        if self._toolchain_error is not None or self._broken or not self._base_key:
            return None
        return digest(self._base_key, *(f"{t}\0{k}" for t, k in sorted(self._surface_keys.items())))

    # -- offering trails ------------------------------------------------------------------------

    def eligible(self, record: TrailRecord) -> bool:
        """Whether the gate checks this trail: it parsed, has calls, and targets a surface."""
        return (
            self.options.typecheck
            and record.status != "rejected"
            and record.target in self.targets
            and record.calls > 0
        )

    def expect(self, trails: int) -> None:
        """The parse is about to hand over `trails` trails (`offer_parsed`), some of them maybe
        not eligible: near its end, each batch is half of what is left, so that the batch left
        to compile once the parse is over is small (`settings.TAIL_BATCH`)."""
        self._to_come += trails

    def offer_parsed(self, chunk: Sequence[Parsed]) -> None:
        """Freshly parsed trails: the eligible ones, with their generated modules."""
        self._to_come = max(0, self._to_come - len(chunk))
        for parsed in chunk:
            if parsed.module is not None and self.eligible(parsed.record):
                self.offer(parsed.record, parsed)

    def parsed_all(self) -> None:
        """Every changed trail has been offered: compile what is pending now, in the
        background, while the unchanged trails are looked at (ten thousand of them take longer
        than compiling the one trail an edit changed) and the report waits for `finish`."""
        if self._pending:
            self._submit_last()

    def offer_unchanged(self, records: Mapping[str, TrailRecord]) -> list[str]:
        """Every eligible trail not offered yet (its file did not change): its last result
        holds, or it is `stale`; the trails whose modules must be generated again."""
        offered = self.offered
        for rel, record in records.items():
            if rel not in offered and self.eligible(record):
                self.offer(record)
        return self.stale

    def offer(self, record: TrailRecord, parsed: Parsed | None = None) -> None:
        """An eligible trail, with its freshly generated module when it was parsed this run.

        A trail generated again (`stale`) may turn out to have nothing to check (its record
        was made by an older generator): it is not offered, and its old module is an orphan.
        """
        if parsed is not None and parsed.module is None:
            return
        self._prepare()
        rel = record.path
        target = record.target
        assert target is not None
        self.offered.add(rel)
        if self._toolchain_error is not None:
            self.collected.failed.add(rel)
            self.results[rel] = record.with_result(None, ())
            self._toolchain_failed.append(rel)
            return
        if target in self._broken:
            self._fail(
                record, f"type check could not run: {self._broken[target]}", code=codes.TYPEGATE
            )
            return
        surface_key = self._surface_keys[target]
        unresolved = self._unresolved.get(target)
        if parsed is None and unresolved:
            self.stale.append(rel)  # its calls must be looked at: regenerate its module
            return
        if parsed is not None and unresolved and self._unchecked_calls(record, parsed, unresolved):
            return
        if parsed is None:
            if (
                record.key is not None
                and record.surface_key == surface_key
                and record.base_key == self._base_key
                and self._module_on_disk(rel)
            ):
                self.collected.stats["cache_hits"] += 1
                return
            self.stale.append(rel)
            return
        assert parsed.module is not None
        assert parsed.lines is not None
        assert self._cache is not None
        key = self.result_key(parsed.module, surface_key)
        cached = self._cache.get(key)
        if cached is not None:
            self.collected.stats["cache_hits"] += 1
            self.results[rel] = record.with_result(key.digest, cached, surface_key, self._base_key)
            return
        self.results[rel] = record.with_result(None, (), surface_key, self._base_key)
        job = Job(
            path=rel,
            trailmap=target,
            file=self.layout.trail_file(rel),
            lines=parsed.lines,
            key=key.digest,
            lints=parsed.lints,
        )
        self._keys[rel] = key
        self._pending.append(job)
        free = not self._batches or self._batches[-1].done()
        due = batch_due(len(self._pending), self._to_come, compiler_free=free)
        if due:
            self._submit(count=due)

    def _module_on_disk(self, rel: str) -> bool:
        """Whether the trail's generated module is on disk: a verdict from the state stands for
        a module that a run with the gate off, or a person, may have removed since."""
        if self._on_disk is None:
            self._on_disk = modules_on_disk(self.layout)
        name = generated_name(rel)
        if name in self._on_disk:
            return True
        self._on_disk.add(name)  # it is generated again, before the run ends
        return False

    def _unchecked_calls(
        self, record: TrailRecord, parsed: Parsed, unresolved: Mapping[str, str]
    ) -> bool:
        """Report each call of the trail to a tool whose input type is unresolved; whether any.

        Such a trail is not compiled and never cached: checked against `any`, it would pass.
        """
        assert parsed.lines is not None
        rel = record.path
        seen: set[tuple[int, int, str]] = set()
        found: list[Finding] = []
        for gen in sorted(unpack_lines(parsed.lines).values(), key=lambda g: (g.line, g.column)):
            reason = unresolved.get(gen.tool)
            where = (gen.line, gen.column, gen.tool)
            if reason is None or where in seen or gen.property is not None:
                continue  # one per call: its property lines are the same call
            seen.add(where)
            found.append(
                Finding(
                    "infra",
                    rel,
                    gen.line,
                    gen.column,
                    f"not type-checked: input type of `{gen.tool}` unresolved ({reason})",
                    code=codes.UNRESOLVED_INPUT,
                    fatal=False,
                    step=gen.step,
                    classifier=gen.classifier,
                    tool=gen.tool,
                    trailmap=record.target,
                    position=gen.position,
                )
            )
        if not found:
            return False
        self.collected.failed.add(rel)
        self.results[rel] = record.with_result(None, ())
        self.collected.infra.extend(found)
        return True

    def result_key(self, module: str, surface_key: str) -> ResultKey:
        """The key of a trail's verdict (see `results.ResultKey`): `module` is the digest of its
        generated module and file content (`batch`), then its surface, the compiler, the
        options. Its `digest` addresses the verdict in the local and the remote cache."""
        return ResultKey(
            trail=module, surface=surface_key, compiler=self._compiler_key, options=self._options
        )

    def _fail(self, record: TrailRecord, reason: str, *, code: str) -> None:
        self.collected.failed.add(record.path)
        self.results[record.path] = record.with_result(None, ())
        self.collected.infra.append(infra_finding(record.path, reason, record.target, code=code))

    def _submit(
        self, *, parsing: bool = True, count: int | None = None, beside: bool = False
    ) -> None:
        """Compile the pending jobs (the first `count` of them) in the background; `parsing`:
        the workers still need the cores; `beside`: on the second compiler thread, while the
        first is busy (`_submit_last`)."""
        cut = len(self._pending) if count is None else count
        batch, self._pending = self._pending[:cut], self._pending[cut:]
        if not batch:
            return
        assert self._compiler is not None
        self._jobs.extend(batch)
        self.collected.stats["batches"].append(len(batch))
        if self._phase is not None and self._phase.compile is not None:
            # A warm compiler answers in milliseconds, on this thread: no thread of ours is
            # started to wait for it.
            done: Future[GateResult] = Future()
            try:
                done.set_result(self._compile(batch, parsing))
            except BaseException as exc:  # raised again by `finish`, as a batch's would be
                done.set_exception(exc)
            self._batches.append(done)
            return
        if beside:
            if self._beside is None:
                self._beside = ThreadPoolExecutor(1, thread_name_prefix="tsc-beside")
            self._batches.append(self._beside.submit(self._compile, batch, parsing))
        else:
            future = self._compiling.submit(self._compile, batch, parsing, timed=True)
            self._batches.append(future)
            self._queued.append((future, len(batch)))

    def _submit_last(self) -> None:
        """What is pending once the parse is over. When the compiler thread is still busy with
        a batch it started during the parse (on one core), the rest is compiled beside it, on
        the core the workers have left, not queued behind it (all of it, or as much as ends
        about when the first thread, given the rest, does: `beside_share`); else with every
        core."""
        busy = bool(self._batches) and not self._batches[-1].done()
        if busy and self._pending:
            running, rate = self._running, self._rate
            left = 0.0
            if running is not None and rate is not None:
                left = max(0.0, running[0] + rate * running[1] - time.monotonic())
                # ... and the batches queued behind the one it is compiling.
                left += rate * sum(n for f, n in self._queued if not (f.running() or f.done()))
            self._submit(
                parsing=True, beside=True, count=beside_share(len(self._pending), left, rate)
            )
            self._submit(parsing=True)
        else:
            self._submit(parsing=False)

    def _compile(self, batch: list[Job], parsing: bool, *, timed: bool = False) -> GateResult:
        """One batch: what the remote cache holds, then the compiler for the rest (in the
        background thread, so the remote is asked while the workers parse). `timed`: a batch
        of the first compiler thread, whose pace `_submit_last` goes by."""
        assert self._compiler is not None
        remote = self._remote
        hits = remote.fetch(batch) if remote is not None else {}
        batch = [job for job in batch if job.path not in hits]
        began = time.monotonic()
        if timed:
            self._running = (began, len(batch))
        warm = self._phase.compile if self._phase is not None else None
        if not batch:
            result = GateResult()
        elif warm is not None:
            assert isinstance(self._ready, Prepared)
            result = warm(batch, self._ready)
        else:
            primed = self.ctx.primed if self._phase is None else None
            checked = primed(batch, self._compiler) if primed is not None else None
            if checked is not None:
                self.collected.stats["primed_compiles"] += 1
                result = checked
            else:
                result = compile_jobs(
                    batch,
                    self._compiler,
                    self.layout,
                    timeout=self._timeout,
                    single_threaded=parsing,
                )
        if timed and len(batch) >= SPLIT_MIN:
            self._rate = (time.monotonic() - began) / len(batch)
        if remote is not None and batch and self._covered(result):
            remote.store(batch, result)
        result.findings.update(hits)
        return result

    def _covered(self, result: GateResult) -> bool:
        """Whether the result keys cover everything the batch read, as it was when they were
        made: else no verdict of the run may be cached under them."""
        return self._reads is not None and self._reads.covers(result.listed)

    # -- finishing ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the result cache (a SQLite connection, open from the first trail offered).
        `finish` does once the run's verdicts are stored; the check closes the gate on every
        path too, so a run that fails in between (the compile thread crashed, an interrupt)
        leaves no connection behind."""
        if self._cache is not None:
            self._cache.close()

    def _orphans_possible(self, keep: AbstractSet[str], *, trails_changed: bool) -> bool:
        """Whether modules of trails not in `keep` may be on disk.

        The modules on disk are those of the last run's trails: a change in that set (or a
        state that was lost, which reads as "every trail is new") leaves orphans, and so does a
        trail that stopped being checked while the gate was off (more modules than trails). A
        run with the gate off leaves the modules alone: the next run with it on reuses them.
        """
        if not self.options.typecheck:
            return False
        if trails_changed:
            return True
        if self.options.shard is not None:
            return False  # the other shards' modules are not orphans
        if self._on_disk is None:
            self._on_disk = modules_on_disk(self.layout)
        # Every trail in `keep` has its module on disk by now, so more modules are orphans.
        return len(self._on_disk) > len(keep)

    def _remove_orphans(
        self, keep_generated: AbstractSet[str], *, trails_changed: bool, orphans: bool
    ) -> int:
        """Remove the generated modules of trails not in `keep_generated` (`finish`): how many."""
        phase = self._phase
        if phase is not None and self.options.typecheck and phase.generated == keep_generated:
            return 0  # the last run of the phase left these alone
        removed = (
            remove_orphans(self.layout, keep_generated)
            if orphans and self._orphans_possible(keep_generated, trails_changed=trails_changed)
            else 0
        )
        if phase is not None and self.options.typecheck and self.options.shard is None:
            phase.generated = frozenset(keep_generated)
        return removed

    def finish(
        self, *, keep_generated: AbstractSet[str], trails_changed: bool, orphans: bool = True
    ) -> GateOutcome:
        """Compile what is left, wait for every batch, and record the results.

        `keep_generated`: the trails whose generated modules stay on disk; `trails_changed`:
        whether that set may differ from the last run's (else no orphan is looked for);
        `orphans` False: none is looked for (a run of some trails only, `check.narrow`).
        """
        if (
            self.options.typecheck
            and not self._prepared
            and tools_dirs(self.trailmap_dirs, self.targets)
        ):
            # No trail was offered, but authored tools are compiled all the same.
            self._prepare()
        self._submit_last()
        results: list[GateResult] = []
        reads = self._reads
        with self.phase("compile"):
            try:
                # Every module is on disk by now, and no compile reads another's: the orphans
                # go while the last batches compile.
                removed = self._remove_orphans(
                    keep_generated, trails_changed=trails_changed, orphans=orphans
                )
                for future in self._batches:
                    result = future.result()
                    if reads is not None:
                        reads.observe(result.listed, 0)  # none new, else no verdict is cached
                    results.append(result)
            finally:
                self._compiling.shutdown(wait=True)
                if self._beside is not None:
                    self._beside.shutdown(wait=True)
        outcome = self.collected
        if self._toolchain_error is not None and (self._toolchain_failed or self._toolchain_tools):
            what = [f"{len(self._toolchain_failed)} trail(s)"] if self._toolchain_failed else []
            if self._toolchain_tools:
                what.append(f"the scripted tools of {len(self._toolchain_tools)} trailmap(s)")
            outcome.infra.append(
                infra_finding(
                    compiler_location(),
                    f"type check could not run for {' and '.join(what)}: {self._toolchain_error}",
                    None,
                    code=codes.TOOLCHAIN,
                )
            )
        by_path = {job.path: job for job in self._jobs}
        stored: list[tuple[ResultKey, list[Finding]]] = []
        # A warm compiler lists no files (`warm.py`): what it read is not told, so none of
        # its verdicts goes into the result cache.
        covered = (
            reads is not None
            and reads.covered
            and reads.unchanged()
            and not any(result.unlisted for result in results)
        )
        for result in results:
            outcome.failed |= result.failed
            outcome.infra.extend(result.infra)
            outcome.stats["compiler_runs"] += result.compiler_runs
            outcome.stats["files_compiled"].extend(result.files_compiled)
            for path, findings in result.findings.items():
                job = by_path[path]
                stored.append((self._keys[path], findings))
                # A verdict whose reads the keys did not cover is reported, and checked again
                # by the next run (no surface key of a run matches None).
                surface_key = self._surface_keys[job.trailmap] if covered else None
                self.results[path] = self.results[path].with_result(
                    job.key, findings, surface_key, self._base_key
                )
        # A job with neither a result nor a failure was not checked: never a silent pass.
        answered = set().union(*(r.findings for r in results))
        for job in self._jobs:
            if job.path not in outcome.failed and job.path not in answered:
                self._fail(
                    self.results[job.path],
                    "type check could not run: the compiler gave no result",
                    code=codes.TYPEGATE,
                )
        if self._cache is not None:
            if covered:
                self._cache.put_many(stored)
            self.close()
        if reads is not None:
            recorded = reads.record()
            if self._phase is None:  # a run with a phase writes nothing to the state (`run`)
                record_reads(self.store, recorded)
            outcome.stats["compile_reads"] = len(recorded)
            outcome.stats["reads_covered"] = covered
            if covered and self._seen is not None:
                # Each unchanged since before its compile began (`ReadFiles`): as good as a stat
                # taken before the run. One the caller took itself is kept.
                for path, (_, st) in recorded.items():
                    self._seen.setdefault(path, st)
        if self._remote is not None:
            outcome.stats.update(self._remote.close())
        outcome.stats["removed"] = removed
        return GateOutcome(
            records=self.results,
            failed=frozenset(outcome.failed),
            infra=tuple(outcome.infra),
            findings=tuple(outcome.findings),
            stats=outcome.stats,
            sdks=dict(sorted(self.sdks.items())),
        )
