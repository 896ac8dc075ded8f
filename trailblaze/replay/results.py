"""Replay outcomes as data: per run, per trail, per step, per tool; JSON and JUnit XML writers.

Every tool result carries the YAML location of its call (``path:line:col``, workspace-relative)
and, inside a ``runIf`` tree or a composed tool, its position (``runIf.then[1]``). A failed step
carries its failure attribution: the successful prefix, the failed tool, the error and its kind.
Rendering for people lives in ``render``; these records only serialize.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from trailblaze.finding import Location
from trailblaze.replay.failure import FailureKind
from trailblaze.replay.timing import PHASES, Phase, add, empty
from trailblaze.report.escaping import xml_text

Status = Literal["passed", "failed", "skipped", "cancelled"]
TrailStatus = Literal["passed", "failed", "refused", "skipped", "cancelled"]
JSON_VERSION = 2
"""2: a run's and a trail's ``device`` is ``{serial, model}`` (was the serial), ``mode`` and
``device_counts`` were added: with several devices every trail runs on each (fan-out)."""

NEEDS_AI = "needs the AI runner"
NO_ANDROID = "no Android recording"
"""A trail recorded only for other platforms: "no Android recording (web): ..."."""


def no_android_platforms(reason: str | None) -> tuple[str, ...]:
    """The platforms of a "no Android recording (web, ios): ..." reason; () for another."""
    if not reason or not reason.startswith(f"{NO_ANDROID} ("):
        return ()
    inside = reason[len(NO_ANDROID) + 2 :].split(")", 1)[0]
    return tuple(p.strip() for p in inside.split(",") if p.strip())


ArtifactKind = Literal["screenshot", "logcat", "video"]


@dataclass(frozen=True, slots=True)
class Artifact:
    """What ``--report`` kept of a step or a trail: a file in the report directory, or why not."""

    kind: ArtifactKind
    label: str
    """What it shows: ``after step 2``, ``at the failure``, ``logcat``, ``screen recording``."""
    file: str | None = None
    """Its path relative to the report directory (POSIX); None when there is none."""
    error: str | None = None
    """Why there is none (``no screenshot: ...``); never a failed trail."""
    size: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "file": self.file,
            "error": self.error,
            "size": self.size,
        }


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One dispatched tool: the log record of its run."""

    tool: str
    status: Status
    location: Location
    duration: float = 0.0
    position: str | None = None
    error: str | None = None
    error_kind: FailureKind | None = None
    detail: str | None = None
    trace_id: str | None = None
    hook_errors: tuple[str, ...] = ()
    children: tuple[ToolResult, ...] = ()
    phases: Mapping[Phase, float] = field(default_factory=dict)
    """Seconds per phase (``timing.PHASES``); they add up to ``duration``."""
    logs: tuple[str, ...] = ()
    """What a scripted tool logged (``ctx.logger``) and printed, in order."""

    @property
    def label(self) -> str:
        return f"{self.position} {self.tool}" if self.position else self.tool

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "status": self.status,
            "position": self.position,
            "location": self.location.to_json(),
            "duration": round(self.duration, 4),
            "error": self.error,
            "error_kind": self.error_kind,
            "detail": self.detail,
            "trace_id": self.trace_id,
            "phases": {name: round(self.phases.get(name, 0.0), 4) for name in PHASES},
            "hook_errors": list(self.hook_errors),
            "children": [child.to_json() for child in self.children],
            "logs": list(self.logs),
        }


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a step recording failed: what ran before, what failed, and how."""

    successful: tuple[str, ...]
    failed_tool: str
    location: Location
    error: str
    kind: FailureKind

    def to_json(self) -> dict[str, Any]:
        return {
            "successful": list(self.successful),
            "failed_tool": self.failed_tool,
            "location": self.location.to_json(),
            "error": self.error,
            "kind": self.kind,
        }


@dataclass(frozen=True, slots=True)
class StepResult:
    number: int
    kind: str
    """``step``, ``verify``, ``trailhead`` or ``tools`` (a legacy ``- tools:`` block)."""
    text: str | None
    status: Status
    location: Location
    classifier: str | None = None
    tools: tuple[ToolResult, ...] = ()
    duration: float = 0.0
    reason: str | None = None
    """Why the step was skipped or cancelled."""
    failure: Failure | None = None
    artifacts: tuple[Artifact, ...] = ()
    """The screenshot ``--report`` took after the step (at the failure, for a failed one)."""

    @property
    def label(self) -> str:
        if self.kind == "trailhead":
            return "trailhead"
        if self.kind == "tools":
            return "tools block"
        return f"{self.kind} {self.number}"

    @property
    def needs_ai(self) -> bool:
        return self.status == "skipped" and NEEDS_AI in (self.reason or "")

    @property
    def no_android(self) -> bool:
        return self.status == "skipped" and bool(no_android_platforms(self.reason))

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "kind": self.kind,
            "text": self.text,
            "status": self.status,
            "classifier": self.classifier,
            "location": self.location.to_json(),
            "duration": round(self.duration, 4),
            "reason": self.reason,
            "needs_ai": self.needs_ai,
            "no_android": self.no_android,
            "failure": self.failure.to_json() if self.failure else None,
            "tools": [tool.to_json() for tool in self.tools],
            "artifacts": [artifact.to_json() for artifact in self.artifacts],
        }


@dataclass(frozen=True, slots=True)
class TrailResult:
    path: str
    status: TrailStatus
    title: str | None = None
    trailmap: str | None = None
    steps: tuple[StepResult, ...] = ()
    duration: float = 0.0
    reason: str | None = None
    findings: tuple[str, ...] = ()
    """Why the trail was refused: the parse gate's and the runIf validator's messages."""
    device: str | None = None
    """The serial of the device it ran on, or was to run on (None when no device was its)."""
    device_model: str | None = None
    """That device's model (``ro.product.model``; None when it does not say)."""
    driver: str | None = None
    """The driver it replayed with (``drivers``; None when it did not run)."""
    artifacts: tuple[Artifact, ...] = ()
    """Its logcat slice and screen recording under ``--report`` (``--logcat``, ``--record-video``)."""

    @property
    def device_label(self) -> str | None:
        """``serial (model)``, the serial alone without a model, None without a device."""
        return device_label(self.device, self.device_model) if self.device else None

    @property
    def platforms(self) -> tuple[str, ...]:
        """For a trail skipped as "no Android recording": the platforms it is for."""
        return no_android_platforms(self.reason) if self.status == "skipped" else ()

    @property
    def no_android(self) -> bool:
        return bool(self.platforms)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "device": device_json(self.device, self.device_model) if self.device else None,
            "driver": self.driver,
            "title": self.title,
            "trailmap": self.trailmap,
            "status": self.status,
            "reason": self.reason,
            "duration": round(self.duration, 4),
            "findings": list(self.findings),
            "steps": [step.to_json() for step in self.steps],
            "artifacts": [artifact.to_json() for artifact in self.artifacts],
        }


