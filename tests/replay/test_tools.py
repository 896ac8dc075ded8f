"""The Android tool implementations on ``ModelDevice``: the commands they send, what they change."""

from __future__ import annotations

import pytest

from fakeadb import FakeDevice, ModelDevice
from trailblaze.replay.invocation import RecordingOutcome

from .support import OPEN_FORMS, PACKAGE, SAMPLE_APP, calls, runner

OPEN_LISTS = f"""
- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}
- tapOnElementBySelector: {{nodeSelector: {{containsChild: {{androidAccessibility: {{textRegex: Lists}}}}}}}}
"""
NAME_FIELD = (
    "- tapOnElementBySelector: {nodeSelector: {androidAccessibility: {hintTextRegex: Name}}}"
)


def run(model: FakeDevice, recording: str) -> RecordingOutcome:
    return runner(ModelDevice(model, timeout=5)).run_recording(calls(recording))


def sent(model: FakeDevice, prefix: str) -> list[str]:
    return [c for c in model.commands if c.startswith(prefix)]


def test_launch_app_reinstall_clears_the_app_and_resume_keeps_it(model: FakeDevice) -> None:
    assert run(model, OPEN_FORMS + NAME_FIELD + "\n- inputText: {text: Jane}").passed
    assert run(model, f"- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}").passed
    assert model.field_value(PACKAGE, "name") == "Jane"

    assert run(model, f"- launchApp: {{appId: {PACKAGE}}}").passed

    assert model.field_value(PACKAGE, "name") == ""
    assert model.commands[-4:-1] == [
        f"am force-stop {PACKAGE}",
        f"pm clear {PACKAGE}",
        f"monkey -p {PACKAGE} -c android.intent.category.LAUNCHER 1",
    ]


def test_launching_an_app_that_is_not_installed_fails(model: FakeDevice) -> None:
    outcome = run(model, "- launchApp: {appId: com.example.gone, launchMode: RESUME}")

    assert outcome.failure is not None
    assert outcome.failure.error == (
        "emulator-5554: cannot launch com.example.gone: ** No activities found to run, "
        "monkey aborted."
    )


def test_input_text_hides_the_keyboard_only_when_it_shows(model: FakeDevice) -> None:
    assert run(model, OPEN_FORMS + NAME_FIELD + "\n- inputText: {text: Jane Doe}").passed

    assert model.field_value(PACKAGE, "name") == "Jane Doe"
    assert sent(model, "input")[-2:] == ["input text Jane%sDoe", "input keyevent 4"]
    assert model.current_screen == f"{PACKAGE}/forms"
    assert not model.keyboard_shown


def test_input_text_can_leave_the_keyboard_open(model: FakeDevice) -> None:
    assert run(
        model, OPEN_FORMS + NAME_FIELD + "\n- inputText: {text: Jane, hideKeyboardAfter: false}"
    ).passed
    assert model.keyboard_shown


def test_hide_keyboard_sends_nothing_when_the_keyboard_is_hidden(model: FakeDevice) -> None:
    outcome = run(model, OPEN_FORMS + "- hideKeyboard: {}")

    assert outcome.tools[-1].detail == "the keyboard was not showing"
    assert sent(model, "input keyevent") == []


def test_non_ascii_text_is_a_clear_error(model: FakeDevice) -> None:
    outcome = run(model, OPEN_FORMS + NAME_FIELD + "\n- inputText: {text: Zoë}")

    assert outcome.failure is not None
    assert outcome.failure.error == (
        "cannot type 'Zoë': `adb shell input text` only types printable ASCII, not 'ë' "
        "(use key events for Enter/Tab, the clipboard for other text)"
    )


@pytest.mark.parametrize(
    ("erase", "left", "dels"), [("{charactersToErase: 3}", "Jane ", 3), ("{}", "", 8)]
)
def test_erase_text_erases_a_count_or_the_whole_field(
    model: FakeDevice, erase: str, left: str, dels: int
) -> None:
    recording = OPEN_FORMS + NAME_FIELD + f"\n- inputText: {{text: Jane Doe}}\n- eraseText: {erase}"

    assert run(model, recording).passed

    assert model.field_value(PACKAGE, "name") == left
    assert sent(model, "input keyevent")[-2:] == [
        "input keyevent 123",
        "input keyevent " + " ".join(["67"] * dels),
    ]


def test_clear_text_does_not_count_a_hint_shown_as_text() -> None:
    spec = FakeDevice.load(SAMPLE_APP).spec
    model = FakeDevice(spec.__class__(**{**spec.__dict__, "hint_as_text": True}))

    outcome = run(model, OPEN_FORMS + NAME_FIELD + "\n- clearText: {}")

    assert outcome.tools[-1].detail == "nothing to erase"


