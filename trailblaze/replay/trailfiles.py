"""The trails a replay runs: named files and directories, or every trail of the workspace.

``find_trails`` finds the workspace (a named trail may live outside any: it then replays with
the framework tools only), scans it once, and lists the trail files in the order given,
directories expanded as the workspace scan sees them (its config and ``exclude``).
``plan_file`` reads one file and plans it (``plan.plan_trail``), a file that cannot be read
giving a refused plan with the located error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from trailblaze.replay.plan import ShipsRunIf, TrailPlan, plan_trail
from trailblaze.replay.request import ReplayUsageError
from trailblaze.trail.argbind import Given
from trailblaze.trail.parse import file_error
from trailblaze.workspace import (
    EXCLUDED_DIRS,
    Scan,
    SettingsError,
    Workspace,
    WorkspaceError,
    find_workspace,
    scan,
)
from trailblaze.yaml.node import YamlError, read_text


@dataclass(frozen=True, slots=True)
class TrailFiles:
    workspace: Workspace | None
    scanned: Scan | None
    """The workspace's one scan (None without a workspace)."""
    files: tuple[Path, ...]


def find_trails(trails: Sequence[Path], workspace: Path | None) -> TrailFiles:
    """The workspace (if any), its one scan, and the trail files to replay."""
    if not trails:
        try:
            found = find_workspace(workspace, explicit=workspace is not None)
        except WorkspaceError as exc:
            raise ReplayUsageError(str(exc)) from None
        everything = scan(found)
        return TrailFiles(found, everything, tuple(everything.trails))
    given = [(name, name.resolve()) for name in trails]
    first = given[0][1]
    if not first.is_dir() and not first.is_file():
        raise ReplayUsageError(f"no trail file or directory '{given[0][0]}'")
    start = workspace or (first if first.is_dir() else first.parent)
    ws: Workspace | None
    try:
        ws = find_workspace(start)
    except SettingsError as exc:
        raise ReplayUsageError(str(exc)) from None  # what it would allow or where is unknown
    except WorkspaceError:
        ws = None  # trails outside any workspace replay with the framework tools only
    scanned = scan(ws) if ws is not None else None
    files: list[Path] = []
    for name, path in given:
        if path.is_dir():
            found_here = sorted(_trails_under(path, ws, scanned))
            if not found_here:
                raise ReplayUsageError(f"no trail files under '{name}'")
            files.extend(found_here)
        elif path.is_file():
            files.append(path)
        else:
            raise ReplayUsageError(f"no trail file or directory '{name}'")
    return TrailFiles(ws, scanned, tuple(dict.fromkeys(files)))


def _trails_under(directory: Path, ws: Workspace | None, scanned: Scan | None) -> list[Path]:
    """The trails under ``directory``, as the workspace scan sees them (config and ``exclude``)."""
    if ws is not None and scanned is not None:
        if directory.is_relative_to(ws.trails_dir):
            return [p for p in scanned.trails if p.is_relative_to(directory)]
        if ws.trails_dir.is_relative_to(directory):
            return list(scanned.trails)
    # Outside the workspace's trails: the same walk, rooted at the directory.
    alone = Workspace(
        root=directory,
        layout=ws.layout if ws is not None else "compact",
        trailmaps_dir=directory / "trailmaps",
        trails_dir=directory,
        scratch=directory / ".trailblaze",
        exclude=ws.exclude if ws is not None else EXCLUDED_DIRS,
    )
    return list(scan(alone).trails)


def _rel(ws: Workspace | None, path: Path) -> str:
    if ws is not None:
        return ws.rel(path)
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


def plan_file(
    ws: Workspace | None,
    path: Path,
    chain: tuple[str, ...],
    args: Mapping[str, Given],
    *,
    ships_runif: ShipsRunIf | None = None,
) -> TrailPlan:
    """Read and plan one trail file; its path in the plan is workspace-relative."""
    rel = _rel(ws, path)
    try:
        text = read_text(path)
    except YamlError as exc:
        return TrailPlan(path=rel, trail=None, findings=file_error(rel, exc).findings, file=path)
    return replace(plan_trail(rel, text, chain, args, ships_runif=ships_runif), file=path)
