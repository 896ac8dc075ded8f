"""Replay trails on a device: the entry point ``trailblaze replay`` and ``doit replay`` call.

``replay(request)`` finds the trails (``trailfiles``: named ones, or every trail of the
workspace), plans each (parse gate, ``runIf`` validator, recording choice, skips: ``plan``),
refuses those that would call a tool Android cannot perform (``preflight``), binds each trail's
arguments (``--args-file``, then ``--arg``, then the defaults: a trail whose arguments do not
bind is refused, as Trailblaze refuses it) and reports everything that will not run, all before
a device is looked for.
Then it makes sure an adb server runs (``adb.ensure_server``: one it had to start is stopped
when the run ends), connects to the devices (``adb``, imported only here and only when
something will run), runs every trail on every device (``devicepool.fan_out``: one worker
per device, one trail per device at a time, ``trailrun`` per trail), or each trail once on the
next free device with ``--spread`` (``devicepool.spread``), and returns one ``RunResult`` with
the trails in plan order (then device order), each carrying its device's serial and model.

Usage problems raise ``ReplayUsageError`` (``request``) before anything is sent to a device. A
lost device stops: fanned out, its remaining trails are reported as not run on it and the
others go on; spread, the trail it ran is its only cost, and when no device is left, the
remaining trails are reported as not run.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from trailblaze.fsutil import write_named
from trailblaze.options import env_milliseconds
from trailblaze.redaction import Secrets
from trailblaze.replay.context import ReplayOptions
from trailblaze.replay.device import Device, DeviceLostError, DeviceSelectionError
from trailblaze.replay.devicepool import QueuedTrail, Report, fan_out, spread
from trailblaze.replay.drivers import parse_driver, with_driver
from trailblaze.replay.flags import RunFlags, select_by_tags
from trailblaze.replay.invocation import Hooks
from trailblaze.replay.plan import PlanError, classifier_chain, prefer_most_specific
from trailblaze.replay.preflight import refuse_unreplayable
from trailblaze.replay.report.capture import Capture, ReportOptions
from trailblaze.replay.report.output import prepare, write_report
from trailblaze.replay.request import (
    ReplayRequest,
    ReplayUsageError,
    check_args,
    given_args,
)
from trailblaze.replay.results import RunResult, TrailResult, junit_xml
from trailblaze.replay.scope import batching_disabled
from trailblaze.replay.scripted.host import blank_unknown_tokens
from trailblaze.replay.trailfiles import TrailFiles, find_trails, plan_file
from trailblaze.replay.trailmaps import TrailmapSources
from trailblaze.replay.trailrun import RunSettings, run_trail
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.trail.argbind import Given
from trailblaze.trail.hostpolicy import HostPolicy

# The request and its usage error are part of this entry point's signature.
__all__ = ["ReplayRequest", "ReplayUsageError", "replay"]


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
    ``on_trail`` before a device is looked for; the rest runs on the devices (each on every
    device, or spread over them).
    """
    env = os.environ if env is None else env
    # The replay's switches, read before anything is planned or sent to a device: a value they
    # do not know is a usage error now, not in the middle of a run.
    batching_disabled(env)
    blank_unknown_tokens(env)
    flags = RunFlags.read(
        tags=request.tags, memory=request.memory, secrets=request.secrets, env=env
    )
    driver = parse_driver(request.driver)
    try:
        with flags.secrets.logging_redacted():
            return _replay_with(
                request, flags, driver, device=device, devices=devices, options=options,
                cancel=cancel, hooks=hooks, on_trail=on_trail, env=env,
            )  # fmt: skip
    except Exception as exc:
        # A usage error is printed, a bug's traceback ends in its message: neither may show
        # a secret's value.
        exc.args = tuple(flags.secrets.redact(a) if isinstance(a, str) else a for a in exc.args)
        raise


def _replay_with(
    request: ReplayRequest,
    flags: RunFlags,
    driver: str | None,
    *,
    device: Device | None,
    devices: Sequence[Device] | None,
    options: ReplayOptions | None,
    cancel: threading.Event | None,
    hooks: Hooks | None,
    on_trail: Callable[[TrailResult], None] | None,
    env: Mapping[str, str],
) -> RunResult:
    started = time.monotonic()
    try:
        chain = classifier_chain(request.classifier)
    except PlanError as exc:
        raise ReplayUsageError(str(exc)) from None
    settings = RunSettings(
        options=replace(options or ReplayOptions(), classifiers=chain),
        cancel=cancel or threading.Event(),
        env=env,
        hooks=hooks,
        capture=_capture(request, flags.secrets),
        secrets=flags.secrets,
    )
    args = given_args(request.args, request.args_file)
    found = find_trails(request.trails, request.workspace)
    # What a recording may do on the host is the workspace's to say (none: nothing).
    settings = replace(
        settings, options=replace(settings.options, host=HostPolicy.of(found.workspace))
    )
    sources = TrailmapSources(found.workspace, found.scanned, load_catalog(), flags.script_env(env))
    given = list(devices) if devices is not None else [device] if device is not None else []
    files: dict[str, Path] = {}
    try:
        report, models, left_out = _replay(
            request, found, sources, chain=chain, args=args, settings=settings, given=given,
            on_trail=on_trail, flags=flags, driver=driver, files=files,
        )  # fmt: skip
    finally:
        sources.close()
    used = tuple(models)
    run = RunResult(
        trails=report.results(),
        device=used[0] if len(used) == 1 else None,
        duration=time.monotonic() - started,
        cancelled=settings.cancel.is_set(),
        devices=used,
        device_models=models,
        spread=request.spread,
        left_out=left_out,
    )
    _write_outputs(run, request, flags.secrets, files)
    return run


