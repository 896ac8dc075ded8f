"""The discover stage: what a check is about, before anything is parsed.

The workspace's trailmap directories and trail files (`workspace.scan`), narrowed to one shard
when the run is sharded; every workspace manifest that loads; the trailmaps and baked targets
bundled in installed packages (`bundled.discover`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import msgspec

from trailblaze.check.context import CheckContext
from trailblaze.finding import Finding
from trailblaze.toolmodel.bundled import discover as discover_bundled
from trailblaze.toolmodel.manifest import load_manifest
from trailblaze.toolmodel.records import Bundled, Trailmap
from trailblaze.workspace import Scan, Workspace, scan

Stats = Mapping[str, os.stat_result | None]
"""The `os.stat` of files a caller has just looked at (None: missing), by path."""


class Manifests(msgspec.Struct, frozen=True):
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
    return Manifests(trailmaps=trailmaps, dirs=dirs, findings=tuple(findings))


class Discovery(msgspec.Struct, frozen=True):
    """What the discover stage found."""

    whole: Scan
    """The whole workspace's scan."""
    found: Scan
    """The trails this run checks: `whole`, or one shard of it."""
    positions: tuple[int, ...]
    """With a shard: the positions of its trails in `whole` (for `report merge`)."""
    manifests: Manifests
    bundled: Bundled

    @property
    def findings(self) -> tuple[Finding, ...]:
        return (*self.found.findings, *self.manifests.findings, *self.bundled.findings)


def discover(ctx: CheckContext, *, found: Scan | None, stats: Stats) -> Discovery:
    """The discover stage. `found` is the workspace's scan when the caller has just made it."""
    if found is None:
        with ctx.timer.phase("scan"):
            found = scan(ctx.ws)
    whole = found
    positions: tuple[int, ...] = ()
    if ctx.options.shard is not None:
        found, positions = shard_of(found, ctx.options.shard, stats)
    with ctx.timer.phase("manifests"):
        manifests = load_manifests(ctx.ws, found)
    bundled = discover_bundled(ctx.catalog, workspace_targets=ctx.ws.targets_dir)
    return Discovery(
        whole=whole, found=found, positions=positions, manifests=manifests, bundled=bundled
    )


def shard_of(found: Scan, shard: tuple[int, int], stats: Stats) -> tuple[Scan, tuple[int, ...]]:
    """The scan narrowed to one shard's trails, and their positions in the whole scan."""
    from trailblaze.check.shard import split  # noqa: PLC0415 - only sharded runs need it

    sizes: dict[str, int] = {}
    for path in found.trail_paths:
        st = stats[path] if path in stats else _stat(path)
        sizes[path] = st.st_size if st is not None else 0
    index, count = shard
    mine = set(split(sizes, count)[index - 1])
    positions = tuple(i for i, path in enumerate(found.trail_paths) if path in mine)
    narrowed = replace(found, trail_paths=tuple(found.trail_paths[i] for i in positions))
    return narrowed, positions


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None
