"""Nested tool projects: directories below a trailmap's `tools/` with a `tsconfig.json` of
their own (a host-only tools folder, an MCP server), each compiled as a project of its own.

What the declaration emit (`declarations`) needs to compile one: its files, the arguments it
adds to the project's own tsconfig, the tsconfig that leaves the projects out of the
trailmap's program, and the findings of a project that is not compiled (its dependencies not
installed, an option the pinned compiler refuses). Which directories are projects, and whether
their dependencies resolve, is `trailblaze.workspace`'s (the keys stamp the same files).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from trailblaze import codes
from trailblaze.check.typegate.proof import Diagnostic
from trailblaze.check.typegate.settings import infra_finding
from trailblaze.finding import Finding
from trailblaze.generate.sdk import tsconfig_chain

SOURCE_SUFFIXES = (".ts", ".js", ".mts", ".cts")
"""The sources a tools program compiles (besides its tsconfig)."""

DECLARATION_ONLY = re.compile(r"^TS(2742|2883|40[0-7]\d|408[0-5]|4094|90(0[5-9]|[1-3]\d))$")
"""Diagnostics only a declaration emit gives (a type that cannot be named in a declaration
file, `isolatedDeclarations`): a nested project is checked as `tsc -p` checks it, so they are
not its findings."""


def files_below(directory: Path, pruned: tuple[Path, ...]) -> list[Path]:
    """Every file below `directory`, sorted, outside `pruned` and any `node_modules` (a nested
    project's installed packages are not walked: what the compiler reads of them is a read)."""
    found: list[Path] = []
    if not directory.is_dir():
        return found
    skip = {str(d) for d in pruned}
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = [
            d for d in dirnames if d != "node_modules" and os.path.join(dirpath, d) not in skip
        ]
        found.extend(Path(dirpath) / f for f in filenames)
    return sorted(p for p in found if p.is_file())


def bytes_or_missing(path: Path) -> str:
    """A file's bytes in hex, or `missing`: what a key holds of a file that may be absent."""
    try:
        return path.read_bytes().hex()
    except OSError:
        return "missing"


def project_arguments(project: Path) -> list[str]:
    """What a nested project's compile adds to its own tsconfig.

    - `--rootDir /`: declarations land by the source's own path, whatever its tsconfig
      includes (our `--outDir` would otherwise make TypeScript ask for a `rootDir`);
    - no `.tsbuildinfo` is written next to it;
    - `--skipLibCheck`: the declarations of its packages are not its findings;
    - `--types`: without a `types` setting, every `@types` package visible from it, as the
      TypeScript its own tooling runs (5.x) includes them; the pinned one includes none.
    """
    argv = ["--rootDir", project.anchor, "--incremental", "false", "--composite", "false"]
    # Declaration files are not the project's own: an installed package's may not agree with
    # the pinned compiler's libraries (as in the trailmap's program, which skips them too).
    argv += ["--skipLibCheck"]
    if not _sets_types(project / "tsconfig.json"):
        visible: set[str] = set()
        for directory in (project, *project.parents):
            types = directory / "node_modules" / "@types"
            if types.is_dir():
                visible.update(p.name for p in types.iterdir() if (p / "package.json").is_file())
        if visible:
            argv += ["--types", ",".join(sorted(visible))]
    return argv


def _sets_types(tsconfig: Path) -> bool:
    """Whether a tsconfig (or one it extends by a path) sets `compilerOptions.types`."""
    try:
        for _, data in tsconfig_chain(tsconfig, strict=True):
            options = data.get("compilerOptions")
            if isinstance(options, dict) and "types" in options:
                return True
    except ValueError:
        return True  # the compiler says what is wrong with it
    return False


CONFIG_CODE = re.compile(r"^TS(5\d{3}|6046|6053|6059|63\d\d|18003)$")
"""Diagnostics of a configuration, not of code: an option (TS5xxx), an option's value, a
file it names, `rootDir`, project references, an `include` that finds nothing."""


def refused_options(diagnostics: list[Diagnostic]) -> Diagnostic | None:
    """The first diagnostic about a nested project's configuration (an option the pinned
    compiler removed, an include that finds nothing), or None. Such a project is not checked:
    its other diagnostics come from a program that is not the one its author compiles."""
    for diagnostic in diagnostics:
        if CONFIG_CODE.match(diagnostic.code or ""):
            return diagnostic
    return None


def not_installed(
    project: Path, missing: Iterable[str], trailmap: str, rel: Callable[[Path], str]
) -> Finding:
    """The one finding of a project whose dependencies are not installed (never fatal)."""
    return infra_finding(
        rel(project / "package.json"),
        f"not checked: run `npm install` in {rel(project)} (not installed: "
        f"{', '.join(missing)}); the tools it exports are not type-checked",
        trailmap,
        code=codes.NESTED_NOT_INSTALLED,
    )


def not_checked(
    project: Path, refused: Diagnostic, trailmap: str, rel: Callable[[Path], str]
) -> Finding:
    """The one finding of a project whose tsconfig the pinned compiler refuses (never fatal)."""
    return infra_finding(
        rel(project / "tsconfig.json"),
        f"not checked: the pinned TypeScript cannot compile {rel(project)} with its "
        f"tsconfig.json ({rel(refused.file)}:{refused.line}:{refused.column}: "
        f"{refused.message} [{refused.code}]); the tools it exports are not type-checked",
        trailmap,
        code=codes.NESTED_NOT_CHECKED,
    )


def exclusion_config(
    tsconfig: Path, tools_dir: Path, nested: Iterable[Path]
) -> dict[str, Any] | None:
    """A tsconfig extending `tsconfig` that leaves the `nested` projects out of the program.

    `exclude` replaces the one it extends, so that one's patterns are kept (made absolute) and
    tsc's default (`node_modules`) is said again. None when an `exclude` of the chain cannot be
    read: the tsconfig is then used as it is."""
    excluded = _excludes(tsconfig)
    if excluded is None:
        return None
    excluded.append(f"{tools_dir.absolute().as_posix()}/**/node_modules")
    excluded.extend(p.absolute().as_posix() for p in nested)
    return {"extends": tsconfig.absolute().as_posix(), "exclude": excluded}


def _excludes(tsconfig: Path) -> list[str] | None:
    """The `exclude` patterns a tsconfig has (its own or those it extends), absolute; [] when
    none of the chain says (a package's base config: tsc's default, node_modules, is said
    again); None when one cannot be read."""
    try:
        for current, data in tsconfig_chain(tsconfig, strict=True):
            exclude = data.get("exclude")
            if isinstance(exclude, list):
                return [
                    (current.parent / p).absolute().as_posix() if not os.path.isabs(p) else p
                    for p in exclude
                    if isinstance(p, str)
                ]
    except ValueError:
        return None
    return []
