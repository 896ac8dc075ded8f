"""Replay trails on a device: the entry point ``trailblaze replay`` and ``doit replay`` call.

``replay(request)`` finds the trails (named ones, or every trail of the workspace), plans each
(parse gate, ``runIf`` validator, recording choice, skips: ``plan``), refuses those that would
call a tool Android cannot perform, validates the ``--arg`` values and reports everything that
will not run, all before a device is looked for. Then it makes sure an adb server runs
(``adb.ensure_server``: one it had to start is stopped when the run ends), connects to the
devices (``adb``, imported only here and only when something will run), spreads the trails
over them (one worker per device, one trail per device at a time, ``engine.Runner`` per trail)
and returns one ``RunResult`` with the trails in plan order.

Usage problems (no workspace, a missing trail file, a bad ``--arg`` or classifier, no adb, no
device or several without ``--device``) raise ``ReplayUsageError`` before anything is sent to a
device. A lost device stops taking trails: the trail it ran is its only cost; when no device is
left, the remaining trails are reported as not run.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from trailblaze.catalog import Catalog, load_catalog
from trailblaze.discovery import load_manifests
from trailblaze.finding import Finding, Location, did_you_mean
from trailblaze.fsutil import write_atomic
from trailblaze.manifest import Trailmap
from trailblaze.parse import file_error
from trailblaze.replay.context import ReplayOptions
from trailblaze.replay.device import Device, DeviceLostError, DeviceSelectionError
from trailblaze.replay.engine import Runner
from trailblaze.replay.failure import ToolFailure
from trailblaze.replay.invocation import Hooks
from trailblaze.replay.plan import (
    PlanError,
    TrailPlan,
    classifier_chain,
    plan_trail,
    prefer_most_specific,
)
from trailblaze.replay.results import (
    RunResult,
    Status,
    StepResult,
    TrailResult,
    TrailStatus,
    junit_xml,
)
from trailblaze.replay.scripted import ScriptHost, TrailmapScripts
from trailblaze.replay.toolsource import ToolSource, unreplayable
from trailblaze.resolve import Resolution, Resolver
from trailblaze.runif import RUNIF, parse_runif
from trailblaze.trail import ToolCall
from trailblaze.workspace import (
    EXCLUDED_DIRS,
    Scan,
    Workspace,
    WorkspaceError,
    find_workspace,
    scan,
)
from trailblaze.yamlnode import YamlError, read_text

ARG_PATTERN_HELP = "NAME=VALUE"


class ReplayUsageError(Exception):
    """The request cannot run as given: exit 2 with the message."""


@dataclass(frozen=True, slots=True)
class ReplayRequest:
    trails: tuple[Path, ...] = ()
    """Trail files or directories; empty means every trail of the workspace."""
    workspace: Path | None = None
    """Where to look for the workspace when no trails are named (default: the current dir)."""
    serials: tuple[str, ...] = ()
    """The devices (``--device``, repeatable); default ``ANDROID_SERIAL``, else the only one."""
    all_devices: bool = False
    """Replay on every ready device (``--all-devices``), with ``serials`` or without."""
    args: tuple[str, ...] = ()
    """``NAME=VALUE`` trail arguments."""
    classifier: str | None = None
    json_path: Path | None = None
    junit_path: Path | None = None


def parse_arg_values(values: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ReplayUsageError(f"--arg {value!r}: expected {ARG_PATTERN_HELP}")
        out[name] = text
    return out


def replay(
    request: ReplayRequest,
    *,
    device: Device | None = None,
    devices: Sequence[Device] | None = None,
    options: ReplayOptions | None = None,
    cancel: threading.Event | None = None,
    hooks: Hooks | None = None,
    on_trail: Callable[[TrailResult], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Replay the requested trails; ``device``/``devices`` skip the adb connection (tests).

    Everything that will not run (refused by the parse gate, skipped) is reported through
    ``on_trail`` before a device is looked for; the rest is spread over the devices.
    """
    env = os.environ if env is None else env
    cancel = cancel or threading.Event()
    started = time.monotonic()
    try:
        chain = classifier_chain(request.classifier)
    except PlanError as exc:
        raise ReplayUsageError(str(exc)) from None
    options = replace(options or ReplayOptions(), classifiers=chain)
    args = parse_arg_values(request.args)
    ws, scanned, files = _trail_files(request)
    catalog = load_catalog()
    sources = _Sources(ws, scanned, catalog, env)
    try:
        return _replay(
            request,
            device,
            devices,
            options,
            cancel,
            hooks,
            on_trail,
            env,
            started,
            chain,
            args,
            ws,
            files,
            sources,
        )
    finally:
        sources.close()


