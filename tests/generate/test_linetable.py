"""The line table looked up line by line (`LineTable`) is the unpacked table (`unpack_lines`)."""

from __future__ import annotations

import pytest

from tests.generate.test_codegen import RUNIF_BRANCHES, trail
from trailblaze.generate.codegen import generate
from trailblaze.generate.linetable import LineTable, unpack_lines
from trailblaze.toolmodel.catalog import load_catalog

TRAILS = {
    "calls and nested properties": """
        trail:
          - step: s
            recording:
              android:
                - tapOnElementBySelector:
                    nodeSelector:
                      androidAccessibility:
                        textRegex: Buy
                        isChecked: yes
                      containsDescendants:
                        - androidAccessibility: {textRegex: a}
                        - androidAccessibility: {textRegex: b}
                - inputText: {text: hi}
                - waitForChange: {}
                - tapOnPoint: {x: 1, y: 2}
        """,
    "runIf branches": RUNIF_BRANCHES,
}


@pytest.mark.parametrize("text", TRAILS.values(), ids=TRAILS.keys())
def test_every_line_looked_up_is_the_unpacked_tables(text: str) -> None:
    catalog = load_catalog()
    schemas = {name: tool.input_schema for name, tool in catalog.tools.items()}
    generated = generate(trail(text), "../surfaces/app", schemas, catalog.defs)
    unpacked = unpack_lines(generated.rows)
    assert any(g.property for g in unpacked.values())  # property lines are in it
    table = LineTable(generated.rows)
    for n in range(-1, len(generated.text.splitlines()) + 3):
        assert table.get(n) == unpacked.get(n), n
        assert table.get(n) == unpacked.get(n), n  # asked again: the same
