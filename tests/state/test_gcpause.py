"""The garbage collector's pause: off inside, back as it was after, however the pauses meet."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_rooms import modules_importing, package_copy
from trailblaze.state.gcpause import (
    gc_off_for_good,
    gc_paused,
    keep_out_of_the_way,
    let_back,
    set_aside_for_exit,
)


@pytest.fixture(autouse=True)
def _collector_as_it_was() -> Iterator[None]:
    """Whatever a test does (or fails to do), the next one finds the collector on."""
    gc.enable()
    try:
        yield
    finally:
        gc.enable()


def test_the_collector_is_off_inside_and_on_after() -> None:
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nested_pauses_turn_it_on_when_the_outer_one_ends() -> None:
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_exception_inside_goes_on_and_the_collector_comes_back() -> None:
    with pytest.raises(ZeroDivisionError), gc_paused():
        _ = 1 / 0
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert not gc.isenabled()
    with pytest.raises(KeyError), gc_paused():
        raise KeyError("x")
    assert not gc.isenabled()


def test_pauses_of_two_threads_that_overlap_end_with_the_last() -> None:
    # One collector per process: the first thread's pause ends while the second's runs.
    entered, first_done, check = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def second() -> None:
        with gc_paused():
            entered.set()
            first_done.wait(10)
            seen.append(gc.isenabled())
            check.wait(10)

    with gc_paused():
        worker = threading.Thread(target=second)
        worker.start()
        assert entered.wait(10)
    first_done.set()
    while not seen:
        worker.join(0.01)
    assert seen == [False]  # still inside the second pause: off
    check.set()
    worker.join(10)
    assert gc.isenabled()


def test_off_for_good_stays_off() -> None:
    gc_off_for_good()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_only_the_pause_module_imports_gc() -> None:
    assert modules_importing("gc") == ["trailblaze.state.gcpause"]


def test_a_planted_gc_import_is_found(tmp_path: Path) -> None:
    root = package_copy(tmp_path, ("check/workers.py", "def later():\n    import gc\n"))
    assert modules_importing("gc", root) == ["trailblaze.check.workers", "trailblaze.state.gcpause"]


def test_what_is_kept_is_left_out_and_a_dropped_cycle_is_freed_by_the_next_call() -> None:
    class Node:
        other: object = None

    def cycle() -> weakref.ref[Node]:
        a, b = Node(), Node()
        a.other, b.other = b, a
        kept.append(a)
        return weakref.ref(a)

    kept: list[Node] = []
    first = cycle()
    try:
        keep_out_of_the_way()
        assert gc.get_freeze_count() > 0
        kept.clear()  # the workspace is dropped: its cycle is frozen, not collected
        gc.collect()
        assert first() is not None
        keep_out_of_the_way()  # a new workspace is kept: the old one's cycle goes first
        assert first() is None
    finally:
        gc.unfreeze()


def test_what_is_set_aside_for_the_exit_is_not_collected_first() -> None:
    """The exit's set-aside runs no collection of its own (that would cost what it saves): a
    cycle dropped before it stays, left out of every collection after it."""

    class Node:
        other: object = None

    try:
        with gc_paused():  # no collection of the collector's own before the set-aside
            a, b = Node(), Node()
            a.other, b.other = b, a
            dropped = weakref.ref(a)
            del a, b
            set_aside_for_exit()
        assert dropped() is not None
        gc.collect()
        assert dropped() is not None
    finally:
        gc.unfreeze()
    gc.collect()
    assert dropped() is None


def test_what_was_set_aside_is_let_back_and_a_dropped_cycle_freed() -> None:
    """A process that goes on after its set-aside (doit's next check): `let_back` collects
    what was set aside once, a cycle dropped since included."""

    class Node:
        other: object = None

    try:
        with gc_paused():
            a, b = Node(), Node()
            a.other, b.other = b, a
            dropped = weakref.ref(a)
            del a, b
            set_aside_for_exit()
        gc.collect()
        assert dropped() is not None  # set aside: no collection sees it
        let_back()
        assert gc.get_freeze_count() == 0
        assert dropped() is None
    finally:
        gc.unfreeze()


def test_letting_back_with_nothing_set_aside_collects_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    collections: list[int] = []

    def collect(*args: int) -> int:
        collections.append(1)
        return 0

    monkeypatch.setattr(gc, "collect", collect)
    assert gc.get_freeze_count() == 0
    let_back()
    assert collections == []


def test_a_pause_that_sets_aside_freezes_what_is_alive_before_the_collector_comes_back() -> None:
    """The collector's first pass after a pause would walk everything the pause made (the
    pipeline's import: 12,000 objects) to free nothing: a pause asked to set aside leaves
    them out first. Nested, it is the last pause to end that sets aside; a plain pause does
    not."""

    class Node:
        other: object = None

    try:
        with gc_paused():
            pass
        assert gc.get_freeze_count() == 0
        with gc_paused():
            with gc_paused(set_aside=True):
                a, b = Node(), Node()
                a.other, b.other = b, a
                dropped = weakref.ref(a)
                del a, b
            assert gc.get_freeze_count() == 0  # the outer pause is still open
            assert not gc.isenabled()
        assert gc.get_freeze_count() > 0
        assert gc.isenabled()
        gc.collect()
        assert dropped() is not None  # set aside, not collected first
        let_back()
        assert dropped() is None
        with gc_paused():  # the request was for that pause only
            pass
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
