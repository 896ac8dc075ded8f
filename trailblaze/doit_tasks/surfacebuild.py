"""What the `surfaces` doit tasks do: validate the manifests, build each trailmap's surfaces,
then say whether every step passed.

A problem in one trailmap must not keep the others' surfaces from being written, and doit stops
at the first task that fails. So the steps (`_manifests` and one per trailmap) print what they
wrote and their findings and never fail themselves: each records its failure, the one-line
message, in the state store (`FAILED`, slot = the step), and while one is recorded the step is
not up to date (`passed`), so it runs, and shows its findings, every time until fixed. Then
`_result` fails with every recorded failure (`verdict`). Last come the `surfaces:<trailmap>`
subtasks, each failing for its own trailmap's recorded failure: `doit surfaces:<trailmap>` run
alone builds that trailmap (`surfaces:<trailmap>:build`) and fails when it has a problem. The
pipeline's modules load only when a step runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import IO

from trailblaze.doit_tasks.surfaceplan import trailmaps_scan
from trailblaze.doit_tasks.uptodate import Described
from trailblaze.finding import Finding
from trailblaze.state.store import Kind, Store
from trailblaze.workspace import Workspace

BUILD = "build"
"""`surfaces:<trailmap>:build` builds (and records); `surfaces:<trailmap>` fails for its problems."""
MANIFESTS = "_manifests"
"""The step that validates every `trailmap.yaml`; the others are named by trailmap directory."""


def _message(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("not a failure message")
    return value


FAILED: Kind[str] = Kind("surfaces-failed", _message)
"""Per step of the last `surfaces` run that failed: its one-line failure message."""


def check_manifests(ws: Workspace, out: IO[str] | None = None) -> str | None:
    """`surfaces:_manifests`: every `trailmap.yaml` of `ws`, validated; the failure recorded."""
    from trailblaze.check.discover import load_manifests  # noqa: PLC0415 - only when the step runs

    manifests = load_manifests(ws, trailmaps_scan(ws))
    return _record(ws, MANIFESTS, _shown(manifests.findings, "trailmap.yaml", out))


def build_surface(ws: Workspace, dir_name: str, out: IO[str] | None = None) -> str | None:
    """`surfaces:<dir_name>`: that trailmap's typed surface, tsconfig, sidecar and schema; the
    failure recorded."""
    from trailblaze.check.discover import load_manifests  # noqa: PLC0415
    from trailblaze.check.surfaces import generate_surfaces  # noqa: PLC0415
    from trailblaze.toolmodel.bundled import discover  # noqa: PLC0415 - only when the step runs
    from trailblaze.toolmodel.catalog import load_catalog  # noqa: PLC0415

    manifests = load_manifests(ws, trailmaps_scan(ws))
    catalog = load_catalog()
    bundled = discover(catalog, workspace_targets=ws.targets_dir)
    if dir_name not in manifests.trailmaps and dir_name not in bundled.trailmaps:
        return _record(ws, dir_name, f"trailblaze surfaces: trailmap '{dir_name}' no longer loads")
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
    return _record(ws, dir_name, _shown(result.findings, f"trailmap '{dir_name}'", stream))


def passed(ws: Workspace, step: str) -> Callable[[], bool]:
    """A doit `uptodate` check: False while the step's last run recorded a failure."""

    def check() -> bool:
        with Store.open(ws.scratch) as store:
            return store.get(FAILED, step) is None

    return Described(check, f"its last run recorded a failure ({step})")


def verdict(ws: Workspace, steps: Iterable[str]) -> str | None:
    """`surfaces:_result`: None when every step passed, else their failures in one line."""
    with Store.open(ws.scratch) as store:
        failures = [m for step in steps if (m := store.get(FAILED, step)) is not None]
    if not failures:
        return None
    prefix = "trailblaze surfaces: "
    return prefix + "; ".join(m.removeprefix(prefix) for m in failures)


def _record(ws: Workspace, step: str, failure: str | None) -> str | None:
    with Store.open(ws.scratch) as store:
        if failure is None:
            store.drop(FAILED, step)
        else:
            store.put(FAILED, step, failure)
        store.commit()
    return failure


def _shown(findings: tuple[Finding, ...], what: str, out: IO[str] | None) -> str | None:
    from trailblaze.report.console import make_console  # noqa: PLC0415 - only when a step runs

    console = make_console(out or sys.stdout)
    for finding in findings:
        console.print(f"{finding.kind}: {finding.text}", markup=False)
    fatal = [f for f in findings if f.fatal]
    if fatal:
        return f"trailblaze surfaces: {len(fatal)} problem(s) in {what}"
    return None
