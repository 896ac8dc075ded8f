"""`doit bench`: the project's benchmark (`python -m bench.run`, default sizes), never up to date."""

from __future__ import annotations

import sys
from typing import Any

from doit.action import CmdAction

from tasks.paths import ROOT


def task_bench() -> dict[str, Any]:
    """Benchmark doit check at 100, 1,000 and 10,000 trails against the floor, the bare compiler
    and the reference-style baseline; writes bench/results/ (about half an hour)."""
    command = [sys.executable, "-m", "bench.run", "--out", str(ROOT / "bench" / "results")]
    return {
        # From the repository root, where `bench` is importable.
        "actions": [CmdAction(command, cwd=str(ROOT), shell=False)],
        "uptodate": [False],
        "verbosity": 2,
        "doc": "benchmark doit check vs the floor, bare tsc and the reference-style baseline",
    }
