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

import msgspec

from trailblaze import codes
from trailblaze.check.crosstrail import no_surface_finding, repeated_branches
from trailblaze.errors import TrailblazeError
from trailblaze.finding import Finding, Owned, is_workspace_path, position_in_range
from trailblaze.report.record import (
    REASON_NO_SURFACE,
    REPORT_VERSION,
    Report,
    TrailStatus,
    UnitTest,
)
from trailblaze.state.results import decode_findings

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_HEX64 = re.compile(r"[0-9a-f]{64}")
MAX_SHARDS = 10_000


class ShardError(TrailblazeError, ValueError):
    """A bad `--shard` value or reports that cannot be merged: a usage error."""


@dataclass(frozen=True, slots=True)
class Shard:
    """One shard of a check split across CI jobs: `index` of `count`."""

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
        data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise ShardError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested too deep
        raise ShardError(f"{path}: not a JSON report ({exc})") from None
    _shard_section(path, data)
    return data


def _shard_section(path: Path, data: Any) -> dict[str, Any]:
    """The `shard` section of a report, checked (a `ShardError` naming `path` otherwise)."""
    if not isinstance(data, dict) or data.get("version") != REPORT_VERSION:
        raise ShardError(f"{path}: not a trailblaze JSON report of version {REPORT_VERSION}")
    shard = data.get("shard")
    if not isinstance(shard, dict):
        raise ShardError(f"{path}: not the report of a shard (run `trailblaze check --shard K/N`)")
    if not _well_formed(shard):
        raise ShardError(
            f"{path}: a malformed shard section (index, count, total, positions): "
            f"{json.dumps({k: _shown(shard.get(k)) for k in ('index', 'count', 'total')})}"
        )
    run = shard.get("run")
    if not isinstance(run, str) or not _HEX64.fullmatch(run):
        raise ShardError(
            f"{path}: the shard's report does not carry the key of its run's inputs (a report "
            "of trail files, or made by another version of trailblaze-doit): check the shards "
            "again with `trailblaze check --shard K/N`"
        )
    root = shard.get("root", ".")
    if not isinstance(root, str) or (root != "." and not _clean(root, dots=True)):
        raise ShardError(f"{path}: a malformed shard section (root {_shown(root)!r})")
    return shard


def _shown(value: Any) -> Any:
    """A value of a report as an error message may show it: a scalar, cut short."""
    if isinstance(value, str):
        return value[:100]
    return value if value is None or type(value) in (int, bool) else type(value).__name__


def _clean(path: str, *, dots: bool = False) -> bool:
    """A relative POSIX path without empty or `.` parts (`dots`: leading `..` parts allowed)."""
    parts = path.split("/")
    while dots and parts and parts[0] == "..":
        parts.pop(0)
    return bool(parts) and is_workspace_path("/".join(parts))


def _well_formed(shard: Mapping[str, Any]) -> bool:
    """Whether a report's shard section is what `merge` reads: 1 <= index <= count, positions
    within the scan's total."""
    index, count, total, positions = (
        shard.get(key) for key in ("index", "count", "total", "positions")
    )

    def number(value: Any) -> int | None:
        return value if type(value) is int else None  # not a bool, not a float

    i, n, t = number(index), number(count), number(total)
    if i is None or n is None or t is None or not 1 <= i <= n <= MAX_SHARDS or t < 0:
        return False
    return isinstance(positions, list) and all(
        (p := number(raw)) is not None and 0 <= p < t for raw in positions
    )


