"""What one `trailblaze check` covers: the whole workspace, one trailmap, or some files.

The command line names it as the reference's does (`check [TRAILMAP_ID] [--all] [--workspace
DIR]`), plus a workspace directory (this project's older form) and trail files or `-` for
standard input (editors and coding agents). `resolve_scope` turns those words into a `Scope`;
`check_scope` runs the check and returns the report limited to it.

A trailmap scope checks the whole workspace (incrementally: what did not change costs nothing)
and reports what belongs to that trailmap. A file scope checks just those files, with state of
its own in the scratch directory, so an editor's checks never disturb the workspace's.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from trailblaze import codes
from trailblaze.errors import TrailblazeError
from trailblaze.finding import Finding
from trailblaze.options import CheckOptions
from trailblaze.report.record import Report, TrailStatus
from trailblaze.state.scratch import make_dir, prepare_scratch, write_scratch
from trailblaze.workspace import (
    Scan,
    SettingsError,
    TrailmapDir,
    Workspace,
    WorkspaceError,
    find_workspace,
    scan,
)

STDIN = "-"
STDIN_LABEL = "<stdin>"
FILES_SCRATCH = "files"
"""The file scope's own scratch directory, under the workspace's."""
_YAML_SUFFIXES = (".yaml", ".yml")
_TOOL_SOURCE_SUFFIXES = (".ts", ".mts", ".cts", ".js", ".mjs", ".cjs")


class ScopeError(TrailblazeError):
    """The command line names nothing that can be checked (a usage error)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """What one `trailblaze check` argument asks for: a workspace, one of its trailmaps or files."""

    workspace: Workspace
    trailmap: str | None = None
    """Only this trailmap (`check ID`, or run from inside its directory)."""
    files: tuple[Path, ...] = ()
    """Only these trail files (absolute)."""
    stdin: bool = False
    """A trail read from standard input (with `files`, or alone)."""

    @property
    def label(self) -> str:
        if self.trailmap is not None:
            return f"trailmap '{self.trailmap}'"
        if self.files or self.stdin:
            return f"{len(self.files) + self.stdin} file(s)"
        return "workspace"


def valid_trailmap_id(text: str) -> bool:
    """A single directory name, as the reference's `validateTrailmapId` accepts."""
    return bool(
        text.strip()
        and "/" not in text
        and "\\" not in text
        and text not in (".", "..")
        and not (len(text) > 1 and text[1] == ":")
    )


def resolve_scopes(
    targets: list[str], *, all_trailmaps: bool, workspace: Path | None, cwd: Path
) -> list[Scope]:
    """What the command line names, one scope per workspace (trail files of a monorepo may
    belong to several, as a pre-commit hook passes them); `ScopeError`/`WorkspaceError` for a
    usage error."""
    files = [t for t in targets if t == STDIN or _is_file_word(t, cwd)]
    words = [t for t in targets if t not in files]
    if files and words:
        raise ScopeError(
            f"give trail files or a trailmap id, not both ({files[0]!r} and {words[0]!r})"
        )
    if all_trailmaps and targets:
        raise ScopeError(f"--all checks every trailmap: it cannot be combined with {targets[0]!r}")
    if files:
        return _file_scopes(files, workspace, cwd)
    return [_one_scope(words, all_trailmaps=all_trailmaps, workspace=workspace, cwd=cwd)]


