"""Shards for CI matrices: `--shard K/N` checks one part of the trails; `report merge` joins them.

The split is deterministic (the same files give the same shards on every machine) and balanced
by bytes: trails, largest first (ties by path), each go to the shard with the fewest bytes so
far (ties to the lowest index). File size stands for the parse and compile work of a trail.

A shard's JSON report is a full report of its trails plus a `shard` section: its index and
count, the position of each of its trails in the whole workspace's scan order, and the runIf
branch signatures of its trails. Findings about the whole workspace (manifests, surfaces,
scripted tools) are in every shard's report. `merge` puts the trails back in scan order, keeps
one copy of each workspace finding, and works out again what only the whole can say: the
runIf branches repeated across trails and the number of trails per target without a surface.
The merged report equals the report of one unsharded run.
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trailblaze import codes
from trailblaze.check.crosstrail import no_surface_finding, repeated_branches
from trailblaze.errors import TrailblazeError
from trailblaze.finding import Finding
from trailblaze.report.record import REASON_NO_SURFACE, REPORT_VERSION, Report, TrailStatus

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
MAX_SHARDS = 10_000


class ShardError(TrailblazeError, ValueError):
    """A bad `--shard` value or reports that cannot be merged: a usage error."""


@dataclass(frozen=True, slots=True)
class Shard:
    index: int
    """1-based, as CI matrices count."""
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = _SHARD.match(text)
        if match is None:
            raise ShardError(f"--shard {text!r}: expected K/N, e.g. 2/4")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 1 <= index <= count:
            raise ShardError(f"--shard {text!r}: K must be between 1 and N (N at least 1)")
        if count > MAX_SHARDS:  # the split and the merge take time in N
            raise ShardError(f"--shard {text!r}: N must be at most {MAX_SHARDS:,}")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def split(sizes: Mapping[str, int], count: int) -> list[list[str]]:
    """The trails of each shard (index 0 is shard 1), each list in the order of `sizes`."""
    heap = [(0, index) for index in range(count)]
    owner: dict[str, int] = {}
    for path in sorted(sizes, key=lambda p: (-sizes[p], p)):
        load, index = heapq.heappop(heap)
        owner[path] = index
        heapq.heappush(heap, (load + max(sizes[path], 1), index))
    shards: list[list[str]] = [[] for _ in range(count)]
    for path in sizes:
        shards[owner[path]].append(path)
    return shards


def load_report(path: Path) -> dict[str, Any]:
    """A shard's JSON report, or a `ShardError` that says what is wrong with it."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise ShardError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested too deep
        raise ShardError(f"{path}: not a JSON report ({exc})") from None
    if not isinstance(data, dict) or data.get("version") != REPORT_VERSION:
        raise ShardError(f"{path}: not a trailblaze JSON report of version {REPORT_VERSION}")
    shard = data.get("shard")
    if not isinstance(shard, dict):
        raise ShardError(f"{path}: not the report of a shard (run `trailblaze check --shard K/N`)")
    if not _well_formed(shard):
        raise ShardError(
            f"{path}: a malformed shard section (index, count, total, positions): "
            f"{json.dumps({k: shard.get(k) for k in ('index', 'count', 'total')})}"
        )
    return data


def _well_formed(shard: Mapping[str, Any]) -> bool:
    """Whether a report's shard section is what `merge` reads: 1 <= index <= count, positions
    within the scan's total."""
    index, count, total, positions = (
        shard.get(key) for key in ("index", "count", "total", "positions")
    )

    def number(value: Any) -> int | None:
        return value if type(value) is int else None  # not a bool, not a float

    i, n, t = number(index), number(count), number(total)
    if i is None or n is None or t is None or not 1 <= i <= n <= MAX_SHARDS:
        return False
    return isinstance(positions, list) and all(
        (p := number(raw)) is not None and 0 <= p < t for raw in positions
    )


