"""Cold, no-op and one-trail-edit `doit check` on real workspaces, with what the compiler saw.

    python -m bench.corpus [WORKSPACE ...] [--runs 5] [--out bench/results/corpus.json]

(`--out` also writes the table next to it, as `.md`.)

Without arguments it measures the upstream corpus copied into `tests/data/corpus/head` (with
our stand-in tool modules from `tests/data/corpus-code` laid over it, as the tests do), the
sample-app workspace inside it, and the bundled `trailmaps/` workspace. Each workspace is copied
to a temporary directory with a one-line `dodo.py`; the measured processes are `python -m doit`
as a user runs them:

- `cold`: scratch directory deleted;
- `no-op`: nothing changed;
- `one-edit`: one string argument of one type-checked trail changed (then restored and settled).

The edit is the first `text:`, `textRegex:`, `url:` or `appId:` argument of the first trail the
cold run type-checked whose file has one; a workspace with none is measured without `one-edit`. Every sample records the
check's stored stats (`trailblaze.check.run.last_stats`): compiler runs, files compiled, trails parsed.
"""

from __future__ import annotations

import argparse
import compileall
import json
import re
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.run import REPO, child_env, compiled_count, doit_stats, measure

CORPUS = REPO / "tests" / "data" / "corpus" / "head"
CORPUS_CODE = REPO / "tests" / "data" / "corpus-code" / "head"
EDITABLE = re.compile(
    r"""^(?P<head>\s*(?:-\s+)?(?:text|textRegex|url|appId)\s*:\s*)"""
    r"""(?P<quote>["']?)(?P<value>[^"'\n#{}\[\]]+)(?P=quote)\s*$""",
    re.MULTILINE,
)


def default_workspaces(scratch: Path) -> list[tuple[str, Path]]:
    head = scratch / "corpus-head"
    shutil.copytree(CORPUS, head)
    shutil.copytree(CORPUS_CODE, head, dirs_exist_ok=True)
    bundled = scratch / "bundled"
    shutil.copytree(REPO / "trailmaps", bundled / "trailmaps")
    return [
        ("corpus head", head),
        ("corpus android-sample-app", head / "examples" / "android-sample-app"),
        ("bundled trailmaps/", bundled),
    ]


def copy_workspace(source: Path, scratch: Path) -> Path:
    target = scratch / source.name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".trailblaze"))
    return target


class Workspace:
    def __init__(self, name: str, root: Path, logs: Path) -> None:
        self.name = name
        self.root = root
        self.logs = logs
        self.env = child_env()
        dodo = root / "dodo.py"
        if not dodo.exists():
            dodo.write_text(
                "from trailblaze.doit_tasks import DOIT_CONFIG, task_check  # noqa: F401\n",
                "utf-8",
            )
        self.samples: dict[str, list[dict[str, Any]]] = {"cold": [], "no-op": [], "one-edit": []}
        from trailblaze.workspace import find_workspace  # noqa: PLC0415

        self.scratch = find_workspace(root, explicit=True).scratch

    def doit(self, label: str) -> dict[str, Any]:
        log = self.logs / f"{self.name.replace(' ', '-').replace('/', '')}-{label}.log"
        sample = measure(
            [sys.executable, "-m", "doit"], cwd=self.root, env=self.env, log=log, poll=0.05
        )
        output = log.read_text("utf-8", "replace")
        if sample.returncode not in (0, 1) or not (self.scratch / "report.json").is_file():
            raise SystemExit(
                f"{self.name}: `doit` in {self.root} exited {sample.returncode} without a report:\n"
                + output[-2000:]
            )
        skipped, stats = doit_stats(self.scratch, output)
        return {
            "wall": sample.wall,
            "cpu": sample.cpu,
            "peak_mib": max(sample.maxrss_kib, sample.tree_rss_kib) / 1024,
            "exit": sample.returncode,
            "pipeline_skipped": skipped,
            "compiler_runs": stats.get("compiler_runs", 0),
            "files_compiled": compiled_count(stats, missing=0),
            "trails_parsed": stats.get("trails_parsed", 0),
        }

    def report(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.scratch / "report.json").read_text("utf-8"))
        return data

    def edit_target(self) -> tuple[Path, str, str] | None:
        for trail in self.report()["trails"]:
            if trail["status"] != "type-checked":
                continue
            path = self.root / trail["path"]
            text = path.read_text("utf-8")
            match = EDITABLE.search(text)
            if match:
                edited = (
                    text[: match.start("value")]
                    + match.group("value")
                    + " edited"
                    + text[match.end("value") :]
                )
                return path, text, edited
        return None

    def run(self, runs: int) -> None:
        for _ in range(runs):
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.samples["cold"].append(self.doit("cold"))
            self.samples["no-op"].append(self.doit("no-op"))
            target = self.edit_target()
            if target is None:
                continue
            path, original, edited = target
            path.write_text(edited, "utf-8")
            try:
                self.samples["one-edit"].append(self.doit("one-edit"))
            finally:
                path.write_text(original, "utf-8")
            self.doit("settle")

    def summary(self) -> dict[str, Any]:
        report = self.report()
        statuses: dict[str, int] = {}
        for trail in report["trails"]:
            statuses[trail["status"]] = statuses.get(trail["status"], 0) + 1
        out: dict[str, Any] = {"trails": len(report["trails"]), "statuses": statuses}
        for label, samples in self.samples.items():
            if not samples:
                continue
            out[label] = {
                "wall_s": statistics.median(s["wall"] for s in samples),
                "cpu_s": statistics.median(s["cpu"] for s in samples),
                "peak_mib": max(s["peak_mib"] for s in samples),
                "files_compiled": sorted({s["files_compiled"] for s in samples}),
                "compiler_runs": sorted({s["compiler_runs"] for s in samples}),
                "trails_parsed": sorted({s["trails_parsed"] for s in samples}),
                "exit": sorted({s["exit"] for s in samples}),
                "runs": len(samples),
            }
        return out


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "| workspace | trails | type-checked | run | wall (median) | CPU | files compiled "
        "| compiler runs | trails parsed |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for name, data in results.items():
        for label in ("cold", "no-op", "one-edit"):
            if label not in data:
                continue
            row = data[label]
            lines.append(
                f"| {name} | {data['trails']} | {data['statuses'].get('type-checked', 0)} | "
                f"{label} | {row['wall_s']:.3f} s | {row['cpu_s']:.3f} s | "
                f"{_values(row['files_compiled'])} | {_values(row['compiler_runs'])} | "
                f"{_values(row['trails_parsed'])} |"
            )
    return "\n".join(lines)


def _values(values: list[int]) -> str:
    return "/".join(str(v) for v in values)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.corpus", description=__doc__)
    parser.add_argument("workspaces", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    compileall.compile_dir(REPO / "trailblaze", quiet=1)  # as bench.run does
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="trailblaze-corpus-bench-") as tmp:
        scratch = Path(tmp)
        logs = scratch / "logs"
        if args.workspaces:
            chosen = [(str(p), copy_workspace(p.resolve(), scratch)) for p in args.workspaces]
        else:
            chosen = default_workspaces(scratch)
        for name, root in chosen:
            workspace = Workspace(name, root, logs)
            workspace.run(args.runs)
            results[name] = workspace.summary()
            print(f"{name}: done", file=sys.stderr, flush=True)
    table = markdown(results)
    print(table)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n", "utf-8")
        args.out.with_suffix(".md").write_text(table + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
