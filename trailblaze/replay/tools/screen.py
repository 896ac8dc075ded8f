"""Tools that find elements on the screen: taps and assertions (replay.md §2.1, §2.3).

Finding polls the uiautomator dump until the element shows or the find timeout passes (an
``ExpectedFailure`` that names what was looked for and what the screen showed). Text tools are
Maestro-derived: a tap's text is a case-insensitive *contains* match, an assertion's text is a
whole-value regex or literal. Selector tools use ``matches.find``; a selector that matches
several elements with no single clickable one is ambiguous, and a tool error rather than a
guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import ToolError
from trailblaze.replay.hierarchy import Hierarchy, UiNode, visible_nodes
from trailblaze.replay.javaregex import compile_pattern
from trailblaze.replay.matches import center, filter_nodes, find, find_by_text, pick_for_tap
from trailblaze.replay.selector import CompiledSelector, compile_selector
from trailblaze.replay.tools.base import ToolImpl, index_arg, opt_bool, opt_str

_RELATIVE_POINT = re.compile(r"\s*(\d+(?:\.\d+)?)%\s*,\s*(\d+(?:\.\d+)?)%\s*")


def _first(nodes: list[UiNode]) -> UiNode | None:
    return nodes[0] if nodes else None


def _filters(args: dict[str, Any]) -> str:
    parts = [
        f"{name}={args[name]!r}"
        for name in ("id", "enabled", "selected")
        if args.get(name) is not None
    ]
    index = args.get("index")
    if index not in (None, 0, "0", ""):
        parts.append(f"index={index}")
    return f" ({', '.join(parts)})" if parts else ""


def _press_point(context: ExecutionContext, x: int, y: int, *, long_press: bool) -> str:
    """Long-press or tap at (x, y); the verb for the tool's message."""
    if long_press:
        context.device.long_press(x, y)
        return "long-pressed"
    context.device.tap(x, y)
    return "tapped"


def _press(
    context: ExecutionContext,
    node: UiNode,
    *,
    long_press: bool,
    at: tuple[int, int] | None = None,
) -> str:
    """Long-press or tap ``node`` at ``at`` (default: its center)."""
    x, y = at or center(node)
    return f"{_press_point(context, x, y, long_press=long_press)} {node.describe()} at {x},{y}"


def _text_nodes(
    args: dict[str, Any], text: str, *, contains: bool, lenient: bool = False
) -> Callable[[Hierarchy], list[UiNode]]:
    index = index_arg(args)

    def matches(screen: Hierarchy) -> list[UiNode]:
        return find_by_text(
            screen,
            text,
            contains=contains,
            lenient=lenient,
            resource_id_regex=opt_str(args, "id"),
            index=index,
            enabled=opt_bool(args, "enabled"),
            selected=opt_bool(args, "selected"),
        )

    return matches


def _field_nodes(
    screen: Hierarchy,
    pattern: str,
    value: Callable[[UiNode], str],
    args: dict[str, Any],
    *,
    also: tuple[str, Callable[[UiNode], str]] | None = None,
) -> list[UiNode]:
    """Nodes whose ``value`` matches ``pattern`` (Maestro dialect), with the common filters."""
    compiled = compile_pattern(pattern, maestro=True)
    extra = compile_pattern(also[0], maestro=True) if also else None
    enabled, selected = opt_bool(args, "enabled"), opt_bool(args, "selected")
    nodes = [
        node
        for node in visible_nodes(screen)
        if compiled.matches(value(node) or None)
        and (extra is None or (also is not None and extra.matches(also[1](node) or None)))
    ]
    return filter_nodes(nodes, enabled=enabled, selected=selected, index=index_arg(args))


def _resource_id(node: UiNode) -> str:
    return node.resource_id


def _content_desc(node: UiNode) -> str:
    return node.content_desc


def _short_id(node: UiNode) -> str:
    return node.resource_id.split(":id/", 1)[-1]


def compile_arg(args: dict[str, Any], name: str) -> CompiledSelector:
    """The selector argument ``name``, validated against what a dump can answer."""
    selector = args.get(name)
    if selector is None:
        raise ToolError(f"'{name}' is required to find the element")
    return compile_selector(selector)


def _describe_selector(args: dict[str, Any], name: str) -> str:
    return json.dumps(args.get(name), separators=(",", ":"))


# -- taps --------------------------------------------------------------------------------------


