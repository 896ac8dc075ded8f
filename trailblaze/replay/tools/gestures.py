"""Swipes and scrolling (replay.md §2.1): points as fractions of ``wm size``, ints on the wire.

The swipe direction is the finger's: ``swipe UP`` reveals content further down. Scrolling in a
direction moves the content that way (``scrollUntilTextIsVisible DOWN`` swipes the finger up)
and stops when the element shows, or when a swipe no longer changes the screen (the end of the
list), or after ``max_scrolls`` swipes.
"""

from __future__ import annotations

import re
from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import ExpectedFailure, ToolError
from trailblaze.replay.hierarchy import Hierarchy, UiNode, visible_nodes
from trailblaze.replay.javaregex import compile_pattern
from trailblaze.replay.matches import center, find_by_text, sort_key
from trailblaze.replay.tools.base import ToolImpl, index_arg, opt_str

Point = tuple[float, float]

_SWIPES: dict[str, tuple[Point, Point]] = {
    "UP": ((0.5, 0.5), (0.5, 0.1)),
    "DOWN": ((0.5, 0.2), (0.5, 0.9)),
    "RIGHT": ((0.1, 0.5), (0.9, 0.5)),
    "LEFT": ((0.9, 0.5), (0.1, 0.5)),
}
_EDGES: dict[str, Point] = {
    "UP": (-1, 0.1),
    "DOWN": (-1, 0.9),
    "RIGHT": (0.9, -1),
    "LEFT": (0.1, -1),
}
SWIPE_MS = 400
# Slower than Maestro's 40 ms fling, which flies past elements.
SCROLL_MS = 600
# Finger path of one scroll per (direction, start position): content moves in `direction`.
_SCROLL_STARTS = {"CENTER": 0.7, "TOP": 0.45, "BOTTOM": 0.8}
_SCROLL_SPAN = 0.4


def _pixels(size: tuple[int, int], point: Point) -> tuple[int, int]:
    width, height = size
    return round(width * point[0]), round(height * point[1])


def swipe(context: ExecutionContext, args: dict[str, Any]) -> str:
    direction = str(args["direction"])
    size = context.device.window_size()
    start, end = (_pixels(size, p) for p in _SWIPES[direction])
    text = opt_str(args, "swipeOnElementText")
    if text:
        node = context.poll(
            lambda s: next(iter(find_by_text(s, text, contains=True)), None),
            f"no element with text '{text}' to swipe on",
        )
        start = center(node)
        edge = _EDGES[direction]
        end = (
            start[0] if edge[0] < 0 else round(size[0] * edge[0]),
            start[1] if edge[1] < 0 else round(size[1] * edge[1]),
        )
    context.device.swipe(*start, *end, duration_ms=SWIPE_MS)
    return f"swiped {direction.lower()} from {start[0]},{start[1]} to {end[0]},{end[1]}"


def drag_by_points(context: ExecutionContext, args: dict[str, Any]) -> str:
    points = [args[k] for k in ("startX", "startY", "endX", "endY")]
    if any(v < 0 for v in points):
        raise ToolError(f"drag points must be on the screen, got {points}")
    duration = int(args.get("durationMs", 1000))
    x1, y1, x2, y2 = points
    context.device.swipe(x1, y1, x2, y2, duration_ms=duration)
    return f"dragged from {x1},{y1} to {x2},{y2} in {duration} ms"


_RELATIVE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*%?\s*,\s*(\d+(?:\.\d+)?)\s*%?\s*")


def _relative(text: str, name: str) -> Point:
    found = _RELATIVE.fullmatch(text)
    if found is None:
        raise ToolError(f"{name} must look like '50%, 80%', got {text!r}")
    x, y = (float(v) / 100 for v in found.groups())
    if not (0 <= x <= 1 and 0 <= y <= 1):
        raise ToolError(f"{name} {text!r} is outside 0%..100%")
    return x, y


def swipe_with_relative_coordinates(context: ExecutionContext, args: dict[str, Any]) -> str:
    """A swipe between two points given in percent of the screen, or of an element's bounds."""
    start, end = (_relative(args[k], k) for k in ("startRelative", "endRelative"))
    left, top, width, height = 0, 0, *context.device.window_size()
    text = opt_str(args, "swipeOnElementText")
    on = ""
    if text:
        node = context.poll(
            lambda s: next(iter(find_by_text(s, text, contains=True)), None),
            f"no element with text '{text}' to swipe on",
        )
        b = node.bounds
        left, top, width, height = b.left, b.top, b.right - b.left, b.bottom - b.top
        on = f" on {node.describe()}"
    x1, y1, x2, y2 = (
        round(left + width * start[0]),
        round(top + height * start[1]),
        round(left + width * end[0]),
        round(top + height * end[1]),
    )
    duration = int(args.get("durationMs") or SWIPE_MS)
    context.device.swipe(x1, y1, x2, y2, duration_ms=duration)
    return f"swiped{on} from {x1},{y1} to {x2},{y2}"


