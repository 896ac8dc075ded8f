"""The type gate: generated trail modules compiled by tsc, diagnostics mapped back to YAML.

Layout in the scratch directory (`typegate/`):

- `surfaces/<trailmap>.d.ts`: one plain module per trailmap, `export interface Tools {...}`,
  rendered by the same entry renderer as the trailmap's `trailblaze-client.d.ts`;
- `tooldecl/<trailmap>/...`: declarations tsc emits from the trailmap's scripted `.ts` tools,
  so a scripted tool's input type is the one its own module declares;
- `trails/<trail path>.ts`: one generated module per trail, rewritten only when it changes;
- `tsconfig.<pid>.<n>.json`: the files of one compiler run (only cache misses).

No silent passes: every compiler run is proven (`proof.py`: the canary's error came back, the
output is complete and every file was in the program); an unproven run, a diagnostic on a
generated line that maps to no call, in a surface, an unresolved import, a syntax error, a
timeout or a crash makes the affected trails an infrastructure problem, never a cached pass.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trailblaze.cache import digest
from trailblaze.codegen import HEADER_LINES, GenLine, PackedLines, unpack_lines
from trailblaze.finding import Finding
from trailblaze.fsutil import write_if_changed
from trailblaze.proc import ProcError, ProcTimeout, run
from trailblaze.proof import Diagnostic, compile_proven, parse_output
from trailblaze.proof import abs_path as _abs
from trailblaze.resolve import Resolution, ToolEntry
from trailblaze.surface import imports_for, module_specifier, render_entries, sdk_index
from trailblaze.toolchain import Compiler

TIMEOUT_ENV = "TRAILBLAZE_TYPECHECK_TIMEOUT_MS"
DEFAULT_TIMEOUT = 300.0
BATCH_SIZE = 2000
"""Trails per compiler run: one program of 10,000 trails peaks near 1.5 GiB, 2,000 near 0.3; with
smaller batches the compiler keeps up with the parse and less is left to compile at the end."""
COMPILER_OPTIONS = {
    "target": "ES2022",
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "lib": ["ES2022"],
    "types": [],
    "strict": True,
    "noEmit": True,
    # Declaration files are not re-checked with every batch of trails: `check_surfaces` checks
    # ours (surfaces, tool declarations, the SDK) strictly whenever one changes. Unchecked, an
    # unresolved import in one would silently become `any` and every call would pass.
    "skipLibCheck": True,
    "allowJs": False,
    "paths": {
        "@trailblaze/scripting": ["../sdk/dist/index"],
        "@trailblaze/scripting/*": ["../sdk/dist/*"],
    },
}


@dataclass(frozen=True, slots=True)
class Layout:
    scratch: Path

    @property
    def root(self) -> Path:
        return self.scratch / "typegate"

    def surface(self, trailmap: str) -> Path:
        return self.root / "surfaces" / f"{trailmap}.d.ts"

    def trail_file(self, trail_path: str) -> Path:
        return self.root / "trails" / f"{trail_path}.ts"

    def tooldecl(self, trailmap: str) -> Path:
        return self.root / "tooldecl" / trailmap

    def surface_import(self, trail_path: str, trailmap: str) -> str:
        return module_specifier(self.surface(trailmap), self.trail_file(trail_path).parent)


@dataclass(frozen=True, slots=True)
class Job:
    """One trail to compile: its generated module, line table and cache key."""

    path: str
    trailmap: str
    file: Path
    lines: PackedLines
    """Its line table, packed (`codegen.unpack_lines`)."""
    key: str


@dataclass
class GateResult:
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    """Type findings per trail path, for every job that was really checked."""
    infra: list[Finding] = field(default_factory=list)
    failed: set[str] = field(default_factory=set)
    """Trail paths whose check could not complete."""
    compiler_runs: int = 0
    files_compiled: list[str] = field(default_factory=list)


def timeout_seconds(env: Mapping[str, str] | None = None) -> float:
    raw = (env if env is not None else os.environ).get(TIMEOUT_ENV, "").strip()
    try:
        return max(float(raw) / 1000.0, 1.0) if raw else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT


# -- surfaces ---------------------------------------------------------------------------------


def module_surface(
    resolution: Resolution,
    layout: Layout,
    decls: Mapping[Path, Path],
    catalog_names: frozenset[str],
) -> str:
    """The type gate's surface of one trailmap: a plain module, so trailmaps share one program."""
    surface_dir = layout.surface(resolution.trailmap).parent

    def ref(entry: ToolEntry) -> str:
        # A module whose declarations are missing still gets its (missing) path: the import then
        # fails to resolve, and its trails are reported as not checked instead of passing.
        assert entry.module is not None
        decl = decls.get(entry.module, layout.root / "tooldecl" / "missing" / entry.module.name)
        return module_specifier(decl, surface_dir)

    body = render_entries(resolution.entries, ref, indent=2)
    sdk = module_specifier(sdk_index(layout.scratch), surface_dir)
    imports = imports_for(body + " TrailblazeClient", catalog_names, sdk)
    return (
        f"// GENERATED by trailblaze-doit: the type gate's surface of trailmap "
        f"'{resolution.trailmap}'. DO NOT EDIT.\n{imports}\nexport interface Tools {{\n{body}\n}}\n\n"
        "export type Client = TrailblazeClient<Tools>;\n"
    )


