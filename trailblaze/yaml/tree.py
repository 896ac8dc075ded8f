"""The located YAML nodes every composer builds (`yaml.node`, `yaml.quick`, `yaml.lean`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeAlias

import msgspec

from trailblaze.yaml.plain import Scalar

MAX_DEPTH = 64
MAX_NODES = 200_000

PLAIN = ""
"""Style of a plain (unquoted) scalar; the others are ``'``, ``"``, ``|`` and ``>``."""

# The nodes are msgspec Structs: frozen, hashable, and built in C. A trail builds hundreds of
# them; a frozen dataclass's guarded `__init__` made composing a trail a fifth slower, and a
# plain slotted one still cost a Python call per node (about 2.5 times msgspec's), and pickled
# (from a parse worker) at a sixth of the speed.


class YScalar(msgspec.Struct, frozen=True):
    """A scalar with its resolved value, its source text and its quote style."""

    value: Scalar
    text: str
    style: str
    line: int
    column: int

    @property
    def quoted(self) -> bool:
        return self.style != PLAIN

    @property
    def is_null(self) -> bool:
        """A plain null (`~`, `null` or nothing); a quoted one is text."""
        return self.value is None and not self.quoted

    def to_python(self) -> Scalar:
        return self.value


class YSeq(msgspec.Struct, frozen=True):
    items: tuple[YNode, ...]
    line: int
    column: int

    def to_python(self) -> list[Any]:
        return [item.to_python() for item in self.items]


class YMap(msgspec.Struct, frozen=True):
    """A mapping whose keys are scalars, in document order, without duplicates."""

    items: tuple[tuple[YScalar, YNode], ...]
    line: int
    column: int
    _index: dict[str, int] = msgspec.field(default_factory=dict)
    """Each key's place in `items`: made from them (or handed over by the composer, which made
    it), so two maps with equal items have equal indexes; not hashed (`__hash__`)."""

    def __post_init__(self) -> None:
        if len(self._index) != len(self.items):  # not handed over by the converter
            index = {key.text: i for i, (key, _) in enumerate(self.items)}
            msgspec.structs.force_setattr(self, "_index", index)

    def __hash__(self) -> int:
        return hash((self.items, self.line, self.column))

    def get(self, key: str) -> YNode | None:
        i = self._index.get(key)
        return None if i is None else self.items[i][1]

    def key_node(self, key: str) -> YScalar | None:
        i = self._index.get(key)
        return None if i is None else self.items[i][0]

    def keys(self) -> list[str]:
        return [k.text for k, _ in self.items]

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        # A node is a node, even an empty one: `node or fallback` must never skip `{}`.
        return True

    def __iter__(self) -> Iterator[tuple[YScalar, YNode]]:
        return iter(self.items)

    def to_python(self) -> dict[str, Any]:
        return {k.text: v.to_python() for k, v in self.items}


YNode: TypeAlias = YScalar | YSeq | YMap


def kind_of(node: YNode | None) -> str:
    """The word a user knows for a node's type, for messages."""
    if node is None:
        return "nothing"
    if isinstance(node, YMap):
        return "a mapping"
    if isinstance(node, YSeq):
        return "a list"
    if node.value is None:
        return "null"
    if isinstance(node.value, bool):
        return "a boolean"
    if isinstance(node.value, int | float):
        return "a number"
    return "a string"


class Unsupported(Exception):
    """Raised by a lean composer (`node.set_lean`) for a document it leaves to the usual one."""
