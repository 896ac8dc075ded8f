"""The fake device's file system: path -> bytes, below the directories every device has.

The shell (redirections, ``cat``, ``rm``, ``ls``), the ``sync:`` protocol and the screen dump
all read and write here, and nothing else of the device: ``Files`` is all they are given.
"""

from __future__ import annotations

import stat
import threading
from collections.abc import Mapping

DIRECTORIES = frozenset(
    {"/", "/data", "/data/local", "/data/local/tmp", "/sdcard", "/sdcard/Download"}
)


class Files:
    """Files by absolute path; every method takes the device's lock (shared, re-entrant)."""

    def __init__(self, initial: Mapping[str, bytes], lock: threading.RLock) -> None:
        self.data: dict[str, bytes] = dict(initial)
        """The files themselves, for tests to inspect (hold ``lock`` while the server runs)."""
        self.lock = lock

    def read(self, path: str) -> bytes | None:
        with self.lock:
            return self.data.get(path)

    def write(self, path: str, data: bytes, *, append: bool = False) -> None:
        with self.lock:
            self.data[path] = (self.data.get(path, b"") if append else b"") + data

    def remove(self, path: str) -> bool:
        """Delete a file; False when there was none."""
        with self.lock:
            return self.data.pop(path, None) is not None

    def list_dir(self, path: str) -> dict[str, tuple[int, int]] | None:
        """Immediate children of a directory as name -> (mode, size), or None if it is not one."""
        prefix = path.rstrip("/") + "/"
        entries: dict[str, tuple[int, int]] = {}
        with self.lock:
            files = dict(self.data)
        for known in DIRECTORIES | set(files):
            if known.startswith(prefix) and known != prefix:
                name, _, below = known[len(prefix) :].partition("/")
                if below or known in DIRECTORIES:
                    entries[name] = (stat.S_IFDIR | 0o755, 4096)
                else:
                    entries[name] = (stat.S_IFREG | 0o644, len(files[known]))
        if not entries and path.rstrip("/") not in DIRECTORIES and path != "/":
            return None
        return entries
