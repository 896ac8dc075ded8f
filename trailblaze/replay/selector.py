"""Selector and text matching against a parsed uiautomator dump.

``find`` resolves a recorded ``TrailblazeNodeSelector`` (tool-catalog.md, "TrailblazeNodeSelector
grammar") against a ``Hierarchy``. Matching follows replay.md §2.3: every ``*Regex`` field must
match the *whole* value as a regex or equal it literally; the native shape
(``androidAccessibility``) is case-sensitive, the Maestro shape (``androidMaestro``) is
ignore-case + dot-all + multiline. Recorded patterns are Java regexes, so they are translated
(``\\Q…\\E``, a leading ``(?-i)``, ``\\p{…}`` classes, named groups) before Python compiles them.

A selector field a dump cannot answer (``collectionItemRowIndex``, ``isHeading``, web or iOS
matchers, …) raises ``SelectorError`` naming the field. It is never ignored: ignoring it could
tap the wrong node.
"""

from __future__ import annotations

import difflib
import functools
import logging
import re
import string
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from trailblaze.finding import join_key
from trailblaze.replay.hierarchy import Hierarchy, UiNode, visible_nodes

logger = logging.getLogger(__name__)

#: Upstream stops resolving nested selectors at this depth.
MAX_DEPTH = 10

DRIVER_KEYS = ("androidAccessibility", "androidMaestro", "web", "compose", "iosMaestro", "iosAxe")
SPATIAL_KEYS = ("below", "above", "leftOf", "rightOf")
SELECTOR_KEYS = (*DRIVER_KEYS, *SPATIAL_KEYS, "childOf", "containsChild", "containsDescendants")

MAESTRO_FLAGS = re.IGNORECASE | re.DOTALL | re.MULTILINE


class SelectorError(Exception):
    """The selector cannot be resolved against a uiautomator dump (a tool failure, no retry)."""


class AmbiguousSelectorError(SelectorError):
    """Several nodes match and none stands out as the tap target."""

    def __init__(self, message: str, matches: Sequence[UiNode]) -> None:
        super().__init__(message)
        self.matches = tuple(matches)


class NoMatchError(LookupError):
    """No node matches (yet): callers poll on this one."""


class JavaRegexError(SelectorError):
    """A valid Java regex uses a feature Python's ``re`` cannot express."""


# --- Java regex -> Python re ----------------------------------------------------------------

# Java's POSIX classes are ASCII-only unless UNICODE_CHARACTER_CLASS is on, so ranges are exact.
_POSIX_CLASSES = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7f",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "".join("\\" + c for c in string.punctuation),
    "Graph": "\\x21-\\x7e",
    "Print": "\\x20-\\x7e",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1f\\x7f",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0b\\f\\r",
}
# Unicode properties Python can express, as (outside a class, negated outside, inside a class).
# Letters have no in-class spelling in `re`, so `[\p{L}0-9]` is an explicit error.
_UNICODE_CLASSES: dict[str, tuple[str, str, str | None]] = {
    "L": ("[^\\W\\d_]", "[\\W\\d_]", None),
    "IsL": ("[^\\W\\d_]", "[\\W\\d_]", None),
    "IsLetter": ("[^\\W\\d_]", "[\\W\\d_]", None),
    "Nd": ("\\d", "\\D", "\\d"),
    "IsDigit": ("\\d", "\\D", "\\d"),
    "IsWhite_Space": ("\\s", "\\S", "\\s"),
    "IsWhiteSpace": ("\\s", "\\S", "\\s"),
}
_SIMPLE_ESCAPES = {
    "h": "[ \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000]",
    "H": "[^ \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000]",
    "v": "[\\n\\x0b\\f\\r\\x85\\u2028\\u2029]",
    "V": "[^\\n\\x0b\\f\\r\\x85\\u2028\\u2029]",
    "R": "(?:\\r\\n|[\\n\\x0b\\f\\r\\x85\\u2028\\u2029])",
    "z": "\\Z",
    "Z": "(?=\\n?\\Z)",
    "e": "\\x1b",
}
_FLAG_BITS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE}
# Java-only flags with no effect on what we match (unix lines, unicode case/classes, canon eq).
_IGNORED_FLAGS = set("duUc")
_LEADING_FLAGS = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?\)")
_SCOPED_FLAGS = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")


class _NotJava(Exception):
    """The pattern is not a valid Java regex either: it will be matched literally."""


class TranslatedRegex(NamedTuple):
    pattern: str
    flags_on: int
    flags_off: int


