"""The language server's latency: `didChange` to `publishDiagnostics`, one edited trail.

    python -m bench.lsp [--sizes 1000,10000] [--edits 200] [--out bench/results/lsp.md]
                        [--work bench/out]

For each size, the synthetic workspace of `bench.generate` (the same seed as `bench.run` and
`bench.compare`), after one `trailblaze check` of it, gets `trailblaze lsp` (this interpreter's
install) and our client (`bench/lspclient.py`). The client opens the bench's edit trail (the
trail `bench.run`'s one-edit measure edits), waits for its first diagnostics (not measured: the
first check of a file builds the file scope's state), then sends `--edits` changes of the edit
line, one at a time, and times each from the moment its `didChange` is written to the moment
the `publishDiagnostics` of that version is read. Nothing is debounced in the server.

The edits change the argument of one `inputText` call: a new text (clean), a misspelled key
(TS2561), a list for the string (TS2322), so that the verdict changes on most edits. The first
half of the edits are texts never seen before: each one runs the check's pipeline for the file
(with the workspace's stages kept, `check/phase.py`) and compiles its trail's new module in the
warm compiler (`check/typegate/warm.py`). The second half repeat texts of the first half in
another order: a text already checked is answered from the server's verdict per text. The
table says which share is which, and gives each part's median and 95th percentile apart from
the whole.

Then, in this process, where a new text's time goes (`breakdown`): the same kind of edits
through the server's `Session` (no JSON-RPC; YAML composed in one pass, as the server does), each
timed whole and in parts: the stamp of the inputs, the warm compile (the compiler's answer, its
proof and mapping), and the rest of the pipeline (the parse, generation and write of the module,
the state store, the report).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.generate import Spec, ensure
from bench.lspclient import RECEIVED, Client
from bench.tscwarm import measure as warm_compile

REPO = Path(__file__).resolve().parent.parent
SEED = 7


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def process_cpu(pid: int) -> float:
    """Seconds of CPU (user and system, every thread) process `pid` has used; 0 once gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu(pid: int) -> float:
    """`process_cpu` of the children of `pid` alive now (the warm compiler)."""
    found: list[int] = []
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(child) for child in listing.read_text().split()]
        except OSError:
            continue
    return sum(process_cpu(child) for child in found)


def variants(line: str, count: int) -> list[str]:
    """`count` distinct edit lines for the `text:` line `line`, cycling clean / misspelled key /
    wrong type."""
    indent = line[: len(line) - len(line.lstrip())]
    out = []
    for index in range(count):
        kind = index % 3
        if kind == 0:
            out.append(f'{indent}text: "Bench edit {index}"')
        elif kind == 1:
            out.append(f'{indent}txt: "Bench edit {index}"')
        else:
            out.append(f"{indent}text: [{index}]")
    return out