def _capture(request: ReplayRequest, secrets: Secrets) -> Capture | None:
    """The report directory, checked before anything is planned or sent to a device."""
    if request.report_dir is None:
        wanted = [f for f, on in (("--logcat", request.logcat),
                                  ("--record-video", request.record_video)) if on]  # fmt: skip
        if wanted:
            raise ReplayUsageError(f"{' and '.join(wanted)} need --report DIR to write into")
        return None
    prepare(request.report_dir)
    return Capture(ReportOptions(request.report_dir, request.logcat, request.record_video), secrets)


def _replay(
    request: ReplayRequest,
    found: TrailFiles,
    sources: TrailmapSources,
    *,
    chain: tuple[str, ...],
    args: dict[str, Given],
    settings: RunSettings,
    given: list[Device],
    on_trail: Callable[[TrailResult], None] | None,
    flags: RunFlags,
    driver: str | None,
    files: dict[str, Path],
) -> tuple[Report, dict[str, str | None], tuple[str, ...]]:
    """Plan, report what will not run, then run the rest; the report, the devices used
    (their models by serial, in the run's order) and the trails ``--tags`` left out."""
    plans = [
        plan_file(found.workspace, path, chain, args, ships_runif=sources.ships_runif)
        for path in found.files
    ]
    plans = prefer_most_specific(plans, chain)
    files.update((p.path, p.file) for p in plans if p.file is not None)  # the report's snippets
    check_args(args, plans)
    selected = select_by_tags(plans, flags.tags)
    plans = [flags.seed(with_driver(p, driver, chain)) for p in selected.plans]
    policy = settings.options.host
    plans = [
        refuse_unreplayable(p, sources.get(p), chain, policy) if p.runnable else p for p in plans
    ]
    report = Report(on_trail)
    for i, plan in enumerate(plans):
        if not plan.runnable:
            report.put(i, run_trail(plan, None, sources.get(plan), settings))
    work = [
        QueuedTrail(i, plan, sources.get(plan)) for i, plan in enumerate(plans) if plan.runnable
    ]
    pool = spread if request.spread else fan_out
    models: dict[str, str | None] = {d.serial: None for d in given}
    if work and given:
        models = pool(work, given, report, settings)
    elif work:
        with _connection(request, settings) as connected:
            models = pool(work, connected, report, settings)
    return report, models, selected.left_out


@contextmanager
def _connection(request: ReplayRequest, settings: RunSettings) -> Iterator[list[Device]]:
    """The devices of the request; an adb server started for this run is stopped after it."""
    try:
        # adbutils is the replay extra's dependency: imported only when a device is needed.
        from trailblaze.replay import adb  # noqa: PLC0415
    except ImportError as exc:
        raise ReplayUsageError(
            f"replay needs adbutils ({exc}); install it with: pip install 'trailblaze-doit[replay]'"
        ) from None
    env = settings.env
    serials = request.serials
    if not serials and not request.all_devices and env.get("ANDROID_SERIAL"):
        serials = (env["ANDROID_SERIAL"],)
    try:
        server = adb.ensure_server(env=env)
    except DeviceSelectionError as exc:
        raise ReplayUsageError(str(exc)) from None
    deadline = env_milliseconds(
        adb.DEADLINE_ENV, settings.options.device_deadline, floor=0.05, env=env
    )
    try:
        try:
            connected: list[Device] = list(
                adb.connect_many(
                    serials,
                    every=request.all_devices,
                    timeout=settings.options.device_timeout,
                    deadline=deadline,
                )
            )
        except DeviceSelectionError as exc:
            raise ReplayUsageError(str(exc)) from None
        except DeviceLostError as exc:
            raise ReplayUsageError(f"no device: {exc}") from None
        yield connected
    finally:
        server.stop()


def _write_outputs(
    run: RunResult, request: ReplayRequest, secrets: Secrets, files: dict[str, Path]
) -> None:
    """Every file a replay writes: each text goes through the run's redaction (the results
    are redacted already; this holds for whatever a writer adds)."""
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
            write_named(path, secrets.redact(text))
        except OSError as exc:
            raise ReplayUsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    if request.report_dir is not None:
        try:
            write_report(run, request.report_dir, files, secrets)
        except OSError as exc:
            where = exc.filename or request.report_dir
            raise ReplayUsageError(f"cannot write {where}: {exc.strerror or exc}") from None
