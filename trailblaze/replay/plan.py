"""What replaying a trail will do, decided before anything is sent to a device.

A trail goes through the strict parse gate and the shared ``runIf`` validator first: a trail
either fails (refused, with the same located messages ``trailblaze check`` prints) or gets a
plan. The plan picks each step's recording for the device (the most specific classifier of the
chain, ``android-phone`` then ``android`` by default), says why a step without one is skipped
(NL-only steps need the AI runner), and resolves the trail's argument and memory values for
token substitution.

Skips, as the reference has them:

- ``config.skip: {classifier: reason}``: the trail is skipped on a device whose chain holds the
  classifier, the most specific one's reason first. A legacy ``skip:`` scalar skips the file.
- Another platform: a trail none of whose steps has an Android recording, recorded (or pinned
  by ``config.devices`` / ``config.driver``) only for other platforms, is "no Android recording
  (web)" (``ios``, ``desktop``, ...), counted apart from natural-language steps without a
  recording, which need the AI runner.
- Legacy per-device files: a legacy trail named ``<classifier>.trail.yaml`` (next to its
  ``blaze.yaml``) holds the recording of that classifier, and ``config.platform`` names its
  platform. It runs only where both fit the chain; ``prefer_most_specific`` then keeps, of the
  per-device files of one directory, the one of the most specific classifier.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from trailblaze import codes
from trailblaze.errors import TrailblazeError
from trailblaze.finding import Finding
from trailblaze.replay.arguments import Tokens
from trailblaze.replay.results import NEEDS_AI, NO_ANDROID
from trailblaze.trail.argbind import BindError, Given, bind
from trailblaze.trail.model import Recording, Step, Trail
from trailblaze.trail.parse import parse_trail
from trailblaze.trail.runif import runif_findings

DEFAULT_CLASSIFIER = "android-phone"
#: The driver a trail replays with when neither ``--driver`` nor a pin names one.
DEFAULT_DRIVER = "android-ondevice-accessibility"
#: The platforms classifiers start with (``android-phone`` is the Android phone form factor).
PLATFORMS = ("android", "ios", "web", "desktop", "compose")
_CLASSIFIER_FILE = re.compile(
    rf"^((?:{'|'.join(PLATFORMS)})(?:-[a-z0-9]+)*)\.trail\.yaml$", re.IGNORECASE
)
SHARED_DEFINITION = "blaze.yaml"


class PlanError(TrailblazeError, ValueError):
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
    step_reasons: bool = False
    """A skipped trail's steps show their own reasons (each needs the AI runner) first."""
    refused_args: frozenset[str] = frozenset()
    """The argument names a trail declares when it was refused because its arguments did not
    bind: an `--arg` naming one of them is still a name the run knows, not a usage error."""
    refused_tags: tuple[str, ...] | None = None
    """The ``config.tags`` of a trail refused because its arguments did not bind."""
    driver: str = DEFAULT_DRIVER
    """The Android driver it replays with (``drivers``: ``--driver``, else its pin)."""

    @property
    def refused(self) -> bool:
        return self.trail is None

    @property
    def runnable(self) -> bool:
        return self.trail is not None and self.skip_reason is None

    @property
    def legacy(self) -> bool:
        return self.trail is not None and self.trail.format == "legacy"

    @property
    def tags(self) -> tuple[str, ...] | None:
        """Its ``config.tags``; None when the parse gate refused it (nothing to read)."""
        return self.trail.config.tags if self.trail else self.refused_tags

    @property
    def declared_args(self) -> frozenset[str]:
        return self.trail.config.arg_names if self.trail else self.refused_args


ShipsRunIf = Callable[[str | None], bool]
"""Whether a target's trailmap ships its own ``runIf`` (then our runIf grammar does not apply)."""


def refusal(
    path: str, text: str, ships_runif: ShipsRunIf | None = None
) -> tuple[Trail | None, tuple[Finding, ...]]:
    """The parsed trail, or None and every reason it may not start."""
    outcome = parse_trail(path, text, strict=True)
    fatal = tuple(f for f in outcome.findings if f.fatal)
    if outcome.trail is None or fatal:
        return None, fatal
    shipped = ships_runif is not None and ships_runif(outcome.trail.config.target)
    findings, _ = runif_findings(outcome.trail, ours=not shipped)
    refused = tuple(f for f in findings if f.fatal)  # a runIf warning does not stop a replay
    if refused:
        return None, refused
    return outcome.trail, ()