def merge(reports: Sequence[tuple[Path, dict[str, Any]]]) -> Report:
    """One report from the JSON reports of every shard of one run."""
    if not reports:
        raise ShardError("no reports to merge")
    counts = {int(data["shard"]["count"]) for _, data in reports}
    if len(counts) != 1:
        raise ShardError(f"the reports come from runs of different shard counts: {sorted(counts)}")
    count = counts.pop()
    seen: dict[int, Path] = {}
    for path, data in reports:
        index = int(data["shard"]["index"])
        if index in seen:
            raise ShardError(f"{seen[index]} and {path} are both shard {index}/{count}")
        seen[index] = path
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise ShardError(
            f"shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing from the merge"
        )
    # The shards of one run place every trail of one scan exactly once; shards of another
    # workspace, or of another commit of it, do not.
    totals = {int(data["shard"]["total"]) for _, data in reports}
    placed = sorted(p for _, data in reports for p in data["shard"]["positions"])
    if len(totals) != 1 or placed != list(range(totals.pop())):
        raise ShardError(
            "the reports are not the shards of one run: their trails are not one workspace's "
            "scan, each trail once (shards of different workspaces, or of different commits?)"
        )
    try:
        return _merge(reports, no_surface_finding, repeated_branches)
    except (KeyError, TypeError, ValueError) as exc:
        raise ShardError(f"a report is malformed: {type(exc).__name__}: {exc}") from None


def _merge(
    reports: Sequence[tuple[Path, dict[str, Any]]], no_surface: Any, repeated: Any
) -> Report:
    placed: list[tuple[int, TrailStatus]] = []
    findings: dict[tuple[Any, ...], Finding] = {}
    trailmaps: set[str] = set()
    branches: list[tuple[str, str, int, int]] = []
    no_surface_at: dict[str, Finding] = {}
    require = False
    sdks: dict[str, str] = {}
    first = reports[0][1]
    for _, data in reports:
        shard = data["shard"]
        trails = data["trails"]
        positions = shard["positions"]
        if len(positions) != len(trails):
            raise ValueError("shard.positions does not match the trails")
        for position, trail in zip(positions, trails, strict=True):
            placed.append((int(position), _status(trail)))
        for raw in data["findings"]:
            finding = Finding.from_json(raw)
            if finding.code == codes.NO_SURFACE and finding.trailmap is not None:
                no_surface_at.setdefault(finding.trailmap, finding)
            elif finding.code != codes.RUNIF_REPEATED:
                findings.setdefault(tuple(sorted(raw.items(), key=lambda kv: kv[0])), finding)
        trailmaps.update(data["trailmaps"])
        branches.extend(
            (str(s), str(p), int(line), int(col)) for s, p, line, col in shard["branches"]
        )
        require = require or bool(data.get("require_typecheck"))
        for label, compiled in (data.get("summary", {}).get("sdk") or {}).items():
            sdks.update(dict.fromkeys(compiled, str(label)))
    placed.sort(key=lambda item: item[0])
    statuses = tuple(status for _, status in placed)
    missing: dict[str, int] = {}
    for status in statuses:
        if status.reason == REASON_NO_SURFACE and status.target is not None:
            missing[status.target] = missing.get(status.target, 0) + 1
    extra: list[Finding] = [
        no_surface(f.path, target, missing[target])
        for target, f in no_surface_at.items()
        if target in missing
    ]
    by_trail: dict[str, list[tuple[str, int, int]]] = {}
    for signature, path, line, column in branches:
        by_trail.setdefault(path, []).append((signature, line, column))
    extra.extend(repeated(by_trail))
    every = [*findings.values(), *extra]
    every.sort(key=lambda f: (f.path, f.line, f.column, f.kind, f.message))
    return Report(
        workspace=str(first["workspace"]),
        trailmaps=tuple(sorted(trailmaps)),
        trails=statuses,
        findings=tuple(every),
        require_typecheck=require,
        sdks=dict(sorted(sdks.items())),
    )


def _status(data: Mapping[str, Any]) -> TrailStatus:
    return TrailStatus(
        path=str(data["path"]),
        trailmap=data["trailmap"],
        status=data["status"],
        reason=data["reason"],
        target=data.get("target"),
        calls=int(data.get("calls", 0)),
    )