def _press_text(context: ExecutionContext, args: dict[str, Any], *, long_press: bool) -> str:
    text = args["text"]
    matches = _text_nodes(args, text, contains=True)
    node = context.poll(
        lambda s: _first(matches(s)), f"no element with text '{text}'{_filters(args)}"
    )
    return _press(context, node, long_press=long_press)


def tap_on_element_with_text(context: ExecutionContext, args: dict[str, Any]) -> str:
    return _press_text(context, args, long_press=False)


def long_press_on_element_with_text(context: ExecutionContext, args: dict[str, Any]) -> str:
    return _press_text(context, args, long_press=True)


def tap_on_element_with_accessibility_text(context: ExecutionContext, args: dict[str, Any]) -> str:
    return _press_accessibility_text(context, args, long_press=False)


def long_press_element_with_accessibility_text(
    context: ExecutionContext, args: dict[str, Any]
) -> str:
    return _press_accessibility_text(context, args, long_press=True)


_NODE_FIELDS = ("contentDescriptionRegex", "textRegex", "classNameRegex", "resourceIdRegex")


def tap_on_accessibility_node(context: ExecutionContext, args: dict[str, Any]) -> str:
    """Tap the node the given patterns match (native dialect: case-sensitive, whole value)."""
    fields = {name: args[name] for name in _NODE_FIELDS if opt_str(args, name)}
    if not fields:
        raise ToolError(f"tapOnAccessibilityNode needs at least one of {', '.join(_NODE_FIELDS)}")
    return _tap_selector(
        context,
        {"nodeSelector": {"androidAccessibility": fields}},
        "nodeSelector",
        bool(args.get("longPress")),
    )


def _press_accessibility_text(
    context: ExecutionContext, args: dict[str, Any], *, long_press: bool
) -> str:
    label = args["accessibilityText"]
    rid = opt_str(args, "id")

    def attempt(screen: Hierarchy) -> UiNode | None:
        nodes = _field_nodes(
            screen, label, _content_desc, args, also=(rid, _resource_id) if rid else None
        )
        return _first(nodes)

    node = context.poll(attempt, f"no element with accessibility text '{label}'{_filters(args)}")
    return _press(context, node, long_press=long_press)


def _tap_selector(
    context: ExecutionContext, args: dict[str, Any], name: str, long_press: bool
) -> str:
    compiled = compile_arg(args, name)

    def attempt(screen: Hierarchy) -> UiNode | None:
        matches = find(compiled, screen)
        return pick_for_tap(matches, strict=True) if matches else None

    node = context.poll(attempt, f"no element matches {_describe_selector(args, name)}")
    relative = opt_str(args, "relativePoint")
    if relative:
        found = _RELATIVE_POINT.fullmatch(relative)
        if found is None:
            raise ToolError(f"relativePoint must look like '50%,50%', got {relative!r}")
        fx, fy = (float(v) / 100 for v in found.groups())
        left, top, right, bottom = node.bounds
        at = int(left + (right - left) * fx), int(top + (bottom - top) * fy)
        return _press(context, node, long_press=long_press, at=at)
    return _press(context, node, long_press=long_press)


def tap_on_element_by_selector(context: ExecutionContext, args: dict[str, Any]) -> str:
    return _tap_selector(context, args, "nodeSelector", bool(args.get("longPress")))


def tap_on(context: ExecutionContext, args: dict[str, Any]) -> str:
    return _tap_selector(context, args, "selector", bool(args.get("longPress")))


def tap_on_point(context: ExecutionContext, args: dict[str, Any]) -> str:
    x, y = args["x"], args["y"]
    if x < 0 or y < 0:
        raise ToolError(f"point {x},{y} is off the screen")
    return f"{_press_point(context, x, y, long_press=bool(args.get('longPress')))} {x},{y}"


# -- assertions --------------------------------------------------------------------------------


def assert_visible_with_text(context: ExecutionContext, args: dict[str, Any]) -> str:
    text = args["text"]
    matches = _text_nodes(args, text, contains=False)
    node = context.poll(
        lambda s: _first(matches(s)), f"text '{text}' is not visible{_filters(args)}"
    )
    return f"visible: {node.describe()}"


def assert_not_visible_with_text(context: ExecutionContext, args: dict[str, Any]) -> str:
    text = args["text"]
    matches = _text_nodes(args, text, contains=False, lenient=True)
    seen: list[UiNode] = []

    def attempt(screen: Hierarchy) -> bool | None:
        seen[:] = matches(screen)
        return True if not seen else None

    context.poll(attempt, lambda: f"text '{text}' is still visible: {seen[0].describe()}")
    return f"text '{text}' is not visible"