def merge(reports: Sequence[tuple[Path, dict[str, Any]]], owned: Owned | None = None) -> Report:
    """One report from the JSON reports of every shard of one run, its paths relative to the
    workspace (each shard's `root` says where that is from its paths).

    Refused (`ShardError`): reports of different runs (their `run` keys differ), shards that
    repeat each other's trails, a set that misses a shard or a trail, and any finding, trail or
    runIf branch that is malformed or names a file outside the workspace (with `owned`, the
    workspace being reported: not one of its trails or tool files). Infrastructure findings
    may name a program of the machine that ran the shard (the compiler); they fail nothing
    and no code frame is ever read outside the workspace."""
    if not reports:
        raise ShardError("no reports to merge")
    shards = [(path, _shard_section(path, data)) for path, data in reports]
    first_path, first = shards[0]
    for path, shard in shards[1:]:
        if shard["run"] != first["run"]:
            raise ShardError(
                f"{first_path} and {path} are shards of different runs: their inputs differ "
                "(another commit, other settings, or another version of trailblaze-doit)"
            )
    counts = {shard["count"] for _, shard in shards}
    if len(counts) != 1:
        raise ShardError(f"the reports come from runs of different shard counts: {sorted(counts)}")
    count = counts.pop()
    seen: dict[int, Path] = {}
    for path, shard in shards:
        index = shard["index"]
        if index in seen:
            raise ShardError(f"{seen[index]} and {path} are both shard {index}/{count}")
        seen[index] = path
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise ShardError(
            f"shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing from the merge"
        )
    totals = {shard["total"] for _, shard in shards}
    roots = {shard.get("root", ".") for _, shard in shards}
    if len(totals) != 1 or len(roots) != 1:
        raise ShardError(
            "the reports are not the shards of one run: their trails are not one workspace's "
            "scan (shards of different workspaces, or run from different directories?)"
        )
    total = totals.pop()
    placed: dict[int, Path] = {}
    for path, shard in shards:
        for position in shard["positions"]:
            if position in placed:
                raise ShardError(
                    f"{placed[position]} and {path} both report trail {position + 1} of {total}: "
                    "shards of one run never overlap"
                )
            placed[position] = path
    if len(placed) != total:
        raise ShardError(
            f"the shards report {len(placed)} of the run's {total} trails: a shard's report "
            "is incomplete"
        )
    return _merge(reports, roots.pop(), owned)


