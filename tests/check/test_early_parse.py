"""A full check's parse starts before its surfaces are written (`run._parse_early`).

Its workers need only the targets' schemas; the surfaces (some 0.3 s at 10,000 trails) are
written meanwhile. The verdicts are those of a parse started after them, a run that fails in
between leaves no worker behind, and a narrow run (an edit) starts none.
"""

from __future__ import annotations

import multiprocessing
import shutil
from pathlib import Path
from typing import Any

import pytest

import trailblaze.check.run as run_module
import trailblaze.check.surfaces as surfaces_module
import trailblaze.check.workers as workers_module
from bench.generate import Spec, generate
from trailblaze.check.run import last_stats, run_check
from trailblaze.options import CheckOptions
from trailblaze.report.record import Report
from trailblaze.workspace import find_workspace

pytestmark = pytest.mark.usefixtures("tsc")


def check(root: Path) -> Report:
    return run_check(find_workspace(root, explicit=True), CheckOptions())


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    generate(tmp_path / "ws", Spec(trails=300, trailmaps=2))
    return tmp_path / "ws"


def events_of(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    events: list[str] = []
    start_many, write_artifacts = workers_module.start_many, surfaces_module.write_artifacts

    def starting(*args: Any, **kwargs: Any) -> Any:
        started = start_many(*args, **kwargs)
        events.append("workers started" if started is not None else "parsed here")
        return started

    def writing(*args: Any, **kwargs: Any) -> Any:
        events.append("surfaces written")
        return write_artifacts(*args, **kwargs)

    monkeypatch.setattr("trailblaze.check.parse.start_many", starting)
    monkeypatch.setattr("trailblaze.check.run.write_artifacts", writing)
    return events


def test_the_workers_parse_while_the_surfaces_are_written(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(workspace, tmp_path / "later")
    events = events_of(monkeypatch)
    early = check(workspace)
    assert events == ["workers started", "surfaces written"]
    assert last_stats(workspace / ".trailblaze")["trails_parsed"] == 300

    # The same workspace with the parse started after the surfaces, as before: the same report.
    monkeypatch.setattr(run_module, "_parse_early", lambda *a, **k: (None, None))
    events.clear()
    later = check(tmp_path / "later")
    assert events == ["surfaces written"]
    assert {**early.to_json(), "workspace": ""} == {**later.to_json(), "workspace": ""}
    assert early.fatal_findings, "the generated workspace plants errors"


@pytest.mark.parametrize(
    "failing",
    [
        "trailblaze.check.run.write_artifacts",
        "trailblaze.check.narrow.outputs_key",
        "trailblaze.check.run.TypeGate",
    ],
)
def test_a_run_that_fails_while_the_workers_parse_leaves_none_behind(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    # Anywhere between the workers' start and the gate taking their results: the surfaces,
    # the narrow run's keys (not guarded before one guard covered the whole run), the gate.
    events = events_of(monkeypatch)

    def broken(*args: Any, **kwargs: Any) -> Any:
        events.append("failed")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(failing, broken)
    with pytest.raises(OSError, match="No space left"):
        check(workspace)
    assert events[0] == "workers started"
    assert "failed" in events
    assert multiprocessing.active_children() == []


def test_an_edit_starts_no_workers_before_its_narrow_run(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check(workspace)
    trail = next(workspace.rglob("*.trail.yaml"))
    trail.write_text(trail.read_text("utf-8") + "\n# edited\n", "utf-8")
    events = events_of(monkeypatch)
    check(workspace)
    assert "workers started" not in events
    assert last_stats(workspace / ".trailblaze")["narrow"] == 1