def file_classifier(path: str) -> str | None:
    """The classifier a per-device file name carries (``android-phone.trail.yaml``), or None."""
    found = _CLASSIFIER_FILE.match(PurePosixPath(path).name)
    return found.group(1).lower() if found else None


def platform_of(classifier: str) -> str:
    """The platform a device classifier belongs to: ``ios-iphone`` -> ``ios``."""
    return classifier.strip().lower().split("-", 1)[0]


#: The platform of a driver named in ``config.driver`` / ``config.devices`` (the reference's
#: ``TrailblazeDriverType`` names: ANDROID_ONDEVICE_*, IOS_HOST, PLAYWRIGHT_NATIVE, ...).
_DRIVER_PLATFORMS = (
    ("ANDROID", "android"),
    ("IOS", "ios"),
    ("PLAYWRIGHT", "web"),
    ("COMPOSE", "compose"),
)


def _driver_platform(driver: str) -> str | None:
    name = driver.strip().upper()
    return next((p for prefix, p in _DRIVER_PLATFORMS if name.startswith(prefix)), None)


def _no_android(platforms: Sequence[str], why: str) -> str:
    return f"{NO_ANDROID} ({', '.join(platforms)}): {why}; replay drives Android devices only"


def other_platforms(trail: Trail) -> tuple[list[str], list[str]]:
    """(the platforms the trail is recorded or pinned for, the words that say so), in file
    order: its recordings' classifiers, its ``config.devices`` and ``config.driver``."""
    platforms: list[str] = []
    said: list[str] = []
    for classifier in dict.fromkeys(
        r.classifier for s in trail.all_steps() for r in s.recordings if r.classifier
    ):
        platforms.append(platform_of(classifier))
        said.append(f"recorded for {classifier}")
    for classifier, driver in trail.config.devices:
        platforms.append(platform_of(classifier))
        said.append(f"config.devices.{classifier}: {driver}")
        if (found := _driver_platform(driver)) is not None:
            platforms.append(found)
    if trail.config.driver and (found := _driver_platform(trail.config.driver)) is not None:
        platforms.append(found)
        said.append(f"config.driver: {trail.config.driver}")
    return list(dict.fromkeys(platforms)), list(dict.fromkeys(said))


def _not_this_device(trail: Trail, path: str, chain: tuple[str, ...]) -> str | None:
    """Why a legacy per-device file is not for this device, or None."""
    if trail.format != "legacy":
        return None
    drives = f"this replay drives {chain[0]} ({', '.join(chain)})"
    platform = (trail.config.platform or "").strip().lower()
    if platform and platform != chain[-1]:
        if platform_of(platform) != "android":
            return _no_android([platform_of(platform)], f"config.platform is {platform}")
        return f"config.platform is {platform}: {drives}"
    classifier = file_classifier(path)
    if classifier is not None and classifier not in chain:
        name = PurePosixPath(path).name
        if platform_of(classifier) != "android":
            return _no_android(
                [platform_of(classifier)], f"a per-device file recorded for {classifier} ({name})"
            )
        return f"a per-device file recorded for {classifier} ({name}): {drives}"
    return None


def _recorded_elsewhere(trail: Trail, steps: Sequence[StepPlan]) -> str | None:
    """Why a trail with no step to replay here is for another platform, or None (it is for
    Android, or says nothing: natural-language steps that need the AI runner). A legacy
    recording has no classifier: it is another platform's when ``config.driver`` or
    ``config.devices`` names only other platforms' drivers (``driver: PLAYWRIGHT_NATIVE``)."""
    platforms, said = other_platforms(trail)
    if not platforms or "android" in platforms:
        return None
    classified = any(s.recording is not None and s.recording.classifier for s in steps)
    if classified:
        return None  # an Android recording (android-phone, android) replays
    if any(s.recording is not None for s in steps) and not _pinned(trail):
        return None  # legacy unclassified recordings, and nothing says they are not Android's
    return _no_android(platforms, ", ".join(said))


def _pinned(trail: Trail) -> bool:
    """Whether ``config.devices`` or ``config.driver`` name the devices the trail is for."""
    driver = trail.config.driver
    return bool(trail.config.devices) or (
        driver is not None and _driver_platform(driver) is not None
    )


