"""Which nodes of a dump match: selector resolution, the text tools' search, tap picking.

``find`` resolves a ``selector.CompiledSelector`` against a ``Hierarchy`` (replay.md §2.3):
visible nodes only, relations (``childOf``, ``containsChild``, ``containsDescendants``, the
spatial ones) resolved recursively, matches sorted top-to-bottom then left-to-right, ``index``
applied last. ``find_by_text`` is the Maestro-derived text search of the text tools;
``pick_for_tap`` chooses the node a tap goes to among several.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from trailblaze.replay.hierarchy import Hierarchy, UiNode, visible_nodes
from trailblaze.replay.javaregex import MAESTRO_FLAGS, TextPattern, compile_pattern, compile_regex
from trailblaze.replay.selector import (
    CompiledSelector,
    SelectorError,
    blank_to_none,
    compile_selector,
)


class AmbiguousSelectorError(SelectorError):
    """Several nodes match and none stands out as the tap target."""

    def __init__(self, message: str, matches: Sequence[UiNode]) -> None:
        super().__init__(message)
        self.matches = tuple(matches)


class NoMatchError(LookupError):
    """No node matches (yet): callers poll on this one."""


def sort_key(node: UiNode) -> tuple[int, int, tuple[int, ...]]:
    """The order of matches: top to bottom, then left to right, then document order."""
    return node.bounds.top, node.bounds.left, node.index_path


def filter_nodes(
    nodes: Iterable[UiNode],
    *,
    enabled: bool | None = None,
    selected: bool | None = None,
    index: int | None = None,
) -> list[UiNode]:
    """The filters the text tools share: state (``None``: either), sorted, then ``index``."""
    kept = [
        node
        for node in nodes
        if (enabled is None or node.enabled is enabled)
        and (selected is None or node.selected is selected)
    ]
    kept.sort(key=sort_key)
    if index is not None:
        return kept[index : index + 1] if index >= 0 else []
    return kept


def _spatial(kind: str, node: UiNode, anchor: UiNode) -> bool:
    if kind == "below":
        return node.bounds.top >= anchor.bounds.bottom
    if kind == "above":
        return node.bounds.bottom <= anchor.bounds.top
    if kind == "leftOf":
        return node.bounds.right <= anchor.bounds.left
    return node.bounds.left >= anchor.bounds.right  # rightOf


class _Resolver:
    def __init__(self, hierarchy: Hierarchy) -> None:
        self.hierarchy = hierarchy
        self.candidates = visible_nodes(hierarchy)

    def resolve(self, compiled: CompiledSelector) -> list[UiNode]:
        nodes = self.candidates
        for predicate in compiled.predicates:
            if predicate.needs_hint and not self.hierarchy.has_hint_attribute:
                raise SelectorError(
                    f"field '{predicate.field}' cannot be resolved from this uiautomator dump "
                    "(the platform's dump has no hint attribute)"
                )
            nodes = [n for n in nodes if predicate.test(n)]
        for kind, nested in compiled.relations:
            if not nodes:
                break
            nodes = self._relate(kind, nested, nodes)
        nodes = sorted(nodes, key=sort_key)
        if compiled.index is not None:
            return nodes[compiled.index : compiled.index + 1]
        return nodes

    def _relate(
        self, kind: str, nested: tuple[CompiledSelector, ...], nodes: list[UiNode]
    ) -> list[UiNode]:
        if kind == "containsDescendants":
            for sub in nested:
                ancestors = {
                    m.index_path[:k] for m in self.resolve(sub) for k in range(len(m.index_path))
                }
                nodes = [n for n in nodes if n.index_path in ancestors]
            return nodes
        matches = self.resolve(nested[0])
        if kind == "childOf":
            parents = {m.index_path for m in matches}
            return [
                n
                for n in nodes
                if any(n.index_path[:k] in parents for k in range(len(n.index_path)))
            ]
        if kind == "containsChild":
            children = {m.index_path for m in matches}
            return [n for n in nodes if any(c.index_path in children for c in n.children)]
        return [n for n in nodes if any(a is not n and _spatial(kind, n, a) for a in matches)]


def find(selector: Mapping[str, Any] | CompiledSelector, root: Hierarchy) -> list[UiNode]:
    """Nodes matching a selector, sorted top-to-bottom then left-to-right, ``index`` applied."""
    compiled = selector if isinstance(selector, CompiledSelector) else compile_selector(selector)
    return _Resolver(root).resolve(compiled)


def find_by_text(
    root: Hierarchy,
    text: str,
    *,
    contains: bool,
    lenient: bool = False,
    resource_id_regex: str | None = None,
    index: int | None = None,
    enabled: bool | None = None,
    selected: bool | None = None,
) -> list[UiNode]:
    """Nodes whose text, hint or content-desc matches ``text`` (the text tools, replay.md §2.1).

    - ``contains=True`` (``tapOnElementWithText``): the text anywhere in the value, ignoring
      case, matched literally (upstream full-matches ``.*<escaped text>.*``).
    - ``contains=False`` (``assertVisibleWithText``): the whole value, regex or literal, with
      the Maestro dialect.
    - ``lenient=True`` (``assertNotVisibleWithText``): like the above, and also the escaped
      literal ignoring case, so a not-visible check never passes because of regex syntax.

    Unlike selector ``textRegex`` (the first present of text, hint, content-desc), the text
    tools are Maestro-derived and test each of the three, as Maestro's text filter does.
    """
    if not text:
        raise SelectorError("text to find must not be empty")
    if contains:
        patterns = [TextPattern(text, compile_regex(".*" + re.escape(text) + ".*", MAESTRO_FLAGS))]
    else:
        patterns = [compile_pattern(text, maestro=True)]
        if lenient:
            patterns.append(TextPattern(text, compile_regex(re.escape(text), MAESTRO_FLAGS)))
    id_pattern = compile_pattern(resource_id_regex, maestro=True) if resource_id_regex else None
    nodes = []
    for node in visible_nodes(root):
        values = [v for v in (node.text, node.hint, node.content_desc) if v]
        if not any(p.matches(v) for p in patterns for v in values):
            continue
        if id_pattern is not None and not id_pattern.matches(blank_to_none(node.resource_id)):
            continue
        nodes.append(node)
    return filter_nodes(nodes, enabled=enabled, selected=selected, index=index)


def pick_for_tap(
    matches: Sequence[UiNode], *, index: int | None = None, strict: bool = False
) -> UiNode:
    """The node a tap goes to among sorted ``matches``.

    ``index`` picks that match. Otherwise one match is the target; among several, the single
    clickable one (Maestro's "clickable first"), else the first, or ``AmbiguousSelectorError``
    when ``strict``.
    """
    if index is not None:
        if not 0 <= index < len(matches):
            raise NoMatchError(f"no match at index {index} ({len(matches)} matches)")
        return matches[index]
    if not matches:
        raise NoMatchError("no element matches")
    if len(matches) == 1:
        return matches[0]
    clickable = [m for m in matches if m.clickable]
    if len(clickable) == 1:
        return clickable[0]
    if strict:
        shown = "; ".join(m.describe() for m in matches[:5])
        more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
        raise AmbiguousSelectorError(
            f"{len(matches)} elements match and {len(clickable)} of them are clickable: "
            f"{shown}{more}",
            matches,
        )
    return matches[0]


def center(node: UiNode) -> tuple[int, int]:
    """Where a tap on the node lands: the integer center of its bounds."""
    return node.bounds.center
