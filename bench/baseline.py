"""The reference-style baseline: what Trailblaze does on every run, built from our own pieces.

No state and no cache of any kind: every run (the harness empties the scratch directory for a
cold one; an edit run writes over what the last one left) reads and parses every trail, validates its runIf trees, regenerates every trailmap's surfaces
(`trailblaze-client.d.ts`, `tsconfig.json`, sidecar, trail schema) and its type-gate module,
writes one generated module per trail, and runs the JavaScript TypeScript compiler
(`BASELINE_TS_VERSION`, 6.0.3, the line the reference bundles) once per trailmap over that
trailmap's trails, each with its own tsconfig. The scripted `.ts` tools are compiled in the same
program as the trails that use them, as the reference's per-trailmap tsconfig does; nothing is
emitted separately.

The parts are the product's (`parse_trail`, `generate_surfaces`, `module_surface`,
`codegen.generate`, `parse_output`), so the baseline does the same work per trail as our check
and finds the same errors; only the strategy (everything, every time, one compiler process per
trailmap, a JavaScript compiler) is the reference's.

`python -m bench.baseline WORKSPACE [--tsc ARGV_JSON]` prints one JSON object: what it did and
every diagnostic, mapped back to the trail's YAML line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trailblaze.check.discover import load_manifests
from trailblaze.check.surfaces import generate_surfaces
from trailblaze.check.typegate.proof import parse_output
from trailblaze.check.typegate.settings import COMPILER_OPTIONS
from trailblaze.check.typegate.surfaces import module_surface
from trailblaze.check.workers import parse_bytes
from trailblaze.generate.artifacts import DTS_NAME
from trailblaze.generate.codegen import generate
from trailblaze.generate.linetable import GenLine
from trailblaze.generate.sdk import sdk_type_names
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import BASELINE_TS_VERSION, find_compiler
from trailblaze.toolchain.proc import run
from trailblaze.toolmodel.bundled import discover
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.trail.runif import runif_findings
from trailblaze.workspace import find_workspace, scan

TIMEOUT = 1800.0


def check(root: Path, tsc: Sequence[str]) -> dict[str, Any]:
    """One reference-style run over the workspace at `root`; what it did, as JSON data."""
    ws = find_workspace(root, explicit=True)
    # No state is read: every surface and module is generated again and written over what a
    # previous run left (the harness empties the scratch directory for a cold run).
    layout = Layout(ws.scratch)
    catalog = load_catalog()
    found = scan(ws)
    manifests = load_manifests(ws, found)
    trailmaps = manifests.with_dirs()
    problems = len(manifests.findings)
    bundled = discover(catalog, workspace_targets=ws.targets_dir)
    surfaces = generate_surfaces(
        ws.root, ws.scratch, trailmaps, catalog, bundled=bundled.trailmaps, memo=False
    )
    problems += len(surfaces.findings)
    names = sdk_type_names(catalog)
    targets = surfaces.resolutions
    for trailmap, resolution in targets.items():
        # Scripted tools are imported from their sources and compiled with the trails.
        sources = {e.module: e.module for e in resolution.entries if e.module is not None}
        path = layout.surface(trailmap)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module_surface(resolution, layout, sources, names), encoding="utf-8")

    by_trailmap: dict[str, list[tuple[str, Path]]] = {}
    tables: dict[Path, tuple[str, dict[int, GenLine]]] = {}
    parsed = rejected = 0
    for path in found.trails:
        rel = ws.rel(path)
        outcome = parse_bytes(rel, path.read_bytes(), strict=True)
        parsed += 1
        problems += sum(1 for f in outcome.findings if f.fatal)
        trail = outcome.trail
        if trail is None:
            rejected += 1
            continue
        problems += len(runif_findings(trail)[0])
        target = trail.config.target
        if target is None or target not in targets or trail.call_count == 0:
            continue
        resolution = targets[target]
        schemas = {e.name: e.input_schema for e in resolution.entries}
        generated = generate(trail, layout.surface_import(rel, target), schemas, catalog.defs)
        out = layout.trail_file(rel)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(generated.text, encoding="utf-8")
        by_trailmap.setdefault(target, []).append((rel, out))
        tables[out.resolve()] = (rel, generated.lines)

    findings: list[dict[str, Any]] = []
    runs = 0
    compiled = 0
    for trailmap, files in sorted(by_trailmap.items()):
        config = layout.root / f"tsconfig.{trailmap}.json"
        # The trailmap's own `trailblaze-client.d.ts` types `ctx.tools` in its scripted tools.
        client = trailmaps[trailmap][1] / "tools" / DTS_NAME
        listed = [f.relative_to(layout.root).as_posix() for _, f in files]
        if client.is_file():
            listed.append(os.path.relpath(client, layout.root))
        config.write_text(
            json.dumps({"compilerOptions": COMPILER_OPTIONS, "files": listed}), encoding="utf-8"
        )
        result = run(
            [*tsc, "-p", str(config), "--pretty", "false"], cwd=layout.root, timeout=TIMEOUT
        )
        runs += 1
        compiled += len(files)
        for diagnostic in parse_output(result.stdout + result.stderr, layout.root):
            rel, lines = tables.get(diagnostic.file, (str(diagnostic.file), {}))
            gen = lines.get(diagnostic.line)
            findings.append(
                {
                    "trail": rel,
                    "line": gen.line if gen else None,
                    "code": diagnostic.code,
                    "message": diagnostic.message,
                    "trailmap": trailmap,
                }
            )
    return {
        "trails": len(found.trails),
        "parsed": parsed,
        "rejected": rejected,
        "problems": problems,
        "surfaces": len(targets),
        "compiler_runs": runs,
        "files_compiled": compiled,
        "findings": findings,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.baseline", description="The reference-style baseline, one run."
    )
    parser.add_argument("workspace", type=Path)
    parser.add_argument(
        "--tsc",
        help="the compiler's argv prefix as a JSON list (default: TypeScript "
        f"{BASELINE_TS_VERSION} from the toolchain cache, installed when missing)",
    )
    args = parser.parse_args(argv)
    if args.tsc:
        tsc = [str(part) for part in json.loads(args.tsc)]
    else:
        tsc = list(find_compiler(BASELINE_TS_VERSION, install=True).argv_prefix)
    json.dump(check(args.workspace, tsc), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
