"""The strict compile of the module surfaces, their probes and the tool declarations."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from trailblaze import codes
from trailblaze.check.typegate.declarations import Declarations, tools_root
from trailblaze.check.typegate.mapping import show as _show
from trailblaze.check.typegate.proof import abs_path as _abs
from trailblaze.check.typegate.proof import compile_listed
from trailblaze.check.typegate.reads import ReadFiles
from trailblaze.check.typegate.settings import (
    PROBE_MARK_PATTERN,
    PROBE_REASONS,
    SURFACE_OPTIONS,
    UNRESOLVED_CODES,
    UNRESOLVED_MARK,
)
from trailblaze.finding import Finding
from trailblaze.state.keys import digest
from trailblaze.state.scratch import Layout, remove_scratch, write_scratch
from trailblaze.state.store import Kind, Store
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolchain.proc import ProcError
from trailblaze.toolmodel.records import Resolution
from trailblaze.toolmodel.tooldefs import RelPath

SURFACES_CHECKED: Kind[bool] = Kind("surface-checked", bool)
"""Per trailmap: its module surface compiled clean, keyed by the surface and the compiler."""


class SurfaceCheck(msgspec.Struct):
    """What the strict compile of the module surfaces found."""

    broken: dict[str, str] = msgspec.field(default_factory=dict)
    """Trailmap -> why none of its trails can be checked."""
    unresolved: dict[str, dict[str, str]] = msgspec.field(default_factory=dict)
    """Trailmap -> scripted tool -> why its input type is unresolved (calls to it go unchecked)."""
    listed: list[str] = msgspec.field(default_factory=list)
    """Every file the compile read (`--listFiles`); none when it did not run."""
    started_ns: int = 0


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
                    remove_scratch(old, layout.scratch)
    return twins


def check_surfaces(
    surfaces: Mapping[str, Path],
    compiler: Compiler,
    layout: Layout,
    *,
    timeout: float,
    scripted: Mapping[str, Mapping[Path, tuple[str, ...]]] | None = None,
    projects: Iterable[Path] = (),
) -> SurfaceCheck:
    """Compile the probes of module surfaces and the twins of the tool declarations, at once.

    A probe diagnostic names a scripted tool whose input type accepts anything; a name or module
    a trailmap's tool declarations cannot resolve makes the tools they declare unresolved
    (`scripted` maps each trailmap's declaration files to their tools; a declaration of none,
    a helper, makes all of them unresolved, or those of its nested project when it is in one of
    `projects`, the directories of the nested projects' declarations). Any other diagnostic of a surface or its probes
    breaks that trailmap, one anywhere else (the SDK) breaks them all.
    """
    outcome = SurfaceCheck()
    if not surfaces:
        return outcome
    twins = _declaration_twins(layout, surfaces)
    try:
        compiled = compile_listed(
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
    diagnostics = compiled.diagnostics
    outcome.listed, outcome.started_ns = compiled.listed, compiled.started_ns
    broken = outcome.broken
    owner = {_abs(path): trailmap for trailmap, path in surfaces.items()}
    owner |= {_abs(layout.probe(trailmap)): trailmap for trailmap in surfaces}
    twin_of = {_abs(twin): _abs(decl) for twin, decl in twins.items()}
    tooldecl = _abs(layout.tooldecl_dir)
    # The trailmap whose declarations a directory of `tooldecl/` holds, by its scratch name.
    decl_owner = {
        layout.tooldecl(trailmap).name: trailmap for trailmap in {*surfaces, *(scripted or {})}
    }
    declared = {
        trailmap: {_abs(decl): tools for decl, tools in files.items()}
        for trailmap, files in (scripted or {}).items()
    }
    nested = sorted((_abs(p) for p in projects), key=lambda p: -len(p.parts))
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
                probe = PROBE_MARK_PATTERN.search(text[diagnostic.line - 1])
        if trailmap is not None and probe is not None:
            mark, tool = probe.group(1), probe.group(2)
            reasons = outcome.unresolved.setdefault(trailmap, {})
            if mark == UNRESOLVED_MARK or tool not in reasons:  # `any` fails both: say so
                reasons[tool] = PROBE_REASONS[mark]
            continue
        decl = twin_of.get(diagnostic.file)
        if decl is not None:
            if diagnostic.code not in UNRESOLVED_CODES:
                continue  # a twin is a copy: only what does not resolve is news
            trailmap = decl_owner.get(decl.relative_to(tooldecl).parts[0], "")
            files = declared.get(trailmap, {})
            group = _project_of(decl, nested)
            tools = files.get(decl) or tuple(
                t for d, ts in files.items() if _project_of(d, nested) == group for t in ts
            )
            for tool in tools:
                outcome.unresolved.setdefault(trailmap, {}).setdefault(tool, where)
            continue
        if trailmap is None and diagnostic.file.is_relative_to(tooldecl):
            trailmap = decl_owner.get(diagnostic.file.relative_to(tooldecl).parts[0])
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


def _project_of(decl: Path, nested: list[Path]) -> Path | None:
    """The nested project a declaration is of (the innermost), None for the trailmap's own."""
    return next((p for p in nested if decl.is_relative_to(p)), None)


def surface_verdicts(
    targets: Mapping[str, Resolution],
    *,
    surface_keys: Mapping[str, str],
    base_key: str,
    decls: Declarations,
    compiler: Compiler,
    layout: Layout,
    timeout: float,
    store: Store,
    rel: RelPath,
    reads: ReadFiles,
) -> SurfaceCheck:
    """Which targets cannot be checked at all, and which of their scripted tools not: the
    module surfaces that changed since their last clean check compiled (`check_surfaces`),
    and the tools whose own sources fail to resolve a name or module.

    Only a surface with nothing broken and nothing unresolved is remembered as clean
    (`SURFACES_CHECKED`): one with unresolved tools is checked again on every run, so its
    reasons stay known. The memo's key holds the reads the last run recorded (`reads.key`),
    and none is recorded by a compile that read others (`ReadFiles.observe`).
    """
    known = [reads.key] if reads.key else []
    wanted = {t: digest(base_key, key, *known) for t, key in surface_keys.items()}
    todo = {
        t: layout.surface(t)
        for t, key in wanted.items()
        if not store.fresh(SURFACES_CHECKED, t, key)
    }
    scripted: dict[str, dict[Path, tuple[str, ...]]] = {}
    for trailmap in todo:
        files: dict[Path, list[str]] = {}
        for entry in targets[trailmap].entries:
            if entry.module is not None and entry.input_schema is None:
                decl = decls.decls.get(entry.module)
                if decl is not None:
                    files.setdefault(decl, []).append(entry.name)
        scripted[trailmap] = {decl: tuple(tools) for decl, tools in files.items()}
    outcome = check_surfaces(
        todo, compiler, layout, timeout=timeout, scripted=scripted, projects=decls.projects
    )
    if len(todo) < len(wanted):
        reads.reused = True
    covered = reads.observe(outcome.listed, outcome.started_ns) if outcome.listed else True
    for trailmap in todo:
        if trailmap in outcome.broken or trailmap in outcome.unresolved or not covered:
            store.drop(SURFACES_CHECKED, trailmap)
        else:
            store.put(SURFACES_CHECKED, trailmap, True, key=wanted[trailmap])
    # Say why in the words of the tool's own source when it has a finding there.
    first_finding: dict[str, Finding] = {}
    # A nested project that was not compiled says so for all of its tools.
    not_compiled: dict[str, Finding] = {}
    for finding in decls.findings:
        first_finding.setdefault(finding.path, finding)
        if finding.code in (codes.NESTED_NOT_INSTALLED, codes.NESTED_NOT_CHECKED):
            not_compiled[finding.path.rpartition("/")[0] + "/"] = finding
    for trailmap, tools in outcome.unresolved.items():
        for tool, reason in tools.items():
            owner = targets[trailmap].entry(tool)
            source = owner.module if owner is not None else None
            found = first_finding.get(rel(source)) if source else None
            if source and found is None:
                shown = rel(source)
                found = next((f for d, f in not_compiled.items() if shown.startswith(d)), None)
            if found is not None:
                tools[tool] = f"{found.text} [{found.code}]" if found.code else found.text
            elif reason.startswith("typegate/"):
                tools[tool] = f"its declarations do not resolve: {reason}"
    for trailmap, tools in _unresolved_by_findings(targets, decls.findings, rel).items():
        for tool, text in tools.items():
            outcome.unresolved.setdefault(trailmap, {}).setdefault(tool, text)
    return outcome


def _unresolved_by_findings(
    targets: Mapping[str, Resolution], tool_findings: Iterable[Finding], rel: RelPath
) -> dict[str, dict[str, str]]:
    """Scripted tools whose sources fail to resolve a name or module: their declared input
    types may hold error types anywhere, which no probe can see, so calls go unchecked."""
    failing: dict[str, Finding] = {}
    for finding in tool_findings:
        if finding.kind == "tool" and finding.code in UNRESOLVED_CODES:
            failing.setdefault(finding.path, finding)
    found_reasons: dict[str, dict[str, str]] = {}
    if not failing:
        return found_reasons
    for trailmap, resolution in targets.items():
        scripted = [
            e for e in resolution.entries if e.module is not None and e.input_schema is None
        ]
        for entry in scripted:
            assert entry.module is not None
            found = failing.get(rel(entry.module))
            if found is None:
                # A failing helper module beside it (not itself a tool) may be what it imports.
                tools = rel(tools_root(entry.module)) + "/"
                modules = {rel(e.module) for e in scripted if e.module is not None}
                found = next(
                    (
                        f
                        for path, f in sorted(failing.items())
                        if path.startswith(tools) and path not in modules
                    ),
                    None,
                )
            if found is not None:
                text = f"{found.text} [{found.code}]" if found.code else found.text
                found_reasons.setdefault(trailmap, {}).setdefault(entry.name, text)
    return found_reasons