@dataclass(frozen=True, slots=True)
class Declarations:
    decls: dict[Path, Path]
    findings: tuple[Finding, ...]
    runs: int
    identity: str
    """A digest of every emitted declaration; part of the cache key of the trails using them."""


def emit_declarations(
    tools_dirs: Mapping[str, Path],
    compiler: Compiler,
    layout: Layout,
    rel: Callable[[Path], str],
    *,
    timeout: float,
) -> Declarations:
    """Declarations of every scripted `.ts` tool, emitted by tsc from each trailmap's `tools/`.

    This is also the type check of the authored tools: their errors are findings (fatal; the
    check makes those of exempt trailmaps non-fatal). A trailmap whose tools did not change
    since the last emit (same sources, same compiler) is not recompiled.
    """
    decls: dict[Path, Path] = {}
    findings: list[Finding] = []
    plans = []
    for trailmap, tools_dir in sorted(tools_dirs.items()):
        out_dir = layout.tooldecl(trailmap)
        sources = sorted(
            p
            for p in tools_dir.rglob("*")
            if p.is_file()
            and p.suffix in (".ts", ".js", ".mts", ".cts")
            and "node_modules" not in p.parts
        )
        key = digest(compiler.identity, *(f"{p}\0{p.read_bytes().hex()}" for p in sources))
        marker = out_dir / ".emitted.json"
        try:
            state = json.loads(marker.read_text("utf-8"))
        except (OSError, ValueError):
            state = {}
        for source in sources:
            decls[source] = out_dir / _declaration_name(source.relative_to(tools_dir))
        plans.append((trailmap, tools_dir, out_dir, marker, key, state))

    def emit(plan: tuple[str, Path, Path, Path, str, dict[str, Any]]) -> dict[str, Any]:
        trailmap, tools_dir, out_dir, marker, key, state = plan
        if state.get("key") == key:
            return state
        state = _emit(tools_dir, out_dir, compiler, timeout, key, rel, trailmap)
        write_if_changed(marker, json.dumps(state, ensure_ascii=False))
        return state

    # Each emit is a short compiler process that mostly waits on its own start-up: a few at
    # once keep both cores busy.
    runs = sum(1 for plan in plans if plan[5].get("key") != plan[4])
    with ThreadPoolExecutor(4) as pool:
        states = list(pool.map(emit, plans))
    identity_parts: list[str] = []
    for state in states:
        findings.extend(Finding(**f) for f in state.get("findings", []))
        identity_parts.append(str(state.get("output", "")))
    return Declarations(decls, tuple(findings), runs, digest(*identity_parts))


