"""The YAML boundary: bytes on disk to a small tree of frozen, located nodes.

Only this module touches ruamel.yaml. It composes at node level (never constructs Python
objects through ruamel's resolver), so every value keeps its line, column and quote style, and
it resolves plain scalars itself: a quoted or block scalar is always a string; a plain scalar
follows the YAML 1.2 core schema, except that integers written with leading zeros (``0007``)
stay strings, because their text would not survive the round trip. ``7:30`` is a string (no
YAML 1.1 sexagesimals).

Hostile input is bounded before it reaches the composer: file size, nesting depth (the C
composer recurses and crashes on very deep documents), and alias expansion (a "billion laughs"
document composes to a small graph but would explode when walked).
"""

from __future__ import annotations

import functools
import operator
import re
import threading
from typing import TYPE_CHECKING, Any

from trailblaze.yaml.plain import MAYBE_NOT_TEXT, Scalar, resolve_plain

# The file side and the plain-scalar rules are rooms of their own; their names stay reachable
# here, the one YAML module the rest of the package imports.
from trailblaze.yaml.text import MAX_FILE_BYTES, YamlError, decode, read_text
from trailblaze.yaml.tree import (
    MAX_DEPTH,
    MAX_NODES,
    PLAIN,
    Unsupported,
    YMap,
    YNode,
    YScalar,
    YSeq,
    kind_of,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "PLAIN",
    "Scalar",
    "Unsupported",
    "YMap",
    "YNode",
    "YScalar",
    "YSeq",
    "YamlError",
    "decode",
    "has_c_extension",
    "kind_of",
    "load",
    "read_text",
    "resolve_plain",
]

if TYPE_CHECKING:
    from collections.abc import Callable

    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
    from ruamel.yaml.resolver import BaseResolver
    from ruamel.yaml.tag import Tag

C_COMPOSING = threading.Lock()
"""Held while ruamel.yaml.clib's C composer composes a document: `yaml.lean` rebinds names of
the C module for the length of one document, which every thread would see."""

# -- composing --------------------------------------------------------------------------------


_IMPLICIT = "tag:trailblaze-doit,2026:plain"
"""The tag our resolver gives every plain scalar without an explicit tag."""


_RUAMEL = threading.Lock()
_RUAMEL_LOADED = threading.Event()


def _ruamel() -> None:
    """Import ruamel.yaml, and make what composing with it takes, into this module: on the
    first document the line-by-line composer (`yaml.quick`) leaves, not at import (some 12 ms
    of a check of one edited trail, whose document it mostly reads itself). Once, whichever
    threads ask: the converter knows our tags by identity."""
    global YAML, MarkedYAMLError, YAMLError, MappingNode, Node, ScalarNode, SequenceNode  # noqa: PLW0603
    global _NoResolver, _PLAIN_TAG, _STR_TAG, _SEQ_TAG, _MAP_TAG  # noqa: PLW0603
    if _RUAMEL_LOADED.is_set():
        return
    with _RUAMEL:
        if _RUAMEL_LOADED.is_set():
            return
        from ruamel.yaml import YAML  # noqa: PLC0415
        from ruamel.yaml.error import MarkedYAMLError, YAMLError  # noqa: PLC0415
        from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode  # noqa: PLC0415
        from ruamel.yaml.resolver import BaseResolver  # noqa: PLC0415
        from ruamel.yaml.tag import Tag  # noqa: PLC0415

        class _NoResolver(BaseResolver):
            """Tags only what the document says; plain scalars are resolved by `resolve_plain`.

            ruamel's own resolver runs in Python for every scalar, even under the C composer,
            and we would throw its answer away: skipping it halves the time to compose a trail.
            """

            def __init__(
                self, version: Any = None, loadumper: Any = None, loader: Any = None
            ) -> None:
                # The C loader passes `loadumper`, the pure-Python one `loader`.
                BaseResolver.__init__(self, loadumper if loadumper is not None else loader)

            @property
            def processing_version(self) -> tuple[int, int]:
                return (1, 2)  # the pure-Python parser asks; YAML 1.2 rules

            def resolve(self, kind: Any, value: Any, implicit: Any) -> Tag:
                if kind is ScalarNode:
                    return _PLAIN_TAG if implicit[0] else _STR_TAG
                return _SEQ_TAG if kind is SequenceNode else _MAP_TAG

        _PLAIN_TAG = Tag(suffix=_IMPLICIT)
        _STR_TAG = Tag(suffix="tag:yaml.org,2002:str")
        _SEQ_TAG = Tag(suffix="tag:yaml.org,2002:seq")
        _MAP_TAG = Tag(suffix="tag:yaml.org,2002:map")
        _RUAMEL_LOADED.set()