def _scroll_path(direction: str, start_position: str) -> tuple[Point, Point]:
    begin = _SCROLL_STARTS.get(start_position, 0.7)
    finish = begin - _SCROLL_SPAN
    if direction == "DOWN":
        return (0.5, begin), (0.5, finish)
    if direction == "UP":
        return (0.5, finish), (0.5, begin)
    if direction == "RIGHT":
        return (begin, 0.5), (finish, 0.5)
    return (finish, 0.5), (begin, 0.5)


def _signature(screen: Hierarchy) -> tuple[tuple[str, str, str, tuple[int, ...]], ...]:
    return tuple(
        (n.text, n.resource_id, n.content_desc, tuple(n.bounds)) for n in screen.iter_nodes()
    )


def _fully_visible(screen: Hierarchy, node: UiNode) -> bool:
    """False when the node touches an edge of a scrolling container: it may be cut off there."""
    for depth in range(1, len(node.index_path)):
        ancestor = screen.node_at(node.index_path[:depth])
        if not ancestor.scrollable:
            continue
        outer, inner = ancestor.bounds, node.bounds
        if inner.top <= outer.top or inner.bottom >= outer.bottom:
            return False
        if inner.left < outer.left or inner.right > outer.right:
            return False
    return True


def scroll_until_text_is_visible(context: ExecutionContext, args: dict[str, Any]) -> str:
    text = opt_str(args, "text") or None
    regex = opt_str(args, "textRegex")
    rid = opt_str(args, "id")
    if not (text or regex or rid):
        raise ToolError("scrollUntilTextIsVisible needs 'text', 'textRegex' or 'id'")
    index = index_arg(args) or 0
    direction = str(args["direction"])
    whole = int(args.get("visibilityPercentage") or 100) >= 100
    target = " and ".join(
        part
        for part in (
            f"text '{text}'" if text else "",
            f"text matching '{regex}'" if regex else "",
            f"id '{rid}'" if rid else "",
        )
        if part
    )
    id_pattern = compile_pattern(rid, maestro=True) if rid else None

    def matches(screen: Hierarchy) -> list[UiNode]:
        nodes = visible_nodes(screen)
        if text:
            found = set(map(id, find_by_text(screen, text, contains=True)))
            nodes = [n for n in nodes if id(n) in found]
        if regex:
            found = set(map(id, find_by_text(screen, regex, contains=False)))
            nodes = [n for n in nodes if id(n) in found]
        if id_pattern is not None:
            nodes = [
                n
                for n in nodes
                if id_pattern.matches(n.resource_id or None)
                or id_pattern.matches(n.resource_id.split(":id/", 1)[-1] or None)
            ]
        return sorted(nodes, key=sort_key)

    size = context.device.window_size()
    begin, end = (
        _pixels(size, p) for p in _scroll_path(direction, str(args.get("scrollStartPosition")))
    )
    previous = None
    scrolls = 0
    while True:
        context.check_cancelled()
        screen = context.screen(fresh=True)
        signature = _signature(screen)
        at_end = previous is not None and signature == previous
        nodes = matches(screen)
        if len(nodes) > index and (at_end or not whole or _fully_visible(screen, nodes[index])):
            return f"{nodes[index].describe()} is visible after {scrolls} scroll(s)"
        if at_end:
            raise ExpectedFailure(
                f"{target} is not visible: scrolled {direction.lower()} to the end "
                f"({scrolls - 1} scroll(s) moved the screen)"
            )
        if scrolls >= context.options.max_scrolls:
            raise ExpectedFailure(f"{target} is not visible after {scrolls} scroll(s)")
        context.device.swipe(*begin, *end, duration_ms=SCROLL_MS)
        context.invalidate()
        scrolls += 1
        previous = signature


TOOLS = (
    ToolImpl("swipe", swipe),
    ToolImpl("scrollUntilTextIsVisible", scroll_until_text_is_visible),
    ToolImpl("dragByPoints", drag_by_points),
    ToolImpl("swipeWithRelativeCoordinates", swipe_with_relative_coordinates),
)
