"""``assertWaypoint`` at replay: the corpus's real clock waypoints against a fake Desk Clock.

The waypoint files are upstream's (the corpus copy in tests/data/corpus/); the device is the
fake adb server serving ``clock_app.yaml``, reached through real adbutils over a socket. Each
test replays a trail of a workspace whose ``clock`` trailmap holds those files, and checks what
the user sees: the trail's status and the located failure message.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakeadb import FakeAdbServer, FakeDevice
from trailblaze.replay.device import Device
from trailblaze.replay.results import TrailResult
from trailblaze.replay.run import ReplayRequest, replay

from ..conftest import write_tree
from .support import DATA, FAST

CLOCK = "com.android.deskclock"
#: The corpus copy's trailmaps (tests/data/corpus, see its NOTICE): the real waypoint files.
TRAILMAPS = DATA.parent / "corpus/head/trails/config/trailmaps"
MANIFEST = f"""\
id: clock
target:
  display_name: AOSP Desk Clock
  platforms:
    android:
      app_ids:
        - {CLOCK}
"""
LAUNCH = f"- launchApp: {{appId: {CLOCK}, launchMode: RESUME}}"


@pytest.fixture
def clock() -> FakeDevice:
    return FakeDevice.load(DATA / "clock_app.yaml")


@pytest.fixture
def device(clock: FakeDevice) -> Iterator[Device]:
    from trailblaze.replay.adb import connect  # noqa: PLC0415 - needs adbutils (the test extra)

    with FakeAdbServer(clock) as fake:
        yield connect(None, port=fake.port, timeout=5.0)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    write_tree(root, {"trailmaps/clock/trailmap.yaml": MANIFEST, "trails/.keep": ""})
    shutil.copytree(TRAILMAPS / "clock/waypoints", root / "trailmaps/clock/waypoints/android")
    shutil.copytree(TRAILMAPS / "goose/waypoints", root / "trailmaps/clock/waypoints/desktop")
    monkeypatch.chdir(root)
    return root


def _replay(
    ws: Path, device: Device, *calls: str, config: str = "config:\n  target: clock\n", **args: str
) -> TrailResult:
    body = "".join(f"        {line}\n" for call in calls for line in call.splitlines())
    path = ws / "trails/t.trail.yaml"
    path.write_text(f"{config}trail:\n  - step: go\n    recording:\n      android:\n{body}")
    run = replay(
        ReplayRequest(
            trails=(Path("trails/t.trail.yaml"),), args=tuple(f"{k}={v}" for k, v in args.items())
        ),
        device=device,
        options=FAST,
    )
    (trail,) = run.trails
    return trail


def test_a_screen_that_matches_the_waypoint_passes(ws: Path, device: Device) -> None:
    trail = _replay(ws, device, LAUNCH, "- assertWaypoint: {waypoint: clock/android/alarm_tab}")

    assert trail.status == "passed", trail
    assert trail.steps[0].tools[1].detail == (
        "waypoint 'clock/android/alarm_tab' matches: 2 required condition(s) met, none of 1 "
        "forbidden present"
    )


def test_a_required_element_that_does_not_match_fails_at_the_call(ws: Path, device: Device) -> None:
    trail = _replay(
        ws, device, LAUNCH, "- assertWaypoint: {waypoint: clock/android/clock_tab, timeoutMs: 200}"
    )

    assert trail.status == "failed"
    failure = trail.steps[0].failure
    assert failure is not None
    assert (failure.location.line, failure.location.column) == (8, 11)
    assert failure.failed_tool == "assertWaypoint"
    assert failure.error.startswith(
        "waypoint 'clock/android/clock_tab' does not match the screen: required[0] "
        "'CLOCK tab in selected state' "
        '{"androidAccessibility":{"resourceIdRegex":"com.android.deskclock:id/tab_menu_clock",'
        '"isSelected":true}} matched 0 element(s), needs at least 1; required[1] '
        "'Cities RecyclerView' "
        '{"androidAccessibility":{"resourceIdRegex":"com.android.deskclock:id/cities"}} '
        "matched 0 element(s), needs at least 1 (waited 0.2s; "
    ), failure.error


def test_a_forbidden_element_on_screen_fails_and_is_named(ws: Path, device: Device) -> None:
    open_picker = "- tapOnElementBySelector: {nodeSelector: {androidAccessibility: {resourceIdRegex: '.*:id/fab'}}}"
    trail = _replay(
        ws,
        device,
        LAUNCH,
        open_picker,
        "- assertWaypoint: {waypoint: clock/android/alarm_time_picker}",
        "- assertWaypoint: {waypoint: clock/android/alarm_tab, timeoutMs: 100, pollIntervalMs: 20}",
    )

    failure = trail.steps[0].failure
    assert failure is not None, trail
    assert failure.successful == ("launchApp", "tapOnElementBySelector", "assertWaypoint")
    assert "; forbidden[0] 'Time picker OK button (would mean the time picker dialog is open " in (
        failure.error
    )
    assert (
        '{"androidAccessibility":{"resourceIdRegex":'
        '"com.android.deskclock:id/material_timepicker_ok_button"}} matched 1 element(s): '
        "Button id=com.android.deskclock:id/material_timepicker_ok_button [700,1500][940,1620]"
    ) in failure.error


def test_the_waypoint_waits_for_the_screen_to_arrive(ws: Path, device: Device) -> None:
    tap_clock = (
        "- tapOnElementBySelector: {nodeSelector: {androidAccessibility: {textRegex: Clock}}}"
    )
    trail = _replay(
        ws, device, LAUNCH, tap_clock, "- assertWaypoint: {waypoint: clock/android/clock_tab}"
    )

    assert trail.status == "passed", trail.steps[0].failure


def test_an_unknown_waypoint_refuses_the_trail_before_any_device_work(
    ws: Path, device: Device, clock: FakeDevice
) -> None:
    trail = _replay(ws, device, LAUNCH, "- assertWaypoint: {waypoint: clock/android/alarm_tabs}")

    assert trail.status == "refused"
    assert trail.findings == (
        "trails/t.trail.yaml:8:11: trail[0].recording.android[1]: step 1, assertWaypoint: "
        "unknown waypoint 'clock/android/alarm_tabs' (did you mean 'clock/android/alarm_tab'?); "
        "known: clock/android/alarm_tab, clock/android/alarm_time_picker, "
        "clock/android/clock_tab, goose/home; replay refuses the trail before any device work",
    )
    assert clock.commands == []


def test_an_unknown_waypoint_given_by_a_token_fails_the_call(ws: Path, device: Device) -> None:
    config = "config:\n  target: clock\n  args:\n    place: string\n"
    trail = _replay(
        ws, device, LAUNCH, "- assertWaypoint: {waypoint: '{{args.place}}'}", config=config,
        place="clock/alarm",
    )  # fmt: skip

    failure = trail.steps[0].failure
    assert failure is not None, trail
    assert failure.error == (
        "unknown waypoint 'clock/alarm'; known: clock/android/alarm_tab, "
        "clock/android/alarm_time_picker, clock/android/clock_tab, goose/home"
    )
    assert (failure.location.line, failure.location.column) == (10, 11)


def test_a_waypoint_without_a_block_for_android_does_not_match(ws: Path, device: Device) -> None:
    trail = _replay(ws, device, LAUNCH, "- assertWaypoint: {waypoint: goose/home}")

    failure = trail.steps[0].failure
    assert failure is not None, trail
    assert failure.error == (
        "waypoint 'goose/home' (trailmaps/clock/waypoints/desktop/goose_home.waypoint.yaml) has "
        "no block for this device (android-phone or android; it declares no classifier block at "
        "all), so it does not describe this screen: add an 'android:' block with its selectors"
    )


def test_an_unresolved_target_app_id_fails_closed(ws: Path, device: Device) -> None:
    # No config.target: `{{target.appId}}` has no value, and the forbidden selector that keeps
    # it could never match, which would pass a screen the waypoint rules out.
    trail = _replay(ws, device, LAUNCH, "- assertWaypoint: {waypoint: clock/android/alarm_tab}",
                    config="")  # fmt: skip

    failure = trail.steps[0].failure
    assert failure is not None, trail
    assert failure.error == (
        "waypoint 'clock/android/alarm_tab' "
        "(trailmaps/clock/waypoints/android/clock_android_alarm_tab.waypoint.yaml) required[0]: "
        "{{target.appId}} is not resolved (the trail has no config.target, so there is no "
        "target app id); a selector that keeps a placeholder matches nothing, so the waypoint "
        "is not evaluated (fail closed)"
    )


def test_a_waypoint_file_that_does_not_decode_is_named(ws: Path, device: Device) -> None:
    (ws / "trailmaps/clock/waypoints/android/broken.waypoint.yaml").write_text(
        "id: clock/broken\nandroid:\n  required: {selector: x}\n"
    )
    trail = _replay(ws, device, LAUNCH, "- assertWaypoint: {waypoint: clock/broken}")

    failure = trail.steps[0].failure
    assert failure is not None, trail
    assert failure.error.startswith(
        "waypoint 'clock/broken' cannot be read: "
        "trailmaps/clock/waypoints/android/broken.waypoint.yaml:3:13: android.required: "
    ), failure.error


def test_the_most_specific_block_wins_field_by_field(ws: Path, device: Device) -> None:
    # android-phone's `required` overrides android's; android's `forbidden` still applies.
    (ws / "trailmaps/clock/waypoints/android/phone.waypoint.yaml").write_text(
        "id: clock/phone\n"
        "android:\n"
        "  required: [{selector: {androidAccessibility: {textRegex: Nowhere}}}]\n"
        "  forbidden: [{selector: {androidAccessibility: {textRegex: London}}}]\n"
        "android-phone:\n"
        "  required: [{selector: {androidAccessibility: {textRegex: 'Alarm|Clock'}}, minCount: 2}]\n"
    )
    on_alarm = _replay(ws, device, LAUNCH, "- assertWaypoint: {waypoint: clock/phone}")
    assert on_alarm.status == "passed", on_alarm.steps[0].failure

    tap_clock = (
        "- tapOnElementBySelector: {nodeSelector: {androidAccessibility: {textRegex: Clock}}}"
    )
    on_clock = _replay(
        ws, device, LAUNCH, tap_clock, "- assertWaypoint: {waypoint: clock/phone, timeoutMs: 100}"
    )
    failure = on_clock.steps[0].failure
    assert failure is not None
    assert "forbidden[0] " in failure.error
    assert "TextView 'London'" in failure.error


def test_a_waypoint_as_a_run_if_condition_picks_the_branch(ws: Path, device: Device) -> None:
    # Not on the clock tab: the condition is false within the condition timeout (not 5 s), and
    # the else branch taps the Clock tab.
    runif = (
        "- runIf:\n"
        "    condition: {tool: assertWaypoint, args: {waypoint: clock/android/clock_tab}}\n"
        "    then: [{pressBack: {}}]\n"
        "    else: [{tapOnElementBySelector: {nodeSelector: {androidAccessibility: {textRegex: Clock}}}}]\n"
    )
    started = time.monotonic()
    trail = _replay(
        ws, device, LAUNCH, runif, "- assertWaypoint: {waypoint: clock/android/clock_tab}"
    )

    assert trail.status == "passed", trail.steps[0].failure
    branch = trail.steps[0].tools[1]
    assert [(c.position, c.tool, c.status) for c in branch.children] == [
        ("runIf.condition", "assertWaypoint", "failed"),
        ("runIf.else[0]", "tapOnElementBySelector", "passed"),
        ("runIf.then[0]", "pressBack", "skipped"),
    ]
    assert time.monotonic() - started < 4
