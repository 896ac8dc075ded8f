"""Many workspaces in one repository: which there are, and one report over all of them.

A monorepo root names its workspaces in its `pyproject.toml`::

    [tool.trailblaze]
    workspaces = ["apps/*", "libs/checkout"]     # paths or globs, relative to the root

or, without that table, every workspace below the root is found: a directory that is a
workspace (either layout, or its own `[tool.trailblaze]`) is one, and is not searched further;
`.git`, `node_modules`, `build`, `.trailblaze` and hidden directories are never entered.

Each workspace is named by its path relative to the root (`apps/shop`): the doit subtask
(`check:apps/shop`) and the prefix of its paths in the merged report.

With a remote cache each workspace's check asks for its own run entry (`check_remote`, for
`check --all` and doit's `check:run` alike); one `SharedRemote` per run keeps a fault to one
warning, the rest of the run working locally, and holds the run's time budget for the remote
(`state.transport.Budget`), which every request of its checks spends.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from trailblaze.finding import Finding
from trailblaze.options import CheckOptions
from trailblaze.report.record import Report, TrailStatus, UnitTest
from trailblaze.runs.warnonce import Run, first_to_warn
from trailblaze.workspace import (
    EXCLUDED_DIRS,
    Scan,
    Workspace,
    WorkspaceError,
    find_workspace,
    is_workspace,
    pyproject_table,
    scan,
)

if TYPE_CHECKING:
    from trailblaze.check.context import PrimedCompile, Progress
    from trailblaze.state.transport import Budget


@dataclass(frozen=True, slots=True)
class Monorepo:
    root: Path
    workspaces: tuple[Workspace, ...]
    """Sorted by name."""

    def name(self, ws: Workspace) -> str:
        rel = ws.root.relative_to(self.root).as_posix()
        return rel or "."


def configured_workspaces(root: Path) -> list[str] | None:
    """The `workspaces` of the root's `[tool.trailblaze]`, or None when it names none."""
    table = pyproject_table(root)  # checked there: a list of paths or globs
    return None if table is None or "workspaces" not in table else list(table["workspaces"])


def find_monorepo(root: Path, workspaces: Sequence[str] | None = None) -> Monorepo:
    """The workspaces of the monorepo at `root`: `workspaces` (paths or globs), else the
    root's `[tool.trailblaze] workspaces`, else every workspace found below the root."""
    root = root.resolve()
    if not root.is_dir():
        raise WorkspaceError(f"monorepo root '{root}' is not a directory")
    patterns = list(workspaces) if workspaces is not None else configured_workspaces(root)
    found: dict[Path, Workspace] = {}
    if patterns is None:
        for path in _discover(root):
            found[path] = find_workspace(path, explicit=True)
    else:
        for pattern in patterns:
            if Path(pattern).is_absolute():  # glob refuses it with a traceback
                raise WorkspaceError(f"workspace '{pattern}' is outside {root}")
            if _has_glob(pattern):
                matches = sorted(p for p in root.glob(pattern) if p.is_dir())
            else:  # looked up, not globbed: `root.glob(".")` raises
                matches = [root / pattern] if (root / pattern).is_dir() else []
            if not matches:
                raise WorkspaceError(f"workspace '{pattern}' matches no directory under {root}")
            for path in matches:
                resolved = path.resolve()
                if not resolved.is_relative_to(root):
                    raise WorkspaceError(f"workspace '{pattern}' is outside {root}")
                if not is_workspace(resolved):
                    if _has_glob(pattern):
                        continue  # a glob may match directories that are not workspaces
                    raise WorkspaceError(
                        f"'{pattern}' is not a workspace: expected 'trailmaps/<id>/trailmap.yaml' "
                        "or 'trails/config/trailmaps/'"
                    )
                found[resolved] = find_workspace(resolved, explicit=True)
    if not found:
        raise WorkspaceError(f"no workspace found under {root}")
    ordered = tuple(found[p] for p in sorted(found, key=lambda p: p.relative_to(root).as_posix()))
    return Monorepo(root, ordered)


def _has_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _discover(root: Path) -> list[Path]:
    out: list[Path] = []
    stack = [root]
    while stack:
        here = stack.pop()
        if is_workspace(here):
            out.append(here)
            continue
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError:
            continue
        for entry in reversed(entries):
            if (
                entry.is_dir(follow_symlinks=False)
                and entry.name not in EXCLUDED_DIRS
                and not entry.name.startswith(".")
            ):
                stack.append(Path(entry.path))
    return sorted(out)