def _one_scope(
    words: list[str], *, all_trailmaps: bool, workspace: Path | None, cwd: Path
) -> Scope:
    if len(words) > 1:
        raise ScopeError(f"give at most one trailmap id (got {', '.join(map(repr, words))})")
    if words:
        word = words[0]
        candidate = cwd / word
        if candidate.is_dir():
            if workspace is not None:
                raise ScopeError(
                    f"'{word}' is a directory and --workspace names the workspace already; "
                    "give a trailmap id or trail files"
                )
            # This project's older form: `trailblaze check WORKSPACE`. A directory that is
            # not a workspace may still be a trailmap id of the workspace we are in.
            try:
                return Scope(find_workspace(candidate, explicit=True))
            except WorkspaceError:
                if not (valid_trailmap_id(word) and _has_trailmap(cwd, word)):
                    trails = _trail_dir_scope(candidate)  # a directory of trails, or the error
                    if trails is None:
                        raise
                    return trails
        if not valid_trailmap_id(word):
            if workspace is None and ("/" in word or os.sep in word):
                # A path that is not there: as before, "workspace '...' is not a directory".
                find_workspace(candidate, explicit=True)
            raise ScopeError(
                f"invalid trailmap id {word!r}: a trailmap id is one directory name "
                "(no '/', '\\' or '..'); a directory or trail file must exist"
            )
        try:
            ws = _workspace(workspace, cwd)
        except SettingsError:
            raise
        except WorkspaceError:
            if workspace is not None:
                raise
            ws = _example_workspace(word, cwd)  # the reference's last resort, or the error
        known = _trailmap_ids(ws)
        if word not in known:
            raise ScopeError(
                f"trailmap '{word}' not found in {ws.trailmaps_dir}. "
                f"Available: {', '.join(known) or '<none>'}"
            )
        return Scope(ws, trailmap=word)
    ws = _workspace(workspace, cwd)
    if not all_trailmaps:
        enclosing = _enclosing_trailmap(ws, cwd)
        if enclosing is not None:
            return Scope(ws, trailmap=enclosing)
    return Scope(ws)


def _example_workspace(word: str, cwd: Path) -> Workspace:
    """Outside any workspace, the reference looks for trailmap `word` in the examples of the
    repository it runs at: the one `examples/*/` holding `trails/config/trailmaps/<word>/
    trailmap.yaml`. None or several is the error of no workspace, naming the candidates."""
    found = sorted(
        manifest.parents[4]
        for manifest in cwd.glob(f"examples/*/trails/config/trailmaps/{word}/trailmap.yaml")
    )
    if len(found) == 1:
        return find_workspace(found[0], explicit=True)
    if found:
        names = ", ".join(str(path.relative_to(cwd)) for path in found)
        raise WorkspaceError(
            f"no workspace found from '{cwd}', and trailmap '{word}' is in several examples "
            f"({names}): run in one of them, or pass --workspace DIR"
        )
    return find_workspace(cwd)  # its error


def _trail_dir_scope(directory: Path) -> Scope | None:
    """A directory of trails inside a workspace's trails (`check trails/ios-contacts`, as
    upstream's CI runs it): the trail files under it; None when it is no such directory."""
    try:
        ws = find_workspace(directory)
    except SettingsError:
        raise
    except WorkspaceError:
        return None
    real = directory.resolve()
    if not real.is_relative_to(ws.trails_dir.resolve()):
        return None
    found = tuple(p for p in scan(ws).trails if p.resolve().is_relative_to(real))
    if not found:
        raise ScopeError(f"no trail files under '{directory}'")
    return Scope(ws, files=found)


def _is_file_word(word: str, cwd: Path) -> bool:
    path = cwd / word
    return path.is_file() or (word.endswith(_YAML_SUFFIXES) and not path.is_dir())


def _file_scopes(words: list[str], workspace: Path | None, cwd: Path) -> list[Scope]:
    if words.count(STDIN) > 1:
        raise ScopeError("standard input ('-') can be read once")
    paths: list[Path] = []
    for word in words:
        if word == STDIN:
            continue
        path = Path(os.path.abspath(cwd / word))
        if not path.is_file():
            raise ScopeError(f"{word}: no such file")
        if path not in paths:
            paths.append(path)
    stdin = STDIN in words
    if workspace is not None:
        return [Scope(find_workspace(workspace, explicit=True), files=tuple(paths), stdin=stdin)]
    groups: dict[Path, tuple[Workspace, list[Path]]] = {}
    for word, path in zip([w for w in words if w != STDIN], paths, strict=False):
        try:
            ws = find_workspace(path.parent)
        except SettingsError:
            raise  # its own located message: the workspace is there, its settings are bad
        except WorkspaceError:
            raise WorkspaceError(
                f"no workspace found for {word!r}: trail files are checked against the "
                "trailmaps of their workspace; pass --workspace DIR"
            ) from None
        groups.setdefault(ws.root, (ws, []))[1].append(path)
    scopes = [Scope(ws, files=tuple(found)) for ws, found in groups.values()]
    if stdin:
        try:
            home = find_workspace(cwd)
        except WorkspaceError:
            if not scopes:
                raise WorkspaceError(
                    f"no workspace found from '{cwd}' for standard input: pass --workspace DIR"
                ) from None
            home = scopes[0].workspace
        for index, scope in enumerate(scopes):
            if scope.workspace.root == home.root:
                scopes[index] = dataclasses.replace(scope, stdin=True)
                break
        else:
            scopes.append(Scope(home, stdin=True))
    return scopes


