"""What the type gate needs before its first batch: the compiler, the scripted tools'
declarations, every target's module surface and key, and the surface check's verdicts.

Made once per run, when the first trail is offered (or at the end, when authored tools are
compiled without any trail): a workspace without recordings never installs or starts a compiler.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from trailblaze import __version__
from trailblaze.check.context import CheckContext
from trailblaze.check.surfaces import surface_home
from trailblaze.check.typegate.declarations import (
    Declarations,
    emit_declarations,
    sdk_choices,
    tool_sources,
    tools_root,
)
from trailblaze.check.typegate.reads import ReadFiles
from trailblaze.check.typegate.settings import COMPILER_OPTIONS
from trailblaze.check.typegate.surfacecheck import surface_verdicts
from trailblaze.check.typegate.surfaces import write_module_surfaces
from trailblaze.generate.codegen import GENERATOR_VERSION
from trailblaze.generate.sdk import OURS_LABEL, render_sdk
from trailblaze.options import CheckOptions
from trailblaze.state.keys import digest
from trailblaze.state.reads import recorded_paths
from trailblaze.state.results import options_digest
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import (
    LIBRARIES,
    TSC_ENV,
    Compiler,
    ToolchainError,
    find_compiler,
    install_library,
    toolchain_dir,
)
from trailblaze.toolmodel.records import Resolution
from trailblaze.toolmodel.tooldefs import RelPath
from trailblaze.workspace import tool_files


class Prepared(msgspec.Struct, frozen=True):
    """Everything the checks of single trails share."""

    compiler: Compiler
    declarations: Declarations
    sdks: dict[str, str]
    """Trailmap -> the SDK its scripted tools were compiled against (for the report)."""
    surface_keys: dict[str, str]
    """Target -> the key of its module surface and of every file the compiles read beyond
    the inputs (`ReadFiles.seal`): part of its trails' result keys."""
    options: str
    """A digest of what the generated modules are compiled with (generator, options, SDK)."""
    compiler_key: str
    """The compiler's version and size: the same build on another machine, the same keys."""
    base_key: str
    """The compiler's local identity, the options and our SDK with its zod install."""
    broken: dict[str, str]
    """Target -> why none of its trails can be checked."""
    unresolved: dict[str, dict[str, str]]
    """Target -> scripted tool -> why its input type is unresolved (calls go unchecked)."""
    reads: ReadFiles
    """What the compiles read beyond the inputs, and whether the keys covered it."""


class NoCompiler(msgspec.Struct, frozen=True):
    """The toolchain could not be found or installed: nothing is compiled this run."""

    error: str
    """One line: npm's own lines joined, so that every format shows all of it."""
    tools: tuple[str, ...]
    """The trailmaps whose scripted tools are not compiled for that reason."""


def tools_dirs(
    trailmap_dirs: Mapping[str, Path], targets: Mapping[str, Resolution]
) -> dict[str, Path]:
    """Every `tools/` to compile: each workspace trailmap's with authored sources (targeted by
    a trail or not, as the reference compiles them), and those that define a module tool of
    some surface."""
    found: dict[str, Path] = {}
    for trailmap, directory in sorted(trailmap_dirs.items()):
        if tool_sources(directory / "tools"):
            found[trailmap] = directory / "tools"
    for resolution in targets.values():
        for entry in resolution.entries:
            if entry.module is not None and entry.kind == "module":
                tools = tools_root(entry.module)
                found.setdefault(tools.parent.name, tools)
    return found


def surface_homes(
    tools: Mapping[str, Path], layout: Layout, options: CheckOptions
) -> dict[str, Path]:
    """Trailmap -> the scratch directory holding its `trailblaze-client.d.ts`, for each whose
    `tools/` is not ours to write (`check.surfaces.surface_home`, the rule `write_surfaces`
    followed): its tools compile with that one, never with the file left in `tools/`."""
    homes: dict[str, Path] = {}
    for trailmap, tools_dir in tools.items():
        if tools_dir.is_relative_to(layout.scratch):
            continue  # a bundled target's validation surface: scratch already
        home, _ = surface_home(
            trailmap,
            tools_dir.parent,
            layout.scratch,
            write=options.write,
            overwrite_generated=options.overwrite_generated,
        )
        if home is not None:
            homes[trailmap] = home
    return homes


