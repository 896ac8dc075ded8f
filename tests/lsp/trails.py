"""Trail texts the language server's tests share."""

from __future__ import annotations

from tests.conftest import dedent

PICKS = dedent(
    """
    config:
      target: cases
    trail:
      - step: Pick a date
        recording:
          android:
            - cases_pickDate:
                day: 3
                month: MAR
    """
)
"""A clean call of the cases trailmap's scripted `cases_pickDate`: its `day` is on line 7."""

INPUT_TEXT = dedent(
    """
    config:
      target: cases
    trail:
      - step: Type a name
        recording:
          android:
            - inputText:
                text: Ann
    """
)
"""A clean call of the built-in `inputText`: its `text` is on line 8 (0-based: 7)."""
