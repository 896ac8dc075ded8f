"""The report's text: what ``shown`` lets through, and the YAML of a failing call."""

from __future__ import annotations

from trailblaze.replay.report.text import shown, yaml_snippet

TRAIL = """\
trail:
  - step: open the form
    recording:
      android:
        - launchApp:
            appId: com.example

            launchMode: RESUME
        - tapOnElementBySelector:
            nodeSelector: {androidAccessibility: {textRegex: Forms}}
  - step: next
"""


def test_shown_escapes_what_a_terminal_or_a_page_would_act_on() -> None:
    assert shown("ok\x1b[31mred\r\nnext\tline") == "ok\\x1b[31mred\\x0d\nnext\tline"
    assert shown("plain <b>text</b>\n") == "plain <b>text</b>\n"


def test_the_snippet_is_the_call_and_everything_indented_below_it() -> None:
    assert yaml_snippet(TRAIL, 5, 11) == (
        "- launchApp:\n    appId: com.example\n\n    launchMode: RESUME"
    )
    assert yaml_snippet(TRAIL, 9, 11) == (
        "- tapOnElementBySelector:\n    nodeSelector: {androidAccessibility: {textRegex: Forms}}"
    )


def test_a_snippet_is_bounded_and_a_location_outside_the_file_gives_none() -> None:
    long = "- tool:\n" + "".join(f"    k{i}: {i}\n" for i in range(40))
    snippet = yaml_snippet(long, 1, 3, limit=5)
    assert snippet.splitlines() == [
        "- tool:",
        "    k0: 0",
        "    k1: 1",
        "    k2: 2",
        "    k3: 3",
        "...",
    ]
    assert yaml_snippet(TRAIL, 99, 1) == ""
    assert yaml_snippet(TRAIL, 0, 1) == ""