if TYPE_CHECKING:

    class _NoResolver(BaseResolver): ...

    _PLAIN_TAG: Tag
    _STR_TAG: Tag
    _SEQ_TAG: Tag
    _MAP_TAG: Tag


@functools.cache
def _composer(pure: bool = False) -> YAML:
    # typ="safe" with pure=False picks ruamel.yaml.clib's C parser and composer when installed
    # (about 7x faster at node level) and falls back to the pure-Python ones otherwise;
    # pure=True forces the Python ones (the benchmark compares both).
    _ruamel()
    yaml = YAML(typ="safe", pure=pure)
    yaml.Resolver = _NoResolver
    return yaml


@functools.cache
def _c_loader() -> type | None:
    """A loader class over ruamel.yaml.clib's C parser and our resolver, or None without it.

    `YAML.compose` builds a new loader class for every document (and keeps a record of every
    document it ever read); creating the loader directly halves the fixed cost per document.
    """
    _ruamel()
    try:
        from ruamel.yaml.cyaml import CParser  # type: ignore[attr-defined]  # noqa: PLC0415
    except ImportError:  # pragma: no cover - the C extension is a dependency on CPython
        return None

    class Loader(CParser, _NoResolver):  # type: ignore[misc]
        # The C composer calls these two around every node it builds; the resolver's own
        # versions only look for path resolvers, which we never register. Built-in callables
        # of the same arity (whose results are ignored) cost no Python frame: a tenth of the
        # time to compose a trail.
        descend_resolver = operator.is_  # type: ignore[assignment]
        ascend_resolver = tuple  # type: ignore[assignment]

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _NoResolver.__init__(self, loadumper=self)

    return Loader


def _compose(text: str, pure: bool) -> Node | None:
    loader_class = None if pure else _c_loader()
    if loader_class is None:
        node: Node | None = _composer(pure).compose(text)
        return node
    with C_COMPOSING:
        loader = loader_class(text)
        try:
            composed: Node | None = loader.get_single_node()
        finally:
            loader.dispose()
    return composed


_LEAN: list[Callable[[str], YNode | None]] = []


def set_lean(compose: Callable[[str], YNode | None]) -> None:
    """Compose with `compose` first from now on, in this process (`yaml.lean`, which says when
    that is safe): it builds the same nodes as `load` or raises `Unsupported` or the parser's
    error, and the document is then composed the usual way."""
    _LEAN[:] = [compose]


@functools.cache
def _quick() -> Callable[[str], YNode | None]:
    """The line-by-line composer (`yaml.quick`), tried first by `load` in every process: it
    builds the same nodes as ruamel, or leaves the document to it (`Unsupported`)."""
    from trailblaze.yaml.quick import compose  # noqa: PLC0415 - it imports this module

    return compose


def has_c_extension() -> bool:
    """Whether `load` composes with ruamel.yaml.clib's C parser."""
    return _c_loader() is not None


def load(text: str, *, pure: bool = False, merge_keys: bool = False) -> YNode | None:
    """Compose one YAML document into located nodes; ``None`` for an empty document.

    Merge keys (``<<: *anchor``) are an error unless ``merge_keys``: then the anchored
    mapping's entries (or each of a list of mappings', the first winning) are merged in below
    the mapping's own keys, keeping the anchor's lines. Trails never take them; the fake
    device's spec files do.

    The line-by-line composer (`yaml.quick`) reads the document first (or the one-pass
    composer a process turned on, `set_lean`, which tries it first); what it leaves is
    composed by ruamel.yaml, imported then.
    """
    _check_depth(text)
    if not pure and not merge_keys:
        try:
            return (_LEAN[0] if _LEAN else _quick())(text)
        except Unsupported:
            pass  # composed below: the usual nodes, or the usual error
        except Exception as exc:
            _ruamel()
            if not isinstance(exc, YAMLError):
                raise
            # composed again below: the usual error
    _ruamel()
    try:
        node = _compose(text, pure)
    except YAMLError as exc:
        if pure:
            raise _yaml_error(exc) from None
        # libyaml (the C parser) refuses a plain scalar with ':' inside a flow collection
        # (`{at: 08:45:09Z}`) that YAML 1.2, the pure parser and the reference's parser accept:
        # a document the C parser refuses is read again by the pure one, and only refused
        # (with the C parser's error, as before) when that refuses it too.
        try:
            node = _compose(text, True)
        except YAMLError:
            raise _yaml_error(exc) from None
    if node is None:
        return None
    return _Converter(merge_keys=merge_keys).convert(node)