@pytest.mark.parametrize(
    ("key", "code"),
    [("BACK", 4), ("ENTER", 66), ("HOME", 3), ("BACKSPACE", 67), ("TAB", 61), ("ESCAPE", 111)],
)
def test_press_key_sends_the_android_key_code(model: FakeDevice, key: str, code: int) -> None:
    assert run(model, f"- pressKey: {{keyCode: {key}}}").passed
    assert sent(model, "input keyevent") == [f"input keyevent {code}"]


@pytest.mark.parametrize(
    ("direction", "line"),
    [
        ("UP", "input swipe 540 1200 540 240 400"),
        ("DOWN", "input swipe 540 480 540 2160 400"),
        ("LEFT", "input swipe 972 1200 108 1200 400"),
        ("RIGHT", "input swipe 108 1200 972 1200 400"),
    ],
)
def test_swipe_moves_the_finger_in_its_direction(
    model: FakeDevice, direction: str, line: str
) -> None:
    assert run(model, f"- swipe: {{direction: {direction}}}").passed
    assert sent(model, "input swipe") == [line]


def test_scroll_until_text_is_visible_scrolls_the_list_to_it(model: FakeDevice) -> None:
    outcome = run(
        model,
        OPEN_LISTS
        + "- scrollUntilTextIsVisible: {text: Item 30}\n- tapOnElementWithText: {text: Item 30}",
    )

    assert outcome.passed, outcome.failure
    assert outcome.tools[2].detail is not None
    assert outcome.tools[2].detail.endswith("is visible after 3 scroll(s)")
    assert sent(model, "input swipe")[0] == "input swipe 540 1680 540 720 600"
    assert model.current_screen == f"{PACKAGE}/detail"


def test_scroll_until_text_is_visible_stops_at_the_end_of_the_list(model: FakeDevice) -> None:
    outcome = run(model, OPEN_LISTS + "- scrollUntilTextIsVisible: {text: Item 99}")

    assert outcome.failure is not None
    assert outcome.failure.kind == "expected"
    assert outcome.failure.error == (
        "text 'Item 99' is not visible: scrolled down to the end (7 scroll(s) moved the screen)"
    )


def test_scroll_until_text_is_visible_needs_a_target(model: FakeDevice) -> None:
    outcome = run(model, "- scrollUntilTextIsVisible: {direction: DOWN}")

    assert outcome.failure is not None
    assert outcome.failure.error == "scrollUntilTextIsVisible needs 'text', 'textRegex' or 'id'"


def test_tap_on_element_with_text_picks_by_index(model: FakeDevice) -> None:
    recording = f"""
- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}
- tapOnElementWithText: {{text: Catalog}}
- tapOnElementWithText: {{text: coffee, index: 1}}
- assertVisibleWithResourceId: {{resourceId: item_title}}
- assertVisibleWithText: {{text: Coffee Latte}}
"""
    assert run(model, recording).passed


def test_java_quoting_in_a_recorded_regex(model: FakeDevice) -> None:
    recording = f"""
- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}
- tapOnElementWithText: {{text: Catalog}}
- assertVisibleBySelector:
    nodeSelector:
      androidAccessibility:
        textRegex: "\\\\Q$3.00\\\\E"
"""
    assert run(model, recording).passed


def test_assert_not_visible_fails_while_the_text_shows(model: FakeDevice) -> None:
    outcome = run(model, OPEN_FORMS + "- assertNotVisibleWithText: {text: submit}")

    assert outcome.failure is not None
    assert outcome.failure.error.startswith(
        "text 'submit' is still visible: TextView 'Submit' [60,720][500,860] (waited 0.3s;"
    )


def test_accessibility_text_taps_and_asserts(model: FakeDevice) -> None:
    recording = f"""
- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}
- assertVisibleWithAccessibilityText: {{accessibilityText: accessibility_tap_button}}
- tapOnElementWithAccessibilityText: {{accessibilityText: accessibility_tap_button}}
- assertVisibleWithText: {{text: Accessibility button tapped}}
"""
    assert run(model, recording).passed


def test_tap_on_point_long_press_holds_in_place(model: FakeDevice) -> None:
    assert run(model, "- tapOnPoint: {x: 100, y: 200, longPress: true}").passed
    assert sent(model, "input") == ["input swipe 100 200 100 200 500"]


def test_list_installed_apps_and_wait_leave_the_screen_alone(model: FakeDevice) -> None:
    outcome = run(model, "- mobile_listInstalledApps: {}\n- wait: {timeToWaitInSeconds: 1}")

    assert outcome.passed
    assert outcome.tools[0].detail == (
        "4 package(s): com.android.chrome, com.android.launcher3, com.github.majido.clipper, "
        "xyz.block.trailblaze.examples.sampleapp"
    )
    assert outcome.tools[1].detail == "the screen settled"
    assert sent(model, "input") == []
