"""The check: a flat sequence of stages, called one after another from `run_check`.

`run_check` is what `trailblaze check`, the doit `check` task and the monorepo runner call. It
returns a `Report` (data); rendering and the exit code are the caller's business.

    discover   (discover.py)      scan, shard, manifests, bundled trailmaps      -> Discovery
    resolve    (resolve.py)       every target's tool model and exemption        -> Targets
    surfaces   (surfaces.py)      each target's tools/ artifacts, the SDK        -> findings
    parse      (parse.py)         every trail's record, from the state or parsed -> Trails
    type gate  (typegate/gate.py) generated modules compiled, verdicts mapped    -> GateOutcome
    tests      (unittests/)       each trailmap's *.test.ts run with bun, cached -> TestOutcome
    report     (report.py)        statuses and findings                          -> Report

Each stage takes the run's `CheckContext` and the records of the stages before it; no stage
calls another. The parse and type gate stages overlap: the gate is opened before the parse and
is handed each chunk of parsed trails as it arrives, so the compiler starts on the first full
batch while the workers parse the rest.

Incremental at the level of single trails: the state store remembers, for every trail, its file
stat and content hash, its parse outcome, and the key and findings of its last type check. A
trail whose file and surface did not change is neither re-read nor re-parsed nor re-generated;
a trail whose key is in the result cache costs no compiler work.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from trailblaze.check import keptphase, narrow
from trailblaze.check.context import CheckContext, PrimedCompile, Progress, Timer
from trailblaze.check.discover import Discovery, Stats, discover
from trailblaze.check.parse import Begun, Parser, Trails
from trailblaze.check.phase import Stages, WorkspacePhase
from trailblaze.check.report import Checked, report
from trailblaze.check.resolve import Targets, resolve
from trailblaze.check.rows import TrailRecord, TrailState
from trailblaze.check.surfaces import write_artifacts
from trailblaze.check.typegate.gate import TypeGate
from trailblaze.check.typegate.jobs import GateOutcome
from trailblaze.check.typegate.preparation import Prepared, tools_dirs
from trailblaze.check.unittests.phase import run_unit_tests
from trailblaze.finding import Finding
from trailblaze.options import CheckOptions
from trailblaze.report.record import REASON_INFRA, Report
from trailblaze.state.gcpause import gc_paused
from trailblaze.state.reads import add_reads
from trailblaze.state.scratch import Layout, prepare_scratch
from trailblaze.state.store import STATS, Store
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.workspace import Scan, Workspace, scan
from trailblaze.yaml.schema import remembering


def last_stats(scratch: Path) -> dict[str, Any]:
    """The stats of the last check of this scratch directory; {} when there are none."""
    with Store.open(scratch) as store:
        return store.get(STATS) or {}


def run_check(
    ws: Workspace,
    options: CheckOptions,
    *,
    progress: Progress | None = None,
    found: Scan | None = None,
    stats: Stats | None = None,
    texts: Mapping[str, bytes] | None = None,
    phase: WorkspacePhase | None = None,
    listed: Sequence[str] | None = None,
    primed: PrimedCompile | None = None,
) -> Report:
    """Check the workspace.

    `found` is its scan and `stats` the `os.stat` of its files (None: missing) when the caller
    has just made them; anything not in `stats` is looked at again. The type gate adds the
    files its compilers read beyond the inputs, when it could tell them as they were before
    the run (`typegate/reads.py`): the caller's no-op key covers them too. `texts` gives the
    content of trail files by path (`CheckContext.texts`: an editor's unsaved buffers).
    `phase` keeps the workspace's stages for the next runs of a caller that knows their inputs
    did not change (`phase.py`: the language server); the command line gives none.
    `listed` is `check_inputs(found, ...)` when the caller listed it for its own key: the
    narrow check's key takes the inputs from it (`narrow.inputs_key`) instead of listing them
    again. `primed` is a compiler the caller started before the run (`typegate.primed`): the
    type gate gives it its batches first (a run given a `phase` uses the phase's).
    """
    # The run builds tens of thousands of long-lived objects (records, findings, statuses) and
    # no reference cycles worth collecting: the cyclic collector's passes over them cost a
    # fifth of a one-trail check of a large workspace and free nothing.
    with gc_paused():
        layout = Layout(ws.scratch, home=ws.home_scratch)
        prepare_scratch(ws.scratch)  # a file in its place: every write below would fail
        with Store.open(layout) as store:
            ctx = CheckContext(
                ws=ws,
                options=options,
                layout=layout,
                store=store,
                catalog=load_catalog(),
                timer=Timer(),
                progress=progress,
                texts=texts or {},
                primed=primed,
            )
            return _stages(
                ctx,
                found=found,
                stats=stats if stats is not None else {},
                phase=phase,
                listed=listed,
            )


def _stages(
    ctx: CheckContext,
    *,
    found: Scan | None,
    stats: Stats,
    phase: WorkspacePhase | None,
    listed: Sequence[str] | None = None,
) -> Report:
    """The stages, in order (see the module docstring)."""
    options = ctx.options
    # A shard's discovery is about its trails: a kept one would be another shard's.
    kept = phase.stages if phase is not None and options.shard is None else None
    keys: tuple[str, str, str] | None = None
    """The record's keys (`narrow.py`): the inputs, the generated files' places, the trails."""
    inputs = ""
    want = narrow.wanted(ctx, shard=options.shard is not None, phase=phase is not None)
    if want:
        if found is None:
            listed = None  # the caller's list is of its scan
            with ctx.timer.phase("scan"):
                found = scan(ctx.ws)
        with ctx.timer.phase("narrow"):
            inputs = narrow.inputs_key(ctx, found, stats, listed)
    if want and found is not None and kept is None:
        # The stages and the preparation the last recording check kept (`keptphase.py`), for
        # a narrow run only: a full check builds its own, as a run without them does.
        with ctx.timer.phase("kept phase"):
            stored = keptphase.load(ctx, inputs)
        if stored is not None:
            done = _narrow_kept(ctx, found, stats, inputs, stored)
            if done is not None:
                return done
    early: tuple[Parser, Begun] | None = None
    """The parse of a full run, started before its surfaces are written (`_parse_early`)."""
    early_state: TrailState | None = None
    try:
        if kept is None:
            with remembering(ctx.store):
                discovery = discover(ctx, found=found, stats=stats)
                targets = resolve(ctx, discovery)
                if not (want and narrow.recorded(ctx, inputs)):
                    # No narrow run can follow (nothing recorded under these inputs): the full
                    # stages' parse starts now, beside the surfaces.
                    early, early_state = _parse_early(
                        ctx, targets, discovery, phase=phase, stats=stats
                    )
                artifacts = write_artifacts(ctx, targets)
            if phase is not None:
                phase.stages = Stages(discovery, targets, artifacts)
            if want:
                with ctx.timer.phase("narrow"):
                    keys = (
                        inputs,
                        narrow.outputs_key(discovery.found, targets),
                        narrow.trails_key(discovery.found),
                    )
                    plan = narrow.plan(
                        ctx, discovery.found, stats, inputs=keys[0], outputs=keys[1], trails=keys[2]
                    )
                if plan is not None:
                    done = _narrow(
                        ctx,
                        Stages(discovery, targets, artifacts),
                        stats=stats,
                        plan=plan,
                        keys=keys,
                    )
                    if done is not None:
                        return done
        else:
            # The trails of this run, with the workspace's trailmaps as the phase found them.
            if found is None:
                with ctx.timer.phase("scan"):
                    found = scan(ctx.ws)
            discovery = msgspec.structs.replace(
                kept.discovery, whole=found, found=found, positions=()
            )
            targets, artifacts = kept.targets, kept.artifacts

        if ctx.primed is not None:
            # The full stages: their batches are many trails each, for new compiler processes
            # with every core; the server started for a narrow run would only take a core.
            ctx.primed.close()
        if early_state is not None:
            state = early_state
        else:
            with ctx.timer.phase("state load"):
                # A run given a phase (the language server's, on an editor's buffers) neither
                # reads nor writes the trail records: a buffer's record stands for no file on
                # disk, and its verdict (a warm compile's) is never cached; the state stays the
                # last command's.
                state = TrailState() if phase is not None else TrailState.load(ctx.store)
        # Closed on every path: the gate holds the result cache open from the first trail offered.
        seen = stats if isinstance(stats, dict) else None  # the caller's, to be added to
        gate = TypeGate(
            ctx,
            targets,
            trailmap_dirs=discovery.manifests.dirs,
            seen=seen,
            phase=phase,
            snapshot=_snapshot(ctx, Stages(discovery, targets, artifacts))
            if keys is not None
            else None,
        )
        with contextlib.closing(gate):
            parser, trails = _offer_trails(
                ctx,
                targets,
                gate,
                discovery.found.trail_paths,
                state=state,
                stats=stats,
                early=early,
            )
            records = trails.records
            previously = {p for p, r in state.trails.items() if r.surface_key is not None}
            # A shard keeps the generated modules of the other shards' trails (the next run may be
            # another shard of the same workspace).
            verdicts = gate.finish(
                keep_generated=gate.offered,
                trails_changed=options.shard is None and previously != gate.offered,
            )
        checked = _checked(
            ctx,
            discovery,
            targets,
            artifacts=artifacts,
            records=records,
            verdicts=verdicts,
            parser=parser,
            trails=trails,
        )
        run_stats = checked.stats
        result = report(ctx, checked)
        if phase is None:
            _save(ctx, state, records, run_stats)
        if keys is not None and len(records) == len(discovery.found.trail_paths):
            # (Not when two files have one report path: the record follows the files.)
            recorded = _record(
                ctx,
                result,
                gate,
                keys,
                stamps=[records[s.path].stamp for s in result.trails],
                branches={p: r.branches for p, r in records.items()},
            )
            if recorded:
                _keep(ctx, keys[0], Stages(discovery, targets, artifacts), gate)
        return result
    finally:
        _close(early)  # the workers of an early parse, when the run ends before taking them


def _snapshot(
    ctx: CheckContext, stages: Stages
) -> Callable[[Prepared | None], keptphase.Snapshot | None]:
    """What the gate calls once it made its preparation: the stamps a kept phase is kept under,
    taken then (`keptphase.snapshot`)."""

    def take(prepared: Prepared | None) -> keptphase.Snapshot | None:
        with ctx.timer.phase("kept phase"):
            try:
                return keptphase.snapshot(ctx, stages.discovery.found, stages, prepared)
            except OSError:
                return None  # nothing is kept: the next one-edit check builds its own

    return take


def _keep(ctx: CheckContext, inputs: str, stages: Stages, gate: TypeGate) -> None:
    """Keep the stages and the preparation of a run that recorded, for the next narrow run."""
    if ctx.options.typecheck:
        prepared, taken = gate.preparation, gate.snapshot
    else:  # nothing prepared: the stamps are taken now
        prepared = None
        taken = _snapshot(ctx, stages)(None)
    with ctx.timer.phase("kept phase"):
        keptphase.save(ctx, inputs=inputs, stages=stages, prepared=prepared, taken=taken)


def _checked(
    ctx: CheckContext,
    discovery: Discovery,
    targets: Targets,
    *,
    artifacts: tuple[Finding, ...],
    records: dict[str, TrailRecord],
    verdicts: GateOutcome,
    parser: Parser,
    trails: Trails,
    narrow: bool = False,
) -> Checked:
    """What the stages found, for the report: the gate's verdicts merged into the trails'
    records, and the tools' unit tests run (their reads recorded)."""
    records.update(verdicts.records)
    tests = run_unit_tests(ctx, discovery)
    if tests.reads:
        add_reads(ctx.store, tests.reads)
    run_stats: dict[str, Any] = {**verdicts.stats, **parser.stats(), **tests.stats}
    if narrow:
        run_stats["narrow"] = len(records)
    run_stats["seconds"] = ctx.timer.seconds
    return Checked(
        discovery=discovery,
        targets=targets,
        artifacts=artifacts,
        records=records,
        gate=verdicts,
        tests=tests,
        stats=run_stats,
        real_paths=trails.real_paths,
    )


def _parse_early(
    ctx: CheckContext,
    targets: Targets,
    discovery: Discovery,
    *,
    phase: WorkspacePhase | None,
    stats: Stats,
) -> tuple[tuple[Parser, Begun] | None, TrailState | None]:
    """The parse of a full run (no narrow run will do), started before the surfaces are
    written: a cold check of ten thousand trails spent its first 0.3 s writing them with one
    core idle. Its workers need the targets' schemas only; their results are taken and offered
    to the type gate as before (`_offer_trails`). Not for a language server's run (its phase)
    or an editor's buffers: those parse a trail or two."""
    if phase is not None or ctx.texts:
        return None, None
    if ctx.primed is not None:
        ctx.primed.close()  # see `_stages`: closed before the workers fork, as it always was
    with ctx.timer.phase("state load"):
        state = TrailState.load(ctx.store)
    parser = Parser(ctx, targets)
    begun = parser.begin(discovery.found.trail_paths, old=state.trails, stats=stats, start=True)
    return (parser, begun), state


def _close(early: tuple[Parser, Begun] | None) -> None:
    """Stop an early parse's workers when its results were not taken (idempotent)."""
    if early is not None:
        early[1].close()


def _offer_trails(
    ctx: CheckContext,
    targets: Targets,
    gate: TypeGate,
    paths: Sequence[str],
    *,
    state: TrailState,
    stats: Stats,
    early: tuple[Parser, Begun] | None = None,
) -> tuple[Parser, Trails]:
    """The trails parsed and generated, each offered to the type gate as it comes (a changed
    one as soon as it is parsed, so the compiler starts early), the unchanged ones after, and
    those whose generated module is stale made again. `early`: the parse begun already."""
    with ctx.timer.phase("trails"):
        if early is not None:
            parser, begun = early
            trails = parser.finish(begun, gate.offer_parsed, gate.expect)
        else:
            parser = Parser(ctx, targets)
            trails = parser.trails(
                paths,
                old=state.trails,
                stats=stats,
                on_parsed=gate.offer_parsed,
                on_count=gate.expect,
            )
    records = trails.records
    gate.parsed_all()
    stale = gate.offer_unchanged(records)
    with ctx.timer.phase("regenerate"):
        for parsed in parser.regenerate(stale, records):
            records[parsed.record.path] = parsed.record
            gate.offer(parsed.record, parsed)
    return parser, trails


def _record(
    ctx: CheckContext,
    result: Report,
    gate: TypeGate,
    keys: tuple[str, str, str],
    *,
    stamps: Sequence[str | None],
    branches: Mapping[str, Sequence[tuple[str, int, int]]],
) -> bool:
    """The record of a complete check for the next run (`narrow.py`), when every verdict of
    it is keyed (the gate prepared; the files its compilers read covered); whether it was
    made."""
    if not result.complete or result.stats.get("reads_covered", True) is not True:
        return False
    if ctx.options.typecheck and not gate.prepared:
        return False  # a run that prepared no gate has no keys to compare the next run's with
    gate_keys = gate.verdict_keys()
    if gate_keys is None:
        return False
    inputs, outputs, trails = keys
    with ctx.timer.phase("narrow"):
        narrow.record(
            ctx,
            result,
            stamps,
            branches,
            inputs=inputs,
            outputs=outputs,
            trails=trails,
            gate=gate_keys,
        )
    return True


def _narrow_kept(
    ctx: CheckContext, found: Scan, stats: Stats, inputs: str, stored: keptphase.Kept
) -> Report | None:
    """A narrow run on the kept stages and preparation (`keptphase.py`); None when this run is
    not narrow under them (the stages are built, as a run without them does)."""
    kept = stored.stages
    # The trails of this run, with the workspace's trailmaps as the kept stages found them.
    discovery = msgspec.structs.replace(kept.discovery, whole=found, found=found, positions=())
    stages = Stages(discovery, kept.targets, kept.artifacts)
    with ctx.timer.phase("narrow"):
        keys = (inputs, narrow.outputs_key(found, kept.targets), narrow.trails_key(found))
        plan = narrow.plan(ctx, found, stats, inputs=keys[0], outputs=keys[1], trails=keys[2])
    if plan is None:
        return None
    return _narrow(ctx, stages, stats=stats, plan=plan, keys=keys, kept=stored)


def _narrow(
    ctx: CheckContext,
    stages: Stages,
    *,
    stats: Stats,
    plan: narrow.Narrow,
    keys: tuple[str, str, str],
    kept: keptphase.Kept | None = None,
) -> Report | None:
    """The stages for the changed trails only, merged into the last complete check's report
    (`narrow.py`); None when the last check's verdicts do not hold under this run's keys (the
    full stages run instead). `kept`: the stages and the preparation are a kept phase's."""
    discovery, targets, artifacts = stages.discovery, stages.targets, stages.artifacts
    seen = stats if isinstance(stats, dict) else None
    gate = TypeGate(
        ctx,
        targets,
        trailmap_dirs=discovery.manifests.dirs,
        seen=seen,
        prepared=kept.prepared if kept is not None else None,
        snapshot=_snapshot(ctx, stages) if kept is None else None,
    )
    with contextlib.closing(gate):
        if gate.verdict_keys() != plan.record["gate"]:
            return None
        with ctx.timer.phase("state load"):
            state = narrow.load_state(ctx, plan)
        if state is None:
            return None
        parser, trails = _offer_trails(ctx, targets, gate, plan.changed, state=state, stats=stats)
        records = trails.records
        with ctx.timer.phase("narrow"), _yielding():
            previous = narrow.read_previous(plan)  # while the changed trails compile
        # The other trails keep their modules: a full check removes the orphans.
        verdicts = gate.finish(keep_generated=gate.offered, trails_changed=False, orphans=False)
    if previous is None:
        return None
    checked = _checked(
        ctx,
        discovery,
        targets,
        artifacts=artifacts,
        records=records,
        verdicts=verdicts,
        parser=parser,
        trails=trails,
        narrow=True,
    )
    run_stats = checked.stats
    run_stats["kept_phase"] = kept is not None
    partial = report(ctx, checked)
    with ctx.timer.phase("report"):
        result, stamps, branches = narrow.merge(
            ctx, plan, previous, partial, records, discovery=discovery, targets=targets
        )
    if (
        ctx.options.typecheck
        and not any(s.status == "type-checked" or s.reason == REASON_INFRA for s in result.trails)
        and not tools_dirs(discovery.manifests.dirs, targets.resolutions)
    ):
        # No trail left to check and no tools: a full check would prepare no gate (and name
        # no SDK); this run did.
        return None
    _save(ctx, state, records, run_stats)
    recorded = _record(ctx, result, gate, keys, stamps=stamps, branches=branches)
    if recorded and kept is None:
        _keep(ctx, keys[0], stages, gate)
    return result


@contextlib.contextmanager
def _yielding() -> Iterator[None]:
    """Python work on this thread that lets the compile thread have the interpreter within a
    fraction of a millisecond: that thread needs it a few times to start the compiler, and at
    the interpreter's usual switch interval (5 ms) it waited for the whole of this work, with
    the compiler not started yet (measured: 12 ms of a one-edit check)."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, 0.0002))
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def _save(
    ctx: CheckContext, state: TrailState, records: dict[str, TrailRecord], run_stats: dict[str, Any]
) -> None:
    """Every changed record and memo of the run in one transaction, then the run's stats."""
    if ctx.options.shard is not None:
        # The other shards' trails keep their records: they are still in the workspace.
        others = {p: r for p, r in state.trails.items() if p not in records}
        state.trails = {**others, **records}
    else:
        state.trails = records
    with ctx.timer.phase("state"):
        state.save(ctx.store)  # the records that changed, not all of them
        ctx.store.commit()  # with every memo the run staged, in one transaction
    # After the phase, so that it has the state's time too (`seconds` is the timer's own dict,
    # which the report's stats share).
    ctx.store.put(STATS, "", run_stats)
    ctx.store.commit()
