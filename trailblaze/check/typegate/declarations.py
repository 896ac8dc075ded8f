"""Declarations of the scripted `.ts` tools, emitted by tsc from each trailmap's `tools/`."""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from trailblaze.check.typegate.projects import (
    DECLARATION_ONLY,
    SOURCE_SUFFIXES,
    bytes_or_missing,
    exclusion_config,
    files_below,
    not_checked,
    not_installed,
    project_arguments,
    refused_options,
)
from trailblaze.check.typegate.proof import (
    DIAGNOSTIC,
    TSC_ERROR_EXITS,
    listed_files,
    parse_output,
)
from trailblaze.check.typegate.reads import ReadFiles
from trailblaze.check.typegate.settings import COMPILER_OPTIONS, infra_finding
from trailblaze.finding import Finding
from trailblaze.generate.artifacts import DTS_NAME, is_generated_tsconfig, render_tsconfig
from trailblaze.generate.sdk import (
    OURS_LABEL,
    SdkChoice,
    choose_sdk,
    file_lists,
    override_tsconfig,
    sdk_paths,
)
from trailblaze.state.keys import digest
from trailblaze.state.results import decode_findings
from trailblaze.state.scratch import Layout, make_dir, remove_scratch, write_scratch
from trailblaze.state.store import Kind, Store
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolchain.proc import ProcError, run
from trailblaze.toolmodel.tooldefs.modules import is_tool_module
from trailblaze.workspace import (
    dependency_manifests,
    missing_dependencies,
    nested_projects,
    outermost,
)
from trailblaze.yaml.text import YamlError, read_text


class Declarations(msgspec.Struct, frozen=True):
    """The scripted tools' declarations emitted for a trailmap, and what went wrong emitting them."""

    decls: dict[Path, Path]
    findings: tuple[Finding, ...]
    runs: int
    identity: str
    """A digest of every emitted declaration; part of the cache key of the trails using them."""
    projects: tuple[Path, ...] = ()
    """Where the nested projects' declarations are (below their trailmap's)."""


OURS = SdkChoice("ours", own=True, override=False, identity="")


def tool_sources(tools_dir: Path) -> list[Path]:
    """The authored sources of a `tools/` directory, its nested projects' included: what its
    tsconfigs compile, tests aside."""
    return [
        p
        for p in files_below(tools_dir, ())
        if p.suffix in (".ts", ".js", ".mts", ".cts", ".mjs", ".cjs")
        and not p.name.endswith((".d.ts", ".d.mts", ".d.cts"))
        and not _TEST_SOURCE.search(p.name)
    ]


_TEST_SOURCE = re.compile(r"\.(test|spec)\.[cm]?[jt]s$")


class Emitted(msgspec.Struct, frozen=True):
    """One trailmap's declaration emit: its findings, a digest of what it wrote, the files."""

    complete: bool
    """False when the emit could not run to the end: nothing of it is remembered."""
    findings: tuple[Finding, ...]
    output: str
    files: tuple[str, ...]
    listed: tuple[str, ...] = ()
    """Every file the emit read (`--listFiles`), this run only: a remembered emit's reads are
    among the ones its key covered."""
    started_ns: int = 0
    """When the emit began."""

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
        return cls(
            complete=True,
            findings=tuple(decode_findings(data["findings"])),
            output=data["output"],
            files=tuple(files),
        )