def device_label(serial: str, model: str | None) -> str:
    """How a device is named to people: ``serial (model)``, or the serial alone."""
    return f"{serial} ({model})" if model else serial


def device_json(serial: str, model: str | None) -> dict[str, Any]:
    return {"serial": serial, "model": model}


@dataclass(frozen=True, slots=True)
class RunResult:
    trails: tuple[TrailResult, ...]
    """One entry per trail and device it ran on (fan-out), or per trail (``--spread``); a
    trail that no device ran (refused, skipped before the run) has one entry, no device."""
    device: str | None = None
    """The one device of the run (None with several: see ``devices``)."""
    duration: float = 0.0
    cancelled: bool = False
    devices: tuple[str, ...] = ()
    device_models: Mapping[str, str | None] = field(default_factory=dict)
    """Each device's model by serial (None, or absent, when the device does not say)."""
    spread: bool = False
    """The trails were spread over the devices (``--spread``), not run on each."""
    left_out: tuple[str, ...] = ()
    """The trails ``--tags`` left out: not run, and neither failed nor skipped."""

    def model_of(self, serial: str) -> str | None:
        return self.device_models.get(serial)

    def device_counts(self) -> dict[str, dict[str, int]]:
        """Per device (by serial, in run order): how many of its runs ended in each status."""
        out: dict[str, dict[str, int]] = {}
        for serial in self.devices:
            statuses = Counter(t.status for t in self.trails if t.device == serial)
            out[serial] = {
                k: statuses.get(k, 0) for k in ("passed", "failed", "skipped", "cancelled")
            }
        return out

    def phases(self) -> dict[Phase, float]:
        """Seconds per phase over every tool run (top-level calls; nested ones are inside)."""
        total = empty()
        for trail in self.trails:
            for step in trail.steps:
                for tool in step.tools:
                    add(total, tool.phases)
        return total

    @property
    def exit_code(self) -> int:
        """0 when every replayed step passed; 1 when a trail failed, was refused or cancelled."""
        bad = {"failed", "refused", "cancelled"}
        return 1 if self.cancelled or any(t.status in bad for t in self.trails) else 0

    def counts(self) -> dict[str, Any]:
        trails = Counter(t.status for t in self.trails)
        steps = Counter(s.status for t in self.trails for s in t.steps)
        return {
            "trails": len(self.trails),
            **{
                f"trails_{k}": trails.get(k, 0)
                for k in ("passed", "failed", "refused", "skipped", "cancelled")
            },
            "steps": sum(steps.values()),
            **{f"steps_{k}": steps.get(k, 0) for k in ("passed", "failed", "skipped", "cancelled")},
            "steps_needing_ai": sum(1 for t in self.trails for s in t.steps if s.needs_ai),
            "steps_no_android": sum(1 for t in self.trails for s in t.steps if s.no_android),
            "trails_needing_ai": sum(
                1 for t in self.trails if t.status == "skipped" and NEEDS_AI in (t.reason or "")
            ),
            "trails_no_android": sum(1 for t in self.trails if t.no_android),
            "no_android_platforms": dict(
                sorted(Counter(p for t in self.trails for p in t.platforms).items())
            ),
            "trails_left_out": len(self.left_out),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "version": JSON_VERSION,
            "exit_code": self.exit_code,
            "mode": "spread" if self.spread else "fan-out",
            "device": device_json(self.device, self.model_of(self.device)) if self.device else None,
            "devices": [device_json(s, self.model_of(s)) for s in self.devices],
            "device_counts": self.device_counts(),
            "cancelled": self.cancelled,
            "duration": round(self.duration, 4),
            "counts": self.counts(),
            "phases": {name: round(seconds, 4) for name, seconds in self.phases().items()},
            "trails": [trail.to_json() for trail in self.trails],
            "left_out": list(self.left_out),
        }


