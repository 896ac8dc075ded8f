"""Golden files (like black's): compare generated text with `tests/data/golden/`, show a diff.

A mismatch fails with a unified diff (golden first, actual second), so a reviewer sees exactly
what the generator now writes differently. Regenerating is explicit and opt-in:

    TRAILBLAZE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/generate/test_artifacts.py tests/report/test_golden.py

Cases: `surfaces/` (the generated per-trailmap artifacts, `tests/generate/test_artifacts.py`); `reports/`
(every report format) and `typescript/` (the generated per-trail modules) of the seeded
workspace, `tests/report/test_golden.py`. Review `git diff tests/data/golden` after regenerating.

The variable is read when this module is imported, because the autouse `_clean_env` fixture
removes every `TRAILBLAZE_*` variable before each test runs.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from trailblaze.options import env_flag

GOLDEN_DIR = Path(__file__).resolve().parent / "data" / "golden"
UPDATE_ENV = "TRAILBLAZE_UPDATE_GOLDEN"
UPDATE = env_flag(UPDATE_ENV)  # our one reader of switches: `=yes` updates, `=maybe` is an error
WORKSPACE = "<workspace>"
_TIME_ATTRIBUTE = re.compile(r'\btime="[0-9.]+"')


def scrub(text: str, workspace: Path) -> str:
    """`text` without what differs between runs: the workspace's path (and URI) and JUnit times.

    Everything else a command wrote stays, so a golden still pins the user-visible output.
    """
    text = text.replace(workspace.as_uri(), f"file://{WORKSPACE}")
    text = text.replace(str(workspace), WORKSPACE)
    return _TIME_ATTRIBUTE.sub('time="…"', text)


def unified_diff(expected: str, actual: str, name: str) -> str:
    """A unified diff of two texts, `golden/<name>` against `actual/<name>`."""
    return "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=f"golden/{name}",
            tofile=f"actual/{name}",
            n=3,
        )
    )


def mismatch(expected: str | None, actual: str, name: str) -> str | None:
    """None when `actual` is the golden text; else the message a failing test shows."""
    if expected is None:
        return (
            f"golden file tests/data/golden/{name} does not exist; "
            f"run with {UPDATE_ENV}=1 to create it"
        )
    if expected == actual:
        return None
    return (
        f"generated {name} differs from tests/data/golden/{name} "
        f"(if the change is intended, rerun with {UPDATE_ENV}=1 and review the diff):\n"
        + unified_diff(expected, actual, name)
    )


def assert_golden(actual: str, name: str, *, update: bool | None = None) -> None:
    """Fail with a readable diff unless `actual` equals the golden file `name`."""
    path = GOLDEN_DIR / name
    if UPDATE if update is None else update:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Binary mode: the golden keeps exactly the bytes (and newlines) the generator wrote.
        path.write_bytes(actual.encode("utf-8"))
        return
    try:
        expected: str | None = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        expected = None
    message = mismatch(expected, actual, name)
    if message is not None:
        pytest.fail(message, pytrace=False)