def _yaml_error(exc: YAMLError) -> YamlError:
    """ruamel's error as ours: its problem (or context) at its mark when it has one."""
    _ruamel()
    if not isinstance(exc, MarkedYAMLError):
        return YamlError(f"invalid YAML: {exc}")
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "invalid YAML"
    if "expected a single document" in str(exc):
        problem = "more than one YAML document ('---') in one file"
    return YamlError(
        f"invalid YAML: {problem}",
        (mark.line + 1) if mark else 1,
        (mark.column + 1) if mark else 1,
    )


def _check_depth(text: str) -> None:
    """Reject documents nested deeper than MAX_DEPTH before the composer sees them.

    A flow level needs a bracket; two block levels need at least one more column of leading
    spaces or `- `. That bounds the depth cheaply; only documents whose bound is high are
    walked event by event (libyaml's parser is iterative, its composer is not).
    """
    # The longest leading run of spaces and dashes the cheap bound allows; a regex anchored
    # on a newline (not `^` in multiline mode, which tries every position) finds a longer one.
    allowed = (MAX_DEPTH - 2 - text.count("[") - text.count("{")) // 2
    if allowed >= 0:
        longer = _longer_prefix(allowed + 1)
        if longer[0].match(text) is None and longer[1].search(text) is None:
            return
    depth = 0
    _ruamel()
    try:
        for event in _composer().parse(text):
            name = type(event).__name__
            if name in ("MappingStartEvent", "SequenceStartEvent"):
                depth += 1
                if depth > MAX_DEPTH:
                    mark = event.start_mark
                    raise YamlError(
                        f"nesting deeper than {MAX_DEPTH} levels",
                        mark.line + 1,
                        mark.column + 1,
                    )
            elif name in ("MappingEndEvent", "SequenceEndEvent"):
                depth -= 1
    except YAMLError as exc:
        raise _yaml_error(exc) from None


