"""One trail on one device, step by step, into a ``TrailResult``.

Each step's recording replays through ``engine.Runner`` (one runner per trail, so steps share
the trail's memory). After a failure the later steps are skipped with the reason: a fatal one
(the device was lost), a failed trailhead (the trail never started), or the failed step. A
trail that was refused or skipped at plan time gives its result without a device.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from trailblaze.finding import Location
from trailblaze.redaction import Secrets
from trailblaze.replay.context import ReplayOptions
from trailblaze.replay.device import Device
from trailblaze.replay.engine import Runner
from trailblaze.replay.invocation import Hooks
from trailblaze.replay.plan import TrailPlan
from trailblaze.replay.report.capture import Capture, TrailCapture
from trailblaze.replay.results import Artifact, Status, StepResult, TrailResult, TrailStatus
from trailblaze.replay.toolsource import ToolSource


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What every trail of one run replays with."""

    options: ReplayOptions
    cancel: threading.Event
    env: Mapping[str, str]
    hooks: Hooks | None = None
    capture: Capture | None = None
    """``--report``: screenshots after each step, the logcat slice and screen recording."""
    secrets: Secrets = field(default_factory=Secrets)
    """The run's ``--secret`` values: every result is redacted with them as it is made."""


def not_run(
    plan: TrailPlan, status: Literal["skipped", "cancelled"], reason: str, *, own: bool = False
) -> TrailResult:
    """Every step of ``plan`` with ``status``; ``own``: a step's own skip reason comes first."""
    steps = tuple(
        StepResult(
            number=s.step.number,
            kind=s.step.kind,
            text=s.step.text,
            status=status,
            location=Location(plan.path, s.step.line, s.step.column, s.step.key_path),
            reason=(s.skip_reason if own else None) or reason,
        )
        for s in plan.steps
    )
    trail = plan.trail
    return TrailResult(
        path=plan.path,
        status=status,
        title=trail.config.title if trail else None,
        trailmap=trail.config.target if trail else None,
        steps=steps,
        reason=reason,
    )


def run_trail(
    plan: TrailPlan, device: Device | None, source: ToolSource, settings: RunSettings
) -> TrailResult:
    """Replay ``plan`` on ``device`` (None only for a plan that will not run).

    The result is redacted here, where it is made, so nothing drawn from it (the console, the
    JSON, the JUnit XML, a report) can show a secret's value.
    """
    return settings.secrets.redact_data(_run_trail(plan, device, source, settings))


def _run_trail(
    plan: TrailPlan, device: Device | None, source: ToolSource, settings: RunSettings
) -> TrailResult:
    trail = plan.trail
    if trail is None:
        return TrailResult(plan.path, "refused", findings=tuple(f.text for f in plan.findings))
    title, target = trail.config.title, trail.config.target
    if plan.skip_reason is not None:
        return not_run(plan, "skipped", plan.skip_reason, own=plan.step_reasons)
    assert device is not None
    runner = Runner(
        device, source, trail=plan.path, tokens=plan.tokens, options=settings.options,
        cancel=settings.cancel, hooks=settings.hooks, env=settings.env, trail_file=plan.file,
        driver=plan.driver,
    )  # fmt: skip
    started = time.monotonic()
    session = settings.capture.trail(plan.path, device) if settings.capture else None
    artifacts: tuple[Artifact, ...] = ()
    if session is not None:
        session.start()
    try:
        steps = _run_steps(plan, runner, session)
    finally:
        # Also when a step raised or the run was cancelled: a recording is stopped and pulled.
        if session is not None:
            artifacts = session.finish()
    statuses = {s.status for s in steps}
    status: TrailStatus = (
        "failed" if "failed" in statuses
        else "cancelled" if "cancelled" in statuses
        else "passed"
    )  # fmt: skip
    return TrailResult(
        path=plan.path,
        status=status,
        title=title,
        trailmap=target,
        steps=tuple(steps),
        duration=time.monotonic() - started,
        driver=plan.driver,
        artifacts=artifacts,
    )


def _run_steps(plan: TrailPlan, runner: Runner, session: TrailCapture | None) -> list[StepResult]:
    steps: list[StepResult] = []
    stop: tuple[Status, str] | None = None  # (status, reason) for the steps after a stop
    for sp in plan.steps:
        step = sp.step
        base = StepResult(
            number=step.number,
            kind=step.kind,
            text=step.text,
            status="skipped",
            location=Location(plan.path, step.line, step.column, step.key_path),
        )
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
            result = replace(result, status="failed")
            if outcome.failure.kind == "fatal":
                stop = ("skipped", "not run: the device was lost")
            elif step.kind == "trailhead":
                stop = ("skipped", "not run: the trailhead failed, so the trail never started")
            else:
                stop = ("skipped", f"not run: {result.label} failed")
        elif outcome.cancelled:
            result = replace(result, status="cancelled", reason="cancelled")
            stop = ("cancelled", "cancelled")
        else:
            result = replace(result, status="passed")
        if session is not None:
            result = replace(result, artifacts=session.after_step(result))
        steps.append(result)
    return steps
