"""`fsutil.write_generated`: a generated module written again holds exactly the new text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trailblaze.fsutil import write_generated


def test_a_generated_module_written_again_holds_the_new_text_and_nothing_else(
    tmp_path: Path,
) -> None:
    module = tmp_path / "trails" / "a.trail.yaml.ts"
    assert write_generated(module, "export const a = 1;\n")
    stamp = module.stat().st_mtime_ns
    assert not write_generated(module, "export const a = 1;\n")  # the same text: not touched
    assert module.stat().st_mtime_ns == stamp
    assert write_generated(module, "export const a = 22;\n")
    assert module.read_text("utf-8") == "export const a = 22;\n"
    assert write_generated(module, "x\n")  # shorter: no tail of the old text is left
    assert module.read_bytes() == b"x\n"
    assert os.listdir(module.parent) == [module.name]  # no temporary file left beside it


def test_a_link_in_a_generated_modules_place_is_replaced_not_written_through(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "someone-elses.ts"
    outside.write_text("keep me\n", "utf-8")
    module = tmp_path / "trails" / "a.trail.yaml.ts"
    module.parent.mkdir()
    module.symlink_to(outside)
    assert write_generated(module, "export {};\n")
    assert not module.is_symlink()
    assert module.read_text("utf-8") == "export {};\n"
    assert outside.read_text("utf-8") == "keep me\n"


def test_a_directory_in_a_generated_modules_place_is_an_error_not_a_loss(tmp_path: Path) -> None:
    module = tmp_path / "trails" / "a.trail.yaml.ts"
    (module / "inside").mkdir(parents=True)
    (module / "inside" / "file").write_text("mine\n", "utf-8")
    with pytest.raises(IsADirectoryError):
        write_generated(module, "export {};\n")
    assert (module / "inside" / "file").read_text("utf-8") == "mine\n"
