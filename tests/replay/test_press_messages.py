"""What the tap and long-press tools report: one helper, the same messages for every tool."""

from __future__ import annotations

import re

from fakeadb import FakeDevice, ModelDevice

from .support import OPEN_FORMS, SAMPLE_APP, calls, runner

NAME = "{androidAccessibility: {hintTextRegex: Name}}"


def _details(recording: str) -> list[str | None]:
    model = FakeDevice.load(SAMPLE_APP)
    outcome = runner(ModelDevice(model, timeout=5)).run_recording(calls(recording))
    assert outcome.passed, outcome.failure
    return [t.detail for t in outcome.tools]


def test_points_are_tapped_or_long_pressed() -> None:
    assert _details(
        "- tapOnPoint: {x: 100, y: 200}\n- tapOnPoint: {x: 5, y: 6, longPress: true}"
    ) == [
        "tapped 100,200",
        "long-pressed 5,6",
    ]


def test_elements_are_tapped_at_their_center_or_a_relative_point() -> None:
    details = _details(
        OPEN_FORMS
        + f"- tapOnElementBySelector: {{nodeSelector: {NAME}}}\n"
        + f"- tapOnElementBySelector: {{nodeSelector: {NAME}, longPress: true}}\n"
        + f"- tapOn: {{selector: {NAME}, relativePoint: '0%,0%'}}\n"
        + f"- tapOn: {{selector: {NAME}, relativePoint: '0%,0%', "
        + "longPress: true}\n"
    )[-4:]
    shape = re.compile(r"(tapped|long-pressed) (.+) at (\d+),(\d+)")
    found = [shape.fullmatch(d or "") for d in details]
    parts = [m.groups() for m in found if m is not None]
    assert len(parts) == 4, details
    assert [p[0] for p in parts] == ["tapped", "long-pressed", "tapped", "long-pressed"]
    assert len({p[1] for p in parts}) == 1  # the same element every time
    centre, corner = parts[0][2:], parts[2][2:]
    assert corner != centre
    assert parts[1][2:] == centre
    assert parts[3][2:] == corner


def test_text_taps_and_long_presses_report_the_element() -> None:
    tap, hold = _details(
        OPEN_FORMS
        + "- tapOnElementWithText: {text: Name}\n- longPressOnElementWithText: {text: Name}\n"
    )[-2:]
    assert tap is not None
    assert hold is not None
    assert tap.startswith("tapped ")
    assert hold == "long-pressed " + tap.removeprefix("tapped ")
