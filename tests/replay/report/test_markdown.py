"""The markdown summary's cells: a device's or a trail's text is text, whatever it holds."""

from __future__ import annotations

import pytest

from trailblaze.replay.report.markdown import cell


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("trails/a_b.trail.yaml:3:5", "trails/a\\_b.trail.yaml:3:5"),
        ("a | b", "a \\| b"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("[link](https://x.invalid) ![img](y)", "\\[link\\](https://x.invalid) !\\[img\\](y)"),
        ("`code` *em* ~~s~~", "\\`code\\` \\*em\\* \\~\\~s\\~\\~"),
        ("two\nlines\r\n", "two lines\\\\x0d"),
        ("- not a list", "\\- not a list"),
        ("1. not a list", "1\\. not a list"),
        ("# not a heading", "\\# not a heading"),
        ("esc \x1b[2J", "esc \\\\x1b\\[2J"),
    ],
)
def test_a_cell_is_one_line_of_plain_text(text: str, expected: str) -> None:
    assert cell(text) == expected
