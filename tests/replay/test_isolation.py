"""`doit check` and `trailblaze check` never need adbutils; `replay` says how to get it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from .support import ROOT

BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "adbutils" or name.startswith("adbutils."):
            raise ImportError("No module named 'adbutils' (blocked by the test)")
        return None
sys.meta_path.insert(0, Block())
"""


def run_blocked(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANDROID_")}
    env.update(
        TRAILBLAZE_DISABLE_TRAIL_RECORDING_VALIDATION="1", NO_COLOR="1", PYTHONPATH=str(ROOT)
    )
    return subprocess.run(
        [sys.executable, "-c", BLOCK + textwrap.dedent(script)],
        check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def workspace(root: Path) -> Path:
    (root / "trailmaps" / "app" / "trails").mkdir(parents=True)
    (root / "trailmaps" / "app" / "trailmap.yaml").write_text(
        "id: app\ntarget:\n  display_name: App\n", encoding="utf-8"
    )
    (root / "trailmaps" / "app" / "trails" / "a.trail.yaml").write_text(
        "config:\n  target: app\ntrail:\n  - step: Back\n    recording:\n      android:\n"
        "        - pressBack: {}\n",
        encoding="utf-8",
    )
    return root


def test_doit_check_and_trailblaze_check_run_without_adbutils(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    done = run_blocked(
        f"""
        from trailblaze.cli.main import main
        from trailblaze.doit_tasks import run_tasks
        code = main(["check", {str(ws)!r}])
        doit_code = run_tasks({str(ws)!r}, ["check"])
        listed = run_tasks({str(ws)!r}, ["list"])
        print("codes", code, doit_code, listed, "adbutils" in sys.modules)
        """,
        ws,
    )
    assert done.stdout.splitlines()[-1] == "codes 0 0 0 False", done.stdout + done.stderr


def test_replay_without_adbutils_is_a_usage_error(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    done = run_blocked(
        """
        from trailblaze.cli.main import main
        sys.exit(main(["replay"]))
        """,
        ws,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == (
        "trailblaze replay: replay needs adbutils (No module named 'adbutils' (blocked by the "
        "test)); install it with: pip install 'trailblaze-doit[replay]'\n"
    )
