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

from trailblaze.state.scratch import GITIGNORE, Layout, clear_way, prepare_scratch, write_scratch
from trailblaze.workspace import Workspace, WorkspaceError, find_workspace


def workspace_of(root: str | Path | None) -> Workspace:
    """The workspace at `root` (which must be one), or the current directory's."""
    if root is None:
        return find_workspace()
    return find_workspace(Path(root), explicit=True)


def doit_config(workspace: str | Path | None = None) -> dict[str, Any]:
    """`DOIT_CONFIG` for a workspace: sqlite3 backend in the scratch dir, `check` by default."""
    try:
        scratch = workspace_of(workspace).scratch
    except WorkspaceError:
        # The tasks say what is wrong (a task that fails with the message); doit needs a file.
        scratch = Path(".trailblaze")
    return _config(scratch)


def monorepo_config(root: str | Path = ".") -> dict[str, Any]:
    """`DOIT_CONFIG` for a monorepo's root `dodo.py`: one sqlite3 database, in the root's
    `.trailblaze/`, for the tasks of every workspace; `check` by default."""
    return _config(Path(root) / ".trailblaze")


def _config(scratch: Path) -> dict[str, Any]:
    return {"backend": "sqlite3", "dep_file": DepFile(scratch), "default_tasks": ["check"]}


class DepFile(os.PathLike[str]):
    """doit's dependency file in the scratch directory, which is made (and described) only
    when the file is opened: doit opens it by path, through `os.fspath`."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.path = str(Layout(scratch).doit_db)

    def __fspath__(self) -> str:
        return str(_prepared(self.scratch).doit_db)

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

    A scratch path of ours in the way (a file where the directory belongs, a directory where
    doit's database does) is cleared: doit would fail on it with a traceback.
    """
    layout = Layout(scratch)
    clear_way(layout.doit_db, scratch.parent)
    prepare_scratch(scratch)
    if not os.path.isfile(layout.gitignore):
        write_scratch(layout.gitignore, GITIGNORE, scratch)
    return layout
