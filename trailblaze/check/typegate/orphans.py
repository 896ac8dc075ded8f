"""The generated trail modules on disk: which are there, and removing those whose trail is gone."""

from __future__ import annotations

import contextlib
import os
import posixpath
from collections.abc import Iterable
from pathlib import Path

from trailblaze.state.owned import Scratch
from trailblaze.state.scratch import Layout, generated_name


def modules_on_disk(layout: Layout) -> set[str]:
    """The generated modules under `typegate/trails/`, as `generated_name` names them.

    One walk of the directory, not a `stat` per trail: a run served from the state looks at
    every trail's module (a module that is gone is generated again), ten thousand of them.
    """
    trails = os.path.normpath(os.path.abspath(layout.trails_dir))
    found: set[str] = set()
    start = len(trails) + 1
    for dirpath, _, filenames in os.walk(trails):
        prefix = dirpath[start:].replace(os.sep, "/") + "/" if len(dirpath) > len(trails) else ""
        found.update(prefix + name for name in filenames)
    return found


def _normal(name: str) -> str:
    """`name` as a walk of the directory spells it (`..`, `.` and doubled slashes resolved)."""
    if "//" in name or "/." in name or name.startswith("."):
        return posixpath.normpath(name)
    return name


def remove_orphans(layout: Layout, keep_trails: Iterable[str]) -> int:
    """Delete generated trail modules whose trail is not in `keep_trails`; returns how many.

    String paths throughout: this walks every generated module, ten thousand in a large
    workspace, and pathlib would cost more than the walk.
    """
    trails = os.path.normpath(os.path.abspath(layout.trails_dir))
    if not os.path.isdir(trails):
        return 0
    # Compared as `modules_on_disk` names them (relative, POSIX): no join per trail.
    wanted = {_normal(generated_name(rel)) for rel in keep_trails}
    owned = Scratch.of(layout.scratch)
    if not owned.ours(Path(trails)):
        return 0  # a directory we did not make: what is in it is not ours to remove
    removed = 0
    gone: set[str] = set()
    start = len(trails) + 1
    for dirpath, dirnames, filenames in os.walk(trails, topdown=False):
        left = len(filenames) + sum(os.path.join(dirpath, d) not in gone for d in dirnames)
        prefix = dirpath[start:].replace(os.sep, "/") + "/" if len(dirpath) > len(trails) else ""
        for filename in filenames:
            if prefix + filename not in wanted:
                os.unlink(os.path.join(dirpath, filename))
                removed += 1
                left -= 1
        if dirpath != trails and left == 0:
            with contextlib.suppress(OSError):
                os.rmdir(dirpath)
                gone.add(dirpath)
    return removed
