"""The trailmaps of one replay: which tools each trail sees, resolved once per trailmap.

``TrailmapSources.get(plan)`` gives the ``ToolSource`` of the trailmap a trail targets (its
resolution and its scripted tools' host), or the framework tools alone for a trail with no
known target; each is built on first use. ``close`` stops the scripted tools' children.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from trailblaze.check.discover import load_manifests
from trailblaze.replay.plan import TrailPlan
from trailblaze.replay.scripted import ScriptHost, TrailmapScripts
from trailblaze.replay.toolsource import ToolSource
from trailblaze.replay.waypoints import WaypointScope
from trailblaze.toolmodel.catalog import Catalog
from trailblaze.toolmodel.records import Resolution, Trailmap
from trailblaze.toolmodel.resolution import Resolver
from trailblaze.toolmodel.tooldefs.loader import RelPath
from trailblaze.toolmodel.tooldefs.waypoint import Waypoints, load_waypoints
from trailblaze.workspace import Scan, Workspace, scan


class TrailmapSources:
    """One ``ToolSource`` per trailmap, resolved on first use."""

    def __init__(
        self, ws: Workspace | None, scanned: Scan | None, catalog: Catalog, env: Mapping[str, str]
    ) -> None:
        self.catalog = catalog
        self._resolver: Resolver | None = None
        self._dirs: frozenset[str] = frozenset()
        self._manifests: dict[str, Trailmap] = {}
        self._scripts: ScriptHost | None = None
        self._ws = ws
        self._trailmap_dirs: tuple[Path, ...] = ()
        self._waypoints: Waypoints | None = None
        if ws is not None:
            scanned = scanned if scanned is not None else scan(ws)
            self._trailmap_dirs = tuple(entry.path for entry in scanned.trailmaps)
            manifests = load_manifests(ws, scanned)
            self._resolver = Resolver(manifests.with_dirs(), ws.root, catalog)
            self._dirs = frozenset(manifests.trailmaps)
            self._manifests = dict(manifests.trailmaps)
            self._scripts = ScriptHost(ws.root, ws.scratch, env=env)
        self._cache: dict[str | None, ToolSource] = {}

    def close(self) -> None:
        if self._scripts is not None:
            self._scripts.close()

    def ships_runif(self, target: str | None) -> bool:
        """Whether trails of ``target`` get its trailmap's own ``runIf`` rather than ours."""
        return self._source(target).ships_runif

    def get(self, plan: TrailPlan) -> ToolSource:
        return self._source(plan.trail.config.target if plan.trail else None)

    def _source(self, target: str | None) -> ToolSource:
        key = target if target in self._dirs else None
        if key not in self._cache:
            resolution: Resolution | None = None
            scripts: TrailmapScripts | None = None
            if key is not None and self._resolver is not None:
                resolution = self._resolver.resolve(key)
            if key is not None and self._scripts is not None:
                scripts = self._scripts.for_trailmap(self._manifests.get(key))
            self._cache[key] = ToolSource(
                self.catalog, resolution, scripts, self._waypoint_scope(target)
            )
        return self._cache[key]

    def waypoints(self) -> Waypoints | None:
        """Every waypoint of the workspace's trailmaps, read on first use (None: no workspace)."""
        if self._ws is None:
            return None
        if self._waypoints is None:
            self._waypoints = load_waypoints(
                self._trailmap_dirs, RelPath(self._ws.root), self.catalog
            )
        return self._waypoints

    def _waypoint_scope(self, target: str | None) -> WaypointScope:
        manifest = self._manifests.get(target) if target is not None else None
        android = (
            next((p for p in manifest.platforms if p.name == "android"), None) if manifest else None
        )
        return WaypointScope(self.waypoints(), target, android.app_ids if android else ())
