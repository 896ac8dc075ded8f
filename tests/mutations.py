"""Hypothesis strategies for documents from outside (remote-cache entries, shard reports): a
valid document with one or more of its values replaced by something hostile."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

SECRET = "root:x:0:0:the secret line"
"""The one line of a file outside the workspace that no report may ever show."""

PATHS = st.sampled_from(
    [
        "/etc/passwd",
        "../../etc/passwd",
        "../outside/passwd",
        "trailmaps/../../outside/passwd",
        "trailmaps/app/../../../outside/passwd",
        "./trailmaps/app/t0.trail.yaml",
        "trailmaps//app/t0.trail.yaml",
        "trailmaps/app/t0.trail.yaml\0",
        "README.md",
        "",
        "\x1b[31mred",
        "C:\\Windows\\win.ini",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**24, 2**24 + 1, 2**31, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    PATHS,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _places(doc: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in `doc` (a path of keys and indexes), the root included."""
    out = [at]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out.extend(_places(value, (*at, key)))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out.extend(_places(value, (*at, index)))
    return out


def _set(doc: Any, at: tuple[Any, ...], value: Any, *, delete: bool) -> Any:
    if not at:
        return value
    parent = doc
    for step in at[:-1]:
        parent = parent[step]
    if delete:
        del parent[at[-1]]
    else:
        parent[at[-1]] = value
    return doc


@st.composite
def mutated(draw: st.DrawFn, doc: Any, *, max_changes: int = 3) -> Any:
    """A deep copy of the JSON document `doc` with 1 to `max_changes` values replaced by
    hostile ones (or, in an object or a list, removed)."""
    copy = json.loads(json.dumps(doc))
    for _ in range(draw(st.integers(1, max_changes))):
        at = draw(st.sampled_from(_places(copy)))
        delete = bool(at) and draw(st.booleans()) and draw(st.booleans())
        copy = _set(copy, at, None if delete else draw(VALUES), delete=delete)
    return copy