def _workspace(workspace: Path | None, cwd: Path) -> Workspace:
    if workspace is not None:
        return find_workspace(workspace, explicit=True)
    return find_workspace(cwd)


def _has_trailmap(cwd: Path, word: str) -> bool:
    try:
        ws = find_workspace(cwd)
    except WorkspaceError:
        return False
    return word in _trailmap_ids(ws)


def _trailmap_ids(ws: Workspace) -> list[str]:
    from trailblaze.workspace import scan_trailmaps  # noqa: PLC0415

    trailmaps, _ = scan_trailmaps(ws)
    return [t.dir_name for t in trailmaps]


def _enclosing_trailmap(ws: Workspace, cwd: Path) -> str | None:
    """The trailmap whose directory holds `cwd`, as the reference scopes a bare `check`."""
    here = Path(os.path.realpath(cwd))
    base = Path(os.path.realpath(ws.trailmaps_dir))
    if here == base or base not in here.parents:
        return None
    name = here.relative_to(base).parts[0]
    return name if (base / name / "trailmap.yaml").is_file() else None


# -- checking a scope -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scoped:
    """A scope's report, as the command line shows it."""

    report: Report
    """Workspace-relative paths, limited to the scope."""
    renamed: dict[str, str]
    """Report paths to show as something else: a copy in the scratch directory shows as the
    file it was copied from (absolute), standard input as `<stdin>` or the name given."""


def check_scope(
    scope: Scope,
    options: CheckOptions,
    *,
    run: Callable[..., Report],
    found: Scan | None = None,
    stdin_text: str | None = None,
    stdin_name: str | None = None,
    tool_diagnostics: bool = True,
    trailmaps: tuple[TrailmapDir, ...] | None = None,
) -> Scoped:
    """Run the check (`run` is `check.run.run_check`, taking `found=`) and limit its report.

    `found` is the workspace's scan when the caller has just made it (not for trail files);
    `trailmaps` the workspace's trailmaps, for trail files, when the caller knows them as they
    are now (`scan_trailmaps`: the language server's kept listing)."""
    ws = scope.workspace
    renamed: dict[str, str] = {}
    if scope.files or scope.stdin:
        report, renamed = _check_files(
            scope, options, run, stdin_text, stdin_name, trailmaps=trailmaps
        )
    else:
        report = run(ws, options, found=found if found is not None else scan(ws))
        if scope.trailmap is not None:
            report = _only_trailmap(report, ws, scope.trailmap)
    if not tool_diagnostics:
        report = report.only(lambda _: True, lambda f: not _is_tool_source_finding(f))
    return Scoped(report, renamed)


