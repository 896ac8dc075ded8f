"""The types of scripted tools, read from the type gate's compiler (`tooltypes`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trailblaze.check.typegate.tooltypes import Untyped, scripted_tool_types
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import Compiler

pytestmark = pytest.mark.tsc


def test_without_a_compiled_surface_each_tool_says_why(tmp_path: Path, tsc: Compiler) -> None:
    got = scripted_tool_types(Layout(tmp_path / ".trailblaze"), "app", ["app_x"], tsc, timeout=60)
    assert got == {"app_x": Untyped("the type gate compiled no surface of this trailmap")}
    assert not (tmp_path / ".trailblaze").exists()  # nothing made for nothing


def test_no_tool_asks_nothing(tmp_path: Path, tsc: Compiler) -> None:
    assert scripted_tool_types(Layout(tmp_path), "app", [], tsc, timeout=60) == {}
