"""Cold `trailblaze check` of two installs side by side, with the bare compiler in the same loop.

    python -m bench.coldpair WORKSPACE --a BEFORE/.venv --b .venv [--runs 5] [--out DIR]

Each iteration runs a cold check with A and with B (A first, then B first on the next
iteration), each with the workspace's scratch directory moved away first (`bench.run`'s reason:
deleting ten thousand files right before a run slows its file creation), then the bare
compiler (TypeScript 7 alone, one process, the type gate's options) over exactly the modules
B's run compiled and the surfaces. Wall and CPU come from `os.wait4` (the child and every
descendant it reaped). Each run's JSON report is kept: A's and B's must be byte-identical (the
verdicts did not change), and the script exits 1 when they are not.

Printed and written to `DIR/coldpair.json`: medians of wall and CPU per side, B / A, each
side over the bare compiler (of medians and of the per-iteration ratios), and B's phase
timings and batch sizes. On a shared machine the CPU figures say more than the wall ones.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.run import Sample, measure, read_stats


def cold(venv: Path, ws: Path, report: Path, trash: Path, log: Path) -> Sample:
    """One cold check of `ws` with the install in `venv`; its JSON report into `report`."""
    scratch = ws / ".trailblaze"
    if scratch.exists():
        scratch.rename(trash / f"{time.time_ns()}")
    return measure(
        [
            str(venv / "bin" / "trailblaze"),
            "check",
            str(ws),
            "--format",
            "json",
            "--output",
            str(report),
        ],
        cwd=ws,
        env=dict(os.environ),
        log=log,
        poll=0,
    )


def bare(tsc: Sequence[str], ws: Path, stats: dict[str, Any], log: Path) -> Sample:
    """The compiler alone over the modules the last cold run compiled, and the surfaces."""
    from trailblaze.check.typegate.settings import COMPILER_OPTIONS  # noqa: PLC0415
    from trailblaze.state.scratch import Layout  # noqa: PLC0415

    layout = Layout(ws / ".trailblaze")
    files = [
        layout.trail_file(rel).relative_to(layout.root).as_posix()
        for rel in stats.get("files_compiled") or []
    ]
    files += sorted(
        p.relative_to(layout.root).as_posix() for p in (layout.root / "surfaces").glob("*.d.ts")
    )
    config = layout.root / "tsconfig.coldpair.json"
    config.write_text(json.dumps({"compilerOptions": COMPILER_OPTIONS, "files": files}), "utf-8")
    try:
        return measure(
            [*tsc, "-p", str(config.resolve()), "--pretty", "false"],
            cwd=layout.root,
            env=dict(os.environ),
            log=log,
            poll=0,
        )
    finally:
        config.unlink(missing_ok=True)


def _median(samples: list[Sample], what: str) -> float:
    return float(statistics.median(float(getattr(s, what)) for s in samples))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.coldpair", description=__doc__)
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--a", type=Path, required=True, help="the venv of the first install")
    parser.add_argument("--b", type=Path, required=True, help="the venv of the second install")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("bench/out/coldpair"))
    args = parser.parse_args(argv)
    from trailblaze.toolchain.compilers import TS_VERSION, find_compiler  # noqa: PLC0415

    tsc = list(find_compiler(TS_VERSION, install=True).argv_prefix)
    ws: Path = args.workspace.resolve()
    out: Path = args.out
    trash = out / "trash"
    trash.mkdir(parents=True, exist_ok=True)
    venvs = {"A": args.a.resolve(), "B": args.b.resolve()}
    samples: dict[str, list[Sample]] = {"A": [], "B": [], "bare": []}
    phases: list[dict[str, Any]] = []
    problems: list[str] = []
    for i in range(args.runs):
        for side in ("A", "B") if i % 2 == 0 else ("B", "A"):
            report = out / f"report-{side}-{i}.json"
            sample = cold(venvs[side], ws, report, trash, out / f"{side}-{i}.log")
            samples[side].append(sample)
            print(f"{i} {side}: wall {sample.wall:.2f} s, CPU {sample.cpu:.2f} s", flush=True)
            if side == "B":
                stats = read_stats(ws / ".trailblaze", str(venvs["B"] / "bin" / "python"))
                phases.append({"seconds": stats.get("seconds"), "batches": stats.get("batches")})
                compiled = bare(tsc, ws, stats, out / f"bare-{i}.log")
                samples["bare"].append(compiled)
                print(f"{i} bare: wall {compiled.wall:.2f} s, CPU {compiled.cpu:.2f} s", flush=True)
        a, b = (out / f"report-{side}-{i}.json" for side in ("A", "B"))
        if a.read_bytes() != b.read_bytes():
            problems.append(f"iteration {i}: the reports of A and B differ ({a}, {b})")
        shutil.rmtree(trash, ignore_errors=True)
        trash.mkdir()
    medians = {
        side: {"wall": _median(s, "wall"), "cpu": _median(s, "cpu")} for side, s in samples.items()
    }

    def paired(x: str, y: str) -> float:
        return statistics.median(
            p.wall / q.wall for p, q in zip(samples[x], samples[y], strict=True)
        )

    result = {
        "workspace": str(ws),
        "runs": args.runs,
        "medians": medians,
        "ratios": {
            "B/A": medians["B"]["wall"] / medians["A"]["wall"],
            "B/A paired": paired("B", "A"),
            "A/bare": medians["A"]["wall"] / medians["bare"]["wall"],
            "A/bare paired": paired("A", "bare"),
            "B/bare": medians["B"]["wall"] / medians["bare"]["wall"],
            "B/bare paired": paired("B", "bare"),
            "B/A CPU": medians["B"]["cpu"] / medians["A"]["cpu"],
        },
        "phases_b": phases,
        "samples": {
            side: [{"wall": s.wall, "cpu": s.cpu} for s in runs] for side, runs in samples.items()
        },
        "problems": problems,
    }
    (out / "coldpair.json").write_text(json.dumps(result, indent=1) + "\n", "utf-8")
    print(json.dumps({"medians": medians, "ratios": result["ratios"]}, indent=1))
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
