"""Waypoints at replay: a trailmap's named places, matched against a uiautomator dump.

Follows the reference's ``WaypointMatcher``. A definition (``toolmodel.tooldefs.waypoint``, the
decoder the check validates the files with) is first *resolved* for the device's classifier
chain (``android-phone``, ``android``): each field (``required``, ``forbidden``, ``route``) comes
from the most specific block that writes it. A waypoint with no block for any classifier of the
chain does not describe this device, and does not match (it is not a vacuous pass). Then every
``required`` condition must match at least ``minCount`` nodes and no ``forbidden`` one may match
any; a condition without a selector counts no match (a required one fails, a forbidden one is
harmless).

``{{target.appId}}`` in a selector is the trail's target app id (the first of the trailmap's
Android ``app_ids`` installed on the device, else the first declared). A placeholder that
survives (no app id, or another variable) fails the match closed, as the reference does: a
forbidden selector that can match nothing would otherwise pass a screen it should not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trailblaze.finding import did_you_mean
from trailblaze.replay.hierarchy import Hierarchy, UiNode
from trailblaze.replay.matches import find
from trailblaze.replay.selector import CompiledSelector, SelectorError, compile_selector
from trailblaze.toolmodel.tooldefs.waypoint import Waypoint, WaypointCondition, Waypoints

_APP_ID = re.compile(r"\{\{\s*target\.appId\s*\}\}")
_PLACEHOLDER = re.compile(r"\{\{[^{}]*\}\}")


class WaypointProblem(Exception):
    """The waypoint cannot be evaluated on this device (a tool error: no retry helps)."""


@dataclass(frozen=True, slots=True)
class WaypointScope:
    """What ``assertWaypoint`` of one trail sees: the workspace's waypoints and its target."""

    waypoints: Waypoints | None
    """None: the trail is not in a workspace, so there are no waypoint files to read."""
    target: str | None = None
    app_ids: tuple[str, ...] = ()
    """The target trailmap's Android app ids, for ``{{target.appId}}``."""

    def lookup(self, waypoint_id: str) -> Waypoint:
        """The definition of ``waypoint_id``, or a problem naming the known ids."""
        if self.waypoints is None:
            raise WaypointProblem(
                f"unknown waypoint '{waypoint_id}': the trail is not in a workspace, so there "
                "are no trailmaps' waypoints/**/*.waypoint.yaml to read"
            )
        found = self.waypoints.by_id.get(waypoint_id)
        if found is not None:
            return found
        broken = self.waypoints.broken.get(waypoint_id)
        if broken is not None:
            raise WaypointProblem(
                f"waypoint '{waypoint_id}' cannot be read: {broken.text} "
                "(`trailblaze check` reports it too)"
            )
        raise WaypointProblem(unknown_message(waypoint_id, self.waypoints))


def unknown_message(waypoint_id: str, waypoints: Waypoints) -> str:
    known = sorted(waypoints.by_id)
    listed = ", ".join(known) if known else "none: no trailmap has waypoints/**/*.waypoint.yaml"
    return f"unknown waypoint '{waypoint_id}'{did_you_mean(waypoint_id, known)}; known: {listed}"


@dataclass(frozen=True, slots=True)
class Resolved:
    """A definition as this device sees it."""

    id: str
    path: str
    required: tuple[WaypointCondition, ...]
    forbidden: tuple[WaypointCondition, ...]


def resolve(definition: Waypoint, chain: Sequence[str]) -> Resolved:
    """Closest-wins up ``chain``; a problem when no block of the chain is declared."""
    blocks = [definition.by_classifier[c] for c in chain if c in definition.by_classifier]
    if not blocks:
        declared = ", ".join(definition.by_classifier) or "no classifier block at all"
        raise WaypointProblem(
            f"waypoint '{definition.id}' ({definition.path}) has no block for this device "
            f"({' or '.join(chain)}; it declares {declared}), so it does not describe this "
            f"screen: add an '{chain[-1] if chain else 'android'}:' block with its selectors"
        )
    required = next((b.required for b in blocks if b.required is not None), ())
    forbidden = next((b.forbidden for b in blocks if b.forbidden is not None), ())
    return Resolved(definition.id, definition.path, required, forbidden)