def _replay(
    request: ReplayRequest,
    device: Device | None,
    devices: Sequence[Device] | None,
    options: ReplayOptions,
    cancel: threading.Event,
    hooks: Hooks | None,
    on_trail: Callable[[TrailResult], None] | None,
    env: Mapping[str, str],
    started: float,
    chain: tuple[str, ...],
    args: dict[str, str],
    ws: Workspace | None,
    files: list[Path],
    sources: _Sources,
) -> RunResult:
    plans = [_plan(ws, path, chain, args) for path in files]
    plans = prefer_most_specific(plans, chain)
    plans = [_refuse_unreplayable(p, sources.get(p), chain) if p.runnable else p for p in plans]
    _check_args(args, plans)
    report = _Report(plans, on_trail)
    for i, plan in enumerate(plans):
        if not plan.runnable:
            report.put(i, _run_trail(plan, None, sources.get(plan), options, cancel, hooks, env))
    work = [(i, plan, sources.get(plan)) for i, plan in enumerate(plans) if plan.runnable]
    given = list(devices) if devices is not None else [device] if device is not None else []
    used: list[str] = [d.serial for d in given]
    if work and given:
        _spread(work, given, report, options, cancel, hooks, env)
    elif work:
        with _connection(request, options, env) as connected:
            used = [d.serial for d in connected]
            _spread(work, connected, report, options, cancel, hooks, env)
    run = RunResult(
        report.results(),
        used[0] if len(used) == 1 else None,
        time.monotonic() - started,
        cancel.is_set(),
        tuple(used),
    )
    _write_outputs(run, request)
    return run


class _Report:
    """Trail results in plan order, whatever order they finish in; ``on_trail`` one at a time."""

    def __init__(
        self, plans: Sequence[TrailPlan], on_trail: Callable[[TrailResult], None] | None
    ) -> None:
        self._results: list[TrailResult | None] = [None] * len(plans)
        self._on_trail = on_trail
        self._lock = threading.Lock()

    def put(self, index: int, result: TrailResult) -> None:
        with self._lock:
            self._results[index] = result
            if self._on_trail is not None:
                self._on_trail(result)

    def results(self) -> tuple[TrailResult, ...]:
        done = tuple(r for r in self._results if r is not None)
        assert len(done) == len(self._results), "a trail was neither run nor reported"
        return done


_Work = tuple[int, TrailPlan, ToolSource]


def _lost_reason(result: TrailResult) -> str | None:
    fatal = [s.failure for s in result.steps if s.failure and s.failure.kind == "fatal"]
    return fatal[0].error if fatal else None


