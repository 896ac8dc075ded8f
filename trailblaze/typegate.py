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
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trailblaze.cache import decode_findings, digest
from trailblaze.codegen import HEADER_LINES, GenLine, PackedLines, unpack_lines
from trailblaze.finding import Finding
from trailblaze.proc import ProcError, ProcTimeout, run
from trailblaze.proof import Diagnostic, compile_proven, parse_output
from trailblaze.proof import abs_path as _abs
from trailblaze.resolve import Resolution, ToolEntry
from trailblaze.scratch import Layout as Layout  # noqa: PLC0414 - re-exported (PEP 484 form)
from trailblaze.scratch import generated_name, make_dir, module_specifier, write_scratch
from trailblaze.sdk import SdkChoice, override_tsconfig
from trailblaze.store import Kind, Store
from trailblaze.surface import imports_for, render_entries
from trailblaze.toolchain import Compiler
from trailblaze.tsrender import ts_comment

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
    # Trails are always checked against our declarations (`surface.own_sdk_dir`).
    "paths": {
        "@trailblaze/scripting": ["../sdk-trailblaze-doit/dist/index"],
        "@trailblaze/scripting/*": ["../sdk-trailblaze-doit/dist/*"],
    },
}
UNRESOLVED_MARK = "trailblaze-unresolved:"
_UNRESOLVED = re.compile(re.escape(UNRESOLVED_MARK) + r"([^\"'`]+)")
UNRESOLVED_CODES = frozenset(
    {"TS2304", "TS2305", "TS2307", "TS2503", "TS2552", "TS2614", "TS2694", "TS2724", "TS2792"}
)
"""Diagnostics of a name or module that does not resolve: what leaves error types behind."""


@dataclass(frozen=True, slots=True)
class Job:
    """One trail to compile: its generated module, line table and cache key."""

    path: str
    trailmap: str
    file: Path
    lines: PackedLines
    """Its line table, packed (`codegen.unpack_lines`)."""
    key: str
    lints: tuple[Finding, ...] = ()
    """Findings of the generator, reported with the compiler's."""


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


def _decl_ref(layout: Layout, decls: Mapping[Path, Path]) -> Callable[[ToolEntry], str]:
    surface_dir = layout.root / "surfaces"

    def ref(entry: ToolEntry) -> str:
        # A module whose declarations are missing still gets its (missing) path: the import then
        # fails to resolve, and its trails are reported as not checked instead of passing.
        assert entry.module is not None
        decl = decls.get(entry.module, layout.root / "tooldecl" / "missing" / entry.module.name)
        return module_specifier(decl, surface_dir)

    return ref


def module_surface(
    resolution: Resolution,
    layout: Layout,
    decls: Mapping[Path, Path],
    catalog_names: frozenset[str],
) -> str:
    """The type gate's surface of one trailmap: a plain module, so trailmaps share one program."""
    surface_dir = layout.surface(resolution.trailmap).parent
    body = render_entries(resolution.entries, _decl_ref(layout, decls), indent=2)
    sdk = module_specifier(layout.own_sdk_index, surface_dir)
    imports = imports_for(body, catalog_names, sdk)
    return (
        f"// GENERATED by trailblaze-doit: the type gate's surface of trailmap "
        f"'{ts_comment(resolution.trailmap)}'. DO NOT EDIT.\n{imports}\nexport interface Tools {{\n{body}\n}}\n\n"
        # Named, so that tsc's messages say `ToolMethods` instead of spelling out every tool.
        "export type ToolMethods = {\n"
        '  [K in keyof Tools]: (args: Tools[K]["args"]) => Promise<Tools[K]["result"]>;\n'
        "};\n\n"
        "export type Client = {\n"
        "  readonly tools: ToolMethods;\n"
        "};\n"
    )


def module_probe(resolution: Resolution) -> str:
    """The probes of one trailmap's surface: each scripted tool, and its input type, must be a
    real type (not `any`, not holding `any`), else a diagnostic names the tool."""
    name = resolution.trailmap
    lines = [
        f"// GENERATED by trailblaze-doit: probes of the surface of trailmap '{name}'. DO NOT EDIT.",
        f"import type {{ Client, Tools }} from {json.dumps('./' + name)};",
        "export type __Surface = [Client, Tools];",
    ]
    scripted = [e for e in resolution.entries if e.input_schema is None]
    for n, entry in enumerate(scripted):
        key = json.dumps(entry.name)
        # An input type (an object type) refuses `undefined`; `any`, `unknown` and the error
        # type an unresolved name leaves behind accept it, and the directive then goes unused
        # (TS2578). Error types further down are found in the declarations themselves.
        lines.append(f"// @ts-expect-error {UNRESOLVED_MARK}{entry.name}")
        lines.append(f'export const __probe{n}: Tools[{key}]["args"] = undefined;')
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Declarations:
    decls: dict[Path, Path]
    findings: tuple[Finding, ...]
    runs: int
    identity: str
    """A digest of every emitted declaration; part of the cache key of the trails using them."""