def measure(size: int, edits: int, work: Path) -> dict[str, Any]:
    root = work / f"lsp-{size}"
    manifest = ensure(root, Spec(trails=size, seed=SEED))
    load = os.getloadavg()[0]
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    # A check of the workspace first, as a developer's machine has had one.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "trailblaze",
            "check",
            "--no-tests",
            "--format",
            "json",
            "--output",
            os.devnull,
        ],
        cwd=root,
        env=env,
        check=False,
        capture_output=True,
    )
    trail = root / manifest.edit["trail"]
    line_no = int(manifest.edit["line"]) - 1
    original = trail.read_text("utf-8")
    lines = original.splitlines()
    fresh = variants(lines[line_no], edits // 2)
    again = list(fresh)
    random.Random(SEED).shuffle(again)
    plan = [(text, "new text") for text in fresh] + [(text, "text seen") for text in again]
    client = Client(root, env=env)
    samples: list[tuple[str, float, int]] = []
    try:
        client.initialize(root)
        uri = client.open(trail)
        started = time.perf_counter()
        first = client.wait_diagnostics(uri, timeout=600)
        first_seconds = time.perf_counter() - started
        server = client.process.pid
        cpu: dict[str, list[float]] = {}
        before = (process_cpu(server), children_cpu(server))
        for index, (text, kind) in enumerate(plan):
            changed = [*lines[:line_no], text, *lines[line_no + 1 :]]
            sent = time.perf_counter()
            client.change(uri, "\n".join(changed) + "\n")
            published = client.wait_publish(uri, timeout=600)
            samples.append(
                (kind, published[RECEIVED] - sent, len(published["params"]["diagnostics"]))
            )
            if index + 1 == len(plan) or plan[index + 1][1] != kind:
                after = (process_cpu(server), children_cpu(server))
                spent = cpu.setdefault(kind, [0.0, 0.0, 0])
                spent[0] += after[0] - before[0]
                spent[1] += after[1] - before[1]
                spent[2] += sum(1 for _, k in plan[: index + 1] if k == kind) - spent[2]
                before = after
    finally:
        client.close()

    def stats(values: list[float]) -> dict[str, float]:
        return {
            "n": len(values),
            "median_ms": round(statistics.median(values) * 1000, 2),
            "p95_ms": round(percentile(values, 0.95) * 1000, 2),
        }

    by_kind: dict[str, Any] = {
        kind: stats([s for k, s, _ in samples if k == kind]) for kind in ("new text", "text seen")
    }
    for kind, (server_s, compiler_s, count) in cpu.items():
        by_kind[kind]["server_cpu_ms"] = round(server_s / count * 1000, 2)
        by_kind[kind]["compiler_cpu_ms"] = round(compiler_s / count * 1000, 2)
    # The floor first: it edits the module the server generated last (`tscwarm._EDITED`).
    warm = warm_compile(root, manifest.edit["trail"], edits)
    parts = breakdown(root, trail, line_no, lines, edits // 2)
    return {
        "parts": parts,
        "size": size,
        "load": round((load + os.getloadavg()[0]) / 2, 1),
        "warm_tsc": warm,
        "trailmaps": Spec(trails=size).targets,
        "edits": len(samples),
        "first_check_s": round(first_seconds, 3),
        "first_diagnostics": len(first),
        "with_findings": sum(1 for _, _, n in samples if n),
        "all": stats([s for _, s, _ in samples]),
        **by_kind,
    }


def breakdown(
    root: Path, trail: Path, line_no: int, lines: list[str], edits: int
) -> dict[str, Any]:
    """Medians (ms) of the parts of `edits` new-text checks through an in-process session."""
    from trailblaze.lsp.session import Session  # noqa: PLC0415
    from trailblaze.workspace import find_workspace  # noqa: PLC0415
    from trailblaze.yaml import lean  # noqa: PLC0415

    lean.enable()  # as `trailblaze lsp` does (`lsp.server.serve`)
    session = Session(find_workspace(root))
    timed: dict[str, list[float]] = {"check": [], "stamp": [], "compile": []}

    def timing(name: str, fn: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                timed[name].append(time.perf_counter() - started)

        return run

    session._stamp = timing("stamp", session._stamp)  # type: ignore[method-assign]
    try:
        session.check(trail, "\n".join(lines) + "\n")  # the first check: not measured
        warm = session._warm
        assert warm is not None
        assert session._phase is not None
        session._phase.compile = timing("compile", warm)
        for values in timed.values():
            values.clear()
        for index, edit in enumerate(variants(lines[line_no], edits)):
            edited = edit.replace("Bench edit", f"Bench part {index}")
            changed = [*lines[:line_no], edited, *lines[line_no + 1 :]]
            started = time.perf_counter()
            verdict = session.check(trail, "\n".join(changed) + "\n")
            timed["check"].append(time.perf_counter() - started)
            assert verdict.compiled
    finally:
        session.close()
    medians = {name: round(statistics.median(values) * 1000, 2) for name, values in timed.items()}
    medians["rest"] = round(medians["check"] - medians["stamp"] - medians["compile"], 2)
    return {"n": len(timed["check"]), **medians}


def markdown(results: list[dict[str, Any]]) -> str:
    out = [
        "# `trailblaze lsp`: didChange to publishDiagnostics",
        "",
        "`python -m bench.lsp` (see its docstring). One edited trail of the synthetic workspace,",
        "each edit changing one `inputText` argument; the verdict changes on two edits of three.",
        "Times in milliseconds, measured by the client from writing `didChange` to reading the",
        "`publishDiagnostics` of that version.",
        "",
        "| trails | trailmaps | edits | part | share | median | p95 | server CPU | tsc CPU |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        for part in ("all", "new text", "text seen"):
            s = r[part]
            share = f"{s['n'] / r['edits']:.0%}"
            out.append(
                f"| {r['size']:,} | {r['trailmaps']} | {r['edits']} | {part} | {share} | "
                f"{s['median_ms']} | {s['p95_ms']} | {s.get('server_cpu_ms', '–')} | "
                f"{s.get('compiler_cpu_ms', '–')} |"
            )
    for r in results:
        w = r.get("warm_tsc")
        if w:
            out.append(
                f"| {r['size']:,} | {r['trailmaps']} | {w['n']} | warm tsc alone (the floor) | "
                f"– | {w['median_ms']} | {w['p95_ms']} | – | – |"
            )
    out += [
        "",
        "- *server CPU*, *tsc CPU*: the CPU time (user and system, all threads) the server's",
        "  process and its warm compiler used, per edit of that part: what an edit costs the",
        "  machine, whatever else runs on it (the latency grows with the load; this does not).",
        "  The load average when each size was measured: "
        + ", ".join(f"{r['size']:,} trails {r.get('load', '?')}" for r in results)
        + ".",
        "- *new text*: a text the server has not checked: the check's pipeline runs for the",
        "  file (`trailblaze check FILE`'s scope, in process), its workspace stages kept from the",
        "  first check (manifests, tool models, surfaces, the type gate's preparation), and the",
        "  trail's new module is compiled by the warm compiler (`tsc --lsp` kept open, its",
        "  answer proven by canaries in the module).",
        "- *text seen*: a text checked earlier in the session, with every input of the check as",
        "  it was: the server's verdict per text answers.",
        "- *warm tsc alone*: not the server: `tsc --lsp --stdio` (TypeScript 7.0.2) kept open on",
        "  the edited trail's generated module, one `didChange` and one diagnostics pull per edit",
        "  (`bench/tscwarm.py`): what a compile costs in a warm compiler process, with nothing",
        "  of ours around it.",
        "",
        "Where a new text's time goes (in process, no JSON-RPC; medians in ms):",
        "",
        "| trails | edits | check | inputs' stamp | warm compile | rest of the pipeline |",
        "|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {r['size']:,} | {r['parts']['n']} | {r['parts']['check']} | "
            f"{r['parts']['stamp']} | {r['parts']['compile']} | {r['parts']['rest']} |"
            for r in results
            if r.get("parts")
        ),
        "",
        "First check of the opened file (not in the table): "
        + ", ".join(f"{r['size']:,} trails {r['first_check_s']} s" for r in results)
        + ".",
        "",
    ]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lsp")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "lsp.md")
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "out")
    args = parser.parse_args(argv)
    results = [measure(int(size), args.edits, args.work) for size in args.sizes.split(",") if size]
    args.out.write_text(markdown(results), "utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n", "utf-8")
    sys.stdout.write(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