class EmitPlan(msgspec.Struct, frozen=True):
    """One trailmap's declaration emit, as planned: where its tools are and its output goes,
    its memo key, the memo's last complete emit under that key (None: emit again), its SDK."""

    trailmap: str
    tools_dir: Path
    out_dir: Path
    key: str
    remembered: Emitted | None
    choice: SdkChoice
    unread: tuple[tuple[Path, str], ...] = ()
    """Tool modules the tool reader refused (over 5 MiB, binary, not UTF-8), each with why:
    then none of the trailmap's tools is compiled."""
    sources: tuple[str, ...] = ()
    """The files its key holds the bytes of: reads too, where they are no input."""
    surface: Path | None = None
    """Our `trailblaze-client.d.ts` in the scratch directory, when the trailmap's `tools/` is
    not ours to write: compiled in place of whatever `tools/` holds under that name."""
    project: Path | None = None
    """A nested project (a directory below `tools/` with its own tsconfig): compiled with that
    tsconfig, from its own directory, not as a part of the trailmap's program."""
    missing: tuple[str, ...] = ()
    """The packages a nested project declares that are not installed: it is not compiled."""
    nested: tuple[Path, ...] = ()
    """The nested projects left out of this plan's program."""
    keep: tuple[Path, ...] = ()
    """Directories below `out_dir` that other plans write (the nested projects')."""
    memo: str = ""
    """The plan's name in the store (the trailmap's id when empty)."""
    empty: bool = False
    """Nothing to compile: every source of `tools/` belongs to a nested project."""

    @property
    def name(self) -> str:
        return self.memo or self.trailmap


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
    reads: ReadFiles | None = None,
    homes: Mapping[str, Path] | None = None,
) -> Declarations:
    """Declarations of every scripted `.ts` tool, emitted by tsc from each trailmap's `tools/`.

    This is also the type check of the authored tools: their errors are findings of kind
    `tool`, at the tool file. Each trailmap compiles against the SDK `choices` names for it
    (ours when absent). A trailmap whose tools, tsconfig, SDK and compiler did not change since
    the last emit (and whose declarations are as emitted) is not recompiled: `store` remembers
    each emit (`DECLARATIONS`), staged for its owner to commit. `reads` holds what the
    compilers of the last run read beyond the inputs: an emit is remembered only while they
    are as they were, and only when it read no other (`ReadFiles.observe`). `homes` names the
    trailmaps whose surface is in the scratch directory (`preparation.surface_homes`).
    """
    decls: dict[Path, Path] = {}
    findings: list[Finding] = []
    plans: list[EmitPlan] = []
    for trailmap, tools_dir in sorted(tools_dirs.items()):
        choice = (choices or {}).get(trailmap, OURS)
        out_dir = layout.tooldecl(trailmap)
        projects = nested_projects(tools_dir)
        top = tuple(outermost(projects))
        for project in projects:
            plans.append(
                _project_plan(
                    trailmap,
                    project,
                    tools_dir=tools_dir,
                    projects=projects,
                    out_dir=out_dir,
                    compiler=compiler,
                    reads=reads,
                    store=store,
                )
            )
        keep = tuple(out_dir / p.relative_to(tools_dir) for p in top)
        sources = [
            p
            for p in files_below(tools_dir, top)
            if p.suffix in SOURCE_SUFFIXES or p.name == "tsconfig.json"
        ]
        # The trailmap's plan before its key: as it stays when it compiles nothing.
        bare = EmitPlan(
            trailmap=trailmap,
            tools_dir=tools_dir,
            out_dir=out_dir,
            key="",
            remembered=None,
            choice=choice,
            keep=keep,
        )
        if top and not any(p.suffix in SOURCE_SUFFIXES for p in sources):
            plans.append(msgspec.structs.replace(bare, empty=True))
            continue
        unread = tuple((p, why) for p in sources if (why := _not_read(p)) is not None)
        if unread:
            # The tool reader reported these as not read: compiling them anyway would read
            # them after all (a file of gigabytes, into the key and the compiler).
            plans.append(msgspec.structs.replace(bare, unread=unread))
            continue
        home = (homes or {}).get(trailmap)
        surface = home / DTS_NAME if home is not None else None
        # The surface in `tools/` imports the nested projects' tools, and with them their
        # sources: those are inputs of this program too.
        pulled = [
            p
            for project in top
            for p in files_below(project, ())
            if p.suffix in SOURCE_SUFFIXES or p.name == "tsconfig.json"
        ]
        read = sorted([*sources, *pulled])
        key = digest(
            str(out_dir),  # the memo vouches for the files there
            compiler.identity,
            choice.identity,
            str(choice.override),
            *([reads.key] if reads is not None and reads.key else []),
            *(f"{p}\0{p.read_bytes().hex()}" for p in read),
            # Which projects are left out changes the program (absent: keys as before).
            *(f"nested\0{p}" for p in top),
            *([f"surface:{surface}\0{bytes_or_missing(surface)}"] if surface is not None else []),
        )
        remembered = store.get(DECLARATIONS, trailmap, key) if store is not None else None
        for source in sources:  # not the nested projects': theirs come from their own emits
            if source.name != "tsconfig.json":
                decls[source] = out_dir / _declaration_name(source.relative_to(tools_dir))
        plans.append(
            msgspec.structs.replace(
                bare,
                key=key,
                remembered=remembered,
                sources=tuple(str(p) for p in read),
                nested=top,
                surface=surface,
            )
        )

    # The tsconfig each trailmap's own program compiles with, written once (`_program_tsconfig`).
    programs: dict[int, Path] = {}

    def emit(index: int) -> Emitted:
        plan = plans[index]
        if plan.remembered is not None:
            return plan.remembered
        if plan.empty:
            return Emitted(complete=True, findings=(), output="", files=())
        if plan.unread:
            return _not_compiled(plan, rel, layout)
        if plan.project is not None and plan.missing:
            return _not_installed(plan, rel, layout)
        make_dir(plan.out_dir, layout.scratch)
        if plan.project is not None:
            tsconfig = plan.project / "tsconfig.json"
        else:
            tsconfig = programs.get(index) or _program_tsconfig(plan, layout)
        return _emit(
            plan, tsconfig=tsconfig, compiler=compiler, timeout=timeout, rel=rel, layout=layout
        )

    runs = sum(1 for plan in plans if plan.remembered is None)
    # The trailmaps' programs in one build (`_emit_together`) where the compiler can; what it
    # leaves, and every other plan, in a compiler process of its own. Each of those mostly
    # waits on its own start-up: a few at once keep both cores busy.
    together: dict[int, Emitted] = {}
    with ThreadPoolExecutor(4) as pool:
        batch = {}
        if compiler.native:
            for index, plan in enumerate(plans):
                if _plain(plan):
                    make_dir(plan.out_dir, layout.scratch)
                    tsconfig = programs[index] = _program_tsconfig(plan, layout)
                    if _extendable(tsconfig):
                        batch[index] = (plan, tsconfig)
        if len(batch) < TOGETHER_MIN:
            batch = {}
        built = (
            pool.submit(
                _emit_together, batch, compiler=compiler, timeout=timeout, rel=rel, layout=layout
            )
            if batch
            else None
        )
        alone = {
            index: pool.submit(emit, index) for index in range(len(plans)) if index not in batch
        }
        if built is not None:
            together = built.result()
            for index in batch.keys() - together.keys():
                alone[index] = pool.submit(emit, index)
        states = [
            together[index] if index in together else alone[index].result()
            for index in range(len(plans))
        ]
    identity_parts: list[str] = []
    for plan, state in zip(plans, states, strict=True):
        covered = True
        if reads is not None:
            if plan.remembered is not None:
                reads.reused = True
            else:
                covered = reads.observe([*state.listed, *plan.sources], state.started_ns)
        if store is not None and plan.remembered is None and not plan.empty:
            if state.complete and covered:
                store.put(DECLARATIONS, plan.name, state, key=plan.key, files=state.files)
            else:
                store.drop(DECLARATIONS, plan.name)
        if plan.project is not None:
            decls.update(_project_declarations(plan, state))
        findings.extend(state.findings)
        identity_parts.append(state.output)
    return Declarations(
        decls=decls,
        findings=tuple(findings),
        runs=runs,
        identity=digest(*identity_parts),
        projects=tuple(plan.out_dir for plan in plans if plan.project is not None),
    )


