"""Recorded Java regexes as Python ``re`` patterns, and the regex-or-literal text match.

Recorded patterns are Java regexes (upstream's recorder writes ``\\Q…\\E`` for metacharacters,
``(?-i)`` to opt out of ignore-case), so ``translate_java_regex`` rewrites them (``\\Q…\\E``,
leading and scoped flags, ``\\p{…}`` classes, named groups, ``\\h``/``\\R``/…) before Python
compiles them. ``compile_pattern`` gives a ``TextPattern``: a value matches when the whole value
matches the regex or equals the pattern literally (replay.md §2.3), in the native
(case-sensitive) or the Maestro dialect (ignore-case + dot-all + multiline).

A valid Java regex Python cannot express raises ``JavaRegexError``: never a silent non-match.
"""

from __future__ import annotations

import functools
import logging
import re
import string
import warnings
from dataclasses import dataclass
from typing import NamedTuple

logger = logging.getLogger(__name__)

MAESTRO_FLAGS = re.IGNORECASE | re.DOTALL | re.MULTILINE


class JavaRegexError(ValueError):
    """A valid Java regex uses a feature Python's ``re`` cannot express (a tool error)."""


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


def compile_regex(pattern: str, flags: int) -> re.Pattern[str]:
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
        return TextPattern(pattern, compile_regex(translated.pattern, flags))
    except re.error as exc:
        logger.debug("pattern %r is not a regex (%s); matching it literally", pattern, exc)
    if maestro:
        return TextPattern(pattern, compile_regex(re.escape(pattern), MAESTRO_FLAGS))
    return TextPattern(pattern, None)
