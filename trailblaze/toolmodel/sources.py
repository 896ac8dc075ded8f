"""What decides which trailmaps and baked targets ship outside the workspace, told cheaply
(`bundled.py` loads them): the files the keys that repeat a verdict must cover."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import ModuleType

from trailblaze.workspace import Scan, trailmap_files

ENTRY_POINT_GROUP = "trailblaze.trailmaps"
"""The entry point group of installed packages that bring trailmaps (`bundled.py`)."""


def source_files(workspace_targets: Path | None) -> list[str]:
    """Every file `discover` reads, so that the keys which repeat a verdict (the command
    line's no-op, doit's up-to-date digest, the narrow check's record) cover them: the
    workspace's baked `targets/*.yaml` and, when an installed package declares trailmaps, every
    file of its `trailmaps/` and `targets/` with each declaring `entry_points.txt`. Listed, not
    only stamped: a file that appears there changes the list.

    Cheap when no package declares any (one listing of each directory on `sys.path` and a read
    of each distribution's entry points); the packages are loaded only when one does."""
    out: list[str] = []
    if workspace_targets is not None and workspace_targets.is_dir():
        out.extend(str(p) for p in sorted(workspace_targets.glob("*.yaml")))
    declaring = _declaring()
    if declaring is not None and not declaring:
        return out
    out.extend(declaring or ())
    for _, directory in entry_point_dirs():
        for sub in ("trailmaps", "targets"):
            out.extend(str(p) for p in sorted((directory / sub).rglob("*")) if p.is_file())
    return out


def _declaring() -> list[str] | None:
    """The `entry_points.txt` of every distribution on `sys.path` that declares trailmaps;
    None when that cannot be told by reading them (a zip on the path)."""
    header = f"[{ENTRY_POINT_GROUP}]".encode()
    found: list[str] = []
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except NotADirectoryError:
            return None
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                path = os.path.join(entry or ".", name, "entry_points.txt")
                try:
                    with open(path, "rb") as fh:
                        if header in fh.read():
                            found.append(path)
                except OSError:
                    continue
    return found


def entry_point_dirs() -> list[tuple[str, Path]]:
    """(entry point name, directory) for every installed package declaring trailmaps.

    Empty when no distribution's `entry_points.txt` names the group (`_declaring`, what the
    keys list): the metadata machinery, its import and its walk over every distribution, is
    for the workspaces whose packages do."""
    if _declaring() == []:
        return []
    import importlib.metadata  # noqa: PLC0415 - a package declares trailmaps (above)

    out: list[tuple[str, Path]] = []
    for entry in sorted(
        importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name
    ):
        obj = entry.load()
        if callable(obj) and not isinstance(obj, ModuleType):
            obj = obj()
        directory = Path(obj.__file__ or "").parent if isinstance(obj, ModuleType) else Path(obj)
        out.append((entry.name, directory))
    return out


def check_inputs(found: Scan, targets_dir: Path | None = None) -> list[str]:
    """Every input of a check: the trails, then each trailmap's manifest and tool files, then
    the baked targets and installed packages' trailmaps it may resolve (`source_files`;
    `targets_dir`: the workspace's `Workspace.targets_dir`)."""
    files = list(found.trail_paths)  # a directory named like a trail is an input too
    for trailmap in found.trailmaps:
        files.extend(str(p) for p in trailmap_files(trailmap))
    files.extend(source_files(targets_dir))
    return files