def surface_tsconfig(tools_dir: Path, surface: Path, choice: SdkChoice, layout: Layout) -> str:
    """The tsconfig a trailmap's tools compile with when our surface is `surface`, in the
    scratch directory: what they would compile with beside it in `tools/`, with that surface
    in place of `tools/trailblaze-client.d.ts` (another generator's, or a hand-written one,
    which the program must not read: its augmentations would clash with ours).

    A hand-written `tools/tsconfig.json` is extended, its `include`, `exclude` and `files`
    made absolute; any other (Trailblaze's, ours, none) is the one we generate."""
    user = tools_dir / "tsconfig.json"
    try:
        hand = not is_generated_tsconfig(user.read_text("utf-8"))
        lists = file_lists(user) if hand else None
    except (OSError, UnicodeDecodeError, ValueError):
        lists = None
    config: dict[str, Any]
    if lists is not None:
        include, exclude, files = lists
        config = {"extends": user.absolute().as_posix(), "compilerOptions": {}}
        if choice.override:
            config["compilerOptions"]["paths"] = sdk_paths(layout.own_sdk_dir)
    else:
        # Exactly the one `tools/` would have had from us, its paths made absolute.
        ours = json.loads(render_tsconfig(tools_dir, layout.sdk_dir).split("\n", 1)[1])
        sdk = layout.own_sdk_dir if choice.override else layout.sdk_dir
        config = {"compilerOptions": {**ours["compilerOptions"], "paths": sdk_paths(sdk)}}
        base = tools_dir.absolute()
        include = [(base / pattern).as_posix() for pattern in ours["include"]]
        exclude = [(base / pattern).as_posix() for pattern in ours["exclude"]]
        files = []
    config["include"] = include
    config["exclude"] = [*exclude, (tools_dir / DTS_NAME).absolute().as_posix()]
    config["files"] = [*files, surface.absolute().as_posix()]
    return json.dumps(config, indent=2) + "\n"


