"""Recorded ``TrailblazeNodeSelector``s, validated and compiled against what a dump can answer.

``compile_selector`` turns a recorded selector (tool-catalog.md, "TrailblazeNodeSelector
grammar") into node predicates, nested relations and the final ``index``; ``matches.find``
resolves the result against a dump. Every ``*Regex`` field is a ``javaregex.TextPattern``: the
native shape (``androidAccessibility``) case-sensitive, the Maestro shape (``androidMaestro``)
ignore-case + dot-all + multiline.

A selector field a dump cannot answer (``collectionItemRowIndex``, ``isHeading``, web or iOS
matchers, …) raises ``SelectorError`` naming the field. It is never ignored: ignoring it could
tap the wrong node.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from trailblaze.finding import join_key
from trailblaze.replay.hierarchy import UiNode
from trailblaze.replay.javaregex import TextPattern, compile_pattern

#: Upstream stops resolving nested selectors at this depth.
MAX_DEPTH = 10

DRIVER_KEYS = ("androidAccessibility", "androidMaestro", "web", "compose", "iosMaestro", "iosAxe")
SPATIAL_KEYS = ("below", "above", "leftOf", "rightOf")
SELECTOR_KEYS = (*DRIVER_KEYS, *SPATIAL_KEYS, "childOf", "containsChild", "containsDescendants")


class SelectorError(Exception):
    """The selector cannot be resolved against a uiautomator dump (a tool failure, no retry)."""


def blank_to_none(value: str | None) -> str | None:
    return value or None


_NodeValue = Callable[[UiNode], "str | None"]
_NodeFlag = Callable[[UiNode], bool]

_TEXT_FIELDS: dict[str, _NodeValue] = {
    "classNameRegex": lambda n: blank_to_none(n.class_name),
    "resourceIdRegex": lambda n: blank_to_none(n.resource_id),
    "textRegex": lambda n: n.resolved_text,
    "contentDescriptionRegex": lambda n: blank_to_none(n.content_desc),
    "accessibilityTextRegex": lambda n: blank_to_none(n.content_desc),
    "hintTextRegex": lambda n: blank_to_none(n.hint),
}
_FLAG_FIELDS: dict[str, _NodeFlag] = {
    "enabled": lambda n: n.enabled,
    "clickable": lambda n: n.clickable,
    "checkable": lambda n: n.checkable,
    "checked": lambda n: n.checked,
    "selected": lambda n: n.selected,
    "focused": lambda n: n.focused,
    "scrollable": lambda n: n.scrollable,
    "password": lambda n: n.password,
}
# Field name -> (dump attribute reader key, is a regex). None marks a field the dump lacks.
_ANDROID_ACCESSIBILITY: dict[str, str | None] = {
    "classNameRegex": "classNameRegex",
    "resourceIdRegex": "resourceIdRegex",
    "textRegex": "textRegex",
    "contentDescriptionRegex": "contentDescriptionRegex",
    "hintTextRegex": "hintTextRegex",
    "isEnabled": "enabled",
    "isClickable": "clickable",
    "isCheckable": "checkable",
    "isChecked": "checked",
    "isSelected": "selected",
    "isFocused": "focused",
    "isScrollable": "scrollable",
    "isPassword": "password",
    "uniqueId": None,
    "composeTestTagRegex": None,
    "labeledByTextRegex": None,
    "stateDescriptionRegex": None,
    "paneTitleRegex": None,
    "roleDescriptionRegex": None,
    "isEditable": None,
    "isHeading": None,
    "isMultiLine": None,
    "inputType": None,
    "collectionItemRowIndex": None,
    "collectionItemColumnIndex": None,
}
_ANDROID_MAESTRO: dict[str, str | None] = {
    "textRegex": "textRegex",
    "resourceIdRegex": "resourceIdRegex",
    "accessibilityTextRegex": "accessibilityTextRegex",
    "classNameRegex": "classNameRegex",
    "hintTextRegex": "hintTextRegex",
    "clickable": "clickable",
    "enabled": "enabled",
    "focused": "focused",
    "checked": "checked",
    "selected": "selected",
}
_DRIVER_FIELDS = {
    "androidAccessibility": _ANDROID_ACCESSIBILITY,
    "androidMaestro": _ANDROID_MAESTRO,
}


class _Predicate(NamedTuple):
    field: str  # dotted path, for messages
    test: Callable[[UiNode], bool]
    needs_hint: bool


@dataclass(frozen=True)
class CompiledSelector:
    """A validated selector: node predicates, nested relations, and the final ``index``."""

    path: str
    predicates: tuple[_Predicate, ...]
    relations: tuple[tuple[str, tuple[CompiledSelector, ...]], ...]
    index: int | None


def _unresolvable(field: str) -> SelectorError:
    return SelectorError(f"field '{field}' cannot be resolved from a uiautomator dump")


def _unknown(field: str, choices: Sequence[str]) -> SelectorError:
    name = field.rsplit(".", 1)[-1]
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return SelectorError(f"unknown selector field '{field}'{hint}")


def _compile_driver(driver: str, match: Any, path: str) -> tuple[_Predicate, ...]:
    where = join_key(path, driver)
    fields = _DRIVER_FIELDS.get(driver)
    if fields is None:
        raise _unresolvable(where)
    if not isinstance(match, Mapping):
        raise SelectorError(f"field '{where}' must be a mapping, not {type(match).__name__}")
    maestro = driver == "androidMaestro"
    predicates: list[_Predicate] = []
    for key, value in match.items():
        field = join_key(where, str(key))
        if key not in fields:
            raise _unknown(field, list(fields))
        reader = fields[key]
        if value is None:
            continue
        if reader is None:
            raise _unresolvable(field)
        if reader in _TEXT_FIELDS:
            if not isinstance(value, str):
                raise SelectorError(f"field '{field}' must be a string, not {value!r}")
            text_pattern = compile_pattern(value, maestro=maestro)
            get = _TEXT_FIELDS[reader]
            predicates.append(
                _Predicate(
                    field,
                    functools.partial(_text_test, text_pattern, get),
                    reader == "hintTextRegex",
                )
            )
        else:
            if not isinstance(value, bool):
                raise SelectorError(f"field '{field}' must be true or false, not {value!r}")
            predicates.append(
                _Predicate(field, functools.partial(_flag_test, _FLAG_FIELDS[reader], value), False)
            )
    return tuple(predicates)


def _text_test(pattern: TextPattern, get: _NodeValue, node: UiNode) -> bool:
    return pattern.matches(get(node))


def _flag_test(get: _NodeFlag, expected: bool, node: UiNode) -> bool:
    return get(node) is expected


def compile_selector(selector: Any, *, _path: str = "", _depth: int = 1) -> CompiledSelector:
    """Validate a selector and compile it; ``SelectorError`` names the first bad field.

    Use it to check a recording before anything runs (a ``runIf`` tree, a whole trail).
    """
    if _depth > MAX_DEPTH:
        raise SelectorError(f"selector '{_path}' nests deeper than {MAX_DEPTH} levels")
    if not isinstance(selector, Mapping):
        where = f"'{_path}' " if _path else ""
        raise SelectorError(f"selector {where}must be a mapping, not {type(selector).__name__}")
    for key in selector:
        if key not in SELECTOR_KEYS and key != "index":
            raise _unknown(join_key(_path, str(key)), [*SELECTOR_KEYS, "index"])
    predicates: tuple[_Predicate, ...] = ()
    # The runtime uses the first non-null driver match in grammar order and ignores the rest.
    driver = next((k for k in DRIVER_KEYS if selector.get(k) is not None), None)
    if driver is not None:
        predicates = _compile_driver(driver, selector[driver], _path)
    relations: list[tuple[str, tuple[CompiledSelector, ...]]] = []
    for key in (*SPATIAL_KEYS, "childOf", "containsChild"):
        if selector.get(key) is not None:
            nested = compile_selector(selector[key], _path=join_key(_path, key), _depth=_depth + 1)
            relations.append((key, (nested,)))
    descendants = selector.get("containsDescendants")
    if descendants is not None:
        where = join_key(_path, "containsDescendants")
        if not isinstance(descendants, Sequence) or isinstance(descendants, str):
            raise SelectorError(f"field '{where}' must be a list of selectors")
        relations.append(
            (
                "containsDescendants",
                tuple(
                    compile_selector(s, _path=join_key(where, i), _depth=_depth + 1)
                    for i, s in enumerate(descendants)
                ),
            )
        )
    index = selector.get("index")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
        raise SelectorError(f"field '{join_key(_path, 'index')}' must be a whole number >= 0")
    if not predicates and not relations and driver is None:
        where = f" '{_path}'" if _path else ""
        raise SelectorError(f"selector{where} has no criteria: it would match every node")
    return CompiledSelector(_path, predicates, tuple(relations), index)


def validate_selector(selector: Any) -> None:
    """Raise ``SelectorError`` if the selector cannot be resolved from a uiautomator dump."""
    compile_selector(selector)
