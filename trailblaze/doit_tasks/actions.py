"""What the doit tasks run: each action calls the library and turns its outcome into doit's.

An action returns None when it passed, `TaskFailed` for findings, `TaskError` for a user error
or a required check that could not run: doit exits 1 on a failure and 2 on an error. Every
action goes through `_action`, the one place a `TrailblazeError` (`errors.py`) becomes a
`TaskError` with its message; no action raises, `SystemExit` least of all. The task dicts that
name these actions are `doit_tasks.py`'s; the library modules they call import nothing of doit.

The pipeline (YAML, jsonschema, rich, the compiler) loads inside the actions, never when the
tasks are made: doit makes every task on every run, a no-op included.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeAlias

from doit.exceptions import TaskError, TaskFailed

import trailblaze.runs.warnonce  # noqa: F401 - its RUN is taken as doit loads the tasks
from trailblaze.doit_tasks.config import dep_file_problem, workspace_of
from trailblaze.doit_tasks.uptodate import Described
from trailblaze.errors import TrailblazeError, machine_error
from trailblaze.report.record import EXIT_INFRA, EXIT_OK
from trailblaze.state.gcpause import gc_paused, let_back
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import (
    TS_VERSION,
    TSC_ENV,
    ToolchainError,
    installed_compiler,
    installed_library,
)
from trailblaze.workspace import find_workspace

if TYPE_CHECKING:
    from trailblaze.doit_tasks.uptodate import InputsDigest
    from trailblaze.workspace import Scan

P = ParamSpec("P")
Verdict: TypeAlias = "TaskFailed | TaskError | None"
"""What an action returns: None passed, `TaskFailed` findings, `TaskError` an error."""


def _action(command: str) -> Callable[[Callable[P, Verdict]], Callable[P, Verdict]]:
    """An action of `doit <command>`: a user error it raises is a `TaskError` with its message.

    The wrapper keeps the action's signature (doit reads it to pass the task's parameters).
    """

    def wrap(action: Callable[P, Verdict]) -> Callable[P, Verdict]:
        @functools.wraps(action)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> Verdict:
            problem = dep_file_problem()  # doit's database could not go in the scratch dir
            if problem is not None:
                return TaskError(f"trailblaze {command}: {problem}")
            try:
                return action(*args, **kwargs)
            except TrailblazeError as exc:
                return TaskError(f"trailblaze {command}: {exc}")
            except OSError as exc:
                error = machine_error(exc)  # a full disk, a read-only directory
                if error is None:
                    raise  # a bug: doit shows its traceback
                return TaskError(f"trailblaze {command}: {error}")

        return guarded

    return wrap


def failing(command: str, error: TrailblazeError) -> Callable[[], Verdict]:
    """The action of a task standing in for a command's whose tasks cannot be made (no
    workspace, a bad `[tool.trailblaze]`): it fails, saying why."""
    message = f"trailblaze {command}: {error}"
    return lambda: TaskError(message)


@_action("check")
def check_run(root: str, found: Scan, inputs: InputsDigest) -> Verdict:
    from trailblaze.doit_tasks.recorded import check_and_record  # noqa: PLC0415 - only when the task runs

    let_back()  # what an earlier check of this process set aside (below) is collected again
    # What the check leaves alive (the pipeline's modules, classes, caches) is left out of the
    # collections doit's work after it and the exit would make (25 ms of a one-trail edit at
    # 10,000 trails, for nothing freed), and of the one the collector's return would set off.
    with gc_paused(set_aside=True):
        check_and_record(
            find_workspace(Path(root), explicit=True), found, inputs.stats, inputs.paths
        )
    return None


@_action("check")
def check_report(root: str, format: str = "text", output: str = "", path_base: str = "") -> Verdict:
    from trailblaze.doit_tasks.recorded import forget_outcome, recorded_report, recorded_view  # noqa: PLC0415
    from trailblaze.report.output import show_recorded  # noqa: PLC0415 - only when the task runs

    ws = find_workspace(Path(root), explicit=True)
    view = recorded_view(ws)
    full = recorded_report(ws) if view is not None and format != "text" else None
    if view is None or (format != "text" and full is None):
        forget_outcome(Layout(ws.scratch))  # so that the next run checks again
        return TaskError("trailblaze check: the recorded report cannot be read; run again")
    show_recorded(
        ws.root,
        view,
        full,
        fmt=format,
        output=Path(output) if output else None,
        path_base=Path(path_base) if path_base else None,
    )
    return _check_verdict(view.exit_code, len(view.fatal_findings))


def _check_verdict(exit_code: int, findings: int) -> Verdict:
    """What doit makes of a shown report's exit code."""
    if exit_code == EXIT_INFRA:
        # doit has no exit code of its own for "the required type check could not run": an
        # error (doit exits 2), not a finding.
        return TaskError(
            "trailblaze check: the type check could not run completely and is required "
            "(CI, TRAILBLAZE_REQUIRE_TYPECHECK=1)"
        )
    if exit_code != EXIT_OK:
        return TaskFailed(f"trailblaze check: {findings} finding(s)")
    return None


