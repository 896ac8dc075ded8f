"""Two installs of trailblaze-doit side by side: the same measures, interleaved in one loop.

    python -m bench.compare --a OLD/.venv --b .venv [--size 10000] [--runs 5] [--out FILE]

`--a` and `--b` are virtual environments, each with trailblaze-doit installed (an editable
install of another checkout, say `git worktree add ../old <commit>`). Each gets its own copy of
the same synthetic workspace (`bench.generate`, same seed) and its own nginx remote cache, and
every iteration measures, for A then B (B then A on odd iterations, so that neither side
always runs on a machine the other has just warmed):

- `cold`, `no-op`, `one-edit`: `python -m doit` in the workspace, as `bench.run` measures them;
- `cli-no-op`: the `trailblaze check` console script of that install, nothing changed;
- `cli-one-edit`: the same after the one-trail edit (`bench.run`'s `Bench.cli_edit`);
- `shards-cold` (4 fresh clones filling the remote cache) and `warm-clone` (a fresh clone
  answered by it).

Every run is verified as `bench.run` verifies it (what the compiler saw, the planted findings,
the warm clone's report equal to the local one). The result is each measure's median per side,
B / A, and the median of the per-iteration ratios; `--tolerance` (default 5%) marks the
measures whose B stays within that of A.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.nginx import NginxCache
from bench.run import REPO, Bench, Options, Sample, summarize
from trailblaze.toolchain.proc import ProcError
from trailblaze.toolchain.proc import run as run_program

MEASURES = (
    "cold",
    "no-op",
    "one-edit",
    "cli-no-op",
    "cli-one-edit",
    "shards-cold",
    "warm-clone",
)


class Side:
    """One install and its own workspaces."""

    def __init__(self, name: str, venv: Path, size: int, options: Options, tsc: list[str]) -> None:
        self.name = name
        self.venv = venv
        python = venv / "bin" / "python"
        command = venv / "bin" / "trailblaze"
        for path in (python, command):
            if not path.exists():
                raise SystemExit(f"{path}: missing (is trailblaze-doit installed in {venv}?)")
        package = run_program(
            # -I, and not from here: the install's own package, not the one in this checkout.
            [
                str(python),
                "-I",
                "-c",
                "import os, trailblaze; print(os.path.dirname(trailblaze.__file__))",
            ],
            cwd=venv,
            timeout=120,
        ).stdout.strip()
        # What `pip install` does for a package: no measured process compiles our sources.
        compileall.compile_dir(package, quiet=1)
        self.package = package
        self.commit = _commit(Path(package).parent)
        work = replace(options, work=options.work / name)
        self.bench = Bench(size, work, tsc, tsc, python=str(python), cli=[str(command)])
        self.samples: dict[str, list[Sample]] = {m: [] for m in MEASURES}

    def iteration(self, run: int, measures: Sequence[str] = MEASURES) -> None:
        bench = self.bench
        nonce = f"{bench.size}-{run}-{os.getpid()}-{self.name}"
        bench.clear(bench.ws)
        self.keep("cold", bench.doit("cold", run))
        if "no-op" in measures:
            self.keep("no-op", bench.doit("no-op", run))
        if "one-edit" in measures:
            with bench.trail_edit(bench.ws, nonce):
                self.keep("one-edit", bench.doit("one-edit", run))
            bench.doit("settle-edit", run, measured=False)
        if "cli-no-op" in measures or "cli-one-edit" in measures:
            # The CLI's one edit needs the no-op's record of the unedited workspace.
            self.keep("cli-no-op", bench.cli_noop(run))
        if "cli-one-edit" in measures:
            self.keep("cli-one-edit", bench.cli_edit(run, nonce))
        if not {"shards-cold", "warm-clone"} & set(measures):
            return
        if bench.nginx is None:
            bench.nginx = NginxCache(bench.options.work / f"nginx-{bench.size}").start()
        bench.nginx.clear()
        self.keep("shards-cold", bench.shards("shards-cold", run, bench.nginx.url))
        self.keep("warm-clone", bench.warm_clone(run, bench.nginx.url))

    def keep(self, measure: str, sample: Sample) -> None:
        self.samples[measure].append(sample)
        for problem in sample.problems:
            print(f"   !! {self.name}: {problem}", file=sys.stderr, flush=True)


def _commit(directory: Path) -> str:
    try:
        return run_program(
            ["git", "describe", "--always", "--dirty"], cwd=directory, timeout=60
        ).stdout.strip()
    except ProcError:  # not a git checkout
        return "unknown"


def compare(a: Side, b: Side, tolerance: float, measures: Sequence[str]) -> dict[str, Any]:
    rows = {}
    for measure in measures:
        walls_a = [s.wall for s in a.samples[measure]]
        walls_b = [s.wall for s in b.samples[measure]]
        median_a, median_b = statistics.median(walls_a), statistics.median(walls_b)
        paired = statistics.median(wb / wa for wa, wb in zip(walls_a, walls_b, strict=True))
        ratio = median_b / median_a
        cpu_a = statistics.median(s.cpu for s in a.samples[measure])
        cpu_b = statistics.median(s.cpu for s in b.samples[measure])
        rows[measure] = {
            "a_median_s": round(median_a, 4),
            "b_median_s": round(median_b, 4),
            # CPU (user + sys of the process tree): steadier than wall on a shared machine.
            "a_cpu_s": round(cpu_a, 4),
            "b_cpu_s": round(cpu_b, 4),
            "cpu_b_over_a": round(cpu_b / cpu_a, 4) if cpu_a else None,
            "b_over_a": round(ratio, 4),
            "paired_b_over_a": round(paired, 4),
            "a_walls": [round(w, 4) for w in walls_a],
            "b_walls": [round(w, 4) for w in walls_b],
            "within_tolerance": ratio <= 1 + tolerance,
            # Where the time went, by the check's own phase timings (medians over the runs).
            "a_phases": summarize(a.samples[measure])["phases"],
            "b_phases": summarize(b.samples[measure])["phases"],
        }
    return rows


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"A: {result['a']['commit']} ({result['a']['venv']}); "
        f"B: {result['b']['commit']} ({result['b']['venv']})",
        f"{result['size']} trails, {result['runs']} interleaved runs, medians of wall seconds",
        "",
        "| measure | A | B | B / A | paired | within "
        + f"{result['tolerance']:.0%} | CPU A | CPU B | CPU B / A |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for measure, row in result["measures"].items():
        cpu_ratio = row.get("cpu_b_over_a")
        lines.append(
            f"| {measure} | {row['a_median_s']:.3f} | {row['b_median_s']:.3f} | "
            f"{row['b_over_a']:.3f} | {row['paired_b_over_a']:.3f} | "
            f"{'yes' if row['within_tolerance'] else '**no**'} | "
            f"{row.get('a_cpu_s', 0.0):.3f} | {row.get('b_cpu_s', 0.0):.3f} | "
            f"{'' if cpu_ratio is None else f'{cpu_ratio:.3f}'} |"
        )
    edits = [
        (label, num, den)
        for label, num, den in (
            ("one edit / no-op, `doit check`", "one-edit", "no-op"),
            ("one edit / no-op, `trailblaze check`", "cli-one-edit", "cli-no-op"),
        )
        if num in result["measures"] and den in result["measures"]
    ]
    if edits:
        lines += ["", "| ratio (target ≤ 2×): wall (CPU) | A | B |", "|---|---|---|"]
        for label, num, den in edits:
            rows = result["measures"][num], result["measures"][den]
            cells = [
                f"{rows[0][f'{side}_median_s'] / rows[1][f'{side}_median_s']:.2f}× "
                f"({rows[0][f'{side}_cpu_s'] / rows[1][f'{side}_cpu_s']:.2f}×)"
                for side in ("a", "b")
            ]
            lines.append(f"| {label} | {cells[0]} | {cells[1]} |")
    cold = result["measures"]["cold"]
    phases = sorted(set(cold["a_phases"]) | set(cold["b_phases"]))
    if phases:
        lines += ["", "Where a cold run's time went (the check's phase timings, medians):", ""]
        lines += ["| phase | A | B |", "|---|---|---|"]
        lines += [
            f"| {phase} | {cold['a_phases'].get(phase, 0.0):.3f} | {cold['b_phases'].get(phase, 0.0):.3f} |"
            for phase in phases
        ]
    problems = result["problems"]
    lines.append("")
    lines.append(f"verified: {'yes' if not problems else 'no: ' + '; '.join(problems[:5])}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__)
    parser.add_argument("--a", type=Path, required=True, help="the venv of the first install")
    parser.add_argument("--b", type=Path, required=True, help="the venv of the second install")
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument(
        "--measures",
        default=",".join(MEASURES),
        help=f"a comma-separated subset of {','.join(MEASURES)} (cold always runs)",
    )
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "compare")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON result here")
    args = parser.parse_args(argv)
    measures = [m for m in MEASURES if m in args.measures.split(",") or m == "cold"]
    if "cli-one-edit" in measures and "cli-no-op" not in measures:
        measures.insert(measures.index("cli-one-edit"), "cli-no-op")  # it primes the CLI
    if "warm-clone" in measures and "shards-cold" not in measures:
        measures.insert(measures.index("warm-clone"), "shards-cold")  # it fills the cache

    from trailblaze.toolchain.compilers import TS_VERSION, find_compiler  # noqa: PLC0415

    compiler = find_compiler(TS_VERSION, install=True)
    options = Options(sizes=(args.size,), runs=args.runs, work=args.work, baseline=False, poll=0)
    sides = [
        Side("a", args.a.resolve(), args.size, options, list(compiler.argv_prefix)),
        Side("b", args.b.resolve(), args.size, options, list(compiler.argv_prefix)),
    ]
    try:
        # One unmeasured cold run each: the page cache holds both workspaces alike.
        for side in sides:
            side.bench.clear(side.bench.ws)
            side.bench.doit("warmup", 0, measured=False)
        for run in range(args.runs):
            order = sides if run % 2 == 0 else sides[::-1]
            for side in order:
                side.iteration(run, measures)
            print(
                f"run {run + 1}/{args.runs}: "
                + "; ".join(
                    f"{s.name} " + ", ".join(f"{m} {s.samples[m][-1].wall:.3f}" for m in measures)
                    for s in sides
                ),
                flush=True,
            )
    finally:
        for side in sides:
            side.bench.close()
            side.bench.empty_trash()
    a, b = sides
    result = {
        "size": args.size,
        "runs": args.runs,
        "tolerance": args.tolerance,
        "a": {"venv": str(a.venv), "package": a.package, "commit": a.commit},
        "b": {"venv": str(b.venv), "package": b.package, "commit": b.commit},
        "measures": compare(a, b, args.tolerance, measures),
        "problems": [
            f"{side.name}: {p}"
            for side in sides
            for samples in side.samples.values()
            for s in samples
            for p in s.problems
        ],
    }
    text = markdown(result)
    print(text)
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1) + "\n", "utf-8")
        args.out.with_suffix(".md").write_text(text + "\n", "utf-8")
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