def prepare(
    ctx: CheckContext,
    targets: Mapping[str, Resolution],
    *,
    tools: Mapping[str, Path],
    trailmap_dirs: Mapping[str, Path],
    timeout: float,
    known: Iterable[str] = (),
) -> Prepared | NoCompiler:
    """Find the compiler, emit the declarations of `tools`, write and check the surfaces.

    `trailmap_dirs`: the workspace's trailmaps, whose manifests and tool files are inputs of
    every key already (what the compilers read besides is `Prepared.reads`); `known`: files
    to tell before the compiles besides the state store's record of the last run's reads."""
    try:
        compiler = find_compiler(install=ctx.options.install)
        zod = install_library("zod", install=ctx.options.install)
    except ToolchainError as exc:
        error = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        return NoCompiler(error=error.replace(":;", ":"), tools=tuple(sorted(tools)))
    layout, root = ctx.layout, ctx.ws.root
    ours = digest(render_sdk(ctx.catalog), str(zod), LIBRARIES["zod"])
    choices = sdk_choices(tools, layout=layout, root=root, ours=ours)
    scope = read_scope(ctx, compiler, tools=tools, trailmap_dirs=trailmap_dirs)
    reads = scope.files(ctx, known)
    sdks = dict.fromkeys(targets, OURS_LABEL) | {t: choice.label for t, choice in choices.items()}
    with ctx.timer.phase("declarations"):
        decls = emit_declarations(
            tools,
            compiler,
            layout,
            RelPath(root),
            timeout=timeout,
            choices=choices,
            store=ctx.store,
            reads=reads,
            homes=surface_homes(tools, layout, ctx.options),
        )
    surface_keys = write_module_surfaces(
        targets, layout=layout, decls=decls, catalog=ctx.catalog, store=ctx.store
    )
    # Our SDK's declarations and the zod version they are checked with, by content.
    sdk = digest(render_sdk(ctx.catalog), LIBRARIES["zod"])
    options = options_digest(GENERATOR_VERSION, __version__, COMPILER_OPTIONS, sdk)
    base_key = digest(compiler.identity, options, ours)
    with ctx.timer.phase("surface check"):
        checked = surface_verdicts(
            targets,
            surface_keys=surface_keys,
            base_key=base_key,
            decls=decls,
            compiler=compiler,
            layout=layout,
            timeout=timeout,
            store=ctx.store,
            rel=RelPath(root),
            reads=reads,
        )
    read = reads.seal()
    return Prepared(
        compiler=compiler,
        declarations=decls,
        sdks=sdks,
        surface_keys={t: digest(key, read) if read else key for t, key in surface_keys.items()},
        options=options,
        compiler_key=f"{compiler.version}:{compiler.path.stat().st_size}",
        base_key=base_key,
        broken=checked.broken,
        unresolved=checked.unresolved,
        reads=reads,
    )


class ReadScope(msgspec.Struct, frozen=True):
    """What a run's `ReadFiles` is made with but the known reads (`read_scope`): kept with a
    preparation between runs (`check.keptphase`), whose `ReadFiles` each run makes again."""

    root: Path
    ours: tuple[Path, ...]
    inputs: frozenset[str]
    tools_dirs: frozenset[Path]
    compiler_home: Path | None

    def files(self, ctx: CheckContext, known: Iterable[str] = ()) -> ReadFiles:
        """The run's `ReadFiles`, the last run's reads (and `known`) read first."""
        return ReadFiles(
            root=self.root,
            ours=self.ours,
            inputs=self.inputs,
            tools_dirs=self.tools_dirs,
            known=[*recorded_paths(ctx.store), *known],
            compiler_home=self.compiler_home,
        )


def read_scope(
    ctx: CheckContext,
    compiler: Compiler,
    *,
    tools: Mapping[str, Path],
    trailmap_dirs: Mapping[str, Path],
) -> ReadScope:
    """What the run's account of the compilers' reads beyond the inputs is made with
    (`ReadFiles`): the inputs, the tools directories, what is ours."""
    inputs: set[str] = set()
    tools_dirs = {*tools.values()}
    for directory in trailmap_dirs.values():
        inputs.add(str(directory / "trailmap.yaml"))
        inputs.update(str(path) for _, path in tool_files(directory))
        tools_dirs.add(directory / "tools")
    home = None
    if os.environ.get(TSC_ENV, "").strip():
        # A compiler of the user's: its default libraries are part of it, as its key says.
        real = Path(os.path.realpath(compiler.path))
        home = next((p for p in real.parents if p.name == "node_modules"), real.parent)
    return ReadScope(
        root=ctx.ws.root,
        # What we write for the compilers, not the whole scratch directory: a file someone
        # put elsewhere in it (a type a tool imports from `.trailblaze/`) is a read like any.
        ours=(
            ctx.layout.root,
            ctx.layout.sdk_dir,
            ctx.layout.own_sdk_dir,
            # A trailmap's surface when its tools/ is not ours: its bytes are in the emit's key.
            ctx.layout.trailmap_surfaces_dir,
            toolchain_dir(),
        ),
        inputs=frozenset(inputs),
        tools_dirs=frozenset(tools_dirs),
        compiler_home=home,
    )