def _fallback_tsconfig(tools_dir: Path) -> dict[str, Any]:
    """The tsconfig we generate for a `tools/`, with absolute paths (for a scratch directory)."""
    base = tools_dir.absolute().as_posix()
    options = {k: v for k, v in COMPILER_OPTIONS.items() if k not in ("paths", "types")}
    return {
        "compilerOptions": {**options, "allowJs": True, "checkJs": False, "skipLibCheck": True},
        "include": [f"{base}/**/*.ts", f"{base}/**/*.js"],
        "exclude": [f"{base}/**/*.test.ts"],
    }


def _program_tsconfig(plan: EmitPlan, layout: Layout) -> Path:
    """The tsconfig a trailmap's own program (not a nested project's) compiles with: its
    `tools/tsconfig.json`, or the one we write for it in the scratch directory."""
    tsconfig = plan.tools_dir / "tsconfig.json"
    if plan.surface is not None:
        tsconfig = layout.tools_tsconfig(plan.trailmap)
        write_scratch(
            tsconfig,
            surface_tsconfig(plan.tools_dir, plan.surface, plan.choice, layout),
            layout.scratch,
        )
    elif plan.choice.override:
        tsconfig = layout.tools_tsconfig(plan.trailmap)
        write_scratch(
            tsconfig,
            override_tsconfig(
                plan.tools_dir / "tsconfig.json",
                layout.own_sdk_dir,
                _fallback_tsconfig(plan.tools_dir),
            ),
            layout.scratch,
        )
    if plan.nested:
        tsconfig = _without_nested(plan, tsconfig, layout)
    return tsconfig


def _emit(
    plan: EmitPlan,
    *,
    tsconfig: Path,
    compiler: Compiler,
    timeout: float,
    rel: Callable[[Path], str],
    layout: Layout,
) -> Emitted:
    """One plan's emit in a compiler process of its own."""
    tools_dir = plan.tools_dir
    # Beside the trailmaps' output directories, never inside one: a nested project's output is
    # below its trailmap's, whose emit (running at the same time) removes what it did not write.
    beside = layout.tooldecl_dir
    with tempfile.TemporaryDirectory(
        prefix="tooldecl-", dir=beside if beside.is_dir() else None
    ) as tmp:
        argv = [
            *compiler.argv_prefix,
            "-p",
            str(tsconfig),
            *_emit_arguments(tmp),
            "--pretty",
            "false",
            "--listFiles",
        ]
        if plan.project is None:
            argv += ["--rootDir", str(tools_dir)]
        else:
            argv += project_arguments(plan.project)
        started = time.time_ns()
        try:
            result = run(argv, cwd=tools_dir, timeout=timeout, env=compiler.one_shot_env())
        except ProcError as exc:
            return _not_emitted(plan, str(exc), rel)
        return _take(
            plan,
            Path(tmp),
            output=result.stdout + result.stderr,
            listing=result.stdout,
            returncode=result.returncode,
            cwd=tools_dir,
            started=started,
            rel=rel,
            layout=layout,
        )


