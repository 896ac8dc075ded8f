"""The surfaces plan: which files each trailmap's surface depends on, remembered between runs.

`doit surfaces` has one subtask per trailmap whose `file_dep` is that trailmap's inputs: its
manifest and tool files and those of its dependencies (whose exports and tool sets it uses).
Working that out means parsing every manifest and tool file; doing it on every `doit` run would
make a no-op pay for it. So the plan is a memo in the state store (kind `surfaces-plan`), keyed
by what could change it: the manifests' contents, the list of tool files, the baked target
files, the installed packages (their directories' stamps: a new package may bring bundled
trailmaps), the catalog's stamp and our version.

Only what task creation needs is imported at the top: the pipeline loads when the plan is
worked out again.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trailblaze import __version__
from trailblaze.state.keys import digest_of, file_digest
from trailblaze.state.scratch import Layout
from trailblaze.state.store import Kind, Store
from trailblaze.workspace import Scan, Workspace, scan_trailmaps, trailmap_files


@dataclass(frozen=True, slots=True)
class PlannedSurface:
    """One trailmap's surface: the directory it is written to, and the files it depends on."""

    dir: str
    """The trailmap's directory (a bundled target's: its validation dir in the scratch dir)."""
    inputs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SurfacePlan:
    """Every trailmap whose manifest loads, by directory name, and the catalog's version."""

    catalog: str
    trailmaps: dict[str, PlannedSurface]

    def to_json(self) -> dict[str, Any]:
        return {
            "catalog": self.catalog,
            "trailmaps": {
                name: {"dir": entry.dir, "inputs": list(entry.inputs)}
                for name, entry in self.trailmaps.items()
            },
        }

    @classmethod
    def from_json(cls, data: Any) -> SurfacePlan:
        catalog, trailmaps = data["catalog"], data["trailmaps"]
        if not isinstance(catalog, str) or not isinstance(trailmaps, dict):
            raise TypeError("malformed surfaces plan")
        planned = {}
        for name, entry in trailmaps.items():
            directory, inputs = entry["dir"], entry["inputs"]
            if not isinstance(directory, str) or not all(isinstance(p, str) for p in inputs):
                raise TypeError("malformed surfaces plan")
            planned[str(name)] = PlannedSurface(dir=directory, inputs=tuple(inputs))
        return cls(catalog=catalog, trailmaps=planned)


SURFACES_PLAN: Kind[SurfacePlan] = Kind("surfaces-plan", SurfacePlan.from_json, SurfacePlan.to_json)
"""Which files each trailmap's surface depends on, keyed by what could change that."""


def trailmaps_scan(ws: Workspace) -> Scan:
    """A `Scan` of the trailmaps only: the surfaces need no walk of every trail."""
    trailmaps, findings = scan_trailmaps(ws)
    return Scan(trailmaps=trailmaps, trail_paths=(), findings=findings)


def surface_plan(ws: Workspace, found: Scan) -> SurfacePlan:
    """The plan of `ws`: the remembered one while its key (`plan_key`) holds, else worked out
    and stored."""
    key = plan_key(ws, found)
    with Store.open(ws.scratch) as store:
        plan = store.get(SURFACES_PLAN, key=key)
        if plan is None:
            plan = _compute_plan(ws, found)
            store.put(SURFACES_PLAN, "", plan, key=key)
            store.commit()
    return plan


def plan_key(ws: Workspace, found: Scan) -> str:
    """The key of the surfaces plan of `ws`: our version, the catalog's stamp, each trailmap's
    manifest by content and its tool files by path, the baked target files by content, and the
    stamps of the installed packages' directories."""
    key_parts = ["trailblaze-surfaces-plan", __version__, _stamp(_catalog_file())]
    for trailmap in found.trailmaps:
        key_parts.append(_content(trailmap.manifest))
        key_parts.extend(str(p) for p in trailmap_files(trailmap))
    if ws.targets_dir is not None and ws.targets_dir.is_dir():
        key_parts.extend(_content(p) for p in sorted(ws.targets_dir.glob("*.yaml")))
    # Installing a package adds a *.dist-info directory to site-packages, changing its mtime.
    key_parts.extend(
        _stamp(Path(entry))
        for entry in sys.path
        if entry.endswith(("site-packages", "dist-packages"))
    )
    return digest_of(key_parts)


def _compute_plan(ws: Workspace, found: Scan) -> SurfacePlan:
    # The pipeline's modules, only when the plan is worked out (not on a no-op).
    from trailblaze.check.discover import load_manifests  # noqa: PLC0415
    from trailblaze.toolmodel.bundled import discover  # noqa: PLC0415
    from trailblaze.toolmodel.catalog import load_catalog  # noqa: PLC0415
    from trailblaze.toolmodel.resolution import Resolver  # noqa: PLC0415

    manifests = load_manifests(ws, found)
    catalog = load_catalog()
    bundled = discover(catalog, workspace_targets=ws.targets_dir)
    resolver = Resolver(manifests.with_dirs(), ws.root, catalog, bundled.trailmaps)
    dirs: dict[str, Path] = dict(manifests.dirs)
    for target_id, item in bundled.trailmaps.items():
        if target_id not in dirs and item.manifest.is_target:
            dirs[target_id] = Layout(ws.scratch).validation_dir(target_id)
    trailmaps = {}
    for dir_name in sorted(dirs):
        if dir_name not in manifests.trailmaps and dir_name not in bundled.trailmaps:
            continue  # its manifest did not load: surfaces:_manifests reports why
        inputs = tuple(str(p) for p in resolver.resolve(dir_name).inputs)
        trailmaps[dir_name] = PlannedSurface(dir=str(dirs[dir_name]), inputs=inputs)
    return SurfacePlan(catalog=catalog.version, trailmaps=trailmaps)


def _content(path: Path) -> str:
    """A small file's identity by content (a touched but unchanged manifest keeps its plan)."""
    return f"{path}:{file_digest(str(path))[0]}"


def _stamp(path: Path) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}:-"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def _catalog_file() -> Path:
    from importlib import resources  # noqa: PLC0415

    return Path(str(resources.files("trailblaze").joinpath("data/catalog.json")))
