"""The surfaces stage: each trailmap's artifacts (`artifacts`) and the SDK bundle, written.

Every file is written only when its content changes, atomically; a memo (`WRITTEN`) skips the
rendering of a trailmap whose model and files are as they were. `generate_surfaces` is the
resolve and surfaces stages together, for `doit surfaces`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from trailblaze import codes
from trailblaze.check.context import CheckContext
from trailblaze.check.resolve import Resolved, Targets, resolve_workspace
from trailblaze.finding import Finding
from trailblaze.fsutil import write_if_changed
from trailblaze.generate import artifacts
from trailblaze.generate.artifacts import (
    DTS_NAME,
    SCHEMA_NAME,
    SIDECAR_NAME,
    TSCONFIG_NAME,
)
from trailblaze.generate.owners import generated_text as generated_text  # noqa: PLC0414 - re-exported
from trailblaze.generate.owners import left_alone, links_out
from trailblaze.generate.sdk import choose_sdk, write_declarations
from trailblaze.generate.trailschema import trail_schema
from trailblaze.options import OVERWRITE_GENERATED_ENV, env_flag
from trailblaze.report.escaping import json_text
from trailblaze.report.record import INCOMPLETE_CODE
from trailblaze.state.keys import digest
from trailblaze.state.scratch import Layout, write_scratch
from trailblaze.state.scratch import module_specifier as module_specifier  # noqa: PLC0414 - re-exported
from trailblaze.state.store import Kind, Store
from trailblaze.toolmodel.catalog import Catalog
from trailblaze.toolmodel.records import BundledTrailmap, Resolution
from trailblaze.toolmodel.resolution import model_digest
from trailblaze.toolmodel.tooldefs import RelPath
from trailblaze.workspace import generated_in_the_way


def write_sdk(scratch: Path, catalog: Catalog, sdk_dir: Path | None = None) -> list[Path]:
    """Write our declarations where they belong; the index files that changed. `sdk_dir`: the
    one generated tsconfigs name (`Layout.sdk_dir`, the scratch directory's by default).

    The conventional directory keeps a bundle that is not ours (the reference CLI's).
    """
    layout = Layout(scratch)
    return [
        directory / "dist" / "index.d.ts"
        for directory in (layout.own_sdk_dir, sdk_dir if sdk_dir is not None else layout.sdk_dir)
        if write_declarations(directory, catalog)
    ]


class SurfaceOutcome(msgspec.Struct, frozen=True):
    """A trailmap's surfaces written (or found up to date) and what was wrong."""

    written: tuple[Path, ...]
    findings: tuple[Finding, ...]


WRITTEN: Kind[bool] = Kind("surfaces-written", bool)
"""A trailmap's artifacts as last rendered: slot = its directory, key = `surface_key`, files =
what was written. Rendering the artifacts of a large trailmap (its JSON Schema, its sidecar)
costs tens of milliseconds; a check of an unchanged workspace should not pay that for every
trailmap. The entry holds only while every file it wrote has the size, mtime and inode it had:
a file edited, replaced or deleted by hand is rendered and written again."""


def surface_key(
    resolution: Resolution,
    trailmap_dir: Path,
    scratch: Path,
    catalog: Catalog,
    gitignore: bool,
    *,
    home: Path | None = None,
    sdk_dir: Path | None = None,
) -> str:
    """Everything a trailmap's artifacts are rendered from, as one digest (`home`: where they
    go, when not the trailmap's `tools/`; `sdk_dir`: the SDK their tsconfig names)."""
    return digest(
        model_digest(resolution),
        catalog.version,
        str(trailmap_dir),
        str(scratch),
        str(gitignore),
        str(home or ""),
        str(sdk_dir or ""),
    )


def surface_home(
    trailmap: str,
    trailmap_dir: Path,
    scratch: Path,
    *,
    write: bool = True,
    overwrite_generated: bool = False,
) -> tuple[Path | None, list[tuple[Path, str]]]:
    """Where a workspace trailmap's generated files go: None for its own `tools/`, else the
    scratch directory's `trailmap_tools` (with `write` off, or when a file there is not ours to
    rewrite: `owners.left_alone`, each with who wrote it)."""
    left = left_alone(trailmap_dir / "tools", overwrite_generated=overwrite_generated)
    if write and not left:
        return None, []
    return Layout(scratch).trailmap_tools(trailmap), left


def write_surfaces(
    resolution: Resolution,
    trailmap_dir: Path,
    scratch: Path,
    catalog: Catalog,
    rel: Any,
    *,
    gitignore: bool = True,
    memo: Store | None = None,
    write: bool = True,
    overwrite_generated: bool = False,
    sdk_dir: Path | None = None,
) -> SurfaceOutcome:
    """Write one trailmap's artifacts; only files whose content changed are touched. Their
    tsconfig names `sdk_dir` (`Layout.sdk_dir`: the scratch directory's by default).

    With a `memo`, nothing is rendered when the model and the files are as the memo recorded.
    Without `write`, or when a generated file of its `tools/` is not ours (`surface_home`),
    nothing is written in the trailmap: its surface, sidecar and schema go to the scratch
    directory (no tsconfig, no `.gitignore` lines), and what was left alone is said once.
    """
    tools_dir = trailmap_dir / "tools"
    sdk = sdk_dir if sdk_dir is not None else Layout(scratch).sdk_dir
    written: list[Path] = []
    findings: list[Finding] = []
    slot = str(trailmap_dir)
    key = ""
    # The validation-only surfaces of bundled targets are scratch: `state.owned` rules there.
    ours = scratch if trailmap_dir.is_relative_to(scratch) else None
    home: Path | None = None
    left: list[tuple[Path, str]] = []
    if ours is None:
        home, left = surface_home(
            resolution.trailmap,
            trailmap_dir,
            scratch,
            write=write,
            overwrite_generated=overwrite_generated,
        )
    if left:
        findings.append(_left_alone(left, rel, scratch, home, resolution.trailmap))
    if memo is not None:
        key = surface_key(
            resolution, trailmap_dir, scratch, catalog, gitignore, home=home, sdk_dir=sdk
        )
        if not left and memo.fresh(WRITTEN, slot, key):
            return SurfaceOutcome(written=(), findings=())
    if home is not None:
        if ours is None and (kept := _kept_tsconfig(tools_dir, sdk, rel, resolution.trailmap)):
            findings.append(kept)  # its tools compile with it all the same
        return _write_home(resolution, home, scratch, catalog, findings, memo, slot, key)

    if ours is None:
        # Something of the user's where a generated file belongs (a directory named like it, a
        # file we did not generate, a link out of the workspace) is left as it is, and then
        # none of the trailmap's files are written, not some.
        none = f"none of the generated files of trailmap '{resolution.trailmap}' were written"
        blocked = [
            _unwritable(rel(path), f"{problem}; {none}", resolution.trailmap)
            for path, problem in [
                *generated_in_the_way(tools_dir),
                *links_out(tools_dir, rel.root, gitignore=gitignore),
            ]
        ]
        if blocked:
            if memo is not None:
                memo.drop(WRITTEN, slot)
            return SurfaceOutcome(written=(), findings=tuple(blocked))

    def put(path: Path, text: str) -> None:
        if any(f.code == INCOMPLETE_CODE for f in findings):
            return  # the next run writes them all, once the problem is gone
        try:
            # Where a link inside the workspace leads (`not_ours` refused any other).
            real = Path(os.path.realpath(path))
            wrote = write_scratch(path, text, ours) if ours else write_if_changed(real, text)
        except OSError as exc:  # the file is as it was: `write_atomic` replaces it in one step
            message = (
                f"cannot be written: {exc.strerror or exc}; the generated files of trailmap "
                f"'{resolution.trailmap}' after it were not written"
            )
            findings.append(_unwritable(rel(path), message, resolution.trailmap))
            return
        if wrote:
            written.append(path)

    put(tools_dir / DTS_NAME, artifacts.render_client_dts(resolution, tools_dir, catalog))
    tsconfig = tools_dir / TSCONFIG_NAME
    kept = _kept_tsconfig(tools_dir, sdk, rel, resolution.trailmap)
    if kept is None:
        put(tsconfig, artifacts.render_tsconfig(tools_dir, sdk))
    else:
        findings.append(kept)
    put(tools_dir / SIDECAR_NAME, artifacts.render_sidecar(resolution))
    put(tools_dir / SCHEMA_NAME, json_text(trail_schema(resolution, catalog), indent=2) + "\n")
    if gitignore:
        ignore = trailmap_dir / ".gitignore"
        problem = None
        existing: str | None = None
        try:
            # Bytes, not read_text: universal newlines would turn a CRLF file into LF.
            existing = ignore.read_bytes().decode("utf-8")
        except FileNotFoundError:
            pass
        except UnicodeDecodeError:
            problem = "it is not UTF-8 text"
        except OSError as exc:
            problem = f"it cannot be read ({exc.strerror or exc})"
        if problem is not None:
            # Left as it is: rewriting it would lose what it says.
            findings.append(
                Finding(
                    "warning",
                    rel(ignore),
                    1,
                    1,
                    f".gitignore left unchanged: {problem}; the generated tools/ files are not "
                    "added to it",
                    code=codes.GITIGNORE_UNREADABLE,
                    fatal=False,
                    trailmap=resolution.trailmap,
                )
            )
        elif (updated := artifacts.updated_gitignore(existing)) is not None:
            put(ignore, updated)
    if memo is not None:
        if findings:  # a kept hand-written tsconfig: its warning is worked out on every run,
            # and a file that could not be written is written by the next one
            memo.drop(WRITTEN, slot)
        else:
            names = [DTS_NAME, TSCONFIG_NAME, SIDECAR_NAME, SCHEMA_NAME]
            files = [tools_dir / name for name in names]
            if gitignore:
                files.append(trailmap_dir / ".gitignore")
            memo.put(WRITTEN, slot, True, key=key, files=files)
    return SurfaceOutcome(written=tuple(written), findings=tuple(findings))


def _kept_tsconfig(tools_dir: Path, sdk_dir: Path, rel: Any, trailmap: str) -> Finding | None:
    """The warning about a hand-written `tools/tsconfig.json` (kept, and compiled with), or
    None when it is absent, ours to write, or another generator's."""
    tsconfig = tools_dir / TSCONFIG_NAME
    try:
        current = tsconfig.read_text("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        current = ""  # not one we generated: kept, as a hand-written one is
    if current == artifacts.render_tsconfig(tools_dir, sdk_dir) or (
        artifacts.is_generated_tsconfig(current)
    ):
        return None
    choice = choose_sdk(tools_dir, sdk_dir, rel.root, "", generated_tsconfig=False)
    return Finding(
        "warning",
        rel(tsconfig),
        1,
        1,
        choice.warning or "hand-written tsconfig.json kept",
        code=codes.TSCONFIG_KEPT,
        fatal=False,
        trailmap=trailmap,
    )


def _left_alone(
    left: list[tuple[Path, str]], rel: Any, scratch: Path, home: Path | None, trailmap: str
) -> Finding:
    """The one note of a trailmap whose generated files are not ours: what, by whom, where the
    check's own surface went instead, and how to have them replaced."""
    listed = ", ".join(f"{Path(rel(path)).name} ({who})" for path, who in left)
    where = rel(home) if home is not None else rel(scratch)
    replace = (
        "; `--overwrite-generated` replaces the ones Trailblaze generated"
        if any(who == "generated by Trailblaze" for _, who in left)
        else ""
    )
    return Finding(
        "warning",
        rel(left[0][0]),
        1,
        1,
        f"left alone: {listed}: not trailblaze-doit's to rewrite; the check uses its own "
        f"surface in {where}/{replace}",
        code=codes.GENERATED_LEFT_ALONE,
        fatal=False,
        trailmap=trailmap,
    )


def _write_home(  # noqa: PLR0917 - the one caller's state, passed on
    resolution: Resolution,
    home: Path,
    scratch: Path,
    catalog: Catalog,
    findings: list[Finding],
    memo: Store | None,
    slot: str,
    key: str,
) -> SurfaceOutcome:
    """A trailmap's surface, sidecar and schema, in the scratch directory `home`."""
    files = {
        DTS_NAME: artifacts.render_client_dts(resolution, home, catalog),
        SIDECAR_NAME: artifacts.render_sidecar(resolution),
        SCHEMA_NAME: json_text(trail_schema(resolution, catalog), indent=2) + "\n",
    }
    written = [
        home / name for name, text in files.items() if write_scratch(home / name, text, scratch)
    ]
    if memo is not None:
        if findings:  # the note is said on every run
            memo.drop(WRITTEN, slot)
        else:
            memo.put(WRITTEN, slot, True, key=key, files=[home / name for name in files])
    return SurfaceOutcome(written=tuple(written), findings=tuple(findings))


def _unwritable(path: str, message: str, trailmap: str) -> Finding:
    # Its code makes the run incomplete (`report.Report.complete`): nothing remembers it as done.
    return Finding("manifest", path, 1, 1, message, code=INCOMPLETE_CODE, trailmap=trailmap)


# -- the whole workspace --------------------------------------------------------------------------


class Written(msgspec.Struct, frozen=True):
    """What writing the artifacts of resolved trailmaps did."""

    written: tuple[Path, ...]
    findings: dict[str, tuple[Finding, ...]]
    """Per trailmap: what writing its artifacts found (a kept tsconfig, an unreadable .gitignore)."""


def write_workspace(
    resolved: Resolved,
    *,
    root: Path,
    scratch: Path,
    catalog: Catalog,
    memo: Store | None,
    write: bool = True,
    overwrite_generated: bool = False,
    home: Path | None = None,
) -> Written:
    """Write the SDK bundle and every resolved trailmap's artifacts (see `write_surfaces`).
    `home`: the workspace's own scratch directory when `scratch` is a check's own
    (`Layout.home`): the tsconfigs name its SDK."""
    sdk_dir = Layout(scratch, home=home).sdk_dir
    written = write_sdk(scratch, catalog, sdk_dir)
    findings: dict[str, tuple[Finding, ...]] = {}
    rel = RelPath(root)
    for trailmap_id, resolution in resolved.resolutions.items():
        outcome = write_surfaces(
            resolution,
            resolved.dirs[trailmap_id],
            scratch,
            catalog,
            rel,
            gitignore=trailmap_id in resolved.workspace,
            memo=memo,
            write=write,
            overwrite_generated=overwrite_generated,
            sdk_dir=sdk_dir,
        )
        written.extend(outcome.written)
        findings[trailmap_id] = outcome.findings
    return Written(written=tuple(written), findings=findings)


def write_artifacts(ctx: CheckContext, targets: Targets) -> tuple[Finding, ...]:
    """The surfaces stage: every target's artifacts written; what writing them found."""
    with ctx.timer.phase("surfaces"):
        done = write_workspace(
            targets.resolved,
            root=ctx.ws.root,
            scratch=ctx.ws.scratch,
            catalog=ctx.catalog,
            memo=ctx.store,
            write=ctx.options.write,
            overwrite_generated=ctx.options.overwrite_generated,
            home=ctx.layout.home,
        )
    return tuple(f for found in done.findings.values() for f in found)


class WorkspaceSurfaces(msgspec.Struct, frozen=True):
    """Every trailmap's resolution, what was written, and the findings of resolving."""

    resolutions: dict[str, Resolution]
    written: tuple[Path, ...]
    findings: tuple[Finding, ...]


def generate_surfaces(
    root: Path,
    scratch: Path,
    trailmaps: Mapping[str, tuple[Any, Path]],
    catalog: Catalog,
    *,
    only: Iterable[str] | None = None,
    bundled: Mapping[str, BundledTrailmap] | None = None,
    memo: bool = True,
    store: Store | None = None,
    overwrite_generated: bool | None = None,
) -> WorkspaceSurfaces:
    """Resolve trailmaps (all, or `only` these) and write their artifacts and the SDK bundle:
    the resolve and surfaces stages of a check, for `doit surfaces`.

    Bundled targets that no workspace trailmap shadows get validation-only surfaces in the
    scratch directory. With `memo=False` every artifact is rendered (and compared) again.
    What was written is remembered in `store` (committed by its owner), or in the scratch
    directory's store, committed here, when none is given.
    """
    resolved = resolve_workspace(root, scratch, trailmaps, catalog, only=only, bundled=bundled)
    own_store = Store.open(scratch) if memo and store is None else None
    try:
        done = write_workspace(
            resolved,
            root=root,
            scratch=scratch,
            catalog=catalog,
            memo=(store or own_store) if memo else None,
            overwrite_generated=(
                env_flag(OVERWRITE_GENERATED_ENV)
                if overwrite_generated is None
                else overwrite_generated
            ),
        )
        if own_store is not None:
            own_store.commit()
    finally:
        if own_store is not None:
            own_store.close()
    findings = [
        f
        for trailmap_id, resolution in resolved.resolutions.items()
        for f in (*resolution.findings, *done.findings[trailmap_id])
    ]
    return WorkspaceSurfaces(
        resolutions=resolved.resolutions, written=done.written, findings=tuple(findings)
    )