def _emit(
    tools_dir: Path,
    out_dir: Path,
    compiler: Compiler,
    timeout: float,
    key: str,
    rel: Callable[[Path], str],
    trailmap: str,
) -> dict[str, object]:
    tsconfig = tools_dir / "tsconfig.json"
    with tempfile.TemporaryDirectory(
        prefix="tooldecl-", dir=out_dir.parent if out_dir.parent.exists() else None
    ) as tmp:
        argv = [
            *compiler.argv_prefix,
            "-p",
            str(tsconfig),
            "--noEmit",
            "false",
            "--declaration",
            "--emitDeclarationOnly",
            "--outDir",
            tmp,
            "--rootDir",
            str(tools_dir),
            "--pretty",
            "false",
        ]
        findings: list[dict[str, object]] = []
        try:
            result = run(argv, cwd=tools_dir, timeout=timeout)
        except ProcError as exc:
            return {
                "key": "",
                "findings": [
                    infra_finding(
                        f"{rel(tsconfig)}",
                        f"declarations of scripted tools could not be emitted: {exc}",
                        trailmap,
                    ).to_json()
                ],
            }
        for diagnostic in parse_output(result.stdout + result.stderr, tools_dir):
            findings.append(
                Finding(
                    "type",
                    rel(diagnostic.file),
                    diagnostic.line,
                    diagnostic.column,
                    diagnostic.message,
                    code=diagnostic.code,
                    trailmap=trailmap,
                ).to_json()
            )
        output_digest = []
        produced: set[Path] = set()
        for emitted in sorted(
            p for p in Path(tmp).rglob("*") if p.name.endswith((".d.ts", ".d.mts", ".d.cts"))
        ):
            target = out_dir / emitted.relative_to(tmp)
            data = emitted.read_bytes()
            write_if_changed(target, data)
            produced.add(target)
            # By the path inside the trailmap's output, not the absolute one: the digest is part of
            # the remote cache's keys, which must not depend on where the workspace is.
            output_digest.append(digest(f"{trailmap}/{emitted.relative_to(tmp).as_posix()}", data))
        # A declaration this emit did not produce is stale: it must not keep a surface compiling.
        if out_dir.is_dir():
            for old in out_dir.rglob("*.d.*ts"):
                if old not in produced:
                    old.unlink(missing_ok=True)
        if result.returncode != 0 and not findings:
            findings.append(
                infra_finding(
                    rel(tsconfig),
                    f"tsc exited {result.returncode} emitting scripted tool declarations: {(result.stdout + result.stderr).strip()[:500]}",
                    trailmap,
                ).to_json()
            )
        complete = not any(f["kind"] == "infra" for f in findings)
    return {"key": key if complete else "", "findings": findings, "output": digest(*output_digest)}


def infra_finding(
    path: str, message: str, trailmap: str | None = None, code: str = "typegate"
) -> Finding:
    """A check that could not run: never fatal, whatever its trailmap."""
    return Finding("infra", path, 1, 1, message, code=code, fatal=False, trailmap=trailmap)


# -- compiling --------------------------------------------------------------------------------


SURFACE_OPTIONS = {**COMPILER_OPTIONS, "skipLibCheck": False, "skipDefaultLibCheck": True}


def check_surfaces(
    surfaces: Mapping[str, Path], compiler: Compiler, layout: Layout, *, timeout: float
) -> dict[str, str]:
    """Compile module surfaces (and what they import) strictly; trailmap -> why it is broken.

    One compiler run for all of them. A diagnostic in a surface or in a trailmap's tool
    declarations breaks that trailmap; one anywhere else (the SDK) breaks them all.
    """
    if not surfaces:
        return {}
    try:
        diagnostics = compile_proven(
            list(surfaces.values()),
            SURFACE_OPTIONS,
            compiler,
            layout.root,
            timeout=timeout,
            prefix="tsconfig.surfaces.",
        )
    except ProcError as exc:
        return dict.fromkeys(surfaces, f"the surfaces could not be compiled: {exc}")
    broken: dict[str, str] = {}
    owner = {_abs(path): trailmap for trailmap, path in surfaces.items()}
    tooldecl = _abs(layout.root / "tooldecl")
    for diagnostic in diagnostics:
        where = _show(diagnostic, layout)
        trailmap = owner.get(diagnostic.file)
        if trailmap is None and diagnostic.file.is_relative_to(tooldecl):
            trailmap = diagnostic.file.relative_to(tooldecl).parts[0]
        if trailmap is not None and trailmap in surfaces:
            broken.setdefault(
                trailmap, f"the surface of trailmap '{trailmap}' does not compile: {where}"
            )
        else:
            for each in surfaces:
                broken.setdefault(
                    each, f"a declaration shared by every surface does not compile: {where}"
                )
    return broken