def _emit_options(out: str) -> dict[str, bool | str]:
    """The options an emit adds to a tsconfig, its declarations going to `out`: on the
    command line of a compile of its own (`_emit_arguments`), in the projects of a build."""
    return {
        "noEmit": False,
        # Declarations of a tool with a type error are still what its callers are checked
        # against (and probed): without them every trail of the trailmap would go unchecked.
        "noEmitOnError": False,
        "declaration": True,
        "emitDeclarationOnly": True,
        "outDir": out,
        # A tsconfig's own `declarationDir` would send them into the workspace instead.
        "declarationDir": out,
    }


def _emit_arguments(out: str) -> list[str]:
    """`_emit_options` as compiler arguments."""
    argv: list[str] = []
    for name, value in _emit_options(out).items():
        argv.append(f"--{name}")
        if value is not True:
            argv.append("false" if value is False else str(value))
    return argv


def _not_emitted(plan: EmitPlan, why: str, rel: Callable[[Path], str]) -> Emitted:
    failed = infra_finding(
        rel(plan.tools_dir / "tsconfig.json"),
        f"declarations of scripted tools could not be emitted: {why}",
        plan.trailmap,
    )
    return Emitted(complete=False, findings=(failed,), output="", files=())


def _take(
    plan: EmitPlan,
    emitted_dir: Path,
    *,
    output: str,
    listing: str,
    returncode: int,
    cwd: Path,
    started: int,
    rel: Callable[[Path], str],
    layout: Layout,
) -> Emitted:
    """What one plan's compile said (`output`, its file names relative to `cwd`; `listing`,
    where `--listFiles` printed) and wrote (into `emitted_dir`): its findings, its declarations
    moved into the plan's output directory, the stale ones there removed."""
    tools_dir, out_dir, trailmap = plan.tools_dir, plan.out_dir, plan.trailmap
    shown = tools_dir / "tsconfig.json"
    findings: list[Finding] = []
    diagnostics = diagnostics_all = parse_output(output, cwd)
    # A nested project's file the surface pulled in: its own compile reports it.
    diagnostics = [d for d in diagnostics if not _kept(d.file, plan.nested)]
    if plan.project is not None:
        refused = refused_options(diagnostics)
        if refused is not None:
            _forget_declarations(plan, layout)
            return Emitted(
                complete=False,
                findings=(not_checked(plan.project, refused, plan.trailmap, rel),),
                output="",
                files=(),
            )
        diagnostics = [d for d in diagnostics if not DECLARATION_ONLY.match(d.code or "")]
    for diagnostic in diagnostics:
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
        p for p in emitted_dir.rglob("*") if p.name.endswith((".d.ts", ".d.mts", ".d.cts"))
    ):
        target = out_dir / emitted.relative_to(emitted_dir)
        if plan.project is not None:
            # Emitted from the file system's root: by the source's own path.
            source = Path(plan.project.anchor) / emitted.relative_to(emitted_dir)
            if not source.is_relative_to(plan.project):
                continue  # a file its tsconfig includes from elsewhere: not a tool of it
            target = out_dir / source.relative_to(plan.project)
        elif _kept(target, plan.keep):
            continue  # a nested project's: its own emit writes it
        data = emitted.read_bytes()
        write_scratch(target, data, layout.scratch)
        produced.add(target)
        # By the path inside the trailmap's output, not the absolute one: the digest is part of
        # the remote cache's keys, which must not depend on where the workspace is.
        output_digest.append(
            digest(f"{trailmap}/{emitted.relative_to(emitted_dir).as_posix()}", data)
        )
    # A declaration this emit did not produce is stale: it must not keep a surface compiling.
    if out_dir.is_dir():
        for old in out_dir.rglob("*.d.*ts"):
            if old not in produced and not _kept(old, plan.keep):
                remove_scratch(old, layout.scratch)
    listed = listed_files(listing)
    if returncode != 0 and not diagnostics_all:
        said = "\n".join(
            line for line in output.splitlines() if os.path.normpath(line) not in listed
        )
        findings.append(
            infra_finding(
                rel(shown),
                f"tsc exited {returncode} emitting scripted tool declarations: {said.strip()[:500]}",
                trailmap,
            )
        )
    complete = not any(f.kind == "infra" for f in findings)
    return Emitted(
        complete=complete,
        findings=tuple(findings),
        output=digest(*output_digest),
        files=tuple(sorted(str(p) for p in produced)),
        listed=tuple(listed),
        started_ns=started,
    )


