"""``assertWaypoint``: wait until the screen is the named waypoint (``replay.waypoints``).

The waypoint comes from the workspace's trailmaps (``waypoints/**/*.waypoint.yaml``), resolved
for the device's classifiers; the screen is dumped every ``pollIntervalMs`` until it matches or
``timeoutMs`` has passed (the reference's defaults: 5000 and 250). The failure names each
required condition that did not match and each forbidden one that did. An unknown id, a
waypoint with no block for this device, an unresolved ``{{target.appId}}`` or a selector a dump
cannot answer fail at once: waiting would not change them. As a ``runIf`` condition it waits
at most the condition timeout (1 s).
"""

from __future__ import annotations

from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import ToolError
from trailblaze.replay.hierarchy import Hierarchy
from trailblaze.replay.tools.base import ToolImpl
from trailblaze.replay.waypoints import (
    Outcome,
    WaypointProblem,
    WaypointScope,
    app_ids_hint,
    evaluate,
    prepare,
    resolve,
    target_app_id,
    uses_app_id,
)


def _millis(args: dict[str, Any], name: str, default: int) -> float:
    value = args.get(name)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ToolError(f"'{name}' must be a number of milliseconds >= 0, got {value!r}")
    return float(value) / 1000


def assert_waypoint(context: ExecutionContext, args: dict[str, Any]) -> str:
    waypoint_id = args["waypoint"]
    if not isinstance(waypoint_id, str) or not waypoint_id.strip():
        raise ToolError(f"'waypoint' must be a waypoint id, got {waypoint_id!r}")
    timeout = _millis(args, "timeoutMs", 5000)
    interval = _millis(args, "pollIntervalMs", 250)
    if context.in_condition:
        # A runIf condition: a screen that is not the waypoint should cost little.
        timeout = min(timeout, context.options.condition_timeout)
    scope = context.waypoints or WaypointScope(None)
    try:
        resolved = resolve(scope.lookup(waypoint_id), context.options.classifiers)
        app_id = (
            target_app_id(scope, context.device.list_packages) if uses_app_id(resolved) else None
        )
        checks = prepare(resolved, app_id, app_ids_hint(scope))
    except WaypointProblem as exc:
        raise ToolError(str(exc)) from None
    last: list[Outcome] = []

    def attempt(screen: Hierarchy) -> Outcome | None:
        outcome = evaluate(checks, screen)
        last[:] = [outcome]
        return outcome if outcome.matched else None

    outcome = context.poll(
        attempt, lambda: last[0].explain(waypoint_id), timeout=timeout, interval=interval
    )
    return (
        f"waypoint '{waypoint_id}' matches: {outcome.required} required condition(s) met, "
        f"none of {outcome.forbidden} forbidden present"
    )


TOOLS = (ToolImpl("assertWaypoint", assert_waypoint, mutates=False),)
