"""Parse workers give exactly what one process gives.

A worker composes YAML with the one-pass composer (`yaml.lean`), the main process the usual
way; every record (status, calls, every finding with its line and column) must be the same.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest

from trailblaze.check.workers import PARALLEL_MIN, Context, Item, process, process_many
from trailblaze.generate.linetable import LineTable, packed
from trailblaze.state.scratch import Layout

DATA = Path(__file__).resolve().parents[1] / "data"


def test_workers_give_the_records_one_process_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAILBLAZE_JOBS", "2")
    files = sorted(
        p for p in DATA.rglob("*.yaml") if p.name.endswith(".trail.yaml") or p.name == "trail.yaml"
    )
    assert len(files) > 300
    items = [
        Item(path=f"t/{i}/{p.name}", stamp=None, content=str(i), data=p.read_bytes())
        for i, p in enumerate(files)
    ]
    assert len(items) >= PARALLEL_MIN  # so the work goes to worker processes
    ctx = Context(strict=True, schemas={}, defs={}, layout=Layout(tmp_path / ".trailblaze"))

    in_workers = [parsed.record for parsed in process_many(items, ctx)]
    in_one = [process(item, ctx).record for item in items]

    assert in_workers == in_one
    # The data holds both kinds: trails that pass the gate and trails it rejects, with findings.
    assert {r.status for r in in_one} >= {"parsed", "rejected"}
    assert sum(len(r.parse) for r in in_one) > 50


class EveryTarget(Mapping[str, Mapping[str, Any]]):
    """Schemas for every target (none of its tools known): every trail with calls gets its
    module generated, and its line table."""

    def __getitem__(self, target: str) -> Mapping[str, Any]:
        return {}

    def __contains__(self, target: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def test_what_a_worker_sends_back_arrives_as_it_was_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's results cross to the main process encoded (msgspec, not pickle): every
    field arrives as made; the line tables stay encoded until one is read, and then read as
    made, tuples as tuples."""
    monkeypatch.setenv("TRAILBLAZE_JOBS", "2")
    files = sorted(
        p for p in DATA.rglob("*.yaml") if p.name.endswith(".trail.yaml") or p.name == "trail.yaml"
    )
    items = [
        Item(path=f"t/{i}/{p.name}", stamp=None, content=str(i), data=p.read_bytes())
        for i, p in enumerate(files)
    ]
    layout = Layout(tmp_path / ".trailblaze")
    ctx = Context(strict=True, schemas=EveryTarget(), defs={}, layout=layout)

    in_one = [process(item, ctx) for item in items]
    in_workers = process_many(items, ctx)

    tables = [packed(parsed.lines) for parsed in in_one if parsed.lines]
    assert len(tables) > 150
    sent = [parsed.lines for parsed in in_workers if parsed.lines is not None]
    assert len(sent) == len(tables)
    assert all(isinstance(lines, msgspec.Raw) for lines in sent)
    assert [
        msgspec.structs.replace(
            parsed, lines=packed(parsed.lines) if parsed.lines is not None else None
        )
        for parsed in in_workers
    ] == in_one
    assert all(
        type(row) is tuple and type(row[8]) is tuple for lines in sent for row in packed(lines)
    )
    # Read line by line as the mapping reads it, a table gives the same lines either way.
    for made, arrived in zip(tables, sent, strict=True):
        first, last = made[0][0], made[-1][0] + 3
        assert [LineTable(arrived).get(n) for n in range(first, last)] == [
            LineTable(made).get(n) for n in range(first, last)
        ]


def test_a_trail_read_by_its_worker_gives_the_record_of_one_read_before(tmp_path: Path) -> None:
    """A new trail of a large parse is read by the worker that parses it (`Item.file`): its
    record, content digest included, is the one of the same bytes read by the main process."""
    import socket  # noqa: PLC0415

    from trailblaze.state.keys import digest  # noqa: PLC0415

    files = sorted(p for p in DATA.rglob("*.trail.yaml"))[:40]
    ctx = Context(strict=True, schemas={}, defs={}, layout=Layout(tmp_path / ".trailblaze"))
    read_before = [
        Item(path=f"t/{i}", stamp=None, content=digest(p.read_bytes()), data=p.read_bytes())
        for i, p in enumerate(files)
    ]
    read_by_worker = [
        Item(path=f"t/{i}", stamp=None, content="", data=None, file=str(p))
        for i, p in enumerate(files)
    ]
    assert [process(item, ctx).record for item in read_by_worker] == [
        process(item, ctx).record for item in read_before
    ]

    # A file that cannot be opened (a socket: `stat` finds it, `open` refuses it) is a located
    # error, with no stamp and no content, as the main process recorded it.
    where = tmp_path / "s.trail.yaml"
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(where))
    try:
        item = Item(path="t/s.trail.yaml", stamp=None, content="", data=None, file=str(where))
        record = process(item, ctx).record
    finally:
        listening.close()
    assert record.status == "rejected"
    assert (record.stamp, record.content) == (None, "")
    assert [(f["line"], f["column"], f["message"]) for f in record.parse] == [
        (1, 1, "cannot read file: No such device or address")
    ]
