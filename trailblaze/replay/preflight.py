"""What refuses a trail before a device is looked for, beyond the parse gate and ``runIf``.

``refuse_unreplayable`` turns a runnable plan into a refused one when a call it would make
(``runIf`` branches and conditions included, taken or not) may not or cannot run:

- it reaches the host and the workspace does not allow it (``trail.hostcalls``,
  ``trail.hostpolicy``): ``exec`` of a program ``[tool.trailblaze] allow-host-programs`` does
  not name, ``runCommand``, ``script``, a ``runTrail`` of a file outside the workspace, or a
  ``runTrail`` whose trail makes such a call; directly or through composed tools. Code
  ``host-program`` or ``host-file``: nothing is sent to any device;
- it cannot work on Android: a refused framework tool (``tools.REFUSED``, with its reason), a
  composed tool whose body reaches one, an unknown ``mobile_maestro`` command
  (``toolsource.unreplayable``), or a ``runTrail`` whose trail is missing, broken, the caller
  itself or has nothing to replay. Code ``unsupported-on-android``;
- an ``assertWaypoint`` whose recorded id is no waypoint of the workspace's trailmaps, with
  the known ids. Code ``unknown-waypoint``.

Each reason is a located finding on the call, naming the step and the tool.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from trailblaze import codes
from trailblaze.finding import Finding
from trailblaze.replay.failure import ToolFailure
from trailblaze.replay.plan import TrailPlan
from trailblaze.replay.toolsource import ToolSource, unreplayable
from trailblaze.trail.hostcalls import Reach, call_args
from trailblaze.trail.hostpolicy import NO_WORKSPACE, HostPolicy
from trailblaze.trail.model import Step, ToolCall
from trailblaze.trail.runif import RUNIF, parse_runif

_REFUSED = "replay refuses the trail before any device work"
#: ``runTrail`` inside ``runTrail``: deeper than this is not followed before the run.
_MAX_TRAILS = 8


def refuse_unreplayable(
    plan: TrailPlan,
    source: ToolSource,
    chain: tuple[str, ...],
    policy: HostPolicy | None = None,
) -> TrailPlan:
    """``plan`` refused when a call it would make may not (the host) or cannot (Android) run."""
    policy = policy if policy is not None else NO_WORKSPACE
    reach = Reach(source.resolution, source.catalog)
    ours = not source.ships_runif
    findings: list[Finding] = []
    for sp in plan.steps:
        if sp.recording is None:
            continue
        for call, position in planned_calls(sp.recording.calls, plan.path, ours=ours):
            where = f"{_step_label(sp.step)}, {call.name}"
            host = _host_refusal(call, plan.file, reach, policy, chain=chain, outer=(), ours=ours)
            other = unreplayable(call, source) or _bad_run_trail(
                call, plan, chain, policy, ours=ours
            )
            waypoint = _unknown_waypoint(call, source)
            if host is not None:
                code, message = host[0], f"{where}: {host[1]}; {_REFUSED}"
            elif waypoint is not None:
                code, message = codes.UNKNOWN_WAYPOINT, f"{where}: {waypoint}; {_REFUSED}"
            elif other is not None:
                code, message = codes.UNSUPPORTED_ON_ANDROID, other
            else:
                continue
            findings.append(
                Finding(
                    kind="parse",
                    path=plan.path,
                    line=call.line,
                    column=call.column,
                    message=message,
                    key_path=call.key_path,
                    code=code,
                    step=sp.step.number,
                    classifier=sp.recording.classifier,
                    tool=call.name,
                    position=position,
                )
            )
    return replace(plan, trail=None, findings=tuple(findings)) if findings else plan


def _unknown_waypoint(call: ToolCall, source: ToolSource) -> str | None:
    """Why an ``assertWaypoint`` call's literal id names no waypoint of the workspace."""
    resolved = source.lookup(call.name)
    if resolved is None or resolved.kind != "framework" or call.args is None:
        return None
    if (resolved.implementation or call.name) != "assertWaypoint":
        return None
    scope = source.waypoints
    raw = call.args.to_python().get("waypoint") if source.waypoints is not None else None
    if scope is None or scope.waypoints is None or not isinstance(raw, str) or "{{" in raw:
        return None  # no workspace (the call says so), or a token known only when it runs
    if raw in scope.waypoints.by_id or raw in scope.waypoints.broken:
        return None
    # Imported here: planning never needs the device layer the matcher sits on.
    from trailblaze.replay.waypoints import unknown_message  # noqa: PLC0415

    return unknown_message(raw, scope.waypoints)


