"""Phase timings: each tool's startup, launch, act, settle and capture time in the JSON report,
and the console's table of where the time went. The fake phone is made slow per command, so
each phase has a known floor."""

from __future__ import annotations

import io
import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from fakeadb import FakeDevice
from trailblaze.replay.render import render_summary
from trailblaze.replay.run import ReplayRequest, replay
from trailblaze.replay.timing import PHASES, Timeline
from trailblaze.report.console import make_console

from .conftest import DeviceFactory
from .support import FAST, PACKAGE, trail_text

RECORDING = f"""
- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}
- tapOnElementBySelector: {{nodeSelector: {{androidAccessibility: {{textRegex: Tap Me}}}}}}
- pressBack: {{}}
"""
#: Command -> seconds the fake phone takes; each lands in one phase.
DELAYS = {"monkey": 0.15, "uiautomator dump": 0.05, "input tap": 0.1}
SETTLE = 0.1


def test_a_timeline_splits_time_into_phases_that_add_up() -> None:
    timeline = Timeline()
    with timeline.meter() as outer:
        time.sleep(0.01)  # startup
        with timeline.phase("act"):
            time.sleep(0.01)
            with timeline.meter("act") as inner, timeline.phase("capture"):
                time.sleep(0.02)
        with timeline.phase("launch"), timeline.phase("settle"):
            time.sleep(0.01)  # inside launch everything is launch

    assert inner["capture"] >= 0.02
    assert sum(inner.values()) == pytest.approx(inner["capture"], abs=0.005)
    assert outer["startup"] >= 0.01
    assert outer["act"] >= 0.01
    assert outer["capture"] == pytest.approx(inner["capture"], abs=0.001)
    assert outer["launch"] >= 0.01
    assert outer["settle"] == 0.0
    assert sum(outer.values()) >= 0.05


def test_each_tool_reports_its_phases_on_the_fake_device(
    device_factory: DeviceFactory, model: FakeDevice, tmp_path: Path
) -> None:
    model.faults.delays.update(DELAYS)
    trail = tmp_path / "t.trail.yaml"
    trail.write_text(trail_text(RECORDING))
    report = tmp_path / "replay.json"

    run = replay(
        ReplayRequest(trails=(trail,), json_path=report),
        device=device_factory(),
        options=replace(FAST, settle=SETTLE),
    )

    assert run.exit_code == 0
    data = json.loads(report.read_text())
    tools = {t["tool"]: t for t in data["trails"][0]["steps"][0]["tools"]}
    for tool in tools.values():
        assert list(tool["phases"]) == list(PHASES)
        assert sum(tool["phases"].values()) == pytest.approx(tool["duration"], abs=0.005)
    launch, tap, back = tools["launchApp"], tools["tapOnElementBySelector"], tools["pressBack"]
    assert launch["phases"]["launch"] >= 0.15
    # Besides launching, only startup: the first call of a tool also builds its schema check.
    assert launch["phases"]["launch"] > 0.9 * (launch["duration"] - launch["phases"]["startup"])
    assert tap["phases"]["capture"] >= 0.05
    assert tap["phases"]["act"] >= 0.1
    assert back["phases"]["settle"] >= SETTLE
    assert all(t["phases"]["startup"] < 0.5 for t in tools.values())
    assert data["phases"]["launch"] == pytest.approx(launch["phases"]["launch"], abs=0.001)

    buffer = io.StringIO()
    render_summary(make_console(buffer, color=False), run)
    lines = buffer.getvalue().splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("  where the time went: "))
    assert " in 3 tool calls (" in lines[head]
    rows = {line.split()[0]: line.split() for line in lines[head + 1 : head + 6]}
    assert list(rows) == list(PHASES)
    assert float(rows["launch"][1].rstrip("s")) >= 0.15
    assert sum(float(r[2].rstrip("%")) for r in rows.values()) == pytest.approx(100, abs=0.5)
