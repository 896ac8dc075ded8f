"""Results as data: the JSON and JUnit XML writers and the console rendering, on one real run."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fakeadb import FakeDevice, ModelDevice
from trailblaze.replay.render import render_summary, render_trail
from trailblaze.replay.results import RunResult, junit_xml
from trailblaze.replay.run import ReplayRequest, replay
from trailblaze.report.console import make_console

from .support import FAST, OPEN_FORMS, SAMPLE_APP, trail_text


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    root = tmp_path_factory.mktemp("trails")
    (root / "a-pass.trail.yaml").write_text(
        trail_text(OPEN_FORMS, "- assertVisibleWithText: {text: Submit}"), encoding="utf-8"
    )
    (root / "b-fail.trail.yaml").write_text(
        trail_text(
            OPEN_FORMS + "- assertVisibleWithText: {text: Nope}\n- pressBack: {}", "- pressBack: {}"
        ),
        encoding="utf-8",
    )
    (root / "c-refused.trail.yaml").write_text("trail: []\n", encoding="utf-8")
    (root / "d-words.trail.yaml").write_text("trail:\n  - step: Do it\n", encoding="utf-8")
    device = ModelDevice(FakeDevice.load(SAMPLE_APP))
    return replay(
        ReplayRequest(trails=tuple(sorted(root.glob("*.yaml"))), workspace=root),
        device=device,
        options=FAST,
    )


def _names(run: RunResult) -> list[str]:
    return [Path(t.path).name for t in run.trails]


def test_statuses_and_exit_code(run: RunResult) -> None:
    assert _names(run) == [
        "a-pass.trail.yaml",
        "b-fail.trail.yaml",
        "c-refused.trail.yaml",
        "d-words.trail.yaml",
    ]
    assert [t.status for t in run.trails] == ["passed", "failed", "refused", "skipped"]
    assert run.exit_code == 1
    assert run.counts() == {
        "trails": 4,
        "trails_passed": 1,
        "trails_failed": 1,
        "trails_refused": 1,
        "trails_skipped": 1,
        "trails_cancelled": 0,
        "steps": 5,
        "steps_passed": 2,
        "steps_failed": 1,
        "steps_skipped": 2,
        "steps_cancelled": 0,
        "steps_needing_ai": 1,
        "steps_no_android": 0,
        "trails_needing_ai": 1,
        "trails_no_android": 0,
        "no_android_platforms": {},
        "trails_left_out": 0,
    }


def test_json_carries_every_tool_with_its_location(run: RunResult) -> None:
    data = json.loads(json.dumps(run.to_json()))

    assert (data["version"], data["exit_code"], data["device"]) == (
        2,
        1,
        {"serial": "emulator-5554", "model": "sdk_gphone64_x86_64"},
    )
    assert data["trails"][0]["device"] == data["device"]
    assert data["trails"][2]["device"] is None  # refused: it ran on no device
    failed = data["trails"][1]["steps"][0]
    assert failed["status"] == "failed"
    assert failed["failure"]["successful"] == ["launchApp", "tapOnElementBySelector"]
    assert failed["failure"]["failed_tool"] == "assertVisibleWithText"
    assert failed["failure"]["kind"] == "expected"
    tool = failed["tools"][2]
    assert tool["location"]["line"] == 13
    assert tool["location"]["column"] == 11
    assert tool["location"]["key_path"] == "trail[0].recording.android[2]"
    assert tool["status"] == "failed"
    assert failed["tools"][3]["status"] == "skipped"
    assert data["trails"][1]["steps"][1]["reason"] == "not run: step 1 failed"
    assert data["trails"][2]["findings"][0].endswith(
        "c-refused.trail.yaml:1:8: trail: must not be empty"
    )
    assert data["trails"][3]["steps"][0]["needs_ai"] is True


def test_junit_has_a_suite_per_trail_and_a_case_per_step(run: RunResult) -> None:
    root = ET.fromstring(junit_xml(run))

    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "6",
        "failures": "2",
        "errors": "0",
        "skipped": "2",
    }
    suites = root.findall("testsuite")
    assert [Path(s.get("name") or "").name for s in suites] == _names(run)
    failing = suites[1].findall("testcase")[0]
    failure = failing.find("failure")
    assert failure is not None
    assert (failure.get("message") or "").startswith(
        "assertVisibleWithText: text 'Nope' is not visible (waited 0.3s"
    )
    assert "ran before it: launchApp, tapOnElementBySelector" in (failure.text or "")
    # One device: the names stay the trail's; the device is in the suite's properties.
    properties = {p.get("name"): p.get("value") for p in suites[0].iter("property")}
    assert properties == {"device.serial": "emulator-5554", "device.model": "sdk_gphone64_x86_64"}
    assert suites[2].find("properties") is None  # refused: it ran on no device
    refused = suites[2].find("testcase/failure")
    assert refused is not None
    assert refused.get("message") == "the trail was refused before it started"
    skipped = suites[3].find("testcase/skipped")
    assert skipped is not None
    assert skipped.get("message") == "no recording: needs the AI runner"


def test_the_console_shows_the_failed_tool_and_what_ran_before(run: RunResult) -> None:
    buffer = io.StringIO()
    console = make_console(buffer, color=False)
    render_trail(console, run.trails[1])
    render_summary(console, run)
    path = run.trails[1].path

    lines = buffer.getvalue().splitlines()
    assert lines[0].startswith(f"FAIL {path} ")
    # The summary's table of where the time went: a head line, then one line per phase.
    table = next(i for i, line in enumerate(lines) if line.startswith("  where the time went: "))
    assert " in 6 tool calls (" in lines[table]
    assert [line.split()[0] for line in lines[table + 1 : table + 6]] == [
        "startup", "launch", "act", "settle", "capture",
    ]  # fmt: skip
    del lines[table : table + 6]
    assert lines[1:] == [
        "  FAILED step 1 step 1 [android]",
        f"    ok launchApp {path}:5:11",
        f"    ok tapOnElementBySelector {path}:8:11",
        f"    FAILED assertVisibleWithText {path}:13:11: text 'Nope' is not visible (waited 0.3s; "
        "the screen shows 'Name', 'Email', 'Accept Terms', 'Submit', 'Clear All', 'Taps', "
        "'Forms', 'Lists')",
        f"    skipped pressBack {path}:14:11 - not run: assertVisibleWithText failed",
        "      ran before assertVisibleWithText: launchApp, tapOnElementBySelector",
        "  skipped step 2 step 2 - not run: step 1 failed",
        "trailblaze replay on emulator-5554 (sdk_gphone64_x86_64): 4 trails: 1 passed, 1 failed, 1 refused, 1 skipped "
        "(1 needs the AI runner)",
        "  steps: 2 passed, 1 failed, 2 skipped (1 need the AI runner)",
        "FAILED (exit 1)",
    ]