def _step_label(step: Step) -> str:
    """How a message names a step: its number, or what it is when it has none."""
    return {"trailhead": "the trailhead", "tools": "the tools block"}.get(
        step.kind, f"step {step.number}"
    )


def planned_calls(
    calls: Sequence[ToolCall], path: str, *, ours: bool = True
) -> Iterator[tuple[ToolCall, str | None]]:
    """Every call a recording may make, with the calls inside its ``runIf`` trees (ours: a
    trailmap's own ``runIf`` is a call like any other)."""
    for call in calls:
        yield call, None
        if call.name == RUNIF and ours:
            tree, _ = parse_runif(call, path)
            if tree is not None:
                for branch in tree.calls():
                    yield branch.call, branch.position


def _host_refusal(
    call: ToolCall,
    top: Path | None,
    reach: Reach,
    policy: HostPolicy,
    *,
    chain: tuple[str, ...],
    outer: tuple[Path, ...],
    ours: bool = True,
) -> tuple[str, str] | None:
    """(code, why) when ``call`` reaches the host and may not, or replays a trail that does.

    ``top`` is the file of the trail replayed (relative paths are taken from its directory, as
    the run takes them), ``outer`` the trails ``runTrail`` replays around the call.
    """
    trail_dir = top.parent if top is not None else None
    for host_call in reach.calls(call.name, call_args(call.args)):
        why = policy.refusal(host_call, cwd=Path.cwd(), trail_dir=trail_dir)
        if why is not None:
            return host_call.tool.code, why
    if call.name != "runTrail" or call.args is None or len(outer) >= _MAX_TRAILS:
        return None
    raw = call.args.to_python().get("path")
    if not isinstance(raw, str):
        return None
    # Imported here: the tool registry imports the device layer, which planning never needs.
    from trailblaze.replay.tools.trails import OutsideWorkspace, load_trail  # noqa: PLC0415

    try:
        path, sub = load_trail(
            raw, top, chain, outer, home=policy.home(trail_dir), ships_runif=not ours
        )
    except OutsideWorkspace as exc:
        return codes.HOST_FILE, exc.message
    except ToolFailure:
        return None  # missing, broken, a cycle: `_bad_run_trail` says so
    for sp in sub.steps:
        calls = sp.recording.calls if sp.recording else ()
        for inner, _ in planned_calls(calls, sub.path, ours=ours):
            found = _host_refusal(
                inner, top, reach, policy, chain=chain, outer=(*outer, path), ours=ours
            )
            if found is not None:
                code, why = found
                return code, (
                    f"runTrail replays '{raw}', whose step {sp.step.number} calls "
                    f"{inner.name}: {why}"
                )
    return None


def _bad_run_trail(
    call: ToolCall, plan: TrailPlan, chain: tuple[str, ...], policy: HostPolicy, *, ours: bool
) -> str | None:
    """Why a ``runTrail`` call's trail cannot replay, when its path is known before the run."""
    if call.name != "runTrail" or call.args is None:
        return None
    raw = call.args.to_python().get("path")
    if not isinstance(raw, str) or "{" in raw:
        return None  # a token, or a bad argument the call reports itself
    # Imported here: the tool registry imports the device layer, which planning never needs.
    from trailblaze.replay.tools.trails import load_trail  # noqa: PLC0415

    trail_dir = plan.file.parent if plan.file is not None else None
    try:
        load_trail(raw, plan.file, chain, home=policy.home(trail_dir), ships_runif=not ours)
    except ToolFailure as exc:
        return exc.message
    return None
