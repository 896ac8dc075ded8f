"""Parse workers give exactly what one process gives.

A worker composes YAML with the one-pass composer (`yaml.lean`), the main process the usual
way; every record (status, calls, every finding with its line and column) must be the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trailblaze.check.workers import PARALLEL_MIN, Context, Item, process, process_many
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
