"""Compiler diagnostics back at the YAML: a misspelled key is named as written, with the
compiler's suggestion."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trailblaze.check.typegate.mapping import bare_key, bare_name
from trailblaze.cli.main import main


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        (
            "Object literal may only specify known properties, and '\"text-regex\"' does not "
            "exist in type 'M'.",
            "Object literal may only specify known properties, and 'text-regex' does not exist "
            "in type 'M'.",
        ),
        (  # an escaped quote in the key
            'Object literal may only specify known properties, and \'"a\\"b"\' does not '
            "exist in type 'M'.",
            "Object literal may only specify known properties, and 'a\"b' does not exist in "
            "type 'M'.",
        ),
        (  # a bare key: nothing to take out
            "Object literal may only specify known properties, but 'txt' does not exist in "
            "type 'M'. Did you mean to write 'text'?",
            "Object literal may only specify known properties, but 'txt' does not exist in "
            "type 'M'. Did you mean to write 'text'?",
        ),
    ],
)
def test_a_quoted_key_is_named_as_the_user_wrote_it(message: str, shown: str) -> None:
    assert bare_key(message) == shown


TRAIL = """\
config:
  target: app
trail:
  - step: Search
    recording:
      android:
        - inputText:
            txt: hello
        - tapOnElementBySelector:
            nodeSelector:
              androidAccessibility:
                textRegx: Buy
        - runIf:
            condition:
              selector:
                androidAccessibility:
                  "text regex": Later
            then:
              - pressBack: {}
"""


@pytest.mark.tsc
def test_a_misspelled_key_says_did_you_mean_at_the_key(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(compact_ws, {"trailmaps/app/trails/search.trail.yaml": TRAIL})
    monkeypatch.chdir(compact_ws)
    assert main(["check", "--no-color"]) == 1
    out = capsys.readouterr().out
    path = "trailmaps/app/trails/search.trail.yaml"
    assert (
        f"type: {path}:8:13: trail[0].recording.android[0].inputText.txt: Object literal may "
        "only specify known properties, but 'txt' does not exist in type '{ text: string; "
        "reasoning?: string | undefined; hideKeyboardAfter?: boolean | undefined; }'. "
        "Did you mean to write 'text'? [TS2561]"
    ) in out
    assert (
        f"type: {path}:12:17: trail[0].recording.android[1].tapOnElementBySelector.nodeSelector"
        ".androidAccessibility.textRegx: Object literal may only specify known properties, but "
        "'textRegx' does not exist in type 'DriverNodeMatchAndroidAccessibility'. Did you mean "
        "to write 'textRegex'? [TS2561]"
    ) in out
    assert (
        f"type: {path}:17:19: trail[0].recording.android[2].runIf.condition.selector"
        ".androidAccessibility.text regex: Object literal may only specify known properties, "
        "and 'text regex' does not exist in type 'DriverNodeMatchAndroidAccessibility'. [TS2353]"
    ) in out
    assert "'\"" not in out  # no name in doubled quotes
    assert "   12 |                 textRegx: Buy\n      |                 ^\n" in out


def test_a_tool_looked_up_by_a_literal_is_named_as_written_and_values_keep_their_quotes() -> None:
    said = (
        "Element implicitly has an 'any' type because expression of type '\"weird-tool.name\"' "
        "can't be used to index type 'ToolMethods'. Property 'weird-tool.name' does not exist "
        "on type 'ToolMethods'."
    )
    assert bare_name(said, "weird-tool.name") == said.replace(
        "'\"weird-tool.name\"'", "'weird-tool.name'"
    )
    value = 'Type \'"sideways"\' is not assignable to type \'"DOWN" | "UP"\'.'
    assert bare_name(value, "swipe") == value  # a string literal type of a value stays one


ODD_TOOLS = """\
config:
  target: app
trail:
  - step: Odd
    recording:
      android:
        - weird-tool.name:
            text: x
        - constructor: {}
        - swipe:
            direction: sideways
"""


@pytest.mark.tsc
def test_an_odd_tool_name_is_shown_as_written(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(compact_ws, {"trailmaps/app/trails/odd.trail.yaml": ODD_TOOLS})
    monkeypatch.chdir(compact_ws)
    assert main(["check", "--no-color"]) == 1
    out = capsys.readouterr().out
    path = "trailmaps/app/trails/odd.trail.yaml"
    assert (
        f"type: {path}:7:11: trail[0].recording.android[0]: Element implicitly has an 'any' type "
        "because expression of type 'weird-tool.name' can't be used to index type "
        "'ToolMethods'. Property 'weird-tool.name' does not exist on type 'ToolMethods'. [TS7053]"
    ) in out
    assert (
        f"type: {path}:9:11: trail[0].recording.android[1]: Type 'constructor' does not satisfy "
        "the constraint 'keyof Tools'. [TS2344]"
    ) in out
    assert (
        f"type: {path}:11:24: trail[0].recording.android[2].swipe.direction: Type '\"sideways\"' "
        'is not assignable to type \'"DOWN" | "LEFT" | "RIGHT" | "UP" | undefined\'. [TS2322]'
    ) in out