def compile_jobs(
    jobs: list[Job],
    compiler: Compiler,
    layout: Layout,
    *,
    timeout: float,
    single_threaded: bool = False,
) -> GateResult:
    """Compile every job (cache misses), in bounded batches, and map what tsc says.

    `single_threaded` (TypeScript 7 only) when the cores are busy with something else, such as
    the parse workers of a cold check: the native compiler's parallel checkers then cost twice
    the CPU time (each builds its own view of the shared surfaces) for no gain in wall time.
    """
    result = GateResult()
    extra = ("--singleThreaded",) if single_threaded and _native(compiler) else ()
    for start in range(0, len(jobs), BATCH_SIZE):
        _compile_batch(jobs[start : start + BATCH_SIZE], compiler, layout, timeout, result, extra)
    return result


def _native(compiler: Compiler) -> bool:
    major = compiler.version.split(".", 1)[0]
    return major.isdigit() and int(major) >= 7


def _compile_batch(
    batch: list[Job],
    compiler: Compiler,
    layout: Layout,
    timeout: float,
    result: GateResult,
    extra: tuple[str, ...] = (),
) -> None:
    pending = list(batch)
    for _attempt in range(3):
        if not pending:
            return
        diagnostics, error = _run_tsc(pending, compiler, layout, timeout, result, extra)
        if error is not None:
            _fail(pending, error, result)
            return
        by_file = {_abs(job.file): job for job in pending}
        syntax = [d for d in diagnostics if d.code.startswith("TS1")]
        if syntax:
            # A syntax error hides every semantic error of the program: take out the files that
            # have one (our generator wrote invalid code: infrastructure) and compile the rest.
            broken = {by_file[d.file].path for d in syntax if d.file in by_file}
            if not broken:
                _fail(
                    pending,
                    f"syntax error outside the generated trails: {_show(syntax[0], layout)}",
                    result,
                )
                return
            for job in pending:
                if job.path in broken:
                    first = next(d for d in syntax if d.file == _abs(job.file))
                    _fail([job], f"generated code does not parse: {_show(first, layout)}", result)
            pending = [job for job in pending if job.path not in broken]
            continue
        _map(pending, diagnostics, layout, result)
        return
    # Still syntax errors after every attempt: what is left was not checked.
    _fail(pending, "the compiler kept reporting syntax errors", result)


def _run_tsc(
    jobs: list[Job],
    compiler: Compiler,
    layout: Layout,
    timeout: float,
    result: GateResult,
    extra: tuple[str, ...] = (),
) -> tuple[list[Diagnostic], str | None]:
    result.compiler_runs += 1
    result.files_compiled.extend(job.path for job in jobs)
    try:
        diagnostics = compile_proven(
            [job.file for job in jobs],
            COMPILER_OPTIONS,
            compiler,
            layout.root,
            timeout=timeout,
            prefix="tsconfig.",
            extra=extra,
        )
    except ProcTimeout as exc:
        return [], f"tsc timed out after {exc.timeout:.0f} s"
    except ProcError as exc:  # Unproven included
        return [], f"tsc could not run: {exc}"
    return diagnostics, None


