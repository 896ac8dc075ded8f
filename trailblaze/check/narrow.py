"""One edit, narrowly: a check of only the trails changed since the last complete check,
merged into that check's report.

A complete check of a whole workspace (`record`) keeps the per-trail part of its report in
`Layout.last_run`: every trail's status in scan order, the findings at a trail's path, and each
trail's runIf branches. Beside it, in the store (`LAST_RUN`, vouching for that file), what the
report was made of:

- `inputs`: a digest of every input but the trails (each trailmap's manifest and tool files,
  the baked targets and installed packages' trailmaps, the files the compilers read beyond them, as the store records them, all by stamp), of the
  options, the compilers and test runner the environment names, the workspace's settings and
  our own code;
- `outputs`: the generated files' places (`outputs_state`, as the run left them) and the
  targets the run resolved (which names a trail may target, which have a surface);
- `trails`: the list of trail paths, in scan order;
- `rows`: the generation of the trail rows as the run saved them (`Store.trails_generation`:
  any later write of a row, by any run, replaces it);
- `gate`: the type gate's keys (`TypeGate.verdict_keys`: the compiler and every surface).

A check whose record matches in all of these (`plan`) looks at each trail's stamp against its
row: the trails whose stamp changed are checked as every check checks them (parsed, generated,
compiled), the others keep their status and findings from the record. With none changed (the
other entry point checked since, or another output format is asked for), the run checks no
trail and reports the record's verdicts. What a check says of one
trail depends on that trail and on the inputs above, except two findings about several trails
at once, which are worked out again over all of them: a runIf branch recorded in several trails
and the number of trails whose target has no surface. Workspace findings (manifests, tool
files, unit tests) come from this run's own stages, which run in full.

Anything else (a trail added, removed or renamed, a tool file or manifest edited, other options,
a record missing or unreadable, a run of a shard, of an editor's buffers, with a remote cache)
is a full check, which records again.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import stat
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from trailblaze import __version__, codes
from trailblaze.check.context import CheckContext
from trailblaze.check.crosstrail import repeated_branches
from trailblaze.check.discover import Discovery, Stats
from trailblaze.check.report import sorted_findings, surfaceless
from trailblaze.check.resolve import Targets
from trailblaze.check.rows import TrailRecord, TrailState
from trailblaze.finding import Finding
from trailblaze.fsutil import stamp_of
from trailblaze.generate.owners import outputs_state
from trailblaze.options import unit_test_env
from trailblaze.report.record import Report, TrailStatus
from trailblaze.state.keys import code_stamps_digest, digest, stamped_digest
from trailblaze.state.reads import recorded_paths
from trailblaze.state.scratch import write_scratch
from trailblaze.state.store import Kind
from trailblaze.toolchain.bun import BUN_ENV
from trailblaze.toolchain.compilers import TSC_ENV
from trailblaze.toolmodel.sources import check_inputs
from trailblaze.workspace import Scan

RECOMPUTED = frozenset({codes.RUNIF_REPEATED, codes.NO_SURFACE})
"""The codes of findings about several trails at once: worked out again over all of them."""

_FORMAT = 1


def _last_run(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or value.get("format") != _FORMAT:
        raise ValueError("not a record of the last run")
    for name in ("inputs", "outputs", "trails", "rows", "gate"):
        if not isinstance(value.get(name), str):
            raise ValueError(f"a record of the last run without {name}")
    return value


LAST_RUN: Kind[dict[str, Any]] = Kind("last-run", _last_run)
"""What the per-trail record in `Layout.last_run` was made of (see the module docstring)."""


def wanted(ctx: CheckContext, *, shard: bool, phase: bool) -> bool:
    """Whether this run may be narrow, or record for the next: a check of the whole workspace
    from its files (not an editor's buffers, not a shard, not a kept phase, no remote cache)."""
    options = ctx.options
    return not (shard or phase or ctx.texts or options.remote_cache or options.rerun_tests)


def inputs_key(
    ctx: CheckContext, found: Scan, stats: Stats, listed: Sequence[str] | None = None
) -> str:
    """`inputs` of the record (module docstring), the stamps as `stats` holds them (taken
    before the run) or as they are now. `listed` is `check_inputs(found, ...)` when the
    caller listed it for its own key (the command line's no-op, doit's digest): its inputs
    after the trails are this key's, not listed a second time."""
    options = ctx.options
    header = json.dumps(
        {
            "options": dataclasses.asdict(options),
            "tsc": os.environ.get(TSC_ENV, ""),
            "bun": os.environ.get(BUN_ENV, ""),
            "test_env": unit_test_env(),
            "settings": ctx.ws.settings,
            "remote_keys": list(ctx.ws.remote_keys),
            "version": __version__,
            "code": code_stamps_digest(),
        },
        sort_keys=True,
        default=str,
    )
    # Every input but the trails (`check_inputs`: manifests, tool files, baked targets and
    # installed packages' trailmaps), then what the compilers read beyond them.
    trails = found.trail_paths
    if listed is not None and tuple(listed[: len(trails)]) == tuple(trails):
        paths = list(listed[len(trails) :])
    else:
        paths = check_inputs(dataclasses.replace(found, trail_paths=()), ctx.ws.targets_dir)
    paths.extend(recorded_paths(ctx.store))
    return stamped_digest(header, ((path, _stat(path, stats)) for path in paths))


def outputs_key(found: Scan, targets: Targets) -> str:
    """`outputs` of the record: each generated file not in its place, as
    `owners.outputs_state` tells them (the no-op keys hold the same), and the
    targets the run resolved: the names a trail may target, those with a surface, the exempt
    ones (a package installed since may bring a trailmap of its own)."""
    resolved = [sorted(targets.known), sorted(targets.resolutions), sorted(targets.exempt.items())]
    return digest(json.dumps(resolved), *outputs_state(found))


def trails_key(found: Scan) -> str:
    return digest("\0".join(found.trail_paths))


def _stat(path: str, stats: Stats) -> os.stat_result | None:
    if path in stats:
        return stats[path]
    try:
        return os.stat(path)
    except OSError:
        return None


class Previous(msgspec.Struct, frozen=True):
    """The last complete check's per-trail report, read back."""

    statuses: dict[str, TrailStatus]
    """By report path, in scan order."""
    stamps: list[str | None]
    """Each trail's stamp as its row holds it, in scan order."""
    findings: list[Finding]
    """Its findings at a trail's path, in report order, without the `RECOMPUTED` ones."""
    branches: dict[str, list[tuple[str, int, int]]]


class PerTrail(msgspec.Struct):
    """The per-trail record file (`Layout.last_run`) as `record` writes it: each trail's status
    as an array of its fields, in scan order, with its stamp at the same place in `stamps`; the
    findings at a trail's path as `Finding.to_json` writes them; each trail's runIf branches.
    Read by msgspec against these types in one pass (`_read`): a file of another shape is a
    miss, and ten thousand statuses come back as `TrailStatus` without a line of Python each."""

    statuses: list[TrailStatus]
    stamps: list[str | None]
    findings: list[Finding]
    branches: dict[str, list[tuple[str, int, int]]]


@functools.cache
def _decoder() -> msgspec.json.Decoder[PerTrail]:
    return msgspec.json.Decoder(PerTrail)


class Narrow(msgspec.Struct, frozen=True):
    """What a narrow run checks, and the record it merges into."""

    changed: list[str]
    """The changed trails' files (absolute, as scanned), in scan order."""
    changed_rel: frozenset[str]
    data: PerTrail
    """The per-trail record as read (`read_previous` makes it a `Previous`)."""
    record: dict[str, Any]


def recorded(ctx: CheckContext, inputs: str) -> bool:
    """Whether a record of a complete check is kept under these inputs: without one, `plan`
    is None whatever else holds."""
    return ctx.store.fresh(LAST_RUN, "", inputs)


def plan(
    ctx: CheckContext, found: Scan, stats: Stats, *, inputs: str, outputs: str, trails: str
) -> Narrow | None:
    """The narrow run for this check, or None: a full check (see the module docstring). The
    gate keys are compared by the caller, once the gate is prepared."""
    store = ctx.store
    record = store.get(LAST_RUN, "", key=inputs)
    if (
        record is None
        or record["outputs"] != outputs
        or record["trails"] != trails
        or record["rows"] != (store.trails_generation() or "")
    ):
        return None
    data = _read(ctx)
    if data is None:
        return None
    statuses, stamps = data.statuses, data.stamps
    if len(stamps) != len(found.trail_paths):
        return None
    # The same trails in the same order as the recorded run's (`trails`), so the recorded
    # statuses name them as the parse stage does; their rows are the recorded ones (`rows`).
    changed: list[str] = []
    changed_rel: set[str] = set()
    regular = stat.S_ISREG
    for path, status, stamp in zip(found.trail_paths, statuses, stamps, strict=True):
        st = stats[path] if path in stats else _stat(path, stats)
        if st is None or not regular(st.st_mode) or stamp != stamp_of(st):
            changed.append(path)
            changed_rel.add(status.path)
    # No trail changed either (the other entry point checked since this one's last run, or
    # the output asked for is another format): every key of the record holds, so its verdicts
    # are this run's; the run checks nothing and reports them. Unless a type-checked trail's
    # generated module is gone (removed by hand, say): the full stages put it back.
    if not changed and not _modules_in_place(ctx, statuses):
        return None
    return Narrow(changed, frozenset(changed_rel), data, record)


def _modules_in_place(ctx: CheckContext, statuses: list[TrailStatus]) -> bool:
    """Whether the generated module of every type-checked trail of the record is on disk."""
    trail_file, exists = ctx.layout.trail_file, os.path.exists
    return all(exists(trail_file(s.path)) for s in statuses if s.status == "type-checked")


def _read(ctx: CheckContext) -> PerTrail | None:
    """The per-trail record as `record` writes it, or None when it is missing or not one:
    not JSON, another shape, a field of another type, not one stamp per status (the store
    vouches for the file by its stamp: what `record` wrote, or a miss)."""
    try:
        data = _decoder().decode(ctx.layout.last_run.read_bytes())
    except (OSError, msgspec.DecodeError):
        return None
    return data if len(data.statuses) == len(data.stamps) else None


def read_previous(narrow: Narrow) -> Previous | None:
    """The last complete check's per-trail report from the record `plan` read (made while the
    changed trails compile), or None when it names one trail twice."""
    data = narrow.data
    statuses = {status.path: status for status in data.statuses}
    if len(statuses) != len(data.stamps):
        return None  # two rows of one path
    return Previous(statuses, data.stamps, data.findings, data.branches)


def load_state(ctx: CheckContext, narrow: Narrow) -> TrailState | None:
    """The changed trails' records only (the others' stay as stored); None when the store
    cannot be read."""
    rows = ctx.store.some_trail_rows(sorted(narrow.changed_rel))
    if rows is None:
        return None
    try:
        trails = TrailRecord.from_rows(rows)
    except (ValueError, TypeError, IndexError, AttributeError):
        return None
    return TrailState(trails, dict(trails))


def merge(
    ctx: CheckContext,
    narrow: Narrow,
    previous: Previous,
    partial: Report,
    records: Mapping[str, TrailRecord],
    *,
    discovery: Discovery,
    targets: Targets,
) -> tuple[Report, list[str | None], dict[str, list[tuple[str, int, int]]]]:
    """The report of the whole workspace: `partial` (the report of the changed trails) for
    the changed trails and the workspace, the record for the others, and the findings about
    several trails at once worked out again over all of them; with every trail's stamp and
    runIf branches, for the next record."""
    changed = narrow.changed_rel
    mine = {status.path: status for status in partial.trails}
    statuses = tuple(mine[p] if p in changed else s for p, s in previous.statuses.items())
    stamps = [
        records[p].stamp if p in changed else stamp
        for p, stamp in zip(previous.statuses, previous.stamps, strict=True)
    ]
    unchanged = previous.statuses.keys() - changed
    branches = {p: b for p, b in previous.branches.items() if p not in changed}
    for rel in changed:
        found = records[rel].branches
        if found:
            branches[rel] = [(s, line, col) for s, line, col in found]
    findings = [f for f in previous.findings if f.path not in changed]
    findings.extend(
        f for f in partial.findings if f.path not in unchanged and f.code not in RECOMPUTED
    )
    findings.extend(surfaceless(ctx, discovery, targets, statuses))
    if ctx.options.shard is None:
        findings.extend(repeated_branches(branches))
    whole = dataclasses.replace(partial, trails=statuses, findings=tuple(sorted_findings(findings)))
    return whole, stamps, branches


def record(
    ctx: CheckContext,
    report: Report,
    stamps: Sequence[str | None],
    branches: Mapping[str, Sequence[tuple[str, int, int]]],
    *,
    inputs: str,
    outputs: str,
    trails: str,
    gate: str,
) -> None:
    """Keep this complete check's per-trail report for the next run (after the trail rows are
    committed: the record names their generation). Nothing is kept when it cannot be written."""
    store = ctx.store
    statuses = report.trails
    paths = {status.path for status in statuses}
    data = PerTrail(
        list(statuses),
        list(stamps),
        [f for f in report.findings if f.path in paths and f.code not in RECOMPUTED],
        {p: [(s, line, col) for s, line, col in found] for p, found in branches.items() if found},
    )
    path = ctx.layout.last_run
    store.drop(LAST_RUN)
    try:
        write_scratch(path, msgspec.json.encode(data), ctx.layout.scratch, always=True)
    except OSError:
        store.commit()
        return
    value = {
        "format": _FORMAT,
        "inputs": inputs,
        "outputs": outputs,
        "trails": trails,
        "rows": store.trails_generation() or "",
        "gate": gate,
    }
    store.put(LAST_RUN, "", value, key=inputs, files=[path])
    store.commit()
