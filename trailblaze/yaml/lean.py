"""Composing located nodes in one pass, inside ruamel.yaml.clib's C composer: for our long parses.

`node.load` composes ruamel's Python node objects and then walks them into ours: two objects
(and three or four Python calls) per node, about half of a trail's parse. The C composer looks
up the node classes it builds by name in its module (`_ruamel_yaml.ScalarNode`, ...) and
calls them with (tag, value, start_mark, end_mark, style). Here those names are bound, for the
duration of one document only, to builders of our nodes: a scalar becomes a `YScalar` as it is
composed, a collection a small holder whose items are turned into a `YMap` or `YSeq` by one
walk over the collections afterwards. The tags come from `_tag`, a built-in callable, so the
resolver costs no Python call either.

Rebinding a C module's names is seen by every thread of the process: it is done under
`node.C_COMPOSING`, the lock every use of the C composer holds, so no other thread composes
meanwhile. A process turns it on for good, for every document it loads: the parse workers
(`check.workers`), each a forked process of ours running one trail at a time, call `enable()`
when they start, and so does the language server (`lsp.server.serve`), which parses the edited
trail on every keystroke. Everywhere else `node.load` composes as before (`yaml.quick` first).

Before any of this, `yaml.quick` reads the document line by line when it is of the common
shape of a trail (most are), which is faster still; what it leaves comes here.

The result is the same tree `node.load` builds, or nothing: anything this pass does not do
exactly as `node._Converter` does (anchors and aliases, explicit tags, merge keys, duplicate
keys, a mapping or list as a key, more than `MAX_NODES` nodes) makes it give up
(`Unsupported`), and the document is composed again the usual way, which reports the error or
builds the rare node. A document the C parser refuses raises its error as before.
"""

from __future__ import annotations

import operator
import re
from typing import Any

from trailblaze.yaml import node as _node
from trailblaze.yaml import quick
from trailblaze.yaml.node import MAX_NODES, PLAIN, Unsupported, YMap, YNode, YScalar, YSeq
from trailblaze.yaml.plain import MAYBE_NOT_TEXT, resolve_plain

_tag = slice
"""The resolver: called by the C composer as ``resolve(kind, value, implicit)`` for a node
without an explicit tag, it returns the three in one built-in object. An explicit tag arrives
as text instead."""


def _scalar(tag: Any, value: str, start_mark: Any, end_mark: Any, style: Any = None) -> Any:
    if type(tag) is slice:
        if tag.step[0]:  # plain, untagged: YAML 1.2 core (`plain.resolve_plain`)
            return YScalar(
                value if value[:1] not in MAYBE_NOT_TEXT else resolve_plain(value),
                value,
                PLAIN,
                start_mark.line + 1,
                start_mark.column + 1,
            )
        return YScalar(value, value, style or PLAIN, start_mark.line + 1, start_mark.column + 1)
    raise Unsupported  # an explicit tag


class _Collection:
    """What the C composer fills: its item list (`value`) and where it starts."""

    __slots__ = ("end_mark", "flow_style", "start_mark", "tag", "value")

    def __init__(
        self, tag: Any, value: list[Any], start_mark: Any, end_mark: Any, flow_style: Any = None
    ) -> None:
        if type(tag) is not slice:
            raise Unsupported  # an explicit tag
        self.value = value
        self.start_mark = start_mark


class _Map(_Collection):
    __slots__ = ()


class _Seq(_Collection):
    __slots__ = ()


def _loader_class() -> type:
    from ruamel.yaml.cyaml import CParser  # type: ignore[attr-defined]  # noqa: PLC0415

    class Loader(CParser):  # type: ignore[misc]
        resolve = _tag
        descend_resolver = operator.is_
        ascend_resolver = tuple

    return Loader


