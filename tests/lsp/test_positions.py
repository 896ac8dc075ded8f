"""Finding positions (1-based, characters) as LSP ranges (0-based, UTF-16 code units)."""

from __future__ import annotations

from trailblaze.lsp.positions import Span, character_of, finding_span, utf16_units


def test_characters_outside_the_basic_plane_are_two_units() -> None:
    assert utf16_units("abc") == 3
    assert utf16_units("é✓") == 2  # one unit each, however many bytes in UTF-8
    assert utf16_units("😀") == 2
    assert utf16_units("a😀b") == 4


def test_a_finding_after_an_emoji_starts_two_units_further() -> None:
    lines = ['        - inputText: {text: "😀", txt: 1}']
    column = lines[0].index("txt") + 1  # the finding's column: characters, from 1
    span = finding_span(lines, 1, column)
    assert span == Span(0, column, 0, len(lines[0]) + 1)


def test_the_range_ends_before_a_comment_and_trailing_blanks() -> None:
    lines = ["    txt: Ann   # the name", "next"]
    assert finding_span(lines, 1, 5) == Span(0, 4, 0, 12)


def test_a_hash_inside_quotes_is_no_comment() -> None:
    lines = ['    text: "a # b"']
    assert finding_span(lines, 1, 5) == Span(0, 4, 0, len(lines[0]))


def test_file_level_and_out_of_range_findings_stay_in_the_document() -> None:
    lines = ["config:", "  target: x"]
    assert finding_span(lines, 0, 0) == Span(0, 0, 0, 7)
    assert finding_span(lines, 9, 1) == Span(1, 11, 1, 11)
    assert finding_span([], 3, 3) == Span(0, 0, 0, 0)


def test_a_client_column_back_to_characters() -> None:
    line = "a😀b"
    assert character_of(line, 0) == 0
    assert character_of(line, 1) == 1
    assert character_of(line, 3) == 2  # after the emoji's two units: `b`
    assert character_of(line, 99) == 3
