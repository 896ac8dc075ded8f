"""Composing the common shape of a trail in Python, line by line, without the C parser.

A recorded trail is block YAML of a narrow kind: mappings whose keys are names, lists, scalars
on one line (plain or quoted), and small flow collections (`{}`, `[a, 'b']`). The C composer
turns each token into Python objects (an event, two marks, a node) before `yaml.lean` builds
ours: about 0.3 ms for a trail of 120 lines. Read here one line at a time with a few string
operations, the same trail takes about a third of that.

The result is the tree `node.load` builds, or nothing: anything outside that shape raises
`Unsupported` and the document goes to the C composer (`yaml.lean`), which builds the rare
node or reports the error. Left to it, among others: anchors, aliases, tags, block scalars
(`|`, `>`), scalars over several lines, quoted keys, keys that are not names, an empty value
in a flow collection, a tab, a carriage return, characters YAML does not allow or reads as a
line break, directives and document markers, duplicate keys, and more than `MAX_NODES` nodes.
Every node has the line and column the C composer gives it (1-based; columns in characters),
down to an empty value, which sits just after its `:` or `-`.
"""

from __future__ import annotations

import re

from trailblaze.yaml.plain import MAYBE_NOT_TEXT, Scalar, resolve_plain
from trailblaze.yaml.tree import MAX_NODES, PLAIN, Unsupported, YMap, YNode, YScalar, YSeq