@_action("check")
def check_monorepo_report(
    root: str,
    workspaces: list[tuple[str, str]],
    broken: list[str],
    *,
    format: str = "text",
    output: str = "",
    path_base: str = "",
) -> Verdict:
    """A monorepo's `check`: one report of every workspace's recorded one (the one `trailblaze
    check --all` gives), shown as one workspace's is, and a failure for all their findings and
    broken workspaces."""
    from trailblaze.doit_tasks.recorded import forget_outcome, recorded_report  # noqa: PLC0415
    from trailblaze.report.console import source_lines  # noqa: PLC0415 - only when the task runs
    from trailblaze.report.output import show_recorded  # noqa: PLC0415
    from trailblaze.report.record import Report  # noqa: PLC0415
    from trailblaze.runs.monorepo import combine  # noqa: PLC0415

    problems = list(broken)
    parts: list[tuple[str, Report]] = []
    for name, ws_root in workspaces:
        ws = find_workspace(Path(ws_root), explicit=True)
        report = recorded_report(ws)
        if report is None:
            forget_outcome(Layout(ws.scratch))  # so that the next run checks it again
            problems.append(f"{name}: the recorded report cannot be read; run again")
        else:
            parts.append((name, report))
    mono = Path(root)
    combined = combine(mono, parts)
    show_recorded(
        mono,
        combined.view(source_lines(mono, combined.findings)),
        combined if format != "text" else None,
        fmt=format,
        output=Path(output) if output else None,
        path_base=Path(path_base) if path_base else None,
    )
    if problems:
        return TaskError("trailblaze check: " + "; ".join(problems))
    return _check_verdict(combined.exit_code, len(combined.fatal_findings))


def check_clean(root: str) -> None:
    """`doit clean`: the generated tool files that carry our banner, and the scratch dir."""
    from trailblaze.doit_tasks.clean import clean_workspace  # noqa: PLC0415

    try:
        ws = find_workspace(Path(root), explicit=True)
    except TrailblazeError as exc:
        print(f"trailblaze clean: {exc}")  # doit ignores what a clean action returns
        return
    here = Path.cwd()
    for path in clean_workspace(ws):
        # Relative to where doit runs: in a monorepo, each workspace's paths under its own.
        print(f"  removed {path.relative_to(here) if path.is_relative_to(here) else ws.rel(path)}")


def _failed(message: str | None) -> TaskFailed | None:
    return TaskFailed(message) if message is not None else None


@_action("surfaces")
def surfaces_manifests(root: str) -> Verdict:
    from trailblaze.doit_tasks.surfacebuild import check_manifests  # noqa: PLC0415 - only when the task runs

    # A failure is recorded, not raised: doit would stop before the other trailmaps' surfaces
    # (`surfaces:_result` fails with it).
    check_manifests(find_workspace(Path(root), explicit=True))
    return None


@_action("surfaces")
def surfaces_build(root: str, dir_name: str) -> Verdict:
    from trailblaze.doit_tasks.surfacebuild import build_surface  # noqa: PLC0415 - only when the task runs

    build_surface(find_workspace(Path(root), explicit=True), dir_name)  # recorded, as above
    return None


@_action("surfaces")
def surfaces_result(root: str, steps: list[str]) -> Verdict:
    from trailblaze.doit_tasks.surfacebuild import verdict  # noqa: PLC0415 - only when the task runs

    return _failed(verdict(find_workspace(Path(root), explicit=True), steps))


