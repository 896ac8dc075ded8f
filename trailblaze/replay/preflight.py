"""What refuses a trail before a device is looked for, beyond the parse gate and ``runIf``.

``refuse_unreplayable`` turns a runnable plan into a refused one when a call it would make
(``runIf`` branches included, taken or not) cannot work on Android: a refused framework tool
(``tools.REFUSED``, with its reason), a composed tool whose body reaches one, an unknown
``mobile_maestro`` command (``toolsource.unreplayable``), or a ``runTrail`` whose trail is
missing, broken, the caller itself or has nothing to replay. Each reason is a located finding
(code ``unsupported-on-android``) on the call.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from trailblaze import codes
from trailblaze.finding import Finding
from trailblaze.replay.failure import ToolFailure
from trailblaze.replay.plan import TrailPlan
from trailblaze.replay.toolsource import ToolSource, unreplayable
from trailblaze.trail.model import ToolCall
from trailblaze.trail.runif import RUNIF, parse_runif


def refuse_unreplayable(plan: TrailPlan, source: ToolSource, chain: tuple[str, ...]) -> TrailPlan:
    """``plan`` refused when a call it would make cannot work on Android (with the reason)."""
    findings = [
        Finding(
            kind="parse",
            path=plan.path,
            line=call.line,
            column=call.column,
            message=message,
            key_path=call.key_path,
            code=codes.UNSUPPORTED_ON_ANDROID,
            step=sp.step.number,
            classifier=sp.recording.classifier,
            tool=call.name,
            position=position,
        )
        for sp in plan.steps
        if sp.recording is not None
        for call, position in planned_calls(sp.recording.calls, plan.path)
        if (message := unreplayable(call, source) or _bad_run_trail(call, plan, chain)) is not None
    ]
    return replace(plan, trail=None, findings=tuple(findings)) if findings else plan


def planned_calls(calls: Sequence[ToolCall], path: str) -> Iterator[tuple[ToolCall, str | None]]:
    """Every call a recording may make, with the calls inside its ``runIf`` trees."""
    for call in calls:
        yield call, None
        if call.name == RUNIF:
            tree, _ = parse_runif(call, path)
            if tree is not None:
                for branch in tree.calls():
                    yield branch.call, branch.position


def _bad_run_trail(call: ToolCall, plan: TrailPlan, chain: tuple[str, ...]) -> str | None:
    """Why a ``runTrail`` call's trail cannot replay, when its path is known before the run."""
    if call.name != "runTrail" or call.args is None:
        return None
    raw = call.args.to_python().get("path")
    if not isinstance(raw, str) or "{" in raw:
        return None  # a token, or a bad argument the call reports itself
    # Imported here: the tool registry imports the device layer, which planning never needs.
    from trailblaze.replay.tools.trails import load_trail  # noqa: PLC0415

    try:
        load_trail(raw, plan.file, chain)
    except ToolFailure as exc:
        return exc.message
    return None
