"""What replaying a trail will do, decided before anything is sent to a device.

A trail goes through the strict parse gate and the shared ``runIf`` validator first: a trail
either fails (refused, with the same located messages ``trailblaze check`` prints) or gets a
plan. The plan picks each step's recording for the device (the most specific classifier of the
chain, ``android-phone`` then ``android`` by default; legacy recordings have no classifier and
always apply), says why a step without one is skipped (NL-only steps need the AI runner), and
resolves the trail's argument and memory values for token substitution.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from trailblaze.finding import Finding
from trailblaze.parse import parse_trail
from trailblaze.replay.arguments import Tokens
from trailblaze.replay.results import NEEDS_AI
from trailblaze.runif import runif_findings
from trailblaze.trail import ArgDecl, Recording, Step, Trail
from trailblaze.yamlnode import YScalar

DEFAULT_CLASSIFIER = "android-phone"


class PlanError(ValueError):
    """A bad replay request (classifier, ``--arg``): a usage error."""


def classifier_chain(classifier: str | None = None) -> tuple[str, ...]:
    """Most specific first: ``android-phone`` -> (``android-phone``, ``android``)."""
    name = (classifier or DEFAULT_CLASSIFIER).strip()
    if name != "android" and not name.startswith("android-"):
        raise PlanError(
            f"classifier '{name}' is not an Android classifier: replay drives Android devices "
            "('android' or 'android-<form factor>', e.g. android-phone)"
        )
    parts = name.split("-")
    return tuple("-".join(parts[:n]) for n in range(len(parts), 0, -1))


@dataclass(frozen=True, slots=True)
class StepPlan:
    step: Step
    recording: Recording | None
    skip_reason: str | None = None


@dataclass(frozen=True, slots=True)
class TrailPlan:
    path: str
    trail: Trail | None
    findings: tuple[Finding, ...] = ()
    steps: tuple[StepPlan, ...] = ()
    skip_reason: str | None = None
    tokens: Tokens = field(default_factory=Tokens)
    file: Path | None = None
    """The trail's file (``runTrail`` resolves paths next to it)."""

    @property
    def refused(self) -> bool:
        return self.trail is None

    @property
    def declared_args(self) -> frozenset[str]:
        return self.trail.config.arg_names if self.trail else frozenset()


def refusal(path: str, text: str) -> tuple[Trail | None, tuple[Finding, ...]]:
    """The parsed trail, or None and every reason it may not start."""
    outcome = parse_trail(path, text, strict=True)
    fatal = tuple(f for f in outcome.findings if f.fatal)
    if outcome.trail is None or fatal:
        return None, fatal
    findings, _ = runif_findings(outcome.trail)
    if findings:
        return None, tuple(findings)
    return outcome.trail, ()


def plan_trail(
    path: str, text: str, chain: tuple[str, ...], args: Mapping[str, str] | None = None
) -> TrailPlan:
    trail, findings = refusal(path, text)
    if trail is None:
        return TrailPlan(path, None, findings)
    steps = tuple(_plan_step(step, chain) for step in trail.all_steps())
    tokens = _tokens(trail, args or {})
    if not any(s.recording is not None for s in steps):
        recorded = sorted(
            {r.classifier for s in trail.all_steps() for r in s.recordings if r.classifier}
        )
        if recorded:
            reason = f"no Android recording (recorded for {', '.join(recorded)}): {NEEDS_AI}"
        else:
            reason = f"no recording at all: {NEEDS_AI}"
        return TrailPlan(path, trail, (), steps, reason, tokens)
    return TrailPlan(path, trail, (), steps, None, tokens)


def _plan_step(step: Step, chain: tuple[str, ...]) -> StepPlan:
    if not step.recordable:
        return StepPlan(step, None, f"recordable: false: {NEEDS_AI}")
    if not step.has_recording:
        return StepPlan(step, None, f"no recording: {NEEDS_AI}")
    by_classifier = {r.classifier: r for r in step.recordings}
    if None in by_classifier:
        return StepPlan(step, by_classifier[None])
    for classifier in chain:
        if classifier in by_classifier:
            return StepPlan(step, by_classifier[classifier])
    recorded = ", ".join(str(c) for c in by_classifier) or "nothing"
    return StepPlan(
        step, None, f"no recording for {' or '.join(chain)} (recorded for {recorded}): {NEEDS_AI}"
    )


def _tokens(trail: Trail, args: Mapping[str, str]) -> Tokens:
    declared = {decl.name: decl for decl in trail.config.args}
    values = {name: _default(decl) for name, decl in declared.items() if decl.has_default}
    values.update({name: value for name, value in args.items() if name in declared})
    return Tokens(
        {k: v for k, v in values.items() if v is not None},
        frozenset(declared),
        dict(trail.config.memory),
    )


def _default(decl: ArgDecl) -> str | None:
    node = decl.default
    if node is None:
        return None
    if isinstance(node, YScalar):
        if node.value is None and not node.quoted:
            return None
        return node.text if not node.quoted else str(node.value)
    return json.dumps(node.to_python())