def _config_skip(trail: Trail, chain: tuple[str, ...]) -> str | None:
    if trail.config.skip_all is not None:
        return f"config.skip: {trail.config.skip_all}"
    reasons = dict(trail.config.skip)
    for classifier in chain:  # most specific first
        if classifier in reasons:
            return f"config.skip.{classifier}: {reasons[classifier] or '(no reason given)'}"
    return None


def plan_trail(
    path: str,
    text: str,
    chain: tuple[str, ...],
    args: Mapping[str, Given] | None = None,
    *,
    ships_runif: ShipsRunIf | None = None,
) -> TrailPlan:
    trail, findings = refusal(path, text, ships_runif)
    if trail is None:
        return TrailPlan(path, None, findings)
    steps = tuple(_plan_step(step, chain) for step in trail.all_steps())
    skip = _not_this_device(trail, path, chain) or _config_skip(trail, chain)
    if skip is not None:
        return TrailPlan(path, trail, (), steps, skip)
    # A trail for another platform is skipped before its arguments bind: no value given here
    # could make it replay on Android.
    elsewhere = _recorded_elsewhere(trail, steps)
    if elsewhere is not None:
        return TrailPlan(path, trail, (), steps, elsewhere)
    # Bound before anything runs, as Trailblaze binds them before any device work: a trail
    # whose arguments do not bind is refused, and no device is looked for on its account.
    tokens = _bind(path, trail, args or {})
    if isinstance(tokens, Finding):
        return TrailPlan(
            path,
            None,
            (tokens,),
            refused_args=trail.config.arg_names,
            refused_tags=trail.config.tags,
        )
    if not any(s.recording is not None for s in steps):
        recorded = sorted(
            {r.classifier for s in trail.all_steps() for r in s.recordings if r.classifier}
        )
        if recorded:
            reason = (
                f"no recording for {' or '.join(chain)} (recorded for {', '.join(recorded)}): "
                f"{NEEDS_AI}"
            )
        else:
            reason = f"no recording at all: {NEEDS_AI}"
        return TrailPlan(path, trail, (), steps, reason, tokens, step_reasons=True)
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


def _bind(path: str, trail: Trail, args: Mapping[str, Given]) -> Tokens | Finding:
    """The trail's token values, or why its arguments do not bind (Trailblaze's binder: every
    declared argument given or defaulted, each of its declared type, no null)."""
    given = {name: value for name, value in args.items() if name in trail.config.arg_names}
    bound = bind(trail.config.args, given)
    if isinstance(bound, BindError):
        decl = bound.decl
        line, column = (
            (decl.line, decl.column) if decl else (trail.config.line, trail.config.column)
        )
        key_path = f"config.args.{decl.name}" if decl else "config.args"
        return Finding(
            kind="parse",
            path=path,
            line=line,
            column=column,
            message=bound.message,
            key_path=key_path,
            code=codes.INVALID_VALUE,
        )
    return Tokens(bound, trail.config.arg_names, dict(trail.config.memory))


def prefer_most_specific(plans: Sequence[TrailPlan], chain: tuple[str, ...]) -> list[TrailPlan]:
    """Of the legacy per-device files of one directory, keep the most specific classifier's.

    The others, and the directory's shared ``blaze.yaml``, are skipped with the file that
    replays instead.
    """
    chosen: dict[Path, tuple[int, TrailPlan]] = {}
    for plan in plans:
        classifier = file_classifier(plan.path)
        if plan.runnable and plan.file is not None and classifier in chain and plan.legacy:
            rank = chain.index(classifier)
            current = chosen.get(plan.file.parent)
            if current is None or rank < current[0]:
                chosen[plan.file.parent] = (rank, plan)
    out: list[TrailPlan] = []
    for plan in plans:
        entry = chosen.get(plan.file.parent) if plan.file is not None else None
        if entry is None or entry[1] is plan or plan.trail is None or plan.file is None:
            out.append(plan)
            continue
        winner = entry[1]
        name = PurePosixPath(winner.path).name
        classifier = file_classifier(plan.path)
        if plan.runnable and plan.legacy and classifier is not None:
            why = (
                f"{name} replays instead: it is recorded for {file_classifier(winner.path)}, "
                f"more specific than {classifier}"
            )
        elif plan.file.name == SHARED_DEFINITION:
            why = f"recorded per device: {name} replays this trail"
        else:
            out.append(plan)
            continue
        out.append(replace(plan, skip_reason=why))
    return out
