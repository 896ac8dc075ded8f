"""Writing files safely: atomically, and only when the content changes.

A reader never sees a half-written file (write to a temporary file in the same directory, then
`os.replace`), and an identical rewrite leaves the file and its mtime alone, so doit and editors
see no change.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes | str) -> None:
    """Replace `path` with `data` in one step."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


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
