"""doit's check action and the garbage collector: what a check leaves alive is set aside, and
the next check of the same process lets it back."""

from __future__ import annotations

import gc
import types
import weakref
from pathlib import Path

import pytest

from trailblaze.doit_tasks import actions as doit_actions


def test_a_check_sets_aside_what_it_leaves_and_the_next_one_lets_it_back(
    compact_ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """doit's work after a check and the interpreter's exit would walk everything the pipeline
    made (25 ms of a one-trail edit at 10,000 trails): the check action sets it aside, and the
    next check of the same process (a monorepo's next workspace) lets it back first, so that a
    cycle the last one dropped is still freed."""

    class Node:
        other: object = None

    on_entry: list[int] = []
    dropped: list[weakref.ref[Node]] = []

    def check_and_record(*args: object) -> None:
        on_entry.append(gc.get_freeze_count())
        a, b = Node(), Node()
        a.other, b.other = b, a
        dropped.append(weakref.ref(a))

    monkeypatch.setattr("trailblaze.doit_tasks.recorded.check_and_record", check_and_record)
    inputs = types.SimpleNamespace(stats={}, paths=[])
    try:
        gc.disable()  # the cycle is left to the set-aside, not to a collection of its own
        assert doit_actions.check_run(str(compact_ws), None, inputs) is None  # type: ignore[arg-type]
        assert gc.get_freeze_count() > 0
        gc.collect()
        assert dropped[0]() is not None  # set aside
        assert doit_actions.check_run(str(compact_ws), None, inputs) is None  # type: ignore[arg-type]
        assert on_entry == [0, 0]  # let back before the second check
        assert dropped[0]() is None  # and the first check's dropped cycle freed
    finally:
        gc.enable()
        gc.unfreeze()
