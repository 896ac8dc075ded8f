"""Paths as the reader sees them: relative to where the command runs, or to `--path-base`.

The pipeline's findings and statuses carry workspace-relative paths. What a person (or a CI
service) reads is relative to the directory the command runs from, so that in a monorepo
`apps/shop/trailmaps/...` is a path that opens. GitHub annotations and SARIF attach to
repository paths: for them the default base is the git root.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Mapping
from pathlib import Path

REPOSITORY_FORMATS = frozenset({"github", "sarif"})
"""Formats read by code hosts, whose paths are relative to the repository root."""


def git_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a directory, or a worktree's
    file); None outside a repository. No `git` process: a marker walk, like git's own."""
    here = start.absolute()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def default_base(fmt: str, workspace: Path, cwd: Path | None = None) -> Path:
    """Where paths are relative to when `--path-base` is not given."""
    here = (cwd if cwd is not None else Path.cwd()).absolute()
    if fmt in REPOSITORY_FORMATS:
        return git_root(workspace) or here
    return here


def unmoved(workspace: Path, base: Path, renamed: Mapping[str, str] | None = None) -> bool:
    """Whether `rebaser` would give every path back as it is: the base is the workspace
    itself and no path is shown as another."""
    return not renamed and os.path.realpath(workspace) == os.path.realpath(base)


def rebaser(
    workspace: Path, base: Path, renamed: Mapping[str, str] | None = None
) -> Callable[[str], str]:
    """A function from a workspace-relative path to one relative to `base` (POSIX separators).

    Absolute paths (outside the workspace: the compiler's location, say) stay as they are.
    `renamed` maps workspace-relative paths to what to show instead: an absolute path (a file
    checked as a copy) is shown relative to `base`, anything else (`<stdin>`) as it is.
    """
    root = os.path.realpath(workspace)
    target = os.path.realpath(base)
    names = dict(renamed or {})
    prefix = os.path.relpath(root, target).replace(os.sep, "/")
    inside = prefix == "." or not (prefix == ".." or prefix.startswith("../"))

    def rebase(path: str) -> str:
        shown = names.get(path)
        if shown is not None:
            if os.path.isabs(shown):
                return os.path.relpath(os.path.realpath(shown), target).replace(os.sep, "/")
            return shown
        if not path or posixpath.isabs(path) or os.path.isabs(path):
            return path
        if prefix == ".":
            return path
        if inside:
            # The workspace is below the base: one string join, for ten thousand statuses.
            return f"{prefix}/{path}"
        return os.path.relpath(os.path.join(root, path), target).replace(os.sep, "/")

    return rebase
