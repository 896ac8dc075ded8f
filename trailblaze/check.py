"""The check pipeline: discover, manifests, surfaces, parse gate, runIf, type gate, report.

`run_check` is what `trailblaze check` and the doit `check` task call. It returns a `Report`
(data); rendering and the exit code are the caller's business.

Incremental at the level of single trails: a per-workspace state file remembers, for every
trail, its file stat and content hash, its parse outcome, and the key and findings of its last
type check. A trail whose file and surface did not change is neither re-read nor re-parsed nor
re-generated; a trail whose key is in the result cache costs no compiler work.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from trailblaze.batch import Context, Item, Parsed, no_gc, process_many
from trailblaze.bundled import discover
from trailblaze.cache import digest
from trailblaze.catalog import load_catalog
from trailblaze.finding import Finding
from trailblaze.manifest import Trailmap, load_manifest
from trailblaze.options import CheckOptions
from trailblaze.parse import file_error
from trailblaze.report import (
    REASON_DISABLED,
    REASON_INFRA,
    REASON_NO_CALLS,
    REASON_NO_SURFACE,
    REASON_NO_TARGET,
    REASON_UNKNOWN_TARGET,
    Report,
    TrailStatus,
)
from trailblaze.resolve import Resolution
from trailblaze.runif import RUNIF
from trailblaze.schemavalidation import remembering
from trailblaze.scratch import Layout
from trailblaze.state import TrailRecord, TrailState, stamp_of
from trailblaze.store import Kind, Store
from trailblaze.surface import generate_surfaces
from trailblaze.typegate.gate import TypeGate
from trailblaze.workspace import Scan, Workspace, scan, shown_path
from trailblaze.yamlnode import MAX_FILE_BYTES, YamlError


def _stats(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError("stats are a mapping")
    return value


STATS: Kind[dict[str, Any]] = Kind("stats", _stats)
"""What the last check did (counts, compiler runs, phase timings): the benchmark reads them."""


def last_stats(scratch: Path) -> dict[str, Any]:
    """The stats of the last check of this scratch directory; {} when there are none."""
    with Store.open(scratch) as store:
        return store.get(STATS) or {}


# Kept from the reference: the synthetic `default` host target has no manifest and is exempt.
TRANSITIONAL_EXEMPT = {"default": "the synthetic default host target has no trailmap.yaml"}


@dataclass(frozen=True, slots=True)
class Manifests:
    """Every workspace trailmap that loaded, keyed by directory name, and the findings."""

    trailmaps: dict[str, Trailmap]
    dirs: dict[str, Path]
    """Every workspace trailmap directory, loaded or not (its name is a known target)."""
    findings: tuple[Finding, ...]

    def with_dirs(self) -> dict[str, tuple[Trailmap, Path]]:
        return {name: (tm, self.dirs[name]) for name, tm in self.trailmaps.items()}


def load_manifests(ws: Workspace, found: Scan) -> Manifests:
    trailmaps: dict[str, Trailmap] = {}
    findings: list[Finding] = []
    for entry in found.trailmaps:
        outcome = load_manifest(entry.manifest, ws.rel(entry.manifest), entry.dir_name)
        findings.extend(outcome.findings)
        if outcome.trailmap is not None:
            trailmaps[entry.dir_name] = outcome.trailmap
    dirs = {entry.dir_name: entry.path for entry in found.trailmaps}
    return Manifests(trailmaps, dirs, tuple(findings))


def repeated_branches(
    branches: Mapping[str, Sequence[tuple[str, int, int]]],
) -> list[Finding]:
    """One warning per runIf branch recorded in two or more trails: a named tool is missing.

    `branches` maps a trail path to the (signature, line, column) of each of its runIf trees.
    """
    groups: dict[str, list[tuple[str, int, int]]] = {}
    for path, found in sorted(branches.items()):
        for sig, line, column in found:
            groups.setdefault(sig, []).append((path, line, column))
    warnings = []
    for places in groups.values():
        trails = {path for path, _, _ in places}
        if len(trails) < 2:
            continue
        first, *_ = places
        where = ", ".join(f"{p}:{line}:{col}" for p, line, col in places)
        warnings.append(
            Finding(
                "warning",
                first[0],
                first[1],
                first[2],
                f"the same runIf branch is recorded in {len(trails)} trails ({where}); "
                f"a named tool would say it once",
                code="runif-repeated",
                fatal=False,
                tool=RUNIF,
            )
        )
    return warnings


@dataclass
class _Run:
    """What one check run collects."""

    findings: list[Finding] = field(default_factory=list)
    statuses: list[TrailStatus] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


class _Pipeline:
    def __init__(self, ws: Workspace, options: CheckOptions) -> None:
        self.ws = ws
        self.options = options
        self.layout = Layout(ws.scratch)
        self.run = _Run()
        self.context: Context | None = None
        self.trails_parsed = 0
        self.files_read = 0
        self.progress: Progress | None = None
        self.real_paths: dict[str, str] = {}
        """The file of each trail whose report path is not its file name (`shown_path`)."""

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time a phase of the run; the durations go to the stats (the benchmark reads them)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            phases = self.run.stats.setdefault("seconds", {})
            phases[name] = round(phases.get(name, 0.0) + time.perf_counter() - start, 4)

    # -- trails ---------------------------------------------------------------------------------

    def records(
        self,
        paths: Sequence[str],
        old: Mapping[str, TrailRecord],
        out: dict[str, TrailRecord],
        on_parsed: Callable[[list[Parsed]], None] | None = None,
        stats: Mapping[str, os.stat_result | None] | None = None,
    ) -> None:
        """Every trail's parse outcome into `out`, in scan order: from the state when its file
        is unchanged, else parsed.

        An unchanged stamp costs one `stat`; a changed stamp with unchanged content costs a read
        and a hash; only changed content is parsed (in parallel when there is much of it).
        `on_parsed` sees each chunk of parsed trails once their records are in `out`, and may
        replace them there.
        """
        to_parse: list[Item] = []
        strict = self.options.strict
        known = stats or {}
        prefix = str(self.ws.root) + os.sep
        for path in paths:
            # String slicing, not Path: this loop runs for every trail on every check.
            rel = (
                shown_path(path[len(prefix) :].replace(os.sep, "/"))
                if path.startswith(prefix)
                else self.ws.rel(Path(path))
            )
            if rel != path[len(prefix) :]:
                self.real_paths[rel] = path
            previous = old.get(rel)
            st: os.stat_result | None
            if path in known:
                st = known[path]
            else:
                try:
                    st = os.stat(path)
                except OSError:
                    st = None
            is_dir = st is not None and stat.S_ISDIR(st.st_mode)
            stamp = stamp_of(st) if st is not None and not is_dir else None
            if (
                previous is not None
                and stamp is not None
                and previous.stamp == stamp
                and previous.strict == strict
            ):
                out[rel] = previous
                continue
            try:
                if is_dir:
                    raise YamlError("is a directory, not a file")
                if st is not None and st.st_size > MAX_FILE_BYTES:
                    raise YamlError(
                        f"file is {st.st_size / 1024 / 1024:.1f} MiB; files over "
                        f"{MAX_FILE_BYTES // 1024 // 1024} MiB are not read"
                    )
                with open(path, "rb") as handle:
                    data = handle.read()
                self.files_read += 1
            except (YamlError, OSError) as exc:
                error = (
                    exc
                    if isinstance(exc, YamlError)
                    else YamlError(f"cannot read file: {exc.strerror or exc}")
                )
                out[rel] = TrailRecord.from_outcome(
                    rel, None, "", file_error(rel, error), [], strict
                )
                continue
            content = digest(data)
            if previous is not None and previous.content == content and previous.strict == strict:
                out[rel] = previous.restamp(stamp)
                continue
            to_parse.append(Item(rel, stamp, content, data))
            out[rel] = previous  # type: ignore[assignment]  # holds its place; replaced when parsed

        def arrived(chunk: list[Parsed]) -> None:
            for parsed in chunk:
                out[parsed.record.path] = parsed.record
            if on_parsed is not None:
                on_parsed(chunk)

        self.process(to_parse, "parsing", arrived)

    def process(
        self,
        items: list[Item],
        phase: str,
        on_chunk: Callable[[list[Parsed]], None] | None = None,
    ) -> list[Parsed]:
        if not items:
            return []
        assert self.context is not None
        self.trails_parsed += len(items)
        if self.progress is not None:
            self.progress.start(phase, len(items))
        results = process_many(
            items,
            self.context,
            progress=self.progress.advance if self.progress else None,
            on_chunk=on_chunk,
        )
        if self.progress is not None:
            self.progress.stop()
        return results

    def regenerate(self, paths: list[str], records: Mapping[str, TrailRecord]) -> list[Parsed]:
        """Generate the modules of trails whose outcome came from the state (their surface changed)."""
        items = []
        for rel in paths:
            data = Path(self.real_paths.get(rel) or self.ws.root / rel).read_bytes()
            self.files_read += 1
            record = records[rel]
            items.append(Item(rel, record.stamp, record.content, data))
        return self.process(items, "generating")


class Progress(Protocol):
    """Reports progress of the long phases (parsing, generating) of big runs."""

    def start(self, phase: str, total: int) -> None: ...
    def advance(self, done: int) -> None: ...
    def stop(self) -> None: ...


def run_check(
    ws: Workspace,
    options: CheckOptions,
    *,
    progress: Progress | None = None,
    found: Scan | None = None,
    stats: Mapping[str, os.stat_result | None] | None = None,
) -> Report:
    """Check the workspace.

    `found` is its scan and `stats` the `os.stat` of its files (None: missing) when the caller
    has just made them; anything not in `stats` is looked at again.
    """
    # The run builds tens of thousands of long-lived objects (records, findings, statuses) and
    # no reference cycles worth collecting: the cyclic collector's passes over them cost a
    # fifth of a one-trail check of a large workspace and free nothing.
    with no_gc():
        return _run_check(ws, options, progress, found, stats)


def _run_check(
    ws: Workspace,
    options: CheckOptions,
    progress: Progress | None,
    found: Scan | None,
    stats: Mapping[str, os.stat_result | None] | None,
) -> Report:
    pipe = _Pipeline(ws, options)
    pipe.progress = progress
    if found is None:
        with pipe.phase("scan"):
            found = scan(ws)
    whole = found
    positions: list[int] = []
    if options.shard is not None:
        found, positions = _shard_of(found, options.shard, stats or {})
    store = Store.open(pipe.layout)
    try:
        return _check_with(ws, options, pipe, found, stats, store, whole, positions)
    finally:
        store.close()


def _check_with(
    ws: Workspace,
    options: CheckOptions,
    pipe: _Pipeline,
    found: Scan,
    stats: Mapping[str, os.stat_result | None] | None,
    store: Store,
    whole: Scan,
    positions: list[int],
) -> Report:
    catalog = load_catalog()
    run = pipe.run
    with remembering(store):
        with pipe.phase("manifests"):
            manifests = load_manifests(ws, found)
        bundled = discover(catalog, workspace_targets=ws.targets_dir)
        with pipe.phase("surfaces"):
            surfaces = generate_surfaces(
                ws.root,
                ws.scratch,
                manifests.with_dirs(),
                catalog,
                bundled=bundled.trailmaps,
                store=store,
            )
    run.findings.extend(found.findings)
    run.findings.extend(manifests.findings)
    run.findings.extend(bundled.findings)
    run.findings.extend(surfaces.findings)
    targets: dict[str, Resolution] = dict(surfaces.resolutions)
    exempt = dict(TRANSITIONAL_EXEMPT)
    for item_id, item in bundled.trailmaps.items():
        if item_id not in manifests.trailmaps and item.manifest.exempt_reason:
            exempt[item_id] = item.manifest.exempt_reason
    for dir_name, trailmap in manifests.trailmaps.items():
        if trailmap.exempt_reason:
            exempt[dir_name] = trailmap.exempt_reason
        else:
            exempt.pop(dir_name, None)
    known = frozenset(manifests.dirs) | frozenset(bundled.trailmaps)

    with pipe.phase("state load"):
        state = TrailState.load(store)
    schemas = (
        {
            target: {e.name: e.input_schema for e in resolution.entries}
            for target, resolution in targets.items()
        }
        if options.typecheck
        else {}
    )
    pipe.context = Context(options.strict, schemas, catalog.defs, pipe.layout)
    records: dict[str, TrailRecord] = {}
    gate = TypeGate(
        ws.root,
        pipe.layout,
        options,
        catalog,
        targets,
        exempt,
        records,
        pipe.phase,
        trailmap_dirs=manifests.dirs,
        store=store,
    )

    def eligible(record: TrailRecord) -> bool:
        return (
            options.typecheck
            and record.status != "rejected"
            and record.target in targets
            and record.calls > 0
        )

    def offer(chunk: list[Parsed]) -> None:
        # Trails go to the type gate as soon as they are parsed: the compiler starts on the
        # first full batch while the workers parse the rest.
        for parsed in chunk:
            if parsed.module is not None and eligible(parsed.record):
                gate.offer(parsed.record.path, parsed)

    with pipe.phase("trails"):
        # In scan order; the type gate records its results over the trails it was offered.
        pipe.records(found.trail_paths, state.trails, records, offer, stats or {})
    for record in records.values():
        run.findings.extend(record.parse_findings())
        if record.status != "rejected":
            run.findings.extend(record.runif_findings())
    for rel, record in records.items():
        if eligible(record) and rel not in gate.offered:
            gate.offer(rel)  # unchanged file: its last result, or its module generated again
    with pipe.phase("regenerate"):
        for parsed in pipe.regenerate(gate.stale, records):
            records[parsed.record.path] = parsed.record
            gate.offer(parsed.record.path, parsed)
    previously = {p for p, r in state.trails.items() if r.surface_key is not None}
    # A shard keeps the generated modules of the other shards' trails (the next run may be
    # another shard of the same workspace).
    outcome = gate.finish(
        gate.offered, trails_changed=options.shard is None and previously != gate.offered
    )
    with pipe.phase("report"):
        run.findings.extend(outcome.findings)
        missing_surface: dict[str, int] = {}
        for rel, record in records.items():
            status = _status(record, targets, known, options.typecheck, rel in outcome.failed)
            if status.reason == REASON_NO_SURFACE and record.target is not None:
                missing_surface[record.target] = missing_surface.get(record.target, 0) + 1
            run.statuses.append(status)
            if status.status == "type-checked":
                fatal = record.target not in exempt
                run.findings.extend(
                    f.with_(fatal=fatal) if f.kind == "type" else f for f in record.type_findings()
                )
        for target, count in sorted(missing_surface.items()):
            if target in exempt:
                continue
            manifest = (
                ws.rel(manifests.dirs[target] / "trailmap.yaml")
                if target in manifests.dirs
                else target
            )
            run.findings.append(no_surface_finding(manifest, target, count))
        run.findings.extend(outcome.infra)
        if options.shard is None:
            run.findings.extend(repeated_branches({p: r.branches for p, r in records.items()}))
    if options.shard is not None:
        # The other shards' trails keep their records: they are still in the workspace.
        others = {p: r for p, r in state.trails.items() if p not in records}
        state.trails = {**others, **records}
    else:
        state.trails = records
    run.stats.update(outcome.stats)
    run.stats["trails_parsed"] = pipe.trails_parsed
    run.stats["files_read"] = pipe.files_read
    with pipe.phase("state"):
        state.save(store)  # the records that changed, not all of them
        store.commit()  # with every memo the run staged, in one transaction
    store.put(STATS, "", run.stats)  # after the phase, so that it has the state's time too
    store.commit()
    return Report(
        workspace=str(ws.root),
        trailmaps=tuple(sorted(manifests.trailmaps)),
        trails=tuple(run.statuses),
        findings=tuple(_sorted(run.findings)),
        require_typecheck=options.require_typecheck,
        stats=run.stats,
        shard=_shard_json(options.shard, whole, positions, records),
        sdks=dict(sorted(gate.sdks.items())),
    )


def _shard_json(
    shard: tuple[int, int] | None,
    whole: Scan,
    positions: list[int],
    records: Mapping[str, TrailRecord],
) -> dict[str, Any] | None:
    """What a shard's report carries for `report merge` (`shard.py`)."""
    if shard is None:
        return None
    return {
        "index": shard[0],
        "count": shard[1],
        "total": len(whole.trail_paths),
        "positions": positions,
        "branches": [
            [sig, path, line, column]
            for path, record in records.items()
            for sig, line, column in record.branches
        ],
    }


