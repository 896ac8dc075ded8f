"""The unit-test phase's cost: `python -m bench.unittests OUT [--files 100 1000] [--runs 3]`.

A generated workspace of one trailmap with N scripted tools and N test files (each test imports
its tool, the tool a shared helper, and both `@trailblaze/scripting`), timed through the real
`trailblaze check --format json` in a child process:

- cold: an empty scratch directory, every test file run;
- no-op: nothing changed (the command line's recorded output), and the same with `--no-tests`
  for comparison (what the no-op cost before the phase existed);
- cached: a tool no test imports edited, so the pipeline runs and every test file is a hit;
- one edit: one tool edited, so the one test file importing it runs.

Medians of `--runs`; the JSON result (and a Markdown table) goes to OUT.
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

MANIFEST = """\
id: gen
target:
  display_name: Generated
  platforms:
    web:
      drivers: [playwright-native]
      tool_sets: [web_core]
"""
SHARED = "export const suffix = (s: string): string => `${s}!`;\n"
TOOL = """\
import {{ trailblaze }} from "@trailblaze/scripting";
import {{ suffix }} from "./shared";

export const gen_tool{n} = trailblaze.tool<{{ text?: string }}>(async (args, ctx) => {{
  await ctx.tools.web_click({{ ref: "css=#b{n}" }});
  return suffix(args.text ?? "t{n}");
}});
"""
TEST = """\
import {{ describe, expect, test }} from "bun:test";
import {{ createMockClient, createMockContext }} from "@trailblaze/scripting/testing";
import {{ gen_tool{n} }} from "./gen_tool{n}";

describe("gen_tool{n}", () => {{
  test("clicks and answers", async () => {{
    const client = createMockClient();
    const result = await gen_tool{n}({{ text: "x" }}, createMockContext({{ platform: "web" }}), client);
    expect(client.calls.map((c) => c.tool)).toEqual(["web_click"]);
    expect(result).toBe("x!");
  }});
}});
"""


def write_workspace(root: Path, files: int) -> None:
    tools = root / "trailmaps" / "gen" / "tools"
    tools.mkdir(parents=True)
    (root / "trailmaps" / "gen" / "trailmap.yaml").write_text(MANIFEST)
    (tools / "shared.ts").write_text(SHARED)
    (tools / "unrelated.ts").write_text("export const unrelated = 1;\n")
    for n in range(files):
        (tools / f"gen_tool{n}.ts").write_text(TOOL.format(n=n))
        (tools / f"gen_tool{n}.test.ts").write_text(TEST.format(n=n))


def check(root: Path, *extra: str) -> dict[str, Any]:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "trailblaze", "check", "--format", "json", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(
            f"check failed ({result.returncode}): {result.stderr}{result.stdout[-2000:]}"
        )
    report = json.loads(result.stdout)
    return {"wall": wall, "tests": report.get("summary", {}).get("tests")}


def stats_of(root: Path) -> dict[str, Any]:
    from trailblaze.check.run import last_stats  # noqa: PLC0415

    found = last_stats(root / ".trailblaze")
    out = {k: found.get(k) for k in ("test_files_run", "test_files_cached", "bun_runs")}
    out["phase"] = (found.get("seconds") or {}).get("tests")
    return out


def measure(work: Path, files: int, runs: int) -> dict[str, Any]:
    samples: dict[str, list[float]] = {}
    counts: dict[str, Any] = {}

    def keep(name: str, sample: dict[str, Any], root: Path, *, pipeline: bool = True) -> None:
        samples.setdefault(name, []).append(sample["wall"])
        # A no-op runs no pipeline: the last stats are another run's.
        empty = {"test_files_run": 0, "test_files_cached": None, "bun_runs": 0, "phase": None}
        counts[name] = stats_of(root) if pipeline else empty

    for run in range(runs):
        root = work / f"ws-{files}-{run}"
        shutil.rmtree(root, ignore_errors=True)
        write_workspace(root, files)
        keep("cold", check(root), root)
        check(root)  # the first no-op after the cold run: the page cache settles
        keep("no-op", check(root), root, pipeline=False)
        check(root, "--no-tests")
        keep("no-op, --no-tests", check(root, "--no-tests"), root, pipeline=False)
        unrelated = root / "trailmaps/gen/tools/unrelated.ts"
        unrelated.write_text(unrelated.read_text() + f"// {run}\n")
        keep("cached (pipeline runs, no test)", check(root), root)
        tool = root / "trailmaps/gen/tools/gen_tool0.ts"
        tool.write_text(tool.read_text() + f"// {run}\n")
        keep("one tool edited", check(root), root)
        shutil.rmtree(root, ignore_errors=True)
    return {
        name: {
            "median": round(statistics.median(values), 3),
            "runs": [round(v, 3) for v in values],
            **counts[name],
        }
        for name, values in samples.items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.unittests", description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--files", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("bench/out/unittests"))
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    sizes = {str(n): measure(args.work.absolute(), n, args.runs) for n in args.files}
    result: dict[str, Any] = {"cores": os.cpu_count(), "sizes": sizes}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "| test files | measure | median wall | test phase | files run | files cached | bun runs |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for size, measures in sizes.items():
        for name, m in measures.items():
            lines.append(
                f"| {size} | {name} | {m['median']:.3f} s | "
                f"{'-' if m['phase'] is None else format(m['phase'], '.3f') + ' s'} | "
                f"{m['test_files_run']} | "
                f"{'-' if m['test_files_cached'] is None else m['test_files_cached']} | "
                f"{m['bun_runs']} |"
            )
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