def _flag_bits(letters: str) -> int:
    bits = 0
    for letter in letters:
        if letter in _FLAG_BITS:
            bits |= _FLAG_BITS[letter]
        elif letter not in _IGNORED_FLAGS:
            raise _NotJava(letter)
    return bits


def _class_escape(text: str) -> str:
    return "".join(c if c.isalnum() else "\\" + c for c in text)


def _property(name: str, negated: bool, in_class: bool, raw: str) -> str:
    if name in _POSIX_CLASSES:
        body = _POSIX_CLASSES[name]
        if in_class:
            if negated:
                raise JavaRegexError(f"Java regex {raw} inside a character class is not supported")
            return body
        return f"[^{body}]" if negated else f"[{body}]"
    if name in _UNICODE_CLASSES:
        outside, outside_negated, inside = _UNICODE_CLASSES[name]
        if not in_class:
            return outside_negated if negated else outside
        if inside is not None and not negated:
            return inside
    raise JavaRegexError(f"Java regex class {raw} is not supported (write it without \\p{{…}})")


def translate_java_regex(pattern: str) -> TranslatedRegex:
    """Translate a Java regex to Python ``re`` syntax.

    Raises ``JavaRegexError`` for Java features ``re`` cannot express, and ``re.error`` when
    the pattern is not a regex at all (callers then match it literally).
    """
    flags_on = flags_off = 0
    i = 0
    leading = _LEADING_FLAGS.match(pattern)
    if leading and (leading.group(1) or leading.group(2)):
        try:
            flags_on = _flag_bits(leading.group(1))
            flags_off = _flag_bits(leading.group(2) or "")
        except _NotJava:
            raise re.error(f"unknown flag in {leading.group(0)}") from None
        i = leading.end()
    out: list[str] = []
    in_class = False
    content_start = -1  # where the current class's members begin; a `]` there is a member
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i = _translate_escape(pattern, i, in_class, out)
            continue
        if in_class:
            if c == "]" and i != content_start:
                in_class = False
                out.append(c)
            elif c == "[":
                raise JavaRegexError(f"Java character class union in {pattern!r} is not supported")
            elif c == "&" and pattern.startswith("&&", i):
                raise JavaRegexError(
                    f"Java character class intersection in {pattern!r} is not supported"
                )
            elif c in "&~|":
                # Python warns that doubled forms may become set operations; Java reads them
                # literally inside a class.
                out.append("\\" + c)
            else:
                out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            content_start = i
            continue
        if c == "(" and pattern.startswith("(?", i):
            i = _translate_group(pattern, i, out)
            continue
        out.append(c)
        i += 1
    return TranslatedRegex("".join(out), flags_on, flags_off)


def _translate_group(pattern: str, i: int, out: list[str]) -> int:
    rest = pattern[i:]
    if rest.startswith("(?<") and not rest.startswith(("(?<=", "(?<!")):
        out.append("(?P<")
        return i + 3
    flags = _SCOPED_FLAGS.match(pattern, i)
    if flags and (flags.group(1) or flags.group(2) is not None):
        if flags.group(3) == ")":
            raise JavaRegexError(
                f"Java inline flags {flags.group(0)} in the middle of {pattern!r} are not "
                "supported (put them at the start)"
            )
        on = "".join(f for f in flags.group(1) if f not in _IGNORED_FLAGS)
        off = "".join(f for f in (flags.group(2) or "") if f not in _IGNORED_FLAGS)
        if not on and not off:
            out.append("(?:")
        else:
            out.append(f"(?{on}{'-' + off if off else ''}:")
        return flags.end()
    out.append("(?")
    return i + 2


