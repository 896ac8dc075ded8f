"""One trail of many calls: how `trailblaze check` grows with the size of a single trail.

`python -m bench.bigtrail OUT --calls 5000 20000 40000 [--runs N]` writes, for each size, a
compact workspace under OUT with one target trailmap and one trail of that many recorded calls
(selectors nested two levels, text, waits, presses; one planted type error in the last call), then
times a cold `trailblaze check --format json` on it (no scratch, no result cache, no remote) and
reports the wall time, the compile's share (the check's phase timings) and whether the planted
error came back at its YAML line. The compiler's time should grow linearly with the calls.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TRAILMAP = """\
id: big
dependencies:
  - trailblaze
target:
  display_name: Big
  platforms:
    android:
      app_ids:
        - com.example.big
"""
CALLS_PER_STEP = 10


def _call(index: int) -> list[str]:
    kind = index % 4
    if kind == 0:
        return [
            "        - tapOnElementBySelector:",
            "            nodeSelector:",
            "              androidAccessibility:",
            f"                textRegex: Item {index}",
            "              childOf:",
            "                androidAccessibility:",
            f"                  resourceIdRegex: list_{index % 97}",
        ]
    if kind == 1:
        return ["        - inputText:", f"            text: value {index}"]
    if kind == 2:
        return ["        - wait:", f"            timeToWaitInSeconds: {index % 5 + 1}"]
    return ["        - pressBack: {}"]


def write_workspace(root: Path, calls: int) -> int:
    """A workspace at `root` with one trail of `calls` calls; the YAML line of the planted error
    (its last call's `txt`: an argument `inputText` does not take)."""
    if root.exists():
        shutil.rmtree(root)
    (root / "trailmaps" / "big" / "trails").mkdir(parents=True)
    (root / "trailmaps" / "big" / "trailmap.yaml").write_text(TRAILMAP, "utf-8")
    lines = ["config:", "  target: big", "trail:"]
    error_line = 0
    for index in range(calls):
        if index % CALLS_PER_STEP == 0:
            lines += [f"  - step: Step {index // CALLS_PER_STEP + 1}", "    recording:"]
            lines.append("      android:")
        if index == calls - 1:
            lines += ["        - inputText:", "            txt: not a property"]
            error_line = len(lines)
        else:
            lines += _call(index)
    (root / "trailmaps" / "big" / "trails" / "big.trail.yaml").write_text(
        "\n".join(lines) + "\n", "utf-8"
    )
    return error_line


def check_once(root: Path) -> dict[str, Any]:
    for scratch in (root / ".trailblaze",):
        shutil.rmtree(scratch, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAILBLAZE_REMOTE")}
    env.pop("CI", None)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "trailblaze", "check", "--format", "json", str(root)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    wall = time.monotonic() - started
    from trailblaze.check.run import last_stats  # noqa: PLC0415

    report = json.loads(done.stdout)
    stats = last_stats(root / ".trailblaze")
    return {"wall": wall, "exit": done.returncode, "report": report, "stats": stats}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--calls", type=int, nargs="+", default=[5000, 20000, 40000])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv)
    rows = []
    for calls in args.calls:
        root = args.out / f"calls-{calls}"
        error_line = write_workspace(root, calls)
        walls, compiles = [], []
        for _ in range(args.runs):
            run = check_once(root)
            report = run["report"]
            found = [f for f in report["findings"] if f["kind"] == "type"]
            # TS2561 where tsc suggests a name (keys are written bare since generator 5)
            if [f["line"] for f in found] != [error_line] or found[0]["code"] not in (
                "TS2353",
                "TS2561",
            ):
                print(f"{calls}: unexpected findings {found}", file=sys.stderr)
                return 1
            walls.append(run["wall"])
            compiles.append(run["stats"]["seconds"]["compile"])
        rows.append((calls, statistics.median(walls), statistics.median(compiles)))
        print(
            f"{calls:>6} calls: check {rows[-1][1]:6.2f} s, compile {rows[-1][2]:6.2f} s, "
            f"{rows[-1][1] / calls * 1000:.3f} ms per call",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
