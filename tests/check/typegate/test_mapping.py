"""Compiler diagnostics back at the YAML: a misspelled key is named as written, with the
compiler's suggestion."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trailblaze.check.typegate.mapping import bare_key
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