def _translate_escape(pattern: str, i: int, in_class: bool, out: list[str]) -> int:
    n = len(pattern)
    if i + 1 >= n:
        raise re.error("trailing backslash")
    e = pattern[i + 1]
    if e == "Q":
        end = pattern.find("\\E", i + 2)
        span = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
        out.append(_class_escape(span) if in_class else re.escape(span))
        return n if end < 0 else end + 2
    if e == "E":  # a stray \E is ignored by Java
        return i + 2
    if e in "pP":
        if i + 2 < n and pattern[i + 2] == "{":
            close = pattern.find("}", i + 3)
            if close < 0:
                raise re.error("unterminated \\p{")
            name, end = pattern[i + 3 : close], close + 1
        elif i + 2 < n:
            name, end = pattern[i + 2], i + 3
        else:
            raise re.error("bad \\p")
        out.append(_property(name, e == "P", in_class, pattern[i:end]))
        return end
    if e == "G":
        raise JavaRegexError(f"Java regex \\G in {pattern!r} is not supported")
    if e == "k" and pattern.startswith("<", i + 2):
        close = pattern.find(">", i + 3)
        if close < 0:
            raise re.error("unterminated \\k<")
        out.append(f"(?P={pattern[i + 3 : close]})")
        return close + 1
    if e == "x" and pattern.startswith("{", i + 2):
        close = pattern.find("}", i + 3)
        if close < 0:
            raise re.error("unterminated \\x{")
        out.append(f"\\U{int(pattern[i + 3 : close], 16):08x}")
        return close + 1
    if e == "c" and i + 2 < n:
        out.append(f"\\x{ord(pattern[i + 2]) ^ 64:02x}")
        return i + 3
    if e == "0":
        digits = ""
        j = i + 2
        while j < n and len(digits) < 3 and pattern[j] in "01234567":
            digits += pattern[j]
            j += 1
        if not digits or int(digits, 8) > 0o377:
            raise re.error("bad octal escape")
        out.append(f"\\x{int(digits, 8):02x}")
        return j
    if e in _SIMPLE_ESCAPES and not (in_class and e in "RzZ"):
        replacement = _SIMPLE_ESCAPES[e]
        if in_class and replacement.startswith("["):
            if replacement.startswith("[^"):
                raise JavaRegexError(f"Java regex \\{e} inside a character class is not supported")
            replacement = replacement[1:-1]
        out.append(replacement)
        return i + 2
    out.append(pattern[i : i + 2])
    return i + 2


@dataclass(frozen=True)
class TextPattern:
    """A compiled regex-or-literal pattern: ``matches`` is a whole-value match."""

    source: str
    regex: re.Pattern[str] | None

    def matches(self, value: str | None) -> bool:
        if value is None:
            return False
        if value == self.source:
            return True
        return self.regex is not None and self.regex.fullmatch(value) is not None


def _compile(pattern: str, flags: int) -> re.Pattern[str]:
    with warnings.catch_warnings():
        # A translated pattern can still trip "possible nested set" style FutureWarnings for
        # text Java reads literally; they are not our user's problem.
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(pattern, flags)


@functools.lru_cache(maxsize=1024)
def compile_pattern(pattern: str, *, maestro: bool = False) -> TextPattern:
    """Compile a recorded Java regex with the native (case-sensitive) or Maestro dialect.

    An invalid regex falls back to a literal match (native: exact; Maestro: escaped, so
    ignore-case). A valid Java regex Python cannot express raises ``JavaRegexError``.
    """
    base = MAESTRO_FLAGS if maestro else 0
    try:
        translated = translate_java_regex(pattern)
        flags = (base | translated.flags_on) & ~translated.flags_off
        return TextPattern(pattern, _compile(translated.pattern, flags))
    except re.error as exc:
        logger.debug("pattern %r is not a regex (%s); matching it literally", pattern, exc)
    if maestro:
        return TextPattern(pattern, _compile(re.escape(pattern), MAESTRO_FLAGS))
    return TextPattern(pattern, None)


# --- selector compilation -------------------------------------------------------------------


def _blank_to_none(value: str | None) -> str | None:
    return value or None


_NodeValue = Callable[[UiNode], "str | None"]
_NodeFlag = Callable[[UiNode], bool]

_TEXT_FIELDS: dict[str, _NodeValue] = {
    "classNameRegex": lambda n: _blank_to_none(n.class_name),
    "resourceIdRegex": lambda n: _blank_to_none(n.resource_id),
    "textRegex": lambda n: n.resolved_text,
    "contentDescriptionRegex": lambda n: _blank_to_none(n.content_desc),
    "accessibilityTextRegex": lambda n: _blank_to_none(n.content_desc),
    "hintTextRegex": lambda n: _blank_to_none(n.hint),
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


# --- resolution -----------------------------------------------------------------------------


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
        patterns = [TextPattern(text, _compile(".*" + re.escape(text) + ".*", MAESTRO_FLAGS))]
    else:
        patterns = [compile_pattern(text, maestro=True)]
        if lenient:
            patterns.append(TextPattern(text, _compile(re.escape(text), MAESTRO_FLAGS)))
    id_pattern = compile_pattern(resource_id_regex, maestro=True) if resource_id_regex else None
    nodes = []
    for node in visible_nodes(root):
        values = [v for v in (node.text, node.hint, node.content_desc) if v]
        if not any(p.matches(v) for p in patterns for v in values):
            continue
        if id_pattern is not None and not id_pattern.matches(_blank_to_none(node.resource_id)):
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