@_action("surfaces")
def surfaces_monorepo_result(steps: list[tuple[str, str, list[str]]], broken: list[str]) -> Verdict:
    """A monorepo's `surfaces`: every workspace's problems, named by the workspace."""
    from trailblaze.doit_tasks.surfacebuild import verdict  # noqa: PLC0415 - only when the task runs

    prefix = "trailblaze surfaces: "
    problems = list(broken)
    for name, ws_root, ws_steps in steps:
        failed = verdict(find_workspace(Path(ws_root), explicit=True), ws_steps)
        if failed is not None:
            problems.append(f"{name}: {failed.removeprefix(prefix)}")
    if broken:
        return TaskError(prefix + "; ".join(problems))
    return TaskFailed(prefix + "; ".join(problems)) if problems else None


def surfaces_clean(root: str, tools_dir: str) -> None:
    """`doit clean surfaces`: one trailmap's generated tool files that carry our banner."""
    from trailblaze.doit_tasks.clean import clean_tools  # noqa: PLC0415
    from trailblaze.toolmodel.tooldefs import RelPath  # noqa: PLC0415

    rel = RelPath(Path(root))
    for path in clean_tools(Path(tools_dir), Path(root)):
        print(f"  removed {rel(path)}")


def _toolchain_ready() -> bool:
    # Up to date only when a later type gate will find a compiler; a TRAILBLAZE_TSC naming a
    # missing file makes the task run (and fail with the message) instead.
    override = os.environ.get(TSC_ENV, "").strip()
    if override and not Path(override).expanduser().is_file():
        return False
    try:
        installed_compiler(TS_VERSION)
        installed_library("zod")
    except ToolchainError:
        return False
    return True


toolchain_ready = Described(
    _toolchain_ready,
    "the pinned compiler or zod is not installed (or TRAILBLAZE_TSC names no file)",
)
"""A doit `uptodate` check: the toolchain a type gate needs is in place."""


@_action("toolchain")
def toolchain_install() -> Verdict:
    from trailblaze.report.console import toolchain_progress  # noqa: PLC0415
    from trailblaze.toolchain.bun import install_bun  # noqa: PLC0415
    from trailblaze.toolchain.compilers import find_compiler, install_library, install_typescript  # noqa: PLC0415

    with toolchain_progress(sys.stderr):
        install_typescript()
        install_library("zod")  # the declarations scripted tools compile against
        try:
            install_bun()  # what the trailmaps' unit tests run on
        except ToolchainError as exc:
            # Not fatal here: without bun the tests are reported as not run (exit 3 under
            # --require-typecheck), and the check tries the install again.
            print(f"warning: {exc}", file=sys.stderr)
    # Also validates TRAILBLAZE_TSC, so a bad override fails here and not in the type gate.
    find_compiler()
    return None


@_action("replay")
def replay(
    root: str | None,
    *,
    device: list[str],
    all_devices: bool,
    spread: bool,
    arg: list[str],
    args_file: str,
    classifier: str,
    json_file: str,
    junit_file: str,
    tags: list[str],
    memory: list[str],
    secret: list[str],
    driver: str,
    report: str = "",
    logcat: bool = False,
    record_video: bool = False,
) -> Verdict:
    from trailblaze.replay.command import EXIT_USAGE, run_command  # noqa: PLC0415
    from trailblaze.replay.request import ReplayUsageError, device_serials  # noqa: PLC0415
    from trailblaze.replay.run import ReplayRequest  # noqa: PLC0415

    ws = workspace_of(root)
    layout = Layout(ws.scratch)
    try:
        serials = device_serials(device)
    except ReplayUsageError as exc:
        return TaskError(f"doit replay: {exc}")
    request = ReplayRequest(
        workspace=ws.root,
        serials=serials,
        all_devices=all_devices,
        spread=spread,
        args=tuple(arg),
        args_file=Path(args_file) if args_file else None,
        classifier=classifier or None,
        json_path=Path(json_file) if json_file else layout.replay_json,
        junit_path=Path(junit_file) if junit_file else layout.replay_junit,
        tags=tuple(tags),
        memory=tuple(memory),
        secrets=tuple(secret),
        driver=driver or None,
        report_dir=Path(report) if report else None,
        logcat=logcat,
        record_video=record_video,
    )
    code = run_command(request, prog="doit replay", out=sys.stdout)
    if code == EXIT_USAGE:
        return TaskError("trailblaze replay: could not start (see the message above)")
    if code != EXIT_OK:
        return TaskFailed("trailblaze replay: a trail failed, was refused or was cancelled")
    return None
