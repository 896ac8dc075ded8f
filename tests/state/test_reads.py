"""The record of what the compiler read beyond the inputs: how each file is told, named and
kept, whatever stands at a name (a run entry from elsewhere may name anything)."""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path

import pytest

from trailblaze.state import reads
from trailblaze.state.keys import MISSING, content_digest
from trailblaze.state.reads import (
    COMPILE_READS,
    Read,
    read_token,
    reads_digest,
    record_reads,
    recorded_paths,
    recorded_reads,
    resolve_read,
    shown_read,
    told,
)
from trailblaze.state.scratch import Layout
from trailblaze.state.store import Store


def test_a_file_is_told_by_its_content_and_stamped_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "types.d.ts"
    path.write_text("export type X = 1;\n")
    token, st = read_token(str(path))
    assert token == content_digest(b"export type X = 1;\n")
    assert st is not None
    assert st.st_size == path.stat().st_size
    assert told(token)


def test_a_missing_file_is_told_as_missing(tmp_path: Path) -> None:
    assert read_token(str(tmp_path / "gone.d.ts")) == (MISSING, None)
    assert read_token(str(tmp_path / "a-file" / "below")) == (MISSING, None)
    assert told(MISSING)


def test_what_is_no_regular_file_is_never_opened(tmp_path: Path) -> None:
    # A pipe would block the reader and a device never end: a run entry naming either is
    # told apart without a read, and never as a file's content.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    unix = tmp_path / "sock"

    def hung(*_: object) -> None:
        raise AssertionError("read_token blocked on a file that is no regular file")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(10)
    try:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(unix))
            for path in (str(fifo), str(unix), "/dev/zero", str(tmp_path)):
                token, st = read_token(path)
                assert token.startswith("special:"), path
                assert st is not None
                assert not told(token)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_file_over_the_limit_is_told_by_its_size_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reads, "READ_LIMIT", 8)
    path = tmp_path / "big.d.ts"
    path.write_bytes(b"0123456789")
    token, _ = read_token(str(path))
    assert token == "large:10"
    assert not told(token)


def test_an_unreadable_file_is_not_told(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        # root reads anything: a name too long to open stands in for a refused one.
        token, _ = read_token(str(tmp_path / ("x" * 300)))
    else:
        path = tmp_path / "secret.d.ts"
        path.write_text("x")
        path.chmod(0)
        token, _ = read_token(str(path))
    assert token.startswith("unreadable:")
    assert not told(token)


def test_names_are_relative_inside_the_workspace_and_absolute_outside(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    inside = str(root / "node_modules" / "@app" / "types" / "index.d.ts")
    outside = str(tmp_path / "shared" / "types.d.ts")
    assert shown_read(inside, root) == "node_modules/@app/types/index.d.ts"
    assert shown_read(outside, root) == outside
    for path in (inside, outside):
        assert resolve_read(shown_read(path, root), root) == path


@pytest.mark.parametrize(
    "name",
    ["", "../outside.d.ts", "a/../../b.d.ts", "a//b.d.ts", "./a.d.ts", "a/./b", "/a/../b", "a/"],
)
def test_a_name_no_writer_gives_stands_for_no_file(name: str, tmp_path: Path) -> None:
    assert resolve_read(name, tmp_path) is None


def test_the_record_reads_back_as_written_and_a_damaged_one_as_none(tmp_path: Path) -> None:
    layout = Layout(tmp_path / ".trailblaze")
    path = tmp_path / "types.d.ts"
    path.write_text("x")
    with Store.open(layout) as store:
        record_reads(store, {str(path): read_token(str(path)), "/gone": (MISSING, None)})
        store.commit()
    with Store.open(layout) as store:
        found = recorded_reads(store)
        assert recorded_paths(store) == sorted(["/gone", str(path)])
    assert found["/gone"] == Read(MISSING, None)
    assert found[str(path)].token == content_digest(b"x")
    damages: list[object] = [
        [],
        {"/a": "token"},
        {"/a": ["token"]},
        {"/a": [1, None]},
        {"/a": ["t", 5]},
    ]
    for damaged in damages:
        with pytest.raises((TypeError, ValueError)):
            COMPILE_READS.decode(damaged)


def test_the_digest_names_files_as_the_shared_keys_do(tmp_path: Path) -> None:
    # Two clones at different places reading the same files: the same digest.
    one, two = tmp_path / "one", tmp_path / "two"
    outside = str(tmp_path / "shared.d.ts")
    assert reads_digest(
        {str(one / "node_modules/x/index.d.ts"): "a", outside: "b"}, one
    ) == reads_digest({str(two / "node_modules/x/index.d.ts"): "a", outside: "b"}, two)
    assert reads_digest({outside: "a"}, one) != reads_digest({outside: "b"}, one)