OURS = SdkChoice("ours", own=True, override=False, identity="")


def tool_sources(tools_dir: Path) -> list[Path]:
    """The authored sources of a `tools/` directory: what its tsconfig compiles, tests aside."""
    if not tools_dir.is_dir():
        return []
    return sorted(
        p
        for p in tools_dir.rglob("*")
        if p.suffix in (".ts", ".js", ".mts", ".cts", ".mjs", ".cjs")
        and not p.name.endswith((".d.ts", ".d.mts", ".d.cts"))
        and not _TEST_SOURCE.search(p.name)
        and "node_modules" not in p.relative_to(tools_dir).parts
        and p.is_file()
    )


_TEST_SOURCE = re.compile(r"\.(test|spec)\.[cm]?[jt]s$")


@dataclass(frozen=True, slots=True)
class Emitted:
    """One trailmap's declaration emit: its findings, a digest of what it wrote, the files."""

    complete: bool
    """False when the emit could not run to the end: nothing of it is remembered."""
    findings: tuple[Finding, ...]
    output: str
    files: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "findings": [f.to_json() for f in self.findings],
            "output": self.output,
            "files": list(self.files),
        }

    @classmethod
    def from_json(cls, data: Any) -> Emitted:
        files = data["files"]
        if not isinstance(data["output"], str) or not all(isinstance(f, str) for f in files):
            raise TypeError("malformed declaration emit")
        return cls(True, tuple(decode_findings(data["findings"])), data["output"], tuple(files))


DECLARATIONS: Kind[Emitted] = Kind("declarations", Emitted.from_json, Emitted.to_json)
"""Per trailmap: its last complete declaration emit, keyed by its sources, tsconfig, SDK and
compiler, vouching for the declaration files it wrote."""


def emit_declarations(
    tools_dirs: Mapping[str, Path],
    compiler: Compiler,
    layout: Layout,
    rel: Callable[[Path], str],
    *,
    timeout: float,
    choices: Mapping[str, SdkChoice] | None = None,
    store: Store | None = None,
) -> Declarations:
    """Declarations of every scripted `.ts` tool, emitted by tsc from each trailmap's `tools/`.

    This is also the type check of the authored tools: their errors are findings of kind
    `tool`, at the tool file. Each trailmap compiles against the SDK `choices` names for it
    (ours when absent). A trailmap whose tools, tsconfig, SDK and compiler did not change since
    the last emit (and whose declarations are as emitted) is not recompiled: `store` remembers
    each emit (`DECLARATIONS`), staged for its owner to commit.
    """
    decls: dict[Path, Path] = {}
    findings: list[Finding] = []
    plans = []
    for trailmap, tools_dir in sorted(tools_dirs.items()):
        choice = (choices or {}).get(trailmap, OURS)
        out_dir = layout.tooldecl(trailmap)
        sources = sorted(
            p
            for p in tools_dir.rglob("*")
            if p.is_file()
            and (p.suffix in (".ts", ".js", ".mts", ".cts") or p.name == "tsconfig.json")
            and "node_modules" not in p.parts
        )
        key = digest(
            compiler.identity,
            choice.identity,
            str(choice.override),
            *(f"{p}\0{p.read_bytes().hex()}" for p in sources),
        )
        state = store.get(DECLARATIONS, trailmap, key) if store is not None else None
        for source in sources:
            if source.name != "tsconfig.json":
                decls[source] = out_dir / _declaration_name(source.relative_to(tools_dir))
        plans.append((trailmap, tools_dir, out_dir, key, state, choice))

    def emit(plan: tuple[str, Path, Path, str, Emitted | None, SdkChoice]) -> Emitted:
        trailmap, tools_dir, out_dir, _key, state, choice = plan
        if state is not None:
            return state
        make_dir(out_dir, layout.scratch)
        tsconfig = tools_dir / "tsconfig.json"
        if choice.override:
            tsconfig = layout.tools_tsconfig(trailmap)
            write_scratch(
                tsconfig,
                override_tsconfig(
                    tools_dir / "tsconfig.json",
                    layout.own_sdk_dir,
                    _fallback_tsconfig(tools_dir),
                ),
                layout.scratch,
            )
        return _emit(tools_dir, tsconfig, out_dir, compiler, timeout, rel, trailmap)

    # Each emit is a short compiler process that mostly waits on its own start-up: a few at
    # once keep both cores busy.
    runs = sum(1 for plan in plans if plan[4] is None)
    with ThreadPoolExecutor(4) as pool:
        states = list(pool.map(emit, plans))
    identity_parts: list[str] = []
    for plan, state in zip(plans, states, strict=True):
        if store is not None and plan[4] is None:
            if state.complete:
                store.put(DECLARATIONS, plan[0], state, key=plan[3], files=state.files)
            else:
                store.drop(DECLARATIONS, plan[0])
        findings.extend(state.findings)
        identity_parts.append(state.output)
    return Declarations(decls, tuple(findings), runs, digest(*identity_parts))


