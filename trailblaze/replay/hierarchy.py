"""uiautomator dump XML -> a frozen tree of ``UiNode`` records.

The dump is untrusted device output: anything that is not a well-formed ``<hierarchy>`` of
``<node>`` elements with ``[l,t][r,b]`` bounds is a ``DeviceError`` naming the problem, never a
half-parsed tree. ``visible_nodes`` applies the drop rules of replay.md §2.3 (zero-area,
off-screen and soft-keyboard nodes) that every matcher uses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from trailblaze.replay.device import DeviceError

#: Soft-keyboard nodes are never tap targets (upstream drops this resource-id prefix).
KEYBOARD_ID_PREFIXES = ("com.google.android.inputmethod.latin:id/",)
KEYBOARD_PACKAGES = frozenset({"com.google.android.inputmethod.latin"})

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


class Bounds(NamedTuple):
    """A screen rectangle in pixels; right and bottom are exclusive."""

    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return max(0, self.right - self.left)

    @property
    def height(self) -> int:
        return max(0, self.bottom - self.top)

    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def center(self) -> tuple[int, int]:
        return (self.left + self.right) // 2, (self.top + self.bottom) // 2

    def intersects(self, other: Bounds) -> bool:
        return (
            self.left < other.right
            and other.left < self.right
            and self.top < other.bottom
            and other.top < self.bottom
        )

    def contains_point(self, x: int, y: int) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom


@dataclass(frozen=True, eq=False)
class UiNode:
    """One ``<node>`` of a dump. Blank string attributes are kept as ``""``.

    ``index_path`` is the node's position from the hierarchy root (one sibling index per level)
    and is its identity: nodes compare by object identity, ancestry by path prefix.
    ``hint`` is None when the platform's dump has no ``hint`` attribute at all.
    """

    index_path: tuple[int, ...]
    text: str
    resource_id: str
    class_name: str
    package: str
    content_desc: str
    hint: str | None
    checkable: bool
    checked: bool
    clickable: bool
    enabled: bool
    focusable: bool
    focused: bool
    scrollable: bool
    long_clickable: bool
    password: bool
    selected: bool
    bounds: Bounds
    children: tuple[UiNode, ...] = ()

    def iter_nodes(self) -> Iterator[UiNode]:
        """This node and its descendants, depth first, in document order."""
        yield self
        for child in self.children:
            yield from child.iter_nodes()

    def is_ancestor_of(self, other: UiNode) -> bool:
        depth = len(self.index_path)
        return len(other.index_path) > depth and other.index_path[:depth] == self.index_path

    @property
    def resolved_text(self) -> str | None:
        """The text a matcher sees: text, then hint, then content-desc; blank means absent."""
        for value in (self.text, self.hint, self.content_desc):
            if value:
                return value
        return None

    def describe(self) -> str:
        """A short human description for error messages."""
        parts = [self.class_name.rsplit(".", 1)[-1] or "node"]
        if self.resolved_text:
            parts.append(repr(self.resolved_text))
        if self.resource_id:
            parts.append(f"id={self.resource_id}")
        left, top, right, bottom = self.bounds
        parts.append(f"[{left},{top}][{right},{bottom}]")
        return " ".join(parts)


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """A parsed dump: the top-level nodes plus what the whole dump says about the platform."""

    roots: tuple[UiNode, ...]
    rotation: int = 0
    has_hint_attribute: bool = False

    def iter_nodes(self) -> Iterator[UiNode]:
        for root in self.roots:
            yield from root.iter_nodes()

    @property
    def screen(self) -> Bounds:
        """The screen rectangle, taken from the top-level windows (the dump has no size)."""
        if not self.roots:
            return Bounds(0, 0, 0, 0)
        return Bounds(
            min(0, *(r.bounds.left for r in self.roots)),
            min(0, *(r.bounds.top for r in self.roots)),
            max(r.bounds.right for r in self.roots),
            max(r.bounds.bottom for r in self.roots),
        )

    def node_at(self, index_path: tuple[int, ...]) -> UiNode:
        nodes = self.roots
        node: UiNode | None = None
        for index in index_path:
            node = nodes[index]
            nodes = node.children
        if node is None:
            raise IndexError("empty index path")
        return node


def is_keyboard_node(node: UiNode) -> bool:
    return node.package in KEYBOARD_PACKAGES or node.resource_id.startswith(KEYBOARD_ID_PREFIXES)


def visible_nodes(hierarchy: Hierarchy) -> list[UiNode]:
    """Nodes a selector may match: drops zero-area, off-screen and soft-keyboard nodes."""
    screen = hierarchy.screen
    return [
        node
        for node in hierarchy.iter_nodes()
        if node.bounds.area > 0 and node.bounds.intersects(screen) and not is_keyboard_node(node)
    ]


def parse_hierarchy(xml: str) -> Hierarchy:
    """Parse uiautomator dump XML; ``DeviceError`` for anything that is not a valid dump."""
    head = xml.lstrip()
    if not head.startswith("<?xml"):
        raise DeviceError(f"uiautomator dump is not XML (it starts with {head[:40]!r})")
    # Dumps never carry a DTD; refusing one rules out entity-expansion tricks from a device.
    if "<!DOCTYPE" in head or "<!ENTITY" in head:
        raise DeviceError("uiautomator dump contains a DOCTYPE, which dumps never have")
    try:
        root = ET.fromstring(head)
    except ET.ParseError as exc:
        raise DeviceError(f"uiautomator dump is malformed XML: {exc}") from exc
    if root.tag != "hierarchy":
        raise DeviceError(f"uiautomator dump has no <hierarchy> root (found <{root.tag}>)")
    try:
        rotation = int(root.get("rotation", "0"))
    except ValueError:
        raise DeviceError(f"uiautomator dump has a bad rotation {root.get('rotation')!r}") from None
    state = _ParseState()
    roots = tuple(
        _parse_node(element, (i,), state)
        for i, element in enumerate(e for e in root if e.tag == "node")
    )
    return Hierarchy(roots=roots, rotation=rotation, has_hint_attribute=state.has_hint)


class _ParseState:
    def __init__(self) -> None:
        self.has_hint = False


def _flag(element: ET.Element, name: str) -> bool:
    return element.get(name, "false") == "true"


def _parse_bounds(element: ET.Element, path: tuple[int, ...]) -> Bounds:
    raw = element.get("bounds")
    where = "/".join(map(str, path))
    if raw is None:
        raise DeviceError(f"uiautomator dump node {where} has no bounds")
    match = _BOUNDS.fullmatch(raw)
    if match is None:
        raise DeviceError(
            f"uiautomator dump node {where} has bad bounds {raw!r} (expected '[l,t][r,b]')"
        )
    left, top, right, bottom = (int(v) for v in match.groups())
    # Inverted rectangles happen for views being laid out; they read as empty, not as an error.
    return Bounds(left, top, max(left, right), max(top, bottom))


def _parse_node(element: ET.Element, path: tuple[int, ...], state: _ParseState) -> UiNode:
    hint = element.get("hint")
    if hint is not None:
        state.has_hint = True
    bounds = _parse_bounds(element, path)  # before the children: errors in document order
    children = tuple(
        _parse_node(child, (*path, i), state)
        for i, child in enumerate(c for c in element if c.tag == "node")
    )
    return UiNode(
        index_path=path,
        text=element.get("text", ""),
        resource_id=element.get("resource-id", ""),
        class_name=element.get("class", ""),
        package=element.get("package", ""),
        content_desc=element.get("content-desc", ""),
        hint=hint,
        checkable=_flag(element, "checkable"),
        checked=_flag(element, "checked"),
        clickable=_flag(element, "clickable"),
        enabled=_flag(element, "enabled"),
        focusable=_flag(element, "focusable"),
        focused=_flag(element, "focused"),
        scrollable=_flag(element, "scrollable"),
        long_clickable=_flag(element, "long-clickable"),
        password=_flag(element, "password"),
        selected=_flag(element, "selected"),
        bounds=bounds,
        children=children,
    )
