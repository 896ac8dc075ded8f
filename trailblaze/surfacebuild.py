"""What the `surfaces` doit tasks do: validate the manifests, build one trailmap's surfaces.

Each step prints what it wrote and its findings, and returns None when it passed, else the
one-line failure message (the task fails with it). The pipeline's modules load only when a
step runs.
"""

from __future__ import annotations

import sys
from typing import IO

from trailblaze.finding import Finding
from trailblaze.surfaceplan import trailmaps_scan
from trailblaze.workspace import Workspace


def check_manifests(ws: Workspace, out: IO[str] | None = None) -> str | None:
    """`surfaces:_manifests`: every `trailmap.yaml` of `ws`, validated."""
    from trailblaze.discovery import load_manifests  # noqa: PLC0415 - only when the step runs

    manifests = load_manifests(ws, trailmaps_scan(ws))
    return _shown(manifests.findings, "trailmap.yaml", out)


def build_surface(ws: Workspace, dir_name: str, out: IO[str] | None = None) -> str | None:
    """`surfaces:<dir_name>`: that trailmap's typed surface, tsconfig, sidecar and schema."""
    from trailblaze.bundled import discover  # noqa: PLC0415 - only when the step runs
    from trailblaze.catalog import load_catalog  # noqa: PLC0415
    from trailblaze.discovery import load_manifests  # noqa: PLC0415
    from trailblaze.surface import generate_surfaces  # noqa: PLC0415

    manifests = load_manifests(ws, trailmaps_scan(ws))
    catalog = load_catalog()
    bundled = discover(catalog, workspace_targets=ws.targets_dir)
    if dir_name not in manifests.trailmaps and dir_name not in bundled.trailmaps:
        return f"trailblaze surfaces: trailmap '{dir_name}' no longer loads"
    result = generate_surfaces(
        ws.root,
        ws.scratch,
        manifests.with_dirs(),
        catalog,
        only=[dir_name],
        bundled=bundled.trailmaps,
    )
    stream = out or sys.stdout
    for path in result.written:
        print(f"  wrote {ws.rel(path)}", file=stream)
    return _shown(result.findings, f"trailmap '{dir_name}'", stream)


def _shown(findings: tuple[Finding, ...], what: str, out: IO[str] | None) -> str | None:
    from trailblaze.console import make_console  # noqa: PLC0415 - only when a step runs

    console = make_console(out or sys.stdout)
    for finding in findings:
        console.print(f"{finding.kind}: {finding.text}", markup=False)
    fatal = [f for f in findings if f.fatal]
    if fatal:
        return f"trailblaze surfaces: {len(fatal)} problem(s) in {what}"
    return None
