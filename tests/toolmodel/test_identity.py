"""`toolmodel.identity.ByIdentity`: one value per object (and key parts), not per equal value."""

from __future__ import annotations

from functools import partial

from trailblaze.toolmodel.identity import ByIdentity


def test_a_value_is_made_once_per_object_and_key() -> None:
    memo: ByIdentity[str] = ByIdentity()
    made: list[str] = []

    def make(text: str) -> str:
        made.append(text)
        return text.upper()

    one, same_value = {"a": 1}, {"a": 1}  # equal, unhashable: two objects
    assert memo.get(one, lambda: make("one")) == "ONE"
    assert memo.get(one, lambda: make("again")) == "ONE"
    assert memo.get(same_value, lambda: make("other")) == "OTHER"
    assert memo.get(one, lambda: make("indented"), 4) == "INDENTED"
    assert made == ["one", "other", "indented"]


def test_the_memo_holds_its_objects_and_is_bounded() -> None:
    memo: ByIdentity[int] = ByIdentity(limit=2)
    for n in range(5):
        # Each list is dropped by the caller at once: only the memo keeps it, so no later
        # object can take its id and find its value.
        assert memo.get([n], partial(int, n)) == n
    kept = [0]
    assert memo.get(kept, lambda: 10) == 10
    assert memo.get(kept, lambda: 11) == 10
    memo.clear()
    assert memo.get(kept, lambda: 12) == 12