@functools.cache
def _longer_prefix(length: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A leading run of `length` or more spaces and dashes: on the first line, on any other."""
    return re.compile(f"[ -]{{{length},}}"), re.compile(f"\n[ -]{{{length},}}")


_TAG = "tag:yaml.org,2002:"
_CORE_TAGS = {_TAG + t for t in ("str", "int", "float", "bool", "null", "seq", "map")}


def _tag_of(node: Node) -> str:
    """A node's tag as text.

    `Node.tag` URI-decodes the tag on every access, which costs more than composing; the tags
    our resolver assigned have no handle and are plain text already. Explicit tags (`!!str`,
    `!foo`) take the slow, exact path.
    """
    ctag = getattr(node, "ctag", None)
    if ctag is not None and getattr(ctag, "handle", "") is None and isinstance(ctag.suffix, str):
        return ctag.suffix
    return str(node.tag or "")


class _Converter:
    """Walks a composed ruamel graph once, counting nodes so aliases cannot explode.

    The tags our resolver assigned are four shared objects (`_PLAIN_TAG`, `_STR_TAG`,
    `_SEQ_TAG`, `_MAP_TAG`), so the common nodes are recognised by identity and built without
    a second look at their tag; explicit tags take the exact, slower path (`_node`). This walk
    costs about as much as composing, per trail.
    """

    __slots__ = ("count", "merge_keys")

    def __init__(self, *, merge_keys: bool = False) -> None:
        _ruamel()
        self.count = 0
        self.merge_keys = merge_keys

    def convert(self, node: Node) -> YNode:
        self.count += 1
        if self.count > MAX_NODES:
            raise YamlError(
                f"document expands to more than {MAX_NODES} nodes (anchors and aliases?)",
                node.start_mark.line + 1,
                node.start_mark.column + 1,
            )
        mark = node.start_mark
        line = mark.line + 1
        column = mark.column + 1
        ctag = node.ctag
        # Our resolver gives the plain and str tags to scalars only, seq and map to collections.
        if ctag is _PLAIN_TAG:
            text = node.value
            value = text if text[:1] not in MAYBE_NOT_TEXT else resolve_plain(text)
            return YScalar(value, text, PLAIN, line, column)
        if ctag is _STR_TAG:
            text = node.value
            style: str = node.style or PLAIN  # type: ignore[attr-defined]  # a ScalarNode
            return YScalar(text, text, style, line, column)
        if ctag is _MAP_TAG:
            return self.mapping(node, line, column)
        if ctag is _SEQ_TAG:
            convert = self.convert
            return YSeq(tuple([convert(item) for item in node.value]), line, column)
        return self._node(node, line, column)

    def _node(self, node: Node, line: int, column: int) -> YNode:
        if isinstance(node, ScalarNode):
            return self.scalar(node, line, column)
        if isinstance(node, SequenceNode):
            self._check_tag(node, "seq", line, column)
            return YSeq(tuple(self.convert(n) for n in node.value), line, column)
        if isinstance(node, MappingNode):
            self._check_tag(node, "map", line, column)
            return self.mapping(node, line, column)
        raise YamlError("unsupported YAML node", line, column)  # pragma: no cover

    def mapping(self, node: Node, line: int, column: int) -> YMap:
        items: list[tuple[YScalar, YNode]] = []
        index: dict[str, int] = {}
        convert = self.convert
        merged: list[YMap] = []
        for key_node, value_node in node.value:
            ctag = key_node.ctag
            mark = key_node.start_mark
            if self.merge_keys and self._is_merge(key_node):
                merged.extend(self._merge_sources(value_node))
                continue
            if ctag is _PLAIN_TAG and key_node.value != "<<":
                text = key_node.value
                value = text if text[:1] not in MAYBE_NOT_TEXT else resolve_plain(text)
                key = YScalar(value, text, PLAIN, mark.line + 1, mark.column + 1)
            elif ctag is _STR_TAG:
                text = key_node.value
                key = YScalar(text, text, key_node.style or PLAIN, mark.line + 1, mark.column + 1)
            else:
                key = self._key(key_node)
            name = key.text
            if name in index:
                first = items[index[name]][0]
                raise YamlError(
                    f"duplicate key '{name}' (first defined at line {first.line})",
                    key.line,
                    key.column,
                )
            index[name] = len(items)
            items.append((key, convert(value_node)))
        for source in merged:
            for key, value in source.items:
                if key.text not in index:
                    index[key.text] = len(items)
                    items.append((key, value))
        return YMap(tuple(items), line, column, index)

    @staticmethod
    def _is_merge(key_node: Node) -> bool:
        if not isinstance(key_node, ScalarNode):
            return False
        return _tag_of(key_node) == _TAG + "merge" or (
            key_node.value == "<<" and not key_node.style
        )

    def _merge_sources(self, value_node: Node) -> list[YMap]:
        """The mappings a merge key names: one mapping, or a list of them."""
        value = self.convert(value_node)
        sources = value.items if isinstance(value, YSeq) else (value,)
        if not all(isinstance(source, YMap) for source in sources):
            raise YamlError(
                "a merge key ('<<') takes a mapping or a list of mappings",
                value.line,
                value.column,
            )
        return [source for source in sources if isinstance(source, YMap)]

    def _key(self, key_node: Node) -> YScalar:
        line = key_node.start_mark.line + 1
        column = key_node.start_mark.column + 1
        if not isinstance(key_node, ScalarNode):
            raise YamlError("mapping keys must be plain text, not a list or mapping", line, column)
        if _tag_of(key_node) == _TAG + "merge" or (key_node.value == "<<" and not key_node.style):
            raise YamlError("merge keys ('<<') are not supported", line, column)
        return self.scalar(key_node, line, column)

    @staticmethod
    def _check_tag(node: Node, expected: str, line: int, column: int) -> None:
        tag = _tag_of(node)
        if tag not in _CORE_TAGS:
            raise YamlError(f"unsupported tag '{tag}'", line, column)
        if tag != _TAG + expected:
            kind = "mapping" if expected == "map" else "list"
            raise YamlError(f"tag '!!{tag[len(_TAG) :]}' does not fit a {kind}", line, column)

    @staticmethod
    def scalar(node: ScalarNode, line: int, column: int) -> YScalar:
        text: str = node.value
        style: str = node.style or PLAIN
        tag = _tag_of(node)
        if tag == _IMPLICIT:
            return YScalar(resolve_plain(text), text, style, line, column)
        if tag == _TAG + "str":
            return YScalar(text, text, style, line, column)  # quoted, block, or explicit !!str
        if tag not in _CORE_TAGS:
            raise YamlError(f"unsupported tag '{tag}'", line, column)
        if tag in (_TAG + "seq", _TAG + "map"):
            raise YamlError(f"tag '!!{tag[len(_TAG) :]}' does not fit a scalar", line, column)
        value = resolve_plain(text)
        expected = {"int": int, "float": float, "bool": bool, "null": type(None)}[tag[len(_TAG) :]]
        if type(value) is not expected and not (expected is float and type(value) is int):
            raise YamlError(f"'{text}' is not a valid {tag[len(_TAG) :]}", line, column)
        return YScalar(float(value) if expected is float else value, text, style, line, column)  # type: ignore[arg-type]
