"""A real client: Neovim's built-in LSP client, headless, against `trailblaze lsp`.

`neovim.lua` opens a trail, waits for the server's diagnostics (`vim.diagnostic.get`), edits the
buffer twice (`nvim_buf_set_lines`: a fix, then another mistake) and waits for them to change; it
writes what it saw as JSON, which this test reads. Debian's neovim (0.7.2); `.ci/run` installs
it. A missing `nvim` fails under CI and skips elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cases import TRAILS_DIR, build_workspace
from tests.conftest import dedent
from tests.lsp.test_server import _env
from trailblaze.toolchain.compilers import Compiler

pytestmark = pytest.mark.tsc

SCRIPT = Path(__file__).with_name("neovim.lua")
WAIT_MS = 60_000

TRAIL = dedent(
    """
    config:
      target: cases
    trail:
      - step: Type the name and pick a date
        recording:
          android:
            - inputText:
                txt: Ann
            - cases_pickDate:
                day: 3
                month: MAR
    """
)


def _nvim() -> str:
    found = shutil.which("nvim")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("nvim is missing: .ci/run installs Debian's neovim")
        pytest.skip("nvim is not installed (apt-get install neovim)")
    return found


def test_neovim_sees_the_diagnostics_and_their_changes(tsc: Compiler, tmp_path: Path) -> None:
    del tsc
    nvim = _nvim()
    ws = build_workspace(tmp_path / "ws", [])
    trail = ws / TRAILS_DIR / "typed.trail.yaml"
    trail.parent.mkdir(parents=True)
    trail.write_text(TRAIL, "utf-8")
    out = tmp_path / "seen.json"
    lines = TRAIL.splitlines()
    row = lines.index("            txt: Ann")
    day_row = lines.index("            day: 3")
    edits = [
        {"name": "fixed", "row": row, "text": "            text: Ann", "clean": True},
        # Another mistake: a list for the scripted tool's number (typed by its module).
        {"name": "broken again", "row": day_row, "text": "            day: [3]", "clean": False},
    ]
    env = {
        **_env(),
        "TB_OUT": str(out),
        "TB_TRAIL": str(trail),
        "TB_ROOT": str(ws),
        "TB_CMD": json.dumps([sys.executable, "-m", "trailblaze", "lsp"]),
        "TB_WAIT_MS": str(WAIT_MS),
        "TB_EDITS": json.dumps(edits),
        "HOME": str(tmp_path),  # no user config, shada or state of the machine's
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    try:
        done = subprocess.run(
            [nvim, "--headless", "-n", "-i", "NONE", "-u", str(SCRIPT)],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=WAIT_MS / 1000 * 3 + 30,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"nvim did not finish: {exc.stdout!r} {exc.stderr!r}")
    shown = f"nvim exited {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    assert out.is_file(), f"the script wrote nothing\n{shown}"
    seen = json.loads(out.read_text("utf-8"))
    assert seen["ok"], f"{seen.get('error')}\n{shown}"
    steps = {step["name"]: step["diagnostics"] for step in seen["steps"]}

    opened = steps["opened"]
    assert [(d["lnum"], d["col"], d["code"], d["severity"], d["source"]) for d in opened] == [
        (row, 12, "TS2561", 1, "trailblaze")  # severity 1: vim.diagnostic.severity.ERROR
    ], shown
    assert opened[0]["message"].startswith(
        "Object literal may only specify known properties, but 'txt' does not exist"
    )
    assert steps["fixed"] == []
    broken = steps["broken again"]
    assert [(d["lnum"], d["col"], d["code"]) for d in broken] == [(day_row, 12, "TS2322")], shown
    assert broken[0]["message"] == "Type 'number[]' is not assignable to type 'number'."
    # The buffer was edited, not the file: the server checked the unsaved text.
    assert trail.read_text("utf-8") == TRAIL
    assert seen["buffer"][day_row] == "            day: [3]"
