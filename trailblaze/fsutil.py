"""Writing files safely: atomically, and only when the content changes.

A reader never sees a half-written file (write to a temporary file in the same directory, then
`os.replace`), and an identical rewrite leaves the file and its mtime alone, so doit and editors
see no change.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


Stamp = str
"""A file's "size:mtime_ns:inode": compared, never taken apart (see `stamp_of`)."""


def stamp_of(st: os.stat_result) -> Stamp:
    """A file's stamp from its `stat`: what tells a changed file (state, doit digests)."""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def file_stamp(path: str | Path) -> list[int] | None:
    """(mtime_ns, size, inode) of a file, None when it is missing: what memos compare."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def write_atomic(path: Path, data: bytes | str) -> None:
    """Replace `path` with `data` in one step."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        _name(exc, path)
        raise
    try:
        # mkstemp creates 0600 files; give the file the mode a plain open() would have.
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            _name(exc, path)
        raise


def _name(exc: OSError, path: Path) -> None:
    """Have `exc` name `path` when it names no file (a write that ran out of space names
    none): what `errors.machine_error` tells the user."""
    if exc.filename is None:
        exc.filename = str(path)


def write_named(path: Path, data: bytes | str) -> None:
    """Write a file the user named (`--output`, `--json`), as a shell's `>` would but atomically.

    A regular file (or none yet) is replaced in one step, through a symlink the file it points
    at; a device, pipe or socket (`/dev/stdout`, `>(cmd)`, a FIFO) is written to, not replaced
    by a file of its name.
    """
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode) and not path.is_dir()
    except OSError:
        special = False
    if special:
        payload = data.encode("utf-8") if isinstance(data, str) else data
        with open(path, "wb") as handle:
            handle.write(payload)
        return
    write_atomic(Path(os.path.realpath(path)) if path.is_symlink() else path, data)


def write_if_changed(path: Path, data: bytes | str) -> bool:
    """Write `data` unless the file already holds exactly that; True when it wrote."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if path.stat().st_size == len(payload) and path.read_bytes() == payload:
            return False
    except OSError:
        pass
    write_atomic(path, payload)
    return True


def write_generated(path: Path, data: str) -> bool:
    """`write_if_changed` for files only we read, cheaper when the file is new.

    A new file is created in place (one inode, no temporary name, no rename): a reader racing
    with the write could see it incomplete, which for a generated module means a syntax error,
    reported as a type check that could not run and never cached. An existing file that holds
    something else is removed first and made the same way: renamed over an existing file, a new
    one is flushed to disk on the spot by ext4 (`auto_da_alloc`), some 3 ms, paid on every edit
    of the language server; a generated module is made again from its trail whenever its
    verdict is not in the state, so it need not survive a crash.
    """
    payload = data.encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        try:
            if path.stat().st_size == len(payload) and path.read_bytes() == payload:
                return False
            os.unlink(path)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError:
            return write_if_changed(path, payload)  # a directory in its place, a race: as before
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_generated(path, data)
    try:
        with open(fd, "wb") as handle:  # closes fd; writes every byte
            handle.write(payload)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(path)  # never half a generated module: it is made again next run
        _name(exc, path)
        raise
    return True


def clear_way(path: Path, within: Path) -> bool:
    """Make room for a file of ours at `path`, somewhere below `within`: remove a directory (or
    other non-file) at `path`, and a file where one of its parent directories belongs. True when
    anything was removed.

    Only for paths we created (`state.owned`): it deletes what is in the way. Nothing at or
    above `within` is touched, nor anything a symbolic link leads to outside it.
    """
    removed = False
    try:
        parents = path.parent.relative_to(within).parts
    except ValueError:
        return False
    real_within = os.path.realpath(within)
    real_parent = os.path.realpath(path.parent)
    if real_parent != real_within and not real_parent.startswith(real_within + os.sep):
        return False
    current = within
    for part in parents:
        current = current / part
        with contextlib.suppress(OSError):
            if not stat.S_ISDIR(os.stat(current).st_mode):
                os.unlink(current)
                removed = True
    try:
        st = os.lstat(path)
    except OSError:
        return removed
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path, ignore_errors=True)
        return True
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISLNK(st.st_mode):
        with contextlib.suppress(OSError):
            os.unlink(path)
        return True
    return removed