def _check_files(
    scope: Scope,
    options: CheckOptions,
    run: Callable[..., Report],
    stdin_text: str | None,
    stdin_name: str | None,
    *,
    trailmaps: tuple[TrailmapDir, ...] | None = None,
) -> tuple[Report, dict[str, str]]:
    from trailblaze.workspace import scan_trailmaps  # noqa: PLC0415

    ws = scope.workspace
    prepare_scratch(ws.scratch)  # the copies go below it
    # Its own scratch directory (records, modules, caches of buffers and copies), but the SDK
    # the trailmaps' generated tsconfigs name stays the workspace's: a file check and a full
    # check write the same `tools/tsconfig.json`, not each its own in turn.
    own = dataclasses.replace(ws, scratch=ws.scratch / FILES_SCRATCH, home_scratch=ws.scratch)
    make_dir(own.scratch, ws.scratch)
    copies = own.scratch / "input"
    if prepare_scratch(own.scratch).ours(copies):
        shutil.rmtree(copies, ignore_errors=True)  # the last run's: what is checked is as given
    root = os.path.realpath(ws.root) + os.sep
    scratch = os.path.realpath(ws.scratch) + os.sep
    renamed: dict[str, str] = {}
    paths: list[str] = []
    for index, path in enumerate(scope.files):
        real = os.path.realpath(path)
        if real.startswith(root) and not real.startswith(scratch):
            paths.append(os.path.join(str(ws.root), real[len(root) :]))
            continue
        # Outside the workspace: checked as a copy, so that nothing is ever generated next
        # to it; shown under the name it was given.
        copy = copies / str(index) / path.name
        write_scratch(copy, path.read_bytes(), own.scratch, always=True)
        paths.append(str(copy))
        renamed[ws.rel(copy)] = str(path)
    if scope.stdin:
        copy = copies / "stdin" / "stdin.trail.yaml"
        write_scratch(
            copy, (stdin_text or "").encode("utf-8", "surrogateescape"), own.scratch, always=True
        )
        paths.append(str(copy))
        renamed[ws.rel(copy)] = stdin_name or STDIN_LABEL
    if trailmaps is None:
        trailmaps, _ = scan_trailmaps(ws)
    # Trail files are checked for an editor or an agent: the trailmaps' unit tests are not
    # about them, and would cost every keystroke a bun run.
    report = run(
        own,
        dataclasses.replace(options, tests=False),
        found=Scan(trailmaps=trailmaps, trail_paths=tuple(paths), findings=()),
    )
    given = {ws.rel(Path(p)) for p in paths}
    targets = {t.target for t in report.trails if t.target is not None}
    manifests = {ws.rel(ws.trailmaps_dir / t / "trailmap.yaml") for t in targets}

    def keep(finding: Finding) -> bool:
        return (
            finding.path in given
            or finding.path in manifests
            or (finding.trailmap is not None and finding.trailmap in targets)
            or (finding.kind == "infra" and os.path.isabs(finding.path))
        )

    limited = dataclasses.replace(
        report.only(lambda _: True, keep),
        workspace=str(ws.root),
        sdks={t: label for t, label in report.sdks.items() if t in targets},
    )
    return limited, renamed


def _only_trailmap(report: Report, ws: Workspace, trailmap: str) -> Report:
    """What belongs to one trailmap: the trails that target it or live in its directory, and
    the findings in them and in its files. A missing surface is not fatal on a scoped run,
    as in the reference."""
    directory = ws.rel(ws.trailmaps_dir / trailmap) + "/"

    def keep_trail(status: TrailStatus) -> bool:
        return status.target == trailmap or status.path.startswith(directory)

    trails = {t.path for t in report.trails if keep_trail(t)}

    def keep(finding: Finding) -> bool:
        return (
            finding.path in trails
            or finding.path.startswith(directory)
            or finding.trailmap == trailmap
            or (finding.kind == "infra" and os.path.isabs(finding.path))
        )

    scoped = report.only(keep_trail, keep)
    findings = tuple(
        f.with_(fatal=False) if f.code == codes.NO_SURFACE else f for f in scoped.findings
    )
    sdks = {t: label for t, label in report.sdks.items() if t == trailmap}
    tests = tuple(t for t in scoped.tests if t.trailmap == trailmap)
    return dataclasses.replace(
        scoped, trailmaps=(trailmap,), findings=findings, sdks=sdks, tests=tests
    )


def _is_tool_source_finding(finding: Finding) -> bool:
    """A diagnostic in an authored tool source (what `--no-typecheck` does not report)."""
    kind: str = finding.kind
    if finding.code in (codes.NESTED_NOT_INSTALLED, codes.NESTED_NOT_CHECKED):
        return True  # a nested tool project that was not compiled: its diagnostics are unknown
    return kind == "tool" or (kind == "type" and finding.path.endswith(_TOOL_SOURCE_SUFFIXES))