TOGETHER_MIN = 2
"""The fewest trailmap programs worth one build (`_emit_together`) rather than a process each."""


def _plain(plan: EmitPlan) -> bool:
    """A trailmap's own program to compile now, with nothing left out of it: one
    `_emit_together` can take (a nested project compiles from its own directory, with its own
    arguments; a program that leaves nested projects out filters what they pull in)."""
    return (
        plan.remembered is None
        and plan.project is None
        and not (plan.empty or plan.unread or plan.nested)
    )


def _extendable(tsconfig: Path) -> bool:
    """Whether a project that only extends `tsconfig` compiles the same program as `-p
    tsconfig`: not when it extends another (whose `${configDir}` would name the extending
    file's directory), names its references (not inherited) or `${configDir}` itself."""
    try:
        text = tsconfig.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return not any(word in text for word in ('"extends"', '"references"', "${configDir}"))


_BUILDING = re.compile(r"^[^'(]* - Building project '(.+)'\.\.\.$")
"""`tsc -b --verbose`: where the output of one project's build begins."""
_BUILD_NOTE = re.compile(r"^[^\s'(][^'(]* - (Projects in this build|Project '|Building project ')")
"""`tsc -b --verbose`: a note of the build itself, between two projects' outputs."""
_BUILD_ONLY = re.compile(r"TS[56]\d{3}$")
"""Diagnostics about options, projects and their files (TS5xxx, TS6xxx): the build's composite
projects may draw some a plain compile would not, so such a project is compiled alone."""


def _emit_together(
    batch: Mapping[int, tuple[EmitPlan, Path]],
    *,
    compiler: Compiler,
    timeout: float,
    rel: Callable[[Path], str],
    layout: Layout,
) -> dict[int, Emitted]:
    """The emits of several trailmaps' programs in one compiler process, by index in `batch`.

    Each plan's program becomes a composite project that extends its tsconfig with the emit's
    options (the same program as `-p tsconfig` with them on the command line: `_extendable`),
    and one `tsc -b --verbose` builds them all: a start-up instead of one per trailmap, and the
    default libraries and the SDK read once. The output is split by the build's notes into each
    project's. A plan the build cannot vouch for (no output of its own, a line that is neither
    a diagnostic nor a listed file, a diagnostic about options or projects) is left out of the
    result, and the whole batch when the process failed or said what no project owns: those
    are compiled alone (`_emit`), as they would have been."""
    beside = layout.tooldecl_dir
    with tempfile.TemporaryDirectory(
        prefix="tooldecl-", dir=beside if beside.is_dir() else None
    ) as tmp:
        names: dict[str, int] = {}
        for index, (plan, tsconfig) in batch.items():
            name = f"p{index}"
            names[f"{name}.json"] = index
            project = {
                "extends": str(tsconfig.absolute()),
                "compilerOptions": {
                    "composite": True,
                    **_emit_options(os.path.join(tmp, name)),
                    "rootDir": str(plan.tools_dir),
                    "tsBuildInfoFile": os.path.join(tmp, f"{name}.tsbuildinfo"),
                    "listFiles": True,
                },
            }
            Path(tmp, f"{name}.json").write_text(json.dumps(project), "utf-8")
        solution = Path(tmp, "build.json")
        references = [{"path": os.path.join(tmp, name)} for name in names]
        solution.write_text(json.dumps({"files": [], "references": references}), "utf-8")
        argv = [*compiler.argv_prefix, "-b", str(solution), "--verbose", "--pretty", "false"]
        started = time.time_ns()
        try:
            # From the root: every file name it prints is the absolute one, less its first `/`.
            result = run(argv, cwd="/", timeout=timeout, env=compiler.one_shot_env())
        except ProcError:
            return {}
        sections = _build_sections(result.stdout + result.stderr, names)
        if sections is None or result.returncode not in {0, *TSC_ERROR_EXITS}:
            return {}
        diagnosed = any(parse_output("\n".join(lines), Path("/")) for lines in sections.values())
        if result.returncode != 0 and not diagnosed:
            return {}
        found: dict[int, Emitted] = {}
        for index, lines in sections.items():
            if not _all_owned(lines):
                continue
            text = "\n".join(lines)
            if any(_BUILD_ONLY.match(d.code or "") for d in parse_output(text, Path("/"))):
                continue
            plan = batch[index][0]
            found[index] = _take(
                plan,
                Path(tmp, f"p{index}"),
                output=text,
                listing=text,
                returncode=0,
                cwd=Path("/"),
                started=started,
                rel=rel,
                layout=layout,
            )
        return found