def uses_app_id(resolved: Resolved) -> bool:
    return any(
        _APP_ID.search(text)
        for c in (*resolved.required, *resolved.forbidden)
        for text in _strings(c.selector)
    )


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def _expand(value: Any, app_id: str | None) -> Any:
    if isinstance(value, str):
        return value if app_id is None else _APP_ID.sub(lambda _: app_id, value)
    if isinstance(value, Mapping):
        return {k: _expand(v, app_id) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_expand(v, app_id) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class Check:
    """One condition, ready to count its matches on a screen."""

    kind: str
    """``required[i]`` or ``forbidden[i]``."""
    condition: WaypointCondition
    selector: Mapping[str, Any] | None
    compiled: CompiledSelector | None

    def label(self) -> str:
        said = f" '{self.condition.description}'" if self.condition.description else ""
        shown = (
            json.dumps(self.selector, separators=(",", ":"), ensure_ascii=False)
            if self.selector is not None
            else "(no selector: a condition this matcher does not evaluate)"
        )
        return f"{self.kind}{said} {shown}"


def prepare(resolved: Resolved, app_id: str | None, app_ids_hint: str) -> list[Check]:
    """Every condition with its selector expanded and compiled; a surviving placeholder or a
    selector a dump cannot answer is a problem (fail closed)."""
    checks: list[Check] = []
    for kind, conditions in (("required", resolved.required), ("forbidden", resolved.forbidden)):
        for i, condition in enumerate(conditions):
            where = f"{kind}[{i}]"
            selector = _expand(condition.selector, app_id)
            left = [m for s in _strings(selector) for m in _PLACEHOLDER.findall(s)]
            if left:
                raise WaypointProblem(
                    f"waypoint '{resolved.id}' ({resolved.path}) {where}: {left[0]} is not "
                    f"resolved ({app_ids_hint}); a selector that keeps a placeholder matches "
                    "nothing, so the waypoint is not evaluated (fail closed)"
                )
            compiled = None
            if selector is not None:
                try:
                    compiled = compile_selector(selector)
                except SelectorError as exc:
                    raise WaypointProblem(
                        f"waypoint '{resolved.id}' ({resolved.path}) {where}: {exc}"
                    ) from None
            checks.append(Check(where, condition, selector, compiled))
    return checks


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one screen compares with a waypoint."""

    matched: bool
    missing: tuple[tuple[Check, int], ...]
    """Required conditions with fewer matches than their ``minCount``, and the count."""
    present: tuple[tuple[Check, list[UiNode]], ...]
    """Forbidden conditions that match, and what they match."""
    required: int
    forbidden: int

    def explain(self, waypoint_id: str) -> str:
        parts = [
            f"{check.label()} matched {count} element(s), needs at least "
            f"{check.condition.min_count}"
            for check, count in self.missing
        ]
        parts += [
            f"{check.label()} matched {len(nodes)} element(s): {nodes[0].describe()}"
            for check, nodes in self.present
        ]
        return f"waypoint '{waypoint_id}' does not match the screen: {'; '.join(parts)}"


def evaluate(checks: Sequence[Check], screen: Hierarchy) -> Outcome:
    missing: list[tuple[Check, int]] = []
    present: list[tuple[Check, list[UiNode]]] = []
    for check in checks:
        nodes = find(check.compiled, screen) if check.compiled is not None else []
        if check.kind.startswith("required"):
            if len(nodes) < check.condition.min_count:
                missing.append((check, len(nodes)))
        elif nodes:
            present.append((check, nodes))
    required = sum(1 for c in checks if c.kind.startswith("required"))
    return Outcome(
        matched=not missing and not present,
        missing=tuple(missing),
        present=tuple(present),
        required=required,
        forbidden=len(checks) - required,
    )


def target_app_id(scope: WaypointScope, installed: Callable[[], list[str]]) -> str | None:
    """``{{target.appId}}``: the first declared app id installed, else the first declared."""
    if len(scope.app_ids) <= 1:
        return scope.app_ids[0] if scope.app_ids else None
    packages = set(installed())
    return next((a for a in scope.app_ids if a in packages), scope.app_ids[0])


def app_ids_hint(scope: WaypointScope) -> str:
    if scope.target is None:
        return "the trail has no config.target, so there is no target app id"
    if not scope.app_ids:
        return f"target '{scope.target}' declares no Android app_ids"
    return f"target '{scope.target}' app ids: {', '.join(scope.app_ids)}"
