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