def _build_sections(output: str, names: Mapping[str, int]) -> dict[int, list[str]] | None:
    """`tsc -b --verbose` output split into each project's lines (by index in `names`, the
    projects' file names), or None when a line is no project's and no note of the build."""
    sections: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        # A listed file is a project's, whatever its name says.
        building = None if os.path.isabs(line) else _BUILDING.match(line)
        if building is not None:
            index = names.get(os.path.basename(building.group(1)))
            if index is None or index in sections:
                return None
            current = sections[index] = []
        elif not os.path.isabs(line) and _BUILD_NOTE.match(line):
            current = None
        elif current is not None:
            current.append(line)
        elif line.strip() and not line.startswith("    * "):
            return None
    return sections


def _all_owned(lines: list[str]) -> bool:
    """Whether every line of a project's output is a diagnostic (or a continuation of one), a
    file `--listFiles` printed, or empty."""
    continues = False
    for line in lines:
        if DIAGNOSTIC.match(line):
            continues = True
        elif line.startswith("  ") and line.strip() and continues:
            pass
        elif os.path.isabs(line) or not line.strip():
            continues = False
        else:
            return False
    return True


def _not_read(source: Path) -> str | None:
    """Why the tool reader (`toolmodel.tooldefs`) refuses a tool module, or None: the same
    refusal, so that a file reported as not read is never compiled either."""
    if not is_tool_module(source.name):
        return None
    try:
        read_text(source)
    except YamlError as exc:
        return exc.message
    return None


def _not_compiled(plan: EmitPlan, rel: Callable[[Path], str], layout: Layout) -> Emitted:
    """A trailmap whose tools are not compiled: why, at each module that was not read. The
    declarations of an earlier emit go, so that no surface is checked against them."""
    _forget_declarations(plan, layout)
    findings = tuple(
        infra_finding(
            rel(path),
            f"not compiled: {why}; the scripted tools of trailmap '{plan.trailmap}' are not "
            "type-checked",
            plan.trailmap,
        )
        for path, why in plan.unread
    )
    return Emitted(complete=False, findings=findings, output="", files=())


def _kept(path: Path, keep: tuple[Path, ...]) -> bool:
    return any(path.is_relative_to(d) for d in keep)


def _forget_declarations(plan: EmitPlan, layout: Layout) -> None:
    """Remove what an earlier emit of the plan wrote, so that no surface is checked against it."""
    if plan.out_dir.is_dir():
        for old in plan.out_dir.rglob("*.d.*ts"):
            if not _kept(old, plan.keep):
                remove_scratch(old, layout.scratch)


