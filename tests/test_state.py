"""The per-workspace trail state: what survives between checks, and what a broken file costs."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from trailblaze.state import TrailRecord, TrailState


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


def test_records_round_trip_exactly(tmp_path: Path) -> None:
    state = TrailState()
    state.trails = {
        "a.trail.yaml": record("a.trail.yaml"),
        "b.trail.yaml": record("b.trail.yaml", stamp=None, target=None, key=None, types=()),
    }
    assert state.save(tmp_path)
    assert TrailState.load(tmp_path).trails == state.trails


def test_only_changes_are_written_and_removed_trails_are_forgotten(tmp_path: Path) -> None:
    state = TrailState()
    state.trails = {f"t{i}.trail.yaml": record(f"t{i}.trail.yaml") for i in range(3)}
    state.save(tmp_path)
    loaded = TrailState.load(tmp_path)
    assert not loaded.save(tmp_path)  # nothing changed: nothing written
    trails = dict(loaded.trails)
    del trails["t0.trail.yaml"]
    trails["t1.trail.yaml"] = record("t1.trail.yaml", calls=9)
    loaded.trails = trails
    assert loaded.save(tmp_path)
    again = TrailState.load(tmp_path).trails
    assert sorted(again) == ["t1.trail.yaml", "t2.trail.yaml"]
    assert again["t1.trail.yaml"].calls == 9


def test_a_corrupt_or_foreign_database_reads_as_empty_and_is_replaced(tmp_path: Path) -> None:
    path = TrailState.path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all" * 64)
    state = TrailState.load(tmp_path)
    assert state.trails == {}
    state.trails = {"a.trail.yaml": record("a.trail.yaml")}
    assert state.save(tmp_path)
    assert list(TrailState.load(tmp_path).trails) == ["a.trail.yaml"]
    # A table of another shape (a hand-made or future file): empty, not a traceback.
    path.unlink()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE trails (path TEXT PRIMARY KEY, other TEXT)")
    db.execute("INSERT INTO trails VALUES ('x', 'y')")
    db.commit()
    db.close()
    assert TrailState.load(tmp_path).trails == {}


def test_the_states_of_earlier_versions_are_removed(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    olds = [
        state_dir / "trails.json",
        state_dir / "trails-v3.sqlite3",
        state_dir / "trails-v3.sqlite3-wal",
    ]
    for old in olds:
        old.write_text("from an earlier version")
    keep = state_dir / "surfaces-written.json"
    keep.write_text("{}")
    assert TrailState.load(tmp_path).trails == {}
    assert [p for p in olds if p.exists()] == []
    assert keep.exists()
