"""What goes at the cursor, read from the lines of a buffer that need not parse."""

from __future__ import annotations

from tests.conftest import dedent
from trailblaze.lsp.cursor import ArgumentSlot, ToolSlot, slot_at, word_at

TOOLS = {"inputText", "tapOnElementWithText", "cases_pickDate"}

TRAIL = dedent(
    """
    config:
      target: cases
    trail:
      - step: Type a name
        recording:
          android:
            - inputT
            - inputText:
                text: Ann
                h
            - runIf:
                condition: {tool: cases_pickDate}
                then:
                  -
    """
).splitlines()


def _row(text: str) -> int:
    return next(i for i, line in enumerate(TRAIL) if line.rstrip().endswith(text))


def test_a_list_item_key_under_a_classifier_is_a_tool_name() -> None:
    row = _row("- inputT")
    assert slot_at(TRAIL, row, len(TRAIL[row]), TOOLS) == ToolSlot("inputT")


def test_a_runif_branch_item_is_a_tool_name() -> None:
    row = len(TRAIL) - 1
    assert slot_at(TRAIL, row, len(TRAIL[row]) + 1, TOOLS) is None  # no blank after the dash yet
    assert slot_at([*TRAIL[:row], TRAIL[row] + " "], row, len(TRAIL[row]) + 1, TOOLS) == ToolSlot(
        ""
    )


def test_a_step_is_not_a_call() -> None:
    row = _row("- step: Type a name")
    assert slot_at(TRAIL, row, TRAIL[row].index("step") + 2, TOOLS) is None


def test_a_key_under_a_call_is_one_of_its_arguments() -> None:
    row = next(i for i, line in enumerate(TRAIL) if line.strip() == "h")
    slot = slot_at(TRAIL, row, len(TRAIL[row]), TOOLS)
    assert slot == ArgumentSlot("inputText", "h", frozenset({"text"}))


def test_a_key_under_something_else_is_no_argument() -> None:
    row = _row("  target: cases")
    assert slot_at(TRAIL, row, 4, TOOLS) is None


def test_the_word_under_the_cursor_and_its_owner() -> None:
    row = _row("text: Ann")
    word = word_at(TRAIL, row, TRAIL[row].index("text") + 1)
    assert word is not None
    assert (word.text, word.is_key, word.parent) == ("text", True, "inputText")
    tool_row = _row("- inputText:")
    word = word_at(TRAIL, tool_row, TRAIL[tool_row].index("input") + 2)
    assert word is not None
    assert (word.text, word.is_key) == ("inputText", True)
    assert word_at(TRAIL, 999, 0) is None
