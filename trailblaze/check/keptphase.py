"""The workspace's stages and the type gate's preparation, kept between command runs.

A one-edit run of `trailblaze check` (or `doit check`) checks one trail narrowly
(`narrow.py`), yet the workspace's stages (discover, resolve, the surfaces written) and the
type gate's preparation (the compiler, the scripted tools' declarations, the module surfaces
and their check) cost as much as at a cold check: a sixth of the run at 10,000 trails. What a
complete check that recorded for the narrow runs built of them is kept in
`Layout.kept_phase`, sealed (`state.kept`: an HMAC under a secret of the user's, outside the
workspace, checked before anything is unpickled), and the next narrow run takes it instead of
building them, when everything they were made from is as it was:

- the narrow record's `inputs` key (the manifests, tool files, baked targets, packages'
  trailmaps and the files the compilers read beyond them, by stamp; the options, the
  environment's compilers, the settings, our code);
- the stamps (size, mtime, inode, ctime) of what the stages and the preparation wrote or ran:
  the generated files of each trailmap's `tools/` and its `.gitignore` (and the directories
  holding them: a file that appears), the SDKs, surfaces, declarations and tsconfigs of the
  scratch directory (`typegate/` but the trails' modules, `sdk*`, `trailmap-surfaces`,
  `trail-validation`), the compiler's files and the zod install; taken as soon as the
  preparation is made, so that a file changed later in that run is a change;
- the files the compiles read beyond the inputs as the preparation would tell them now (its
  `ReadFiles`, which holds a lock, is made again each run), the Python, the workspace's place
  and the toolchain directory.

Anything else (a file missing, another format, a header or a stamp that differs, a body that
does not unpickle into what we wrote) is a miss: the run builds them as a run without one.
The stages are kept without the per-run scan (`found`, `whole`, `positions` are this run's).
A full check never takes them (the language server keeps its own, `phase.py`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

import msgspec

from trailblaze.check.context import CheckContext
from trailblaze.check.phase import Stages
from trailblaze.check.resolve import Targets
from trailblaze.check.typegate.preparation import Prepared, ReadScope, read_scope, tools_dirs
from trailblaze.fsutil import stamp_of
from trailblaze.generate.owners import DTS_NAME, SCHEMA_NAME, SIDECAR_NAME, TSCONFIG_NAME
from trailblaze.state.kept import local_secret, open_sealed, seal
from trailblaze.state.owned import ScratchError
from trailblaze.state.reads import reads_digest
from trailblaze.state.scratch import write_scratch
from trailblaze.toolchain.compilers import ToolchainError, installed_library, toolchain_dir
from trailblaze.toolmodel.records import ToolEntry
from trailblaze.workspace import TOOL_DIRS, Scan

FORMAT = 1
_GENERATED = (DTS_NAME, TSCONFIG_NAME, SIDECAR_NAME, SCHEMA_NAME)
_DIR = "dir"
_NO_SCAN = Scan(trailmaps=(), trail_paths=(), findings=())


class Kept(msgspec.Struct, frozen=True):
    """A kept phase that holds for this run."""

    stages: Stages
    """Without the scan: the caller puts this run's in (`msgspec.structs.replace`)."""
    prepared: Prepared | None
    """None when the gate is off (nothing was prepared)."""


Stamps = list[tuple[str, str]]
"""(path, stamp) of what the stages and the preparation wrote, ran or walked."""


class Snapshot(msgspec.Struct, frozen=True):
    """What a run that may keep its phase notes as soon as its preparation is made."""

    stamps: Stamps
    scope: ReadScope | None
    """What its `ReadFiles` was made with (None: nothing was prepared)."""


def _stamp(path: str) -> str:
    try:
        st = os.lstat(path)
    except OSError:
        return "missing"
    return f"{stamp_of(st)}:{st.st_ctime_ns}"