_REFUSED = re.compile(
    "[\x00-\x08\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)
"""What sends a whole document to the C composer: a tab, control characters (refused by
YAML), and characters the C parser reads as line breaks or markers. A carriage return is
taken only before a line feed."""

_KEY = re.compile(r"([A-Za-z0-9_$][A-Za-z0-9_$.\-/]*):(?: +|$)")
"""A key that is a name, its colon, and the spaces after it."""

_PLAIN_FIRST_REFUSED = frozenset("-?:,[]{}#&*!|>'\"%@`")
"""First characters of a scalar this module leaves to the C composer (indicators, quotes are
handled on their own)."""

_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_HEX = frozenset("0123456789abcdefABCDEF")


def compose(text: str) -> YNode | None:
    """The document's located nodes (see the module docstring), or `Unsupported`."""
    if _REFUSED.search(text):
        raise Unsupported
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            raise Unsupported  # a carriage return alone: a line break of its own
    lines: list[tuple[int, int, str, bool]] = []
    number = 0
    for raw in text.split("\n"):
        number += 1
        content = raw.lstrip(" ")
        if not content or content[0] == "#":
            continue
        indent = len(raw) - len(content)
        if indent == 0 and (content[0] == "%" or content.startswith(("---", "..."))):
            raise Unsupported  # directives and document markers
        content = content.rstrip(" ")
        lines.append((number, indent, content, content[0] == "-" and content[1:2] in ("", " ")))
    if not lines:
        return None
    lines.append(_END)
    reader = _Reader(lines)
    number, indent, content, _ = lines[0]
    root = reader.node(number, indent + 1, content, indent)
    if reader.at != len(lines) - 1:
        raise Unsupported  # something after the root node: an error, or more than we read
    if reader.count + 1 > MAX_NODES:
        raise Unsupported  # the usual path says where it went past the bound
    return root


_END = (0, -1, "", False)
"""The line after the last: less indented than any, it ends every block."""

_KEYS: dict[str, Scalar] = {}
"""Key names and their resolved values: the same few names make every trail."""


def _scalar(value: str, line: int, column: int) -> YScalar:
    """A plain scalar (`value` stripped), resolved as `node.load` resolves it."""
    return YScalar(
        value if value[:1] not in MAYBE_NOT_TEXT else resolve_plain(value),
        value,
        PLAIN,
        line,
        column,
    )


def _is_dash(content: str) -> bool:
    return content[0] == "-" and content[1:2] in ("", " ")


class _Reader:
    """The document's lines that hold something: (line number, indent, content, whether it
    starts with a list's `-`), and `_END`."""

    __slots__ = ("at", "count", "lines")

    def __init__(self, lines: list[tuple[int, int, str, bool]]) -> None:
        self.lines = lines
        self.at = 1
        """The next line not read yet (the first is read by the caller)."""
        self.count = 0

    def node(self, number: int, column: int, content: str, indent: int) -> YNode:
        """The block node whose first token starts `content`, at `column` (1-based) of line
        `number`; `indent` is the column (0-based) where its own lines continue."""
        if _is_dash(content):
            return self.sequence(number, column, content, indent)
        key = _KEY.match(content)
        if key is not None:
            return self.mapping(number, column, content, indent, key)
        node = self.inline(number, column, content)
        if self.lines[self.at][1] > indent:
            raise Unsupported  # a scalar that goes on over the next lines
        return node

    def sequence(self, number: int, column: int, content: str, indent: int) -> YSeq:
        items: list[YNode] = []
        lines = self.lines
        start_line, start_column = number, column
        while True:
            rest = content[1:]
            item = rest.lstrip(" ")
            if item and item[0] != "#":
                offset = len(rest) - len(item) + 1
                items.append(self.node(number, column + offset, item, indent + offset))
            else:
                items.append(self.below(number, column + 1, indent))
            number, next_indent, content, dash = lines[self.at]
            if next_indent != indent or not dash:
                if next_indent > indent:
                    raise Unsupported  # more indented than the list, not in an item: an error
                break  # the list ends here
            self.at += 1
            column = next_indent + 1
        self.count += len(items)
        return YSeq(tuple(items), start_line, start_column)

    def mapping(
        self, number: int, column: int, content: str, indent: int, key: re.Match[str]
    ) -> YMap:
        items: list[tuple[YScalar, YNode]] = []
        index: dict[str, int] = {}
        lines = self.lines
        keys = _KEYS
        start_line, start_column = number, column
        while True:
            name = key[1]
            if name in index:
                raise Unsupported  # a duplicate key: the usual path's error
            index[name] = len(items)
            if name in keys:
                resolved = keys[name]
            else:
                resolved = name if name[0] not in MAYBE_NOT_TEXT else resolve_plain(name)
                if len(keys) < 4096:
                    keys[name] = resolved
            key_node = YScalar(resolved, name, PLAIN, number, column)
            end = key.end()
            if end < len(content) and content[end] != "#":
                items.append((key_node, self.inline(number, column + end, content[end:])))
            else:
                # Nothing after the colon: the value is on the lines below, or it is empty.
                below_number, below_indent, below, dash = lines[self.at]
                if below_indent > indent:
                    self.at += 1
                    value = self.node(below_number, below_indent + 1, below, below_indent)
                elif below_indent == indent and dash:
                    # A list may sit at its key's own indent.
                    self.at += 1
                    value = self.sequence(below_number, indent + 1, below, indent)
                else:
                    value = YScalar(None, "", PLAIN, number, column + len(name) + 1)
                items.append((key_node, value))
            number, next_indent, content, _ = lines[self.at]
            if next_indent != indent:
                if next_indent > indent:
                    raise Unsupported  # a value going on over lines, or an error
                break  # the mapping ends here
            key = _KEY.match(content)  # type: ignore[assignment]
            if key is None:
                raise Unsupported  # not a key where one belongs: an error, or a key we leave
            self.at += 1
            column = next_indent + 1
        self.count += len(items)
        return YMap(tuple(items), start_line, start_column, index)

    def below(self, number: int, column: int, indent: int) -> YNode:
        """The value of a list item with nothing after its `-`: the node on the next lines
        when they are indented more than `indent`, else an empty (null) scalar just after the
        indicator (`column`)."""
        below_number, below_indent, below, _ = self.lines[self.at]
        if below_indent > indent:
            self.at += 1
            return self.node(below_number, below_indent + 1, below, below_indent)
        return YScalar(None, "", PLAIN, number, column)

    def inline(self, number: int, column: int, content: str) -> YNode:
        """A scalar or a flow collection that fills the rest of the line (after a comment is
        taken off)."""
        first = content[0]
        if first in {"'", '"'}:
            quoted, end = _quoted(content, 0, number, column)
            _end_of_line(content, end)
            return quoted
        if first in {"[", "{"}:
            flow = _Flow(content, number, column)
            collection = flow.node(0)
            _end_of_line(content, flow.end)
            self.count += flow.count
            return collection
        if first in _PLAIN_FIRST_REFUSED and not _dash_plain(content, 0):
            raise Unsupported  # an indicator: an anchor, an alias, a tag, a block scalar...
        cut = content.find(" #")
        value = content if cut < 0 else content[:cut].rstrip(" ")
        if ":" in value and (": " in value or value[-1] == ":"):
            raise Unsupported  # a mapping where a scalar belongs: an error
        return YScalar(
            value if first not in MAYBE_NOT_TEXT else resolve_plain(value),
            value,
            PLAIN,
            number,
            column,
        )


def _dash_plain(content: str, i: int) -> bool:
    """Whether the `-` at `content[i]` starts a plain scalar (`-5`, `-x`): not followed by a
    space, the end, or a flow indicator."""
    return content[i] == "-" and content[i + 1 : i + 2] not in ("", " ", ",", "[", "]", "{", "}")


def _end_of_line(content: str, end: int) -> None:
    """Nothing but spaces and a comment may follow a quoted scalar or a flow collection."""
    rest = content[end:]
    stripped = rest.lstrip(" ")
    if stripped and (stripped[0] != "#" or stripped == rest):
        raise Unsupported


def _quoted(content: str, at: int, number: int, column: int) -> tuple[YScalar, int]:
    """The quoted scalar starting at `content[at]`, and where it ends; on one line only."""
    quote = content[at]
    if quote == "'":
        parts = []
        i = at + 1
        while True:
            close = content.find("'", i)
            if close < 0:
                raise Unsupported  # it goes on over the next line
            parts.append(content[i:close])
            if content[close + 1 : close + 2] == "'":
                parts.append("'")
                i = close + 2
                continue
            value = "".join(parts)
            return YScalar(value, value, "'", number, column + at), close + 1
    i = at + 1
    close = content.find('"', i)
    if close < 0:
        raise Unsupported
    if "\\" not in content[i:close]:
        value = content[i:close]
        return YScalar(value, value, '"', number, column + at), close + 1
    parts = []
    n = len(content)
    while True:
        if i >= n:
            raise Unsupported  # it goes on over the next line
        char = content[i]
        if char == '"':
            break
        if char != "\\":
            parts.append(char)
            i += 1
            continue
        code = content[i + 1 : i + 2]
        if code in _ESCAPES:
            parts.append(_ESCAPES[code])
            i += 2
            continue
        width = _HEX_ESCAPES.get(code)
        if width is None:
            raise Unsupported  # an escaped line break, `\/`, or an invalid escape
        digits = content[i + 2 : i + 2 + width]
        if len(digits) != width or not all(d in _HEX for d in digits):
            raise Unsupported
        point = int(digits, 16)
        if 0xD800 <= point <= 0xDFFF or point > 0x10FFFF:
            raise Unsupported
        parts.append(chr(point))
        i += 2 + width
    value = "".join(parts)
    return YScalar(value, value, '"', number, column + at), i + 1


class _Flow:
    """A flow collection on one line: `{}`, `[a, 'b', {c: 1}]`."""

    __slots__ = ("column", "content", "count", "end", "number")

    def __init__(self, content: str, number: int, column: int) -> None:
        self.content = content
        self.number = number
        self.column = column
        self.end = 0
        self.count = 0

    def _skip(self, i: int) -> int:
        content = self.content
        n = len(content)
        while i < n and content[i] == " ":
            i += 1
        return i

    def node(self, i: int) -> YNode:
        content = self.content
        char = content[i : i + 1]
        if char == "[":
            return self._sequence(i)
        if char == "{":
            return self._mapping(i)
        if char in {"'", '"'}:
            node, self.end = _quoted(content, i, self.number, self.column)
            return node
        return self._plain(i)

    def _plain(self, i: int) -> YScalar:
        content = self.content
        if i >= len(content) or (
            content[i] in _PLAIN_FIRST_REFUSED and not _dash_plain(content, i)
        ):
            raise Unsupported  # an empty value, or an indicator
        j = i
        n = len(content)
        while j < n and content[j] not in ",[]{}:#?":
            j += 1
        if j < n and content[j] in ":#?":
            raise Unsupported  # a colon, hash or question mark inside: indicators to the C parser
        self.end = j
        return _scalar(content[i:j].rstrip(" "), self.number, self.column + i)

    def _sequence(self, i: int) -> YSeq:
        content = self.content
        items: list[YNode] = []
        at = self._skip(i + 1)
        while True:
            if content[at : at + 1] == "]":
                self.end = at + 1
                break
            items.append(self.node(at))
            at = self._skip(self.end)
            char = content[at : at + 1]
            if char == ",":
                at = self._skip(at + 1)
            elif char != "]":
                raise Unsupported  # not closed on this line, or a pair in a list
        self.count += len(items)
        return YSeq(tuple(items), self.number, self.column + i)

    def _mapping(self, i: int) -> YMap:
        content = self.content
        items: list[tuple[YScalar, YNode]] = []
        index: dict[str, int] = {}
        at = self._skip(i + 1)
        while True:
            if content[at : at + 1] == "}":
                self.end = at + 1
                break
            key = _KEY.match(content, at)
            if key is None or key.end() == len(content) or content[key.end() - 1] != " ":
                raise Unsupported  # a key that is not a name, or not followed by a value
            name = key.group(1)
            if name in index:
                raise Unsupported
            index[name] = len(items)
            value_at = key.end()
            items.append(
                (
                    _scalar(name, self.number, self.column + at),
                    self.node(value_at),
                )
            )
            at = self._skip(self.end)
            char = content[at : at + 1]
            if char == ",":
                at = self._skip(at + 1)
            elif char != "}":
                raise Unsupported
        self.count += len(items)
        return YMap(tuple(items), self.number, self.column + i, index)