class _Walk:
    """Collections to `YMap` and `YSeq`, counting nodes as `node._Converter` counts them."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def convert(self, item: Any) -> YNode:
        kind = type(item)
        if kind is _Map:
            return self.mapping(item)
        if kind is _Seq:
            return self.sequence(item)
        return item  # type: ignore[no-any-return]  # a YScalar

    def mapping(self, node: _Map) -> YMap:
        pairs = node.value
        self.count += len(pairs)
        items: list[tuple[YScalar, YNode]] = []
        index: dict[str, int] = {}
        for key, raw in pairs:
            if type(key) is not YScalar:
                raise Unsupported  # a mapping or list as a key: the usual path's error
            name = key.text
            if name in index or (name == "<<" and key.style == PLAIN):
                raise Unsupported  # a duplicate or a merge key: the usual path's error
            index[name] = len(items)
            kind = type(raw)
            value = (
                self.mapping(raw) if kind is _Map else self.sequence(raw) if kind is _Seq else raw
            )
            items.append((key, value))
        mark = node.start_mark
        return YMap(tuple(items), mark.line + 1, mark.column + 1, index)

    def sequence(self, node: _Seq) -> YSeq:
        values = node.value
        self.count += len(values)
        mapping = self.mapping
        sequence = self.sequence
        items = [
            mapping(v) if type(v) is _Map else sequence(v) if type(v) is _Seq else v for v in values
        ]
        mark = node.start_mark
        return YSeq(tuple(items), mark.line + 1, mark.column + 1)


def compose(text: str) -> YNode | None:
    """The document's located nodes, composed in one pass (see the module docstring)."""
    try:
        return quick.compose(text)
    except Unsupported:
        pass  # not the common shape: the C composer
    if "&" in text and _ANCHOR.search(text):
        raise Unsupported  # anchors (and so aliases): shared nodes, counted as they expand
    cmodule = _CMODULE
    with _node.C_COMPOSING:  # no other thread composes while the names are ours
        loader = _LOADER(text)
        saved = cmodule.ScalarNode, cmodule.SequenceNode, cmodule.MappingNode
        cmodule.ScalarNode, cmodule.SequenceNode, cmodule.MappingNode = _scalar, _Seq, _Map
        try:
            root = loader.get_single_node()
        finally:
            cmodule.ScalarNode, cmodule.SequenceNode, cmodule.MappingNode = saved
            loader.dispose()
    if root is None:
        return None
    walk = _Walk()
    tree = walk.convert(root)
    if walk.count + 1 > MAX_NODES:
        raise Unsupported  # the usual path says where it went past the bound
    return tree


_ANCHOR = re.compile(r"(?:^|[\s\[{,:])&[^\s\[\]{},]", re.MULTILINE)
"""Where an anchor may be: an `&` that starts a token (after a line start, a space or a flow
indicator) and is followed by a name. Text such as `Terms & conditions` or `AT&T` is not one;
what looks like one inside a quoted string only costs the usual path."""

_LOADER: Any = None
_CMODULE: Any = None


def enable() -> bool:
    """Compose with this pass in this process from now on (a process that composes nothing
    else: see the module docstring); False when ruamel.yaml.clib is not there."""
    global _LOADER, _CMODULE  # noqa: PLW0603 - set once per worker process
    try:
        import _ruamel_yaml  # type: ignore[import-not-found]  # noqa: PLC0415

        _LOADER = _loader_class()
        _CMODULE = _ruamel_yaml
    except ImportError:  # pragma: no cover - the C extension is a dependency on CPython
        return False
    if not _agrees():
        return False  # pragma: no cover - a release of the C extension that composes otherwise
    _node.set_lean(compose)
    return True


_PROBE = """\
- plain: text
  number: 12
  quoted: '5'
  double: "x"
  nothing:
  block: |
    two
    lines
  flow: {a: [1, two, 'three'], b: {}}
- [x, -1.5, true, ~]
"""


def _agrees() -> bool:
    """Whether this pass composes a probe as the usual path does: the C extension is free to
    call its node classes otherwise in another release, and then this pass is not used."""
    usual = _node._compose(_PROBE, False)
    try:
        return usual is not None and compose(_PROBE) == _node._Converter().convert(usual)
    except Exception:  # any failure of this pass means: do not use it
        return False