def _spread(
    work: Sequence[_Work],
    devices: Sequence[Device],
    report: _Report,
    options: ReplayOptions,
    cancel: threading.Event,
    hooks: Hooks | None,
    env: Mapping[str, str],
) -> None:
    """Run the trails on the devices in parallel, one trail per device at a time.

    Each device takes the next trail when it is free. A device that is lost stops taking
    trails: the trail it was running is its only cost, the others go on elsewhere; what no
    device is left to run is reported as not run, with the reason.
    """
    queue = list(reversed(work))
    lock = threading.Lock()
    lost: dict[str, str] = {}

    def take() -> _Work | None:
        with lock:
            return queue.pop() if queue else None

    def serve(device: Device) -> None:
        while (item := take()) is not None:
            index, plan, source = item
            if cancel.is_set():
                report.put(index, _not_run(plan, "cancelled", "cancelled before it started"))
                continue
            result = _run_trail(plan, device, source, options, cancel, hooks, env)
            report.put(index, replace(result, device=device.serial))
            reason = _lost_reason(result)
            if reason is not None:
                with lock:
                    lost[device.serial] = reason
                return

    if len(devices) == 1:
        serve(devices[0])  # no thread: one device replays in the caller's thread
    else:
        threads = [
            threading.Thread(target=serve, args=(d,), name=f"replay-{d.serial}", daemon=True)
            for d in devices
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if not queue:
        return
    if len(devices) == 1:
        why = f"not run: the device was lost ({lost[devices[0].serial]})"
    else:
        gone = "; ".join(f"{serial}: {reason}" for serial, reason in sorted(lost.items()))
        why = f"not run: every device was lost ({gone})"
    for index, plan, _ in reversed(queue):
        report.put(index, _not_run(plan, "skipped", why))


# -- finding the trails ----------------------------------------------------------------------


def _trail_files(request: ReplayRequest) -> tuple[Workspace | None, Scan | None, list[Path]]:
    """The workspace (if any), its one scan, and the trail files to replay."""
    if not request.trails:
        try:
            root = request.workspace
            found = find_workspace(root, explicit=root is not None)
        except WorkspaceError as exc:
            raise ReplayUsageError(str(exc)) from None
        everything = scan(found)
        return found, everything, list(everything.trails)
    given = [(name, name.resolve()) for name in request.trails]
    first = given[0][1]
    if not first.is_dir() and not first.is_file():
        raise ReplayUsageError(f"no trail file or directory '{given[0][0]}'")
    start = request.workspace or (first if first.is_dir() else first.parent)
    ws: Workspace | None
    try:
        ws = find_workspace(start)
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
    return ws, scanned, list(dict.fromkeys(files))


def _trails_under(directory: Path, ws: Workspace | None, scanned: Scan | None) -> list[Path]:
    """The trails under ``directory``, as the workspace scan sees them (config and ``exclude``)."""
    if ws is not None and scanned is not None:
        if directory.is_relative_to(ws.trails_dir):
            return [p for p in scanned.trails if p.is_relative_to(directory)]
        if ws.trails_dir.is_relative_to(directory):
            return list(scanned.trails)
    # Outside the workspace's trails: the same walk, rooted at the directory.
    alone = Workspace(
        directory,
        ws.layout if ws is not None else "compact",
        directory / "trailmaps",
        directory,
        directory / ".trailblaze",
        ws.exclude if ws is not None else EXCLUDED_DIRS,
    )
    return list(scan(alone).trails)


def _rel(ws: Workspace | None, path: Path) -> str:
    if ws is not None:
        return ws.rel(path)
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


def _plan(
    ws: Workspace | None, path: Path, chain: tuple[str, ...], args: Mapping[str, str]
) -> TrailPlan:
    rel = _rel(ws, path)
    try:
        text = read_text(path)
    except YamlError as exc:
        return TrailPlan(rel, None, file_error(rel, exc).findings, file=path)
    return replace(plan_trail(rel, text, chain, args), file=path)


def _bad_run_trail(call: ToolCall, plan: TrailPlan, chain: tuple[str, ...]) -> str | None:
    """Why a ``runTrail`` call's trail cannot replay, when its path is known before the run."""
    if call.name != "runTrail" or call.args is None:
        return None
    raw = call.args.to_python().get("path")
    if not isinstance(raw, str) or "{" in raw:
        return None  # a token, or a bad argument the call reports itself
    from trailblaze.replay.tools.trails import load_trail  # noqa: PLC0415

    try:
        load_trail(raw, plan.file, chain)
    except ToolFailure as exc:
        return exc.message
    return None


def _refuse_unreplayable(plan: TrailPlan, source: ToolSource, chain: tuple[str, ...]) -> TrailPlan:
    """``plan`` refused when a call it would make cannot work on Android (with the reason)."""
    findings = [
        Finding(
            "parse",
            plan.path,
            call.line,
            call.column,
            message,
            call.key_path,
            code="unsupported-on-android",
            step=sp.step.number,
            classifier=sp.recording.classifier,
            tool=call.name,
            position=position,
        )
        for sp in plan.steps
        if sp.recording is not None
        for call, position in _planned_calls(sp.recording.calls, plan.path)
        if (message := unreplayable(call, source) or _bad_run_trail(call, plan, chain)) is not None
    ]
    return replace(plan, trail=None, findings=tuple(findings)) if findings else plan


def _planned_calls(calls: Sequence[ToolCall], path: str) -> Iterator[tuple[ToolCall, str | None]]:
    """Every call a recording may make, with the calls inside its ``runIf`` trees."""
    for call in calls:
        yield call, None
        if call.name == RUNIF:
            tree, _ = parse_runif(call, path)
            if tree is not None:
                for branch in tree.calls():
                    yield branch.call, branch.position


def _check_args(args: Mapping[str, str], plans: list[TrailPlan]) -> None:
    declared = frozenset().union(*(p.declared_args for p in plans))
    for name in args:
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise ReplayUsageError(
                f"--arg {name}: no trail here declares argument '{name}'"
                f"{did_you_mean(name, declared)} (declared: {known})"
            )


class _Sources:
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

    def get(self, plan: TrailPlan) -> ToolSource:
        target = plan.trail.config.target if plan.trail else None
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


# -- the device --------------------------------------------------------------------------------


@contextmanager
def _connection(
    request: ReplayRequest, options: ReplayOptions, env: Mapping[str, str]
) -> Iterator[list[Device]]:
    """The devices of the request; an adb server started for this run is stopped after it."""
    try:
        # adbutils is the replay extra's dependency: imported only when a device is needed.
        from trailblaze.replay import adb  # noqa: PLC0415
    except ImportError as exc:
        raise ReplayUsageError(
            f"replay needs adbutils ({exc}); install it with: pip install 'trailblaze-doit[replay]'"
        ) from None
    serials = request.serials
    if not serials and not request.all_devices and env.get("ANDROID_SERIAL"):
        serials = (env["ANDROID_SERIAL"],)
    try:
        server = adb.ensure_server(env=env)
    except DeviceSelectionError as exc:
        raise ReplayUsageError(str(exc)) from None
    try:
        try:
            connected: list[Device] = list(
                adb.connect_many(serials, every=request.all_devices, timeout=options.device_timeout)
            )
        except DeviceSelectionError as exc:
            raise ReplayUsageError(str(exc)) from None
        except DeviceLostError as exc:
            raise ReplayUsageError(f"no device: {exc}") from None
        yield connected
    finally:
        server.stop()


# -- running one trail -------------------------------------------------------------------------


def _not_run(
    plan: TrailPlan, status: Literal["skipped", "cancelled"], reason: str, *, own: bool = False
) -> TrailResult:
    """Every step of ``plan`` with ``status``; ``own``: a step's own skip reason comes first."""
    steps = tuple(
        StepResult(
            s.step.number,
            s.step.kind,
            s.step.text,
            status,
            Location(plan.path, s.step.line, s.step.column, s.step.key_path),
            reason=(s.skip_reason if own else None) or reason,
        )
        for s in plan.steps
    )
    trail = plan.trail
    return TrailResult(
        plan.path,
        status,
        trail.config.title if trail else None,
        trail.config.target if trail else None,
        steps,
        reason=reason,
    )


def _run_trail(
    plan: TrailPlan,
    device: Device | None,
    source: ToolSource,
    options: ReplayOptions,
    cancel: threading.Event,
    hooks: Hooks | None,
    env: Mapping[str, str],
) -> TrailResult:
    trail = plan.trail
    if trail is None:
        return TrailResult(plan.path, "refused", findings=tuple(f.text for f in plan.findings))
    title, target = trail.config.title, trail.config.target
    if plan.skip_reason is not None:
        return _not_run(plan, "skipped", plan.skip_reason, own=plan.step_reasons)
    assert device is not None
    runner = Runner(
        device, source, trail=plan.path, tokens=plan.tokens, options=options, cancel=cancel,
        hooks=hooks, env=env, trail_file=plan.file,
    )  # fmt: skip
    started = time.monotonic()
    steps: list[StepResult] = []
    stop: tuple[Status, str] | None = None  # (status, reason) for the steps after a stop
    for sp in plan.steps:
        step = sp.step
        where = Location(plan.path, step.line, step.column, step.key_path)
        base = StepResult(step.number, step.kind, step.text, "skipped", where)
        if stop is not None:
            steps.append(replace(base, status=stop[0], reason=stop[1]))
            continue
        if sp.recording is None:
            steps.append(replace(base, reason=sp.skip_reason))
            continue
        begun = time.monotonic()
        outcome = runner.run_recording(
            sp.recording.calls, step=step.number, single_batch=step.kind == "tools"
        )
        result = replace(
            base,
            classifier=sp.recording.classifier,
            tools=outcome.tools,
            duration=time.monotonic() - begun,
            failure=outcome.failure,
        )
        if outcome.failure is not None:
            steps.append(replace(result, status="failed"))
            if outcome.failure.kind == "fatal":
                stop = ("skipped", "not run: the device was lost")
            elif step.kind == "trailhead":
                stop = ("skipped", "not run: the trailhead failed, so the trail never started")
            else:
                stop = ("skipped", f"not run: {result.label} failed")
        elif outcome.cancelled:
            steps.append(replace(result, status="cancelled", reason="cancelled"))
            stop = ("cancelled", "cancelled")
        else:
            steps.append(replace(result, status="passed"))
    statuses = {s.status for s in steps}
    status: TrailStatus = (
        "failed" if "failed" in statuses
        else "cancelled" if "cancelled" in statuses
        else "passed"
    )  # fmt: skip
    return TrailResult(plan.path, status, title, target, tuple(steps), time.monotonic() - started)


def _write_outputs(run: RunResult, request: ReplayRequest) -> None:
    import json  # noqa: PLC0415

    outputs = []
    if request.json_path is not None:
        outputs.append(
            (request.json_path, json.dumps(run.to_json(), indent=1, ensure_ascii=False) + "\n")
        )
    if request.junit_path is not None:
        outputs.append((request.junit_path, junit_xml(run)))
    for path, text in outputs:
        try:
            write_atomic(path, text)
        except OSError as exc:
            raise ReplayUsageError(f"cannot write {path}: {exc.strerror or exc}") from None