class SharedRemote:
    """One remote cache across the checks of one run (the workspaces of a monorepo, the tasks
    of one `doit` process): after its first fault, warned about once, the rest of the run
    works without it, as the warning says."""

    def __init__(self, run: Run | None = None) -> None:
        self.fault: str | None = None
        self.run = run
        """The doit run this process works for (`doit_tasks.actions.RUN`): its other workers' warning
        is this one's too (`warnonce`)."""
        self._budget: Budget | None = None

    def budget(self) -> Budget:
        """The run's time for the remote cache, made on first use (its setting read then)."""
        if self._budget is None:
            from trailblaze.state.transport import Budget, budget_seconds  # noqa: PLC0415

            self._budget = Budget(budget_seconds())
        return self._budget

    def options(self, options: CheckOptions) -> CheckOptions:
        """`options` for the next check: without the remote once it has faulted."""
        return options if self.fault is None else replace(options, remote_cache=None)

    def warn(self, message: str) -> None:
        """The run entry's fault (`runcache.cached_run`'s `warn`): the run's one warning."""
        if self.fault is None:
            self.fault = message
            if first_to_warn(self.run):
                print(f"trailblaze: warning: {message}", file=sys.stderr, flush=True)

    def saw(self, report: Report) -> None:
        """A check's report: a per-trail fault inside it (warned about by the check) counts."""
        fault = report.stats.get("remote_fault")
        if self.fault is None and fault:
            self.fault = str(fault)


def check_remote(
    ws: Workspace,
    options: CheckOptions,
    shared: SharedRemote,
    *,
    progress: Progress | None = None,
    found: Scan | None = None,
    stats: Mapping[str, os.stat_result | None] | None = None,
    listed: Sequence[str] | None = None,
    primed: PrimedCompile | None = None,
) -> Report:
    """One workspace's check, answered by the remote cache's run entry when it has one
    (`runcache.cached_run`); the pipeline loads only when it must. `listed`: the inputs of
    `found` as the caller's key listed them; `primed`: a compiler started before the pipeline
    loaded, for a check without the remote cache (`check.run.run_check`)."""
    options = shared.options(options)
    if not options.remote_cache:
        from trailblaze.check.run import run_check  # noqa: PLC0415 - the pipeline loads only here

        return run_check(
            ws,
            options,
            progress=progress,
            found=found,
            stats=stats,
            listed=listed,
            primed=primed,
        )
    from trailblaze.runs.rows import RowsCache  # noqa: PLC0415
    from trailblaze.runs.runcache import cached_run  # noqa: PLC0415
    from trailblaze.state.transport import run_budget  # noqa: PLC0415

    found = found if found is not None else scan(ws)
    with run_budget(shared.budget()):  # every request of this check, the pipeline's too
        rows = RowsCache(options, ws, shared.warn)
        try:
            # The trail rows of the run a previous hit was answered by (`runs/rows.py`): the
            # check then parses only what changed since.
            restored = rows.restore(found)
            report = cached_run(
                ws, shared.options(options), progress=progress, found=found, stats=stats,
                warn=shared.warn,
            )  # fmt: skip
            shared.saw(report)
            rows.after(report, restored, faulted=shared.fault is not None)
        finally:
            rows.close()
    return report


def check_all(mono: Monorepo, options: CheckOptions, *, progress: Progress | None = None) -> Report:
    """Check every workspace (each by its own run entry, with a remote cache); one report,
    its paths relative to the monorepo root."""
    shared = SharedRemote()
    parts = [
        (mono.name(ws), check_remote(ws, options, shared, progress=progress))
        for ws in mono.workspaces
    ]
    return combine(mono.root, parts)


def combine(root: Path, parts: Sequence[tuple[str, Report]]) -> Report:
    """One report from the reports of several workspaces, named by their paths from `root`.

    Trails and findings get the workspace's path as a prefix; the trailmaps are named
    `<workspace>:<id>`; the exit code follows from all the findings together.
    """
    trails: list[TrailStatus] = []
    findings: list[Finding] = []
    trailmaps: list[str] = []
    tests: list[UnitTest] = []
    require = False
    for name, report in parts:
        prefix = "" if name == "." else f"{name}/"
        trails.extend(msgspec.structs.replace(t, path=prefix + t.path) for t in report.trails)
        tests.extend(
            msgspec.structs.replace(u, path=prefix + u.path, trailmap=f"{name}:{u.trailmap}")
            for u in report.tests
        )
        findings.extend(f.with_(path=prefix + f.path) for f in report.findings)
        trailmaps.extend(f"{name}:{tm}" for tm in report.trailmaps)
        require = require or report.require_typecheck
    findings.sort(key=lambda f: (f.path, f.line, f.column, f.kind, f.message))
    return Report(
        workspace=str(root),
        trailmaps=tuple(sorted(trailmaps)),
        trails=tuple(trails),
        findings=tuple(findings),
        require_typecheck=require,
        tests=tuple(tests),
    )
