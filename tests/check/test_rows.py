"""The per-workspace trail state: what survives between checks, and what a broken file costs."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from trailblaze.check.rows import TrailRecord, TrailState
from trailblaze.state.scratch import Layout
from trailblaze.state.store import Store


def record(path: str, **changes: object) -> TrailRecord:
    base = TrailRecord(
        path=path,
        stamp="120:1700000000123456789:42",
        content="c" * 64,
        strict=True,
        status="parsed",
        target="shop",
        calls=3,
        parse=({"kind": "parse", "path": path, "line": 3, "column": 5, "text": "bad"},),
        runif=(),
        key="k" * 64,
        surface_key="s" * 64,
        base_key="b" * 64,
        types=({"kind": "type", "path": path, "line": 9, "column": 11, "text": "TS2322"},),
        branches=(("sig", 4, 7),),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def saved(tmp_path: Path, state: TrailState) -> bool:
    with Store.open(tmp_path) as store:
        changed = state.save(store)
        assert store.commit()
    return changed


def loaded(tmp_path: Path) -> TrailState:
    with Store.open(tmp_path) as store:
        return TrailState.load(store)


def test_records_round_trip_exactly(tmp_path: Path) -> None:
    state = TrailState()
    state.trails = {
        "a.trail.yaml": record("a.trail.yaml"),
        "b.trail.yaml": record("b.trail.yaml", stamp=None, target=None, key=None, types=()),
    }
    assert saved(tmp_path, state)
    assert loaded(tmp_path).trails == state.trails


def test_only_changes_are_written_and_removed_trails_are_forgotten(tmp_path: Path) -> None:
    state = TrailState()
    state.trails = {f"t{i}.trail.yaml": record(f"t{i}.trail.yaml") for i in range(3)}
    saved(tmp_path, state)
    again = loaded(tmp_path)
    assert not saved(tmp_path, again)  # nothing changed: nothing written
    trails = dict(again.trails)
    del trails["t0.trail.yaml"]
    trails["t1.trail.yaml"] = record("t1.trail.yaml", calls=9)
    again.trails = trails
    assert saved(tmp_path, again)
    after = loaded(tmp_path).trails
    assert sorted(after) == ["t1.trail.yaml", "t2.trail.yaml"]
    assert after["t1.trail.yaml"].calls == 9


def test_a_corrupt_or_foreign_database_reads_as_empty_and_is_replaced(tmp_path: Path) -> None:
    path = Layout(tmp_path).store
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all" * 64)
    state = loaded(tmp_path)
    assert state.trails == {}
    state.trails = {"a.trail.yaml": record("a.trail.yaml")}
    assert saved(tmp_path, state)
    assert list(loaded(tmp_path).trails) == ["a.trail.yaml"]
    # A table of another shape (a hand-made or future file): empty, not a traceback.
    path.unlink()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE trails (path TEXT PRIMARY KEY, other TEXT)")
    db.execute("INSERT INTO trails VALUES ('x', 'y')")
    db.commit()
    db.close()
    assert loaded(tmp_path).trails == {}
    # A row of the right shape with values of the wrong type: empty too.
    state.trails = {"a.trail.yaml": record("a.trail.yaml")}
    assert saved(tmp_path, state)
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE trails SET calls = 'many'")
    db.close()
    assert loaded(tmp_path).trails == {}


def test_the_states_of_earlier_versions_are_removed(tmp_path: Path) -> None:
    olds = [
        tmp_path / "state" / "trails.json",
        tmp_path / "state" / "trails-v4.sqlite3",
        tmp_path / "state" / "trails-v4.sqlite3-wal",
        tmp_path / "state" / "valid-documents.json",
        tmp_path / "state" / "surfaces-written.json",
        tmp_path / "typegate" / "stats.json",
        tmp_path / "typegate" / "module-surfaces.json",
        tmp_path / "typegate" / "tooldecl" / "app" / ".emitted.json",
        tmp_path / "check-state.json",
        tmp_path / "report-view.json",
    ]
    for old in olds:
        old.parent.mkdir(parents=True, exist_ok=True)
        old.write_text("from an earlier version")
    keep = tmp_path / "state" / "notes.txt"
    keep.write_text("not ours")
    state = TrailState({"a.trail.yaml": record("a.trail.yaml")})
    assert saved(tmp_path, state)
    assert [p for p in olds if p.exists()] == []
    assert keep.exists()