def _project_plan(
    trailmap: str,
    project: Path,
    *,
    tools_dir: Path,
    projects: list[Path],
    out_dir: Path,
    compiler: Compiler,
    reads: ReadFiles | None,
    store: Store | None,
) -> EmitPlan:
    """The emit of one nested project: its own sources (not those of projects inside it), its
    declarations where the trailmap's program would have put them."""
    inner = tuple(q for q in projects if q != project and q.is_relative_to(project))
    sources = [
        p
        for p in files_below(project, inner)
        if p.suffix in SOURCE_SUFFIXES or p.name in ("tsconfig.json", "package.json")
    ]
    rel_dir = project.relative_to(tools_dir)
    plan = EmitPlan(
        trailmap=trailmap,
        tools_dir=project,
        out_dir=out_dir / rel_dir,
        key="",
        remembered=None,
        choice=OURS,
        sources=tuple(str(p) for p in sources),
        project=project,
        keep=tuple(out_dir / q.relative_to(tools_dir) for q in inner),
        memo=f"{trailmap}/{rel_dir.as_posix()}",
    )
    unread = tuple((p, why) for p in sources if (why := _not_read(p)) is not None)
    if unread:
        return msgspec.structs.replace(plan, unread=unread, sources=())
    missing = tuple(missing_dependencies(project))
    if missing:
        return msgspec.structs.replace(plan, missing=missing)
    key = digest(
        "nested-project",
        str(plan.out_dir),
        compiler.identity,
        *([reads.key] if reads is not None and reads.key else []),
        *(f"{p}\0{p.read_bytes().hex()}" for p in sources),
        # The installed versions of what it declares: an `npm install` is a new verdict.
        *(f"{m}\0{bytes_or_missing(m)}" for m in dependency_manifests(project)),
    )
    remembered = store.get(DECLARATIONS, plan.memo, key) if store is not None else None
    return msgspec.structs.replace(plan, key=key, remembered=remembered)


def _not_installed(plan: EmitPlan, rel: Callable[[Path], str], layout: Layout) -> Emitted:
    """A nested project whose dependencies are not installed: not compiled, one finding that
    says what to run. Never fatal: installing them is the user's to do, not ours."""
    assert plan.project is not None
    _forget_declarations(plan, layout)
    finding = not_installed(plan.project, plan.missing, plan.trailmap, rel)
    return Emitted(complete=False, findings=(finding,), output="", files=())


def _project_declarations(plan: EmitPlan, state: Emitted) -> dict[Path, Path]:
    """Each module source of a nested project with the declaration file its emit wrote (at
    the source's path inside the project, below the plan's `out_dir`)."""
    produced = set(state.files)
    found: dict[Path, Path] = {}
    for name in plan.sources:
        source = Path(name)
        if plan.project is None or not is_tool_module(source.name):
            continue
        decl = plan.out_dir / _declaration_name(source.relative_to(plan.project))
        if str(decl) in produced:
            found[source] = decl
    return found


def _without_nested(plan: EmitPlan, tsconfig: Path, layout: Layout) -> Path:
    """A tsconfig extending `tsconfig` that leaves the nested projects out of the program, or
    `tsconfig` itself when that cannot be said (`projects.exclusion_config`)."""
    config = exclusion_config(tsconfig, plan.tools_dir, plan.nested)
    if config is None:
        return tsconfig
    target = layout.tools_tsconfig(plan.trailmap).with_suffix(".projects.json")
    write_scratch(target, json.dumps(config, indent=2) + "\n", layout.scratch)
    return target


def _declaration_name(source: Path) -> Path:
    """Where tsc writes the declarations of a source: x.ts -> x.d.ts, x.mts -> x.d.mts, ..."""
    suffix = {".mts": ".d.mts", ".cts": ".d.cts", ".mjs": ".d.mts", ".cjs": ".d.cts"}.get(
        source.suffix, ".d.ts"
    )
    return source.with_name(source.name[: -len(source.suffix)] + suffix)


def tools_root(module: Path) -> Path:
    """The `tools/` directory a scripted tool module lives in (the trailmap is its parent)."""
    for parent in module.parents:
        if parent.name == "tools":
            return parent
    return module.parent


def sdk_choices(
    tools_dirs: Mapping[str, Path], *, layout: Layout, root: Path, ours: str
) -> dict[str, SdkChoice]:
    """The SDK each trailmap's tools compile against (`sdk.choose_sdk`); `ours` is the
    identity of our own declarations."""
    choices: dict[str, SdkChoice] = {}
    for trailmap, tools in tools_dirs.items():
        try:
            generated = is_generated_tsconfig((tools / "tsconfig.json").read_text("utf-8"))
        except (OSError, UnicodeDecodeError):
            # No tsconfig (its manifest did not load, so none was generated): the tools
            # compile with the one we would have generated, from the scratch directory.
            choices[trailmap] = SdkChoice(OURS_LABEL, own=True, override=True, identity=ours)
            continue
        choices[trailmap] = choose_sdk(
            tools, layout.sdk_dir, root, ours, generated_tsconfig=generated
        )
    return choices