def _merge(
    reports: Sequence[tuple[Path, dict[str, Any]]], root: str, owned: Owned | None
) -> Report:
    placed: list[tuple[int, TrailStatus]] = []
    findings: dict[Finding, None] = {}
    trailmaps: set[str] = set()
    branches: list[tuple[str, str, int, int]] = []
    no_surface_at: dict[str, Finding] = {}
    require = False
    sdks: dict[str, str] = {}
    where: dict[str, Path] = {}
    """Every trail (workspace-relative) -> the report naming it."""
    unpacked: list[tuple[Path, list[Finding], list[Any]]] = []
    tests: list[UnitTest] = []
    for path, data in reports:
        for raw_test in data.get("tests") or ():
            try:
                test = UnitTest.checked(raw_test)
            except ValueError as exc:
                raise ShardError(f"{path}: {exc}") from None
            where_test = _inside(test.path, root)
            if where_test is None or (owned is not None and not owned.names(where_test)):
                raise ShardError(
                    f"{path}: reports a unit test in {test.path[:200]!r}, which is not a file "
                    "of the workspace being reported"
                )
            tests.append(msgspec.structs.replace(test, path=where_test))
        shard = data["shard"]
        trails = data.get("trails")
        positions = shard["positions"]
        if not isinstance(trails, list) or len(positions) != len(trails):
            raise ShardError(f"{path}: its trails are not the ones its shard section places")
        for position, raw in zip(positions, trails, strict=True):
            try:
                status = TrailStatus.checked(raw)
            except ValueError as exc:
                raise ShardError(f"{path}: {exc}") from None
            rel = _inside(status.path, root)
            if rel is None or (owned is not None and rel not in owned.trails):
                raise ShardError(
                    f"{path}: reports trail {status.path[:200]!r}, which is not a trail of "
                    "the workspace being reported"
                )
            if rel in where:
                raise ShardError(
                    f"{where[rel]} and {path} both report trail {rel!r}: shards of one run "
                    "never overlap"
                )
            where[rel] = path
            placed.append((position, msgspec.structs.replace(status, path=rel)))
        found = data.get("findings")
        try:
            decoded = decode_findings(found)
        except ValueError as exc:
            raise ShardError(f"{path}: a malformed finding ({exc})") from None
        unpacked.append((path, decoded, shard.get("branches")))
        names = data.get("trailmaps")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ShardError(f"{path}: a malformed list of trailmaps")
        trailmaps.update(names)
        require = require or data.get("require_typecheck") is True
        summary = data.get("summary")
        by_sdk = summary.get("sdk") if isinstance(summary, dict) else None
        for label, compiled in (by_sdk or {}).items() if isinstance(by_sdk, dict) else ():
            if not isinstance(compiled, list) or not all(isinstance(c, str) for c in compiled):
                raise ShardError(f"{path}: a malformed summary of SDKs")
            sdks.update(dict.fromkeys(compiled, label))
    for path, decoded, raw_branches in unpacked:
        for stated in decoded:
            rel = _inside(stated.path, root)
            if rel is None and stated.kind == "infra":
                rel = stated.path  # the machine's compiler, say: never framed, fails nothing
            elif rel is None or (owned is not None and not owned.names(rel)):
                raise ShardError(
                    f"{path}: a finding about {stated.path[:200]!r}, which is not a trail or "
                    "tool file of the workspace being reported"
                )
            finding = stated.with_(path=rel) if rel != stated.path else stated
            if finding.code == codes.NO_SURFACE and finding.trailmap is not None:
                no_surface_at.setdefault(finding.trailmap, finding)
            elif finding.code != codes.RUNIF_REPEATED:
                findings.setdefault(finding)
        if not isinstance(raw_branches, list):
            raise ShardError(f"{path}: a malformed shard section (branches)")
        for item in raw_branches:
            if (
                not isinstance(item, list)
                or len(item) != 4
                or not isinstance(item[0], str)
                or item[1] not in where
                or where[item[1]] != path
                or not position_in_range(item[2], item[3])
            ):
                raise ShardError(
                    f"{path}: a malformed shard section (a runIf branch not of its own trails)"
                )
            branches.append((item[0], item[1], item[2], item[3]))
    if owned is not None and len(where) != len(owned.trails):
        # Every trail reported is one of the workspace's, once: so some are missing.
        raise ShardError(
            f"the shards report {len(where)} of the workspace's {len(owned.trails)} trails: "
            "they are not the shards of a check of this workspace"
        )
    placed.sort(key=lambda item: item[0])
    statuses = tuple(status for _, status in placed)
    missing: dict[str, int] = {}
    for status in statuses:
        if status.reason == REASON_NO_SURFACE and status.target is not None:
            missing[status.target] = missing.get(status.target, 0) + 1
    extra: list[Finding] = [
        no_surface_finding(f.path, target, missing[target])
        for target, f in no_surface_at.items()
        if target in missing
    ]
    by_trail: dict[str, list[tuple[str, int, int]]] = {}
    for signature, trail, line, column in branches:
        by_trail.setdefault(trail, []).append((signature, line, column))
    extra.extend(repeated_branches(by_trail))
    every = [*findings, *extra]
    every.sort(key=lambda f: (f.path, f.line, f.column, f.kind, f.message))
    return Report(
        workspace=str(reports[0][1].get("workspace")),
        trailmaps=tuple(sorted(trailmaps)),
        trails=statuses,
        findings=tuple(every),
        require_typecheck=require,
        sdks=dict(sorted(sdks.items())),
        tests=tuple(tests),
    )


def _inside(path: str, root: str) -> str | None:
    """`path`, as a shard's report shows it, relative to the workspace (whose place its `root`
    gives); None when it is not a path inside the workspace."""
    if root != ".":
        if not path.startswith(root + "/"):
            return None
        path = path[len(root) + 1 :]
    return path if is_workspace_path(path) else None