def _map(
    jobs: list[Job],
    diagnostics: list[Diagnostic],
    layout: Layout,
    result: GateResult,
) -> None:
    by_file = {_abs(job.file): job for job in jobs}
    by_trailmap: dict[str, list[Job]] = defaultdict(list)
    for job in jobs:
        by_trailmap[job.trailmap].append(job)
    findings: dict[str, list[Finding]] = {job.path: [] for job in jobs}
    failed: dict[str, str] = {}
    surfaces_root = _abs(layout.root / "surfaces")
    tables: dict[str, dict[int, GenLine]] = {}
    for diagnostic in diagnostics:
        owner = by_file.get(diagnostic.file)
        if owner is not None:
            job = owner
            table = tables.get(job.path)
            if table is None:
                table = tables[job.path] = unpack_lines(job.lines)
            gen = table.get(diagnostic.line)
            if gen is None:
                where = (
                    "the header" if diagnostic.line <= HEADER_LINES else f"line {diagnostic.line}"
                )
                failed.setdefault(
                    job.path,
                    f"unmapped diagnostic on {where} of the generated module: {_show(diagnostic, layout)}",
                )
                continue
            findings[job.path].append(
                Finding(
                    "type",
                    job.path,
                    gen.line,
                    gen.column,
                    diagnostic.message,
                    key_path=gen.key_path,
                    code=diagnostic.code,
                    step=gen.step,
                    classifier=gen.classifier,
                    tool=gen.tool,
                    trailmap=job.trailmap,
                    position=gen.position,
                )
            )
            continue
        if diagnostic.file.parent == surfaces_root:
            trailmap = diagnostic.file.name.removesuffix(".d.ts")
            for affected in by_trailmap.get(trailmap, []):
                failed.setdefault(
                    affected.path,
                    f"the surface of trailmap '{trailmap}' does not compile: {_show(diagnostic, layout)}",
                )
            continue
        for affected in jobs:
            failed.setdefault(
                affected.path,
                f"a diagnostic outside the generated trails: {_show(diagnostic, layout)}",
            )
    for job in jobs:
        if job.path in failed:
            _fail([job], failed[job.path], result)
        else:
            result.findings[job.path] = findings[job.path]


def _fail(jobs: Iterable[Job], message: str, result: GateResult) -> None:
    for job in jobs:
        result.failed.add(job.path)
        result.infra.append(
            infra_finding(job.path, f"type check could not run: {message}", job.trailmap)
        )


def _show(diagnostic: Diagnostic, layout: Layout) -> str:
    try:
        where = diagnostic.file.relative_to(_abs(layout.scratch)).as_posix()
    except ValueError:
        where = diagnostic.file.as_posix()
    return (
        f"{where}({diagnostic.line},{diagnostic.column}): {diagnostic.code}: {diagnostic.message}"
    )


def _declaration_name(source: Path) -> Path:
    """Where tsc writes the declarations of a source: x.ts -> x.d.ts, x.mts -> x.d.mts, ..."""
    suffix = {".mts": ".d.mts", ".cts": ".d.cts", ".mjs": ".d.mts", ".cjs": ".d.cts"}.get(
        source.suffix, ".d.ts"
    )
    return source.with_name(source.name[: -len(source.suffix)] + suffix)


def remove_orphans(layout: Layout, keep_trails: Iterable[str]) -> int:
    """Delete generated trail modules whose trail is not in `keep_trails`; returns how many.

    String paths throughout: this walks every generated module, ten thousand in a large
    workspace, and pathlib would cost more than the walk.
    """
    trails = os.path.normpath(os.path.abspath(layout.root / "trails"))
    if not os.path.isdir(trails):
        return 0
    wanted = {os.path.normpath(os.path.join(trails, f"{rel}.ts")) for rel in keep_trails}
    removed = 0
    gone: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(trails, topdown=False):
        left = len(filenames) + sum(os.path.join(dirpath, d) not in gone for d in dirnames)
        for filename in filenames:
            path = os.path.join(dirpath, filename)
            if path not in wanted:
                os.unlink(path)
                removed += 1
                left -= 1
        if dirpath != trails and left == 0:
            with contextlib.suppress(OSError):
                os.rmdir(dirpath)
                gone.add(dirpath)
    return removed