def no_surface_finding(manifest: str, target: str, count: int) -> Finding:
    """`count` trails target a trailmap whose manifest did not load (so it has no surface)."""
    return Finding(
        "type",
        manifest,
        1,
        1,
        f"{count} trail(s) target '{target}', which has a trailmap.yaml but no typed surface "
        f"(the manifest did not load); fix it or set trail_validation.exempt",
        code="no-surface",
        trailmap=target,
    )


def _shard_of(
    found: Scan, shard: tuple[int, int], stats: Mapping[str, os.stat_result | None]
) -> tuple[Scan, list[int]]:
    """The scan narrowed to one shard's trails, and their positions in the whole scan."""
    from trailblaze.shard import split  # noqa: PLC0415 - only sharded runs need it

    sizes: dict[str, int] = {}
    for path in found.trail_paths:
        st = stats[path] if path in stats else _stat(path)
        sizes[path] = st.st_size if st is not None else 0
    index, count = shard
    mine = set(split(sizes, count)[index - 1])
    positions = [i for i, path in enumerate(found.trail_paths) if path in mine]
    narrowed = replace(found, trail_paths=tuple(found.trail_paths[i] for i in positions))
    return narrowed, positions


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _status(
    record: TrailRecord,
    targets: Mapping[str, Resolution],
    known: frozenset[str],
    typecheck: bool,
    failed: bool,
) -> TrailStatus:
    if record.status == "rejected":
        return TrailStatus(record.path, None, "rejected")
    target = record.target
    if target is None:
        return TrailStatus(record.path, None, "parsed", REASON_NO_TARGET, target, record.calls)
    if target not in targets:
        reason = REASON_NO_SURFACE if target in known else REASON_UNKNOWN_TARGET
        return TrailStatus(record.path, None, "parsed", reason, target, record.calls)
    if record.calls == 0:
        return TrailStatus(record.path, target, "parsed", REASON_NO_CALLS, target, 0)
    if not typecheck:
        return TrailStatus(record.path, target, "parsed", REASON_DISABLED, target, record.calls)
    if failed or record.key is None:
        return TrailStatus(record.path, target, "parsed", REASON_INFRA, target, record.calls)
    return TrailStatus(record.path, target, "type-checked", None, target, record.calls)


def _sorted(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.path, f.line, f.column, f.kind, f.message))