def _fallback_tsconfig(tools_dir: Path) -> dict[str, Any]:
    """The tsconfig we generate for a `tools/`, with absolute paths (for a scratch directory)."""
    base = tools_dir.absolute().as_posix()
    options = {k: v for k, v in COMPILER_OPTIONS.items() if k not in ("paths", "types")}
    return {
        "compilerOptions": {**options, "allowJs": True, "checkJs": False, "skipLibCheck": True},
        "include": [f"{base}/**/*.ts", f"{base}/**/*.js"],
        "exclude": [f"{base}/**/*.test.ts"],
    }


def _emit(
    tools_dir: Path,
    tsconfig: Path,
    out_dir: Path,
    compiler: Compiler,
    timeout: float,
    rel: Callable[[Path], str],
    trailmap: str,
) -> Emitted:
    shown = tools_dir / "tsconfig.json"
    with tempfile.TemporaryDirectory(
        prefix="tooldecl-", dir=out_dir.parent if out_dir.parent.exists() else None
    ) as tmp:
        argv = [
            *compiler.argv_prefix,
            "-p",
            str(tsconfig),
            "--noEmit",
            "false",
            # Declarations of a tool with a type error are still what its callers are checked
            # against (and probed): without them every trail of the trailmap would go unchecked.
            "--noEmitOnError",
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
        findings: list[Finding] = []
        try:
            result = run(argv, cwd=tools_dir, timeout=timeout)
        except ProcError as exc:
            failed = infra_finding(
                f"{rel(shown)}",
                f"declarations of scripted tools could not be emitted: {exc}",
                trailmap,
            )
            return Emitted(complete=False, findings=(failed,), output="", files=())
        for diagnostic in parse_output(result.stdout + result.stderr, tools_dir):
            findings.append(
                Finding(
                    "tool",
                    rel(diagnostic.file),
                    diagnostic.line,
                    diagnostic.column,
                    diagnostic.message,
                    code=diagnostic.code,
                    trailmap=trailmap,
                )
            )
        output_digest = []
        produced: set[Path] = set()
        for emitted in sorted(
            p for p in Path(tmp).rglob("*") if p.name.endswith((".d.ts", ".d.mts", ".d.cts"))
        ):
            target = out_dir / emitted.relative_to(tmp)
            data = emitted.read_bytes()
            write_scratch(target, data, out_dir)
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
                    rel(shown),
                    f"tsc exited {result.returncode} emitting scripted tool declarations: {(result.stdout + result.stderr).strip()[:500]}",
                    trailmap,
                )
            )
        complete = not any(f.kind == "infra" for f in findings)
    return Emitted(
        complete=complete,
        findings=tuple(findings),
        output=digest(*output_digest),
        files=tuple(sorted(str(p) for p in produced)),
    )


def infra_finding(
    path: str, message: str, trailmap: str | None = None, code: str = "typegate"
) -> Finding:
    """A check that could not run: never fatal, whatever its trailmap."""
    return Finding("infra", path, 1, 1, message, code=code, fatal=False, trailmap=trailmap)


# -- compiling --------------------------------------------------------------------------------


# Declaration files are not checked here either: zod's alone cost seconds. What could make a
# call pass unchecked (an import that does not resolve, an `any` input) the probes find.
SURFACE_OPTIONS = {**COMPILER_OPTIONS, "skipDefaultLibCheck": True}


@dataclass
class SurfaceCheck:
    """What the strict compile of the module surfaces found."""

    broken: dict[str, str] = field(default_factory=dict)
    """Trailmap -> why none of its trails can be checked."""
    unresolved: dict[str, dict[str, str]] = field(default_factory=dict)
    """Trailmap -> scripted tool -> why its input type is unresolved (calls to it go unchecked)."""