# -- JUnit XML ---------------------------------------------------------------------------------


def junit_xml(run: RunResult) -> str:
    """One ``<testsuite>`` per trail and device, one ``<testcase>`` per step (the shape CI
    servers read). With several devices the device is in every name and class name (a CI server
    tells the phone's run from the tablet's); its serial and model are properties always."""
    root = ET.Element("testsuites", name="trailblaze replay", time=_seconds(run.duration))
    totals = Counter[str]()
    several = len(run.devices) > 1
    for trail in run.trails:
        name = trail.path
        if several and trail.device_label:
            name = f"{trail.path} on {trail.device_label}"
        suite = ET.SubElement(root, "testsuite", name=name, time=_seconds(trail.duration))
        if trail.device:
            properties = ET.SubElement(suite, "properties")
            ET.SubElement(properties, "property", name="device.serial", value=trail.device)
            ET.SubElement(
                properties, "property", name="device.model", value=trail.device_model or ""
            )
        counts = Counter[str]()
        for case in _cases(trail, device=trail.device if several else None):
            suite.append(case)
            counts["tests"] += 1
            for outcome in ("failure", "error", "skipped"):
                if case.find(outcome) is not None:
                    counts[outcome] += 1
        for key, attr in (
            ("tests", "tests"),
            ("failure", "failures"),
            ("error", "errors"),
            ("skipped", "skipped"),
        ):
            suite.set(attr, str(counts[key]))
            totals[attr] += counts[key]
    for attr in ("tests", "failures", "errors", "skipped"):
        root.set(attr, str(totals[attr]))
    ET.indent(root)
    # A device's or a script's text may hold characters XML 1.0 forbids (a terminal escape);
    # ElementTree writes them raw, and a CI server then cannot read the file. Escaped here.
    document = xml_text(ET.tostring(root, encoding="unicode"))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + document + "\n"


def _cases(trail: TrailResult, *, device: str | None) -> list[ET.Element]:
    classname = trail.path.removesuffix(".yaml").replace("/", ".")
    if device is not None:
        classname += f" [{device}]"
    if trail.status == "refused":
        case = ET.Element("testcase", name="parse gate", classname=classname, time="0")
        failure = ET.SubElement(case, "failure", message="the trail was refused before it started")
        failure.text = "\n".join(trail.findings)
        return [case]
    if not trail.steps:
        case = ET.Element("testcase", name="trail", classname=classname, time="0")
        ET.SubElement(case, "skipped", message=trail.reason or "skipped")
        return [case]
    cases = []
    for step in trail.steps:
        name = f"{step.label}: {step.text}" if step.text else step.label
        case = ET.Element("testcase", name=name, classname=classname, time=_seconds(step.duration))
        case.set("file", step.location.path)
        case.set("line", str(step.location.line))
        if step.status == "failed" and step.failure is not None:
            tag = "error" if step.failure.kind == "fatal" else "failure"
            element = ET.SubElement(
                case, tag, message=f"{step.failure.failed_tool}: {step.failure.error}"
            )
            element.text = _failure_text(step)
        elif step.status in ("skipped", "cancelled"):
            ET.SubElement(case, "skipped", message=step.reason or step.status)
        out = ET.SubElement(case, "system-out")
        out.text = "\n".join(_tool_lines(step.tools, 0)) or "(no tools)"
        cases.append(case)
    return cases


def _failure_text(step: StepResult) -> str:
    failure = step.failure
    assert failure is not None
    ran = ", ".join(failure.successful) or "nothing"
    return (
        f"{failure.location.text}: {failure.failed_tool} failed ({failure.kind}): "
        f"{failure.error}\nran before it: {ran}"
    )


def _tool_lines(tools: tuple[ToolResult, ...], depth: int) -> list[str]:
    lines = []
    for tool in tools:
        text = f"{'  ' * depth}{tool.status:<9} {tool.label} ({tool.location.text}, {tool.duration:.2f}s)"
        if tool.error:
            text += f": {tool.error}"
        elif tool.detail:
            text += f": {tool.detail}"
        lines.append(text)
        lines.extend(_tool_lines(tool.children, depth + 1))
    return lines


def _seconds(value: float) -> str:
    return f"{value:.3f}"