def _presence(path: str) -> str:
    """What is kept of a directory whose entries come and go: whether it is one."""
    return _DIR if os.path.isdir(path) else "missing"


def _walk(top: str, out: Stamps, *, dirs_only: bool = False, skip: str = "") -> None:
    """`top` and everything below it (only the directories: `dirs_only`, which tell a file
    added, removed or renamed), links not followed, nor directories named `skip`."""
    out.append((top, _stamp(top)))
    try:
        entries = sorted(os.scandir(top), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            if entry.name != skip:
                _walk(entry.path, out, dirs_only=dirs_only, skip=skip)
        elif not dirs_only:
            out.append((entry.path, _stamp(entry.path)))


def _paths(found: Scan, prepared: Prepared | None) -> list[str]:
    """The files (not walked) whose stamps are kept besides the directories'."""
    paths: list[str] = []
    for trailmap in found.trailmaps:
        tools = trailmap.path / "tools"
        paths.extend([str(trailmap.path), str(trailmap.path / ".gitignore")])
        paths.extend(str(tools / name) for name in _GENERATED)
    if prepared is not None:
        compiler = prepared.compiler
        paths.extend([str(compiler.path), os.path.realpath(compiler.path)])
        paths.extend(arg for arg in compiler.argv_prefix if os.path.isabs(arg))
        try:
            zod = installed_library("zod")
        except ToolchainError:
            zod = None
        if zod is not None:
            paths.extend([str(zod), str(zod / "package.json")])
    return paths


def snapshot(ctx: CheckContext, found: Scan, stages: Stages, prepared: Prepared | None) -> Snapshot:
    """The stamps a kept phase is taken under (see the module docstring), with what its
    preparation walked the workspace for."""
    out: Stamps = [(path, _stamp(path)) for path in _paths(found, prepared)]
    # Every directory of the trailmaps' tool directories (what `tool_sources` and
    # `tool_files` walk): a tool source added anywhere in them, even where the inputs are
    # not looked for, changes one of them.
    for trailmap in found.trailmaps:
        for sub in TOOL_DIRS:
            _walk(str(trailmap.path / sub), out, dirs_only=True, skip="node_modules")
    layout = ctx.layout
    root = str(layout.root)
    out.append((root, _presence(root)))
    try:
        # Not the directory itself nor its files: the compiles make and remove their
        # tsconfigs and canaries there.
        inner = sorted(e.path for e in os.scandir(root) if e.is_dir(follow_symlinks=False))
    except OSError:
        inner = []
    # Nor the trails' modules, nor the unit tests' tsconfigs, written later in the run.
    later = {str(layout.trails_dir), str(layout.tests_tsconfig("x").parent)}
    for path in inner:
        if path not in later:
            _walk(path, out)
    for directory in (
        layout.sdk_dir,
        layout.own_sdk_dir,
        layout.trailmap_surfaces_dir,
        layout.scratch / "trail-validation",
    ):
        _walk(str(directory), out)
    if prepared is None:
        return Snapshot(out, None)
    dirs = stages.discovery.manifests.dirs
    tools = tools_dirs(dirs, stages.targets.resolutions)
    return Snapshot(out, read_scope(ctx, prepared.compiler, tools=tools, trailmap_dirs=dirs))


def _header(
    ctx: CheckContext, inputs: str, reads: str, stamps: Iterable[tuple[str, str]]
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "inputs": inputs,
        "root": str(ctx.ws.root),
        "python": sys.version,
        "toolchain": str(toolchain_dir()),
        "typecheck": ctx.options.typecheck,
        "reads": reads,
        "stamps": [list(pair) for pair in stamps],
    }


def _shared(targets: Targets) -> Targets:
    """`targets` with each tool entry equal to another one (the catalog's tools, in every
    target's surface: nine in ten entries) the same object, pickled once: a tenth of the
    bytes and of the time to load them. Entries are frozen and nothing changes their schemas."""
    canonical: dict[str, ToolEntry] = {}
    resolutions = {
        name: msgspec.structs.replace(
            resolution,
            entries=tuple(canonical.setdefault(repr(e), e) for e in resolution.entries),
        )
        for name, resolution in targets.resolutions.items()
    }
    return msgspec.structs.replace(
        targets, resolved=msgspec.structs.replace(targets.resolved, resolutions=resolutions)
    )


def save(
    ctx: CheckContext,
    *,
    inputs: str,
    stages: Stages,
    prepared: Prepared | None,
    taken: Snapshot | None,
) -> bool:
    """Keep the stages and the preparation of a run that recorded, under `inputs` (the narrow
    record's) and what `snapshot` took when the preparation was made; True when it was
    written. Nothing is kept without a secret, nor when the reads were not covered."""
    if taken is None or (ctx.options.typecheck and (prepared is None or taken.scope is None)):
        return False
    reads = ""
    body_prepared: dict[str, Any] | None = None
    if prepared is not None:
        if not prepared.reads.covered:
            return False
        tokens = prepared.reads.tokens
        reads = reads_digest(tokens, ctx.ws.root) if tokens else ""
        body_prepared = {
            name: getattr(prepared, name) for name in prepared.__struct_fields__ if name != "reads"
        }
        # As a preparation whose emits were remembered says it.
        body_prepared["declarations"] = msgspec.structs.replace(prepared.declarations, runs=0)
    secret = local_secret()
    if secret is None:
        return False
    kept_stages = Stages(
        msgspec.structs.replace(stages.discovery, whole=_NO_SCAN, found=_NO_SCAN, positions=()),
        _shared(stages.targets),
        stages.artifacts,
    )
    path = ctx.layout.kept_phase
    try:
        data = seal(
            secret,
            str(path),
            _header(ctx, inputs, reads, taken.stamps),
            (kept_stages, body_prepared, taken.scope),
        )
        write_scratch(path, data, ctx.layout.scratch, always=True)
    except (OSError, ValueError, ScratchError):
        # Not kept (something of someone else's in its place, say): the next one-edit check
        # builds the stages, as one without a kept phase does.
        return False
    return True


def load(ctx: CheckContext, inputs: str) -> Kept | None:
    """The kept phase when it holds for this run (see the module docstring); None otherwise."""
    path = ctx.layout.kept_phase
    if not path.is_file():
        return None
    secret = local_secret(create=False)
    if secret is None:
        return None
    sealed = open_sealed(path, secret, str(path))
    if sealed is None:
        return None
    header = sealed.header
    stamps = header.get("stamps")
    if (
        header.get("format") != FORMAT
        or header.get("inputs") != inputs
        or header.get("root") != str(ctx.ws.root)
        or header.get("python") != sys.version
        or header.get("toolchain") != str(toolchain_dir())
        or header.get("typecheck") != ctx.options.typecheck
        or not isinstance(stamps, list)
    ):
        return None
    for pair in stamps:
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        ):
            return None
        where, stamp = pair
        if stamp != (_presence(where) if stamp == _DIR else _stamp(where)):
            return None
    body = sealed.load()
    if not (isinstance(body, tuple) and len(body) == 3 and isinstance(body[0], Stages)):
        return None
    stages, fields, scope = body
    if not ctx.options.typecheck:
        return Kept(stages, None) if fields is None else None
    if not isinstance(fields, dict) or not isinstance(scope, ReadScope):
        return None
    reads = scope.files(ctx)
    told = reads_digest(reads.tokens, ctx.ws.root) if reads.tokens else ""
    if not reads.covered or told != header.get("reads"):
        return None
    # As a preparation whose compiles were all remembered leaves it: sealed, the known reads
    # standing for the compiles' own.
    reads.reused = True
    reads.sealed = True
    try:
        prepared = Prepared(**fields, reads=reads)
    except TypeError:
        return None
    return Kept(stages, prepared)
