"""`DOIT_CONFIG` for a workspace or a monorepo, and doit's dependency file in our scratch dir.

sqlite3 rather than doit's default dbm (which is the slow `dbm.dumb` on many Pythons) or json
(rewritten whole, non-atomically, on every run). Nothing is written when a config is made
(importing a dodo.py must not write): the scratch directory is made, and describes itself,
when doit opens its dependency file. This module imports nothing of doit.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trailblaze.state.owned import WHOLE
from trailblaze.state.scratch import (
    GITIGNORE,
    Layout,
    ScratchError,
    prepare_scratch,
    write_scratch,
)
from trailblaze.workspace import Workspace, WorkspaceError, find_workspace


def workspace_of(root: str | Path | None) -> Workspace:
    """The workspace at `root` (which must be one), or the current directory's."""
    if root is None:
        return find_workspace()
    return find_workspace(Path(root), explicit=True)


def doit_config(workspace: str | Path | None = None) -> dict[str, Any]:
    """`DOIT_CONFIG` for a workspace: sqlite3 backend in the scratch dir, `check` by default."""
    try:
        scratch: Path | None = workspace_of(workspace).scratch
    except WorkspaceError:
        # The tasks say what is wrong (a task that fails with the message); doit needs a
        # database, and this run's is kept in memory: nothing is written anywhere.
        scratch = None
    return _config(scratch)


def monorepo_config(root: str | Path = ".") -> dict[str, Any]:
    """`DOIT_CONFIG` for a monorepo's root `dodo.py`: one sqlite3 database, in the root's
    `.trailblaze/`, for the tasks of every workspace; `check` by default."""
    return _config(Path(root).absolute() / ".trailblaze")


def _config(scratch: Path | None) -> dict[str, Any]:
    return {"backend": "sqlite3", "dep_file": DepFile(scratch), "default_tasks": ["check"]}


IN_MEMORY = ":memory:"
"""What doit's database is when the scratch directory cannot hold it: one run's, in memory."""

_problem: list[str] = []
"""Why doit's database could not go in the scratch directory, once it was opened."""


def dep_file_problem() -> str | None:
    """Why doit's database of this run is not in the scratch directory (a file of someone
    else's in its way, say), or None: every task of the run fails with it."""
    return _problem[-1] if _problem else None


class DepFile(os.PathLike[str]):
    """doit's dependency file in the scratch directory, which is made (and described) only
    when the file is opened: doit opens it by path, through `os.fspath`."""

    def __init__(self, scratch: Path | None) -> None:
        self.scratch = scratch
        self.path = str(Layout(scratch).doit_db) if scratch is not None else IN_MEMORY

    def __fspath__(self) -> str:
        if self.scratch is None:
            return IN_MEMORY
        try:
            return str(_prepared(self.scratch).doit_db)
        except ScratchError as exc:
            _problem.append(str(exc))
            return IN_MEMORY

    def __str__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return repr(self.path)

    def __eq__(self, other: object) -> bool:
        return str(other) == self.path

    def __hash__(self) -> int:
        return hash(self.path)


def _prepared(scratch: Path) -> Layout:
    """The scratch directory, made and describing itself (`.gitignore`), for doit's database.

    Ours in the way of doit's database (a directory where it belongs, a link) is cleared, as
    doit would fail on it with a traceback; anything else is a `ScratchError` naming it.
    """
    layout = Layout(scratch)
    owned = prepare_scratch(scratch)
    # Only in a directory that is ours whole: a `*` in one we found would hide its owner's
    # files from git.
    if WHOLE in owned.claims and not os.path.lexists(layout.gitignore):
        write_scratch(layout.gitignore, GITIGNORE, scratch)
    owned.claim(layout.doit_db)
    owned.no_link(layout.doit_db)
    if os.path.lexists(layout.doit_db) and not os.path.isfile(layout.doit_db):
        owned.clear(layout.doit_db)
    return layout