def _declaration_twins(layout: Layout, trailmaps: Iterable[str]) -> dict[Path, Path]:
    """Each tool declaration file again as a `.ts` file (twin -> declaration).

    Declaration files are not checked (zod's alone would cost seconds); their twins are, so a
    name or module a declaration cannot resolve, an error type anywhere in an input type, is
    reported. Twins of declarations that are gone are removed.
    """
    twins: dict[Path, Path] = {}
    for trailmap in trailmaps:
        source_dir = layout.tooldecl(trailmap)
        twin_dir = layout.tooldecl_check(trailmap)
        wanted: set[Path] = set()
        if source_dir.is_dir():
            for decl in sorted(source_dir.rglob("*.d.ts")):
                twin = twin_dir / decl.relative_to(source_dir).with_name(
                    decl.name.removesuffix(".d.ts") + ".ts"
                )
                write_scratch(twin, decl.read_bytes(), layout.scratch)
                wanted.add(twin)
                twins[twin] = decl
        if twin_dir.is_dir():
            for old in twin_dir.rglob("*.ts"):
                if old not in wanted:
                    old.unlink(missing_ok=True)
    return twins


def check_surfaces(
    surfaces: Mapping[str, Path],
    compiler: Compiler,
    layout: Layout,
    *,
    timeout: float,
    scripted: Mapping[str, Mapping[Path, tuple[str, ...]]] | None = None,
) -> SurfaceCheck:
    """Compile the probes of module surfaces and the twins of the tool declarations, at once.

    A probe diagnostic names a scripted tool whose input type accepts anything; a name or module
    a trailmap's tool declarations cannot resolve makes the tools they declare unresolved
    (`scripted` maps each trailmap's declaration files to their tools; a declaration of none,
    a helper, makes all of them unresolved). Any other diagnostic of a surface or its probes
    breaks that trailmap, one anywhere else (the SDK) breaks them all.
    """
    outcome = SurfaceCheck()
    if not surfaces:
        return outcome
    twins = _declaration_twins(layout, surfaces)
    try:
        diagnostics = compile_proven(
            [layout.probe(trailmap) for trailmap in surfaces] + sorted(twins),
            SURFACE_OPTIONS,
            compiler,
            layout.root,
            timeout=timeout,
            prefix="tsconfig.surfaces.",
        )
    except ProcError as exc:
        outcome.broken = dict.fromkeys(surfaces, f"the surfaces could not be compiled: {exc}")
        return outcome
    broken = outcome.broken
    owner = {_abs(path): trailmap for trailmap, path in surfaces.items()}
    owner |= {_abs(layout.probe(trailmap)): trailmap for trailmap in surfaces}
    twin_of = {_abs(twin): _abs(decl) for twin, decl in twins.items()}
    tooldecl = _abs(layout.root / "tooldecl")
    declared = {
        trailmap: {_abs(decl): tools for decl, tools in files.items()}
        for trailmap, files in (scripted or {}).items()
    }
    probe_lines: dict[Path, list[str]] = {}
    for diagnostic in diagnostics:
        where = _show(diagnostic, layout)
        trailmap = owner.get(diagnostic.file)
        probe = None
        if diagnostic.code == "TS2578" and trailmap is not None:
            # An unused directive of a probe: the marker is on the directive's own line.
            if diagnostic.file not in probe_lines:
                try:
                    probe_lines[diagnostic.file] = diagnostic.file.read_text("utf-8").splitlines()
                except OSError:
                    probe_lines[diagnostic.file] = []
            text = probe_lines[diagnostic.file]
            if 0 < diagnostic.line <= len(text):
                probe = _UNRESOLVED.search(text[diagnostic.line - 1])
        if trailmap is not None and probe is not None:
            why = "it accepts anything: `any`, `unknown` or a type that does not resolve"
            outcome.unresolved.setdefault(trailmap, {}).setdefault(probe.group(1), why)
            continue
        decl = twin_of.get(diagnostic.file)
        if decl is not None:
            if diagnostic.code not in UNRESOLVED_CODES:
                continue  # a twin is a copy: only what does not resolve is news
            trailmap = decl.relative_to(tooldecl).parts[0]
            files = declared.get(trailmap, {})
            tools = files.get(decl) or tuple(t for ts in files.values() for t in ts)
            for tool in tools:
                outcome.unresolved.setdefault(trailmap, {}).setdefault(tool, where)
            continue
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
    return outcome


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
    findings: dict[str, list[Finding]] = {job.path: list(job.lints) for job in jobs}
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
            line, column = gen.at(diagnostic.code)
            findings[job.path].append(
                Finding(
                    "type",
                    job.path,
                    line,
                    column,
                    diagnostic.message,
                    key_path=gen.key_path,
                    code=diagnostic.code,
                    step=gen.step,
                    classifier=gen.classifier,
                    tool=gen.tool,
                    trailmap=job.trailmap,
                    position=gen.position,
                    property=gen.property,
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
    wanted = {os.path.normpath(os.path.join(trails, generated_name(rel))) for rel in keep_trails}
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
