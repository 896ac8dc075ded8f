"""The trailmaps of one replay: which tools each trail sees, resolved once per trailmap.

``TrailmapSources.get(plan)`` gives the ``ToolSource`` of the trailmap a trail targets (its
resolution and its scripted tools' host), or the framework tools alone for a trail with no
known target; each is built on first use. ``close`` stops the scripted tools' children.
"""

from __future__ import annotations

from collections.abc import Mapping

from trailblaze.check.discover import load_manifests
from trailblaze.replay.plan import TrailPlan
from trailblaze.replay.scripted import ScriptHost, TrailmapScripts
from trailblaze.replay.toolsource import ToolSource
from trailblaze.toolmodel.catalog import Catalog
from trailblaze.toolmodel.records import Resolution, Trailmap
from trailblaze.toolmodel.resolution import Resolver
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
        if ws is not None:
            manifests = load_manifests(ws, scanned if scanned is not None else scan(ws))
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
            self._cache[key] = ToolSource(self.catalog, resolution, scripts)
        return self._cache[key]
