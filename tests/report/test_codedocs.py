"""`docs/codes.md` is what the registry of finding codes renders (`report/codedocs.py`).

An entry changed in `trailblaze/codes.py` and not in the page fails with a diff. To regenerate
after an intended change, then review `git diff docs/codes.md`:

    TRAILBLAZE_UPDATE_GOLDEN=1 .venv/bin/pytest tests/report/test_codedocs.py
"""

from __future__ import annotations

import pytest

from tests.conftest import ROOT
from tests.golden import UPDATE, UPDATE_ENV, unified_diff
from trailblaze import codes
from trailblaze.report.codedocs import DOC_PATH, render

DOC = ROOT / DOC_PATH


def mismatch(written: str | None, rendered: str) -> str | None:
    """None when the page is what the registry renders; else what the failing test says."""
    if written == rendered:
        return None
    if written is None:
        return f"{DOC_PATH} does not exist; run with {UPDATE_ENV}=1 to write it"
    return (
        f"{DOC_PATH} is not what trailblaze/codes.py renders (rerun with {UPDATE_ENV}=1 and "
        f"review the diff):\n" + unified_diff(written, rendered, DOC_PATH)
    )


def test_the_page_is_what_the_registry_renders() -> None:
    rendered = render()
    if UPDATE:
        DOC.parent.mkdir(exist_ok=True)
        DOC.write_bytes(rendered.encode("utf-8"))
    written = DOC.read_bytes().decode("utf-8") if DOC.is_file() else None
    problem = mismatch(written, rendered)
    if problem is not None:
        pytest.fail(problem, pytrace=False)


def test_a_changed_entry_makes_the_page_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    written = render()
    entry = codes.REGISTRY[codes.YAML]
    changed = entry._replace(help="A help text nobody wrote down.")
    monkeypatch.setitem(codes._REGISTRY, codes.YAML, changed)
    problem = mismatch(written, render())
    assert problem is not None
    assert "+A help text nobody wrote down." in problem
    assert f"-{entry.help}" in problem


def test_the_page_has_a_section_for_every_code_and_the_compilers() -> None:
    page = render()
    for entry in (*codes.REGISTRY.values(), codes.TYPESCRIPT):
        assert f"\n### `{entry.id}`\n\nKinds: {', '.join(entry.kinds)}. " in page
        assert f"\n{entry.help}\n" in page
    assert "### `TS<digits>`" in page
