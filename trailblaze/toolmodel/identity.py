"""Values worked out once per object, for objects that cannot be hashed by value.

A frozen record that holds a dict (a tool's entry and its input schema) is one object shared
by every trailmap that has the tool (`records.framework_entry`), but not hashable: what is
worked out from it (`generate.tsrender`, `generate.trailschema`) is kept by the object's
identity. In the tool model's folder, the lowest of its users. The object is held with its value, so that its id is not taken by
another object while the entry lives; the memo is bounded (it is emptied when full).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class ByIdentity(Generic[V]):
    """Values by (the identity of an object, and any other parts of the key)."""

    __slots__ = ("_items", "_limit")

    def __init__(self, limit: int = 4096) -> None:
        self._items: dict[tuple[Hashable, ...], tuple[object, V]] = {}
        self._limit = limit

    def get(self, obj: object, make: Callable[[], V], *rest: Hashable) -> V:
        """The value kept for `obj` (and `rest`), or `make()`, kept from now on."""
        key = (id(obj), *rest)
        found = self._items.get(key)
        if found is not None and found[0] is obj:
            return found[1]
        value = make()
        if len(self._items) >= self._limit:
            self._items.clear()
        self._items[key] = (obj, value)
        return value

    def clear(self) -> None:
        self._items.clear()
