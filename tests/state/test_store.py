"""The state store: every entry survives a run, and every way it can be broken is a miss that heals."""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_python
from trailblaze.state import store as store_module
from trailblaze.state.scratch import Layout, ScratchError, prepare_scratch
from trailblaze.state.store import Kind, Store


def _words(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("not a list of words")
    return value


WORDS: Kind[list[str]] = Kind("words", _words)


def put(scratch: Path, slot: str, value: list[str], **options: Any) -> bool:
    with Store.open(scratch) as store:
        store.put(WORDS, slot, value, **options)
        return store.commit()


def get(scratch: Path, slot: str, key: str | None = None) -> list[str] | None:
    with Store.open(scratch) as store:
        return store.get(WORDS, slot, key)


def test_an_entry_holds_while_its_key_and_files_are_as_they_were(tmp_path: Path) -> None:
    vouched = tmp_path / "made.txt"
    vouched.write_text("made")
    assert put(tmp_path, "a", ["x", "y"], key="k1", files=[vouched])
    assert get(tmp_path, "a", "k1") == ["x", "y"]
    assert get(tmp_path, "a") == ["x", "y"]  # any key
    assert get(tmp_path, "a", "k2") is None  # made under another key
    assert get(tmp_path, "b") is None
    vouched.write_text("edited by hand")
    assert get(tmp_path, "a", "k1") is None
    assert put(tmp_path, "a", ["x", "y"], key="k1", files=[vouched])
    vouched.unlink()
    assert get(tmp_path, "a", "k1") is None


def test_nothing_is_written_before_commit_and_an_unchanged_put_writes_nothing(
    tmp_path: Path,
) -> None:
    with Store.open(tmp_path) as store:
        store.put(WORDS, "a", ["x"])
        assert store.get(WORDS, "a") == ["x"]  # staged entries are visible to their run
        assert get(tmp_path, "a") is None  # but to nobody else
        assert store.commit()
    assert get(tmp_path, "a") == ["x"]
    with Store.open(tmp_path) as store:
        store.put(WORDS, "a", ["x"])
        assert not store.pending
        store.drop(WORDS, "a")
        assert store.slots(WORDS) == []
        assert store.commit()
    assert get(tmp_path, "a") is None


def test_a_value_of_the_wrong_shape_is_a_miss(tmp_path: Path) -> None:
    assert put(tmp_path, "a", ["x"])
    db = sqlite3.connect(Layout(tmp_path).store)
    with db:
        db.execute('UPDATE memos SET value = \'{"not": "words"}\'')
    db.close()
    assert get(tmp_path, "a") is None
    db = sqlite3.connect(Layout(tmp_path).store)
    with db:
        db.execute("UPDATE memos SET value = '[truncated', files = '{bad'")
    db.close()
    assert get(tmp_path, "a") is None


BROKEN = {
    "missing": None,
    "empty": b"",
    "truncated": "truncate",
    "garbage": b"\x00garbage, not a database at all" * 200,
    "a directory": "dir",
}


@pytest.mark.parametrize("damage", sorted(BROKEN))
def test_a_broken_store_reads_as_empty_and_the_next_commit_heals_it(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = Layout(tmp_path).store
    assert put(tmp_path, "a", ["x"] * 500)
    how = BROKEN[damage]
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    if how is None:
        path.unlink()
    elif how == "truncate":
        with path.open("r+b") as handle:
            handle.truncate(path.stat().st_size // 2)
    elif how == "dir":
        path.unlink()
        (path / "inside").mkdir(parents=True)
    else:
        assert isinstance(how, bytes)
        path.write_bytes(how)
    with caplog.at_level(logging.INFO):
        assert get(tmp_path, "a") in (None, ["x"] * 500)  # a truncated file may still read
        assert put(tmp_path, "b", ["y"])
    assert path.is_file()
    assert get(tmp_path, "b") == ["y"]


def test_a_state_directory_that_is_a_file_is_replaced_in_a_scratch_directory_of_ours(
    tmp_path: Path,
) -> None:
    scratch = tmp_path / "scratch"
    prepare_scratch(scratch)  # made by us: ours whole, and marked so
    assert (scratch / "CACHEDIR.TAG").is_file()
    layout = Layout(scratch)
    layout.state_dir.write_text("in the way")
    assert get(scratch, "a") is None
    assert put(scratch, "a", ["x"])
    assert get(scratch, "a") == ["x"]


def test_a_file_of_someone_else_where_the_state_directory_belongs_is_left_as_it_is(
    tmp_path: Path,
) -> None:
    """A scratch directory we found with things in it: only what we create there is ours."""
    (tmp_path / "theirs.txt").write_text("theirs")
    layout = Layout(tmp_path)
    layout.state_dir.write_text("in the way")
    with pytest.raises(ScratchError, match="did not create is in the way"):
        put(tmp_path, "a", ["x"])
    assert layout.state_dir.read_text() == "in the way"
    assert not (tmp_path / "CACHEDIR.TAG").exists()


LOCKER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA locking_mode=EXCLUSIVE")
db.execute("BEGIN EXCLUSIVE")
db.execute("INSERT OR REPLACE INTO meta VALUES ('locked', 'yes')")
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_locked_store_is_a_miss_and_a_warning_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(store_module, "LOCK_TIMEOUT", 0.2)
    assert put(tmp_path, "a", ["x"])
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(Layout(tmp_path).store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert locker.stdout is not None
        assert locker.stdout.readline().strip() == "locked"
        start = time.monotonic()
        with caplog.at_level(logging.WARNING):
            assert get(tmp_path, "a") is None
            assert not put(tmp_path, "b", ["y"])
        assert time.monotonic() - start < 5
        assert "could not record state" in caplog.text
    finally:
        assert locker.stdin is not None
        locker.stdin.close()
        locker.wait(timeout=30)
        assert locker.stdout is not None
        locker.stdout.close()
    assert get(tmp_path, "a") == ["x"]  # released: everything is back
    assert put(tmp_path, "b", ["y"])
    assert get(tmp_path, "b") == ["y"]


WRITER = """
import sys
from pathlib import Path
from trailblaze.state.store import Kind, Store
WORDS = Kind("words", list)
scratch, me = Path(sys.argv[1]), sys.argv[2]
for i in range(40):
    with Store.open(scratch) as store:
        store.put(WORDS, me, [me, str(i)] * 50)
        store.put(WORDS, "shared", [me, str(i)] * 50)
        assert store.commit()
"""


def test_concurrent_writers_leave_a_consistent_store(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), f"w{n}"], env=env)
        for n in range(3)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0]
    for n in range(3):
        assert get(tmp_path, f"w{n}") == [f"w{n}", "39"] * 50
    shared = get(tmp_path, "shared")
    assert shared is not None
    assert shared[0] in ("w0", "w1", "w2")
    assert shared == [shared[0], "39"] * 50  # one run's complete value, never a mixture


def test_a_store_made_by_other_code_is_not_read(tmp_path: Path) -> None:
    # A trail whose file does not change keeps its row in the store; a new version of our
    # parse gate may judge the same file otherwise, so an upgrade (here: an edited copy of
    # the package) must not be handed the old code's verdict.
    repo = tmp_path / "repo"
    shutil.copytree(
        ROOT / "trailblaze", repo / "trailblaze", ignore=shutil.ignore_patterns("__pycache__")
    )
    ws = tmp_path / "ws"
    (ws / "trailmaps" / "notes").mkdir(parents=True)
    (ws / "trailmaps" / "notes" / "trailmap.yaml").write_text("id: notes\n")
    trail = ws / "trailmaps" / "notes" / "bad.trail.yaml"
    trail.write_text("- config:\n    colour: red\n- tools:\n    - pressBack: {}\n")

    def check() -> str:
        done = run_python(
            ws,
            "-m",
            "trailblaze",
            "check",
            "--no-typecheck",
            env={"PYTHONPATH": str(repo), "PYTHONDONTWRITEBYTECODE": "1"},
        )
        assert done.returncode == 1, done.stdout + done.stderr
        return done.stdout

    assert "unknown key 'colour'" in check()
    reader = repo / "trailblaze" / "trail" / "parse" / "reader.py"
    text = reader.read_text()
    assert text.count('message = f"unknown key') == 1
    reader.write_text(text.replace('message = f"unknown key', 'message = f"key not known'))
    out = check()
    assert "key not known 'colour'" in out, out
    assert "unknown key 'colour'" not in out