def assert_visible_with_resource_id(context: ExecutionContext, args: dict[str, Any]) -> str:
    rid = args["resourceId"]
    label = opt_str(args, "accessibilityText")
    # A short name (`cart_summary`) also matches the full `pkg:id/cart_summary`.
    reader = _resource_id if ":" in rid else _short_id

    def attempt(screen: Hierarchy) -> UiNode | None:
        also = (label, _content_desc) if label else None
        return _first(_field_nodes(screen, rid, reader, args, also=also))

    node = context.poll(attempt, f"no element with resource id '{rid}' is visible{_filters(args)}")
    return f"visible: {node.describe()}"


def assert_visible_with_accessibility_text(context: ExecutionContext, args: dict[str, Any]) -> str:
    label = args["accessibilityText"]
    rid = opt_str(args, "id")

    def attempt(screen: Hierarchy) -> UiNode | None:
        also = (rid, _resource_id) if rid else None
        return _first(_field_nodes(screen, label, _content_desc, args, also=also))

    node = context.poll(
        attempt, f"no element with accessibility text '{label}' is visible{_filters(args)}"
    )
    return f"visible: {node.describe()}"


def _timeout(args: dict[str, Any]) -> float | None:
    millis = args.get("timeoutMs")
    return None if millis is None else max(0.0, millis / 1000)


def _text_matches(node: UiNode, expected: str, mode: str) -> bool:
    actual = node.resolved_text or ""
    if mode == "PREFIX":
        return actual.startswith(expected)
    if mode == "REGEX":
        return compile_pattern(expected, maestro=False).matches(actual)
    return actual == expected


def assert_visible_by_selector(context: ExecutionContext, args: dict[str, Any]) -> str:
    compiled = compile_arg(args, "nodeSelector")
    expected = opt_str(args, "expectedText")
    mode = str(args.get("textMatchMode") or "EXACT")
    shown = _describe_selector(args, "nodeSelector")

    def attempt(screen: Hierarchy) -> UiNode | None:
        nodes = find(compiled, screen)
        if expected is not None:
            nodes = [n for n in nodes if _text_matches(n, expected, mode)]
        return _first(nodes)

    what = f"no element matches {shown}"
    if expected is not None:
        what += f" with text '{expected}' ({mode.lower()})"
    node = context.poll(attempt, what, timeout=_timeout(args))
    return f"visible: {node.describe()}"


def assert_not_visible_by_selector(context: ExecutionContext, args: dict[str, Any]) -> str:
    compiled = compile_arg(args, "nodeSelector")
    seen: list[UiNode] = []

    def attempt(screen: Hierarchy) -> bool | None:
        seen[:] = find(compiled, screen)
        return True if not seen else None

    shown = _describe_selector(args, "nodeSelector")
    context.poll(
        attempt,
        lambda: f"{shown} still matches {seen[0].describe()}",
        timeout=_timeout(args),
    )
    return "no element matches"


TOOLS = (
    ToolImpl("tapOnElementWithText", tap_on_element_with_text),
    ToolImpl("tapOnElementWithAccessibilityText", tap_on_element_with_accessibility_text),
    ToolImpl("tapOnElementBySelector", tap_on_element_by_selector),
    ToolImpl("tapOn", tap_on),
    ToolImpl("tapOnPoint", tap_on_point),
    ToolImpl("longPressOnElementWithText", long_press_on_element_with_text),
    ToolImpl("longPressElementWithAccessibilityText", long_press_element_with_accessibility_text),
    ToolImpl("tapOnAccessibilityNode", tap_on_accessibility_node),
    ToolImpl("assertVisibleWithText", assert_visible_with_text, mutates=False),
    ToolImpl("assertNotVisibleWithText", assert_not_visible_with_text, mutates=False),
    ToolImpl("assertVisibleWithResourceId", assert_visible_with_resource_id, mutates=False),
    ToolImpl(
        "assertVisibleWithAccessibilityText", assert_visible_with_accessibility_text, mutates=False
    ),
    ToolImpl("assertVisibleBySelector", assert_visible_by_selector, mutates=False),
    ToolImpl("assertNotVisibleBySelector", assert_not_visible_by_selector, mutates=False),
)
