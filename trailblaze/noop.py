"""The command line's no-op: a check whose inputs did not change repeats its recorded output.

`doit check` skips an unchanged workspace through doit's bookkeeping; `trailblaze check` (what
CI runs, because it chooses the report format) does the same here. The key is a digest of
every input file's path and stamp (size, mtime, inode; the same inputs as the doit task) with
everything else that shapes the output: the options, the format, the directory the command
runs in (paths are shown relative to it), our version and the stamps of our own files. A run whose check was complete (no
infrastructure problem) records its output under that key; the next run with the same key
writes the recorded bytes and exits with the recorded code, without loading the pipeline.

Anything missing, unreadable or not matching its digest is a miss: the check runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from trailblaze import __version__
from trailblaze.fsutil import stamp_of, write_atomic

RECORD_FORMAT = 1
_RECORD = "cli-outputs.json"


def inputs_key(paths: Iterable[str], settings: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The key of a run, and the `os.stat` of every input (None: missing) for the pipeline."""
    stat = os.stat
    seen: dict[str, Any] = {}
    parts = [json.dumps({**settings, "version": __version__, "code": _code()}, sort_keys=True)]
    for path in paths:
        try:
            st = seen[path] = stat(path)
            parts.append(f"{path}\0{stamp_of(st)}")
        except OSError:
            seen[path] = None
            parts.append(f"{path}\0missing")
    key = hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()
    return key, seen


def _code() -> str:
    """The stamps of our own installed files (modules, catalog, SDK declarations): an upgrade,
    or an edited checkout, is a change even when the version number is not."""
    parts = []
    for dirpath, dirnames, filenames in os.walk(_PACKAGE):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".json", ".ts", ".cjs", ".js")):
                path = os.path.join(dirpath, name)
                with contextlib.suppress(OSError):
                    parts.append(f"{path}\0{stamp_of(os.stat(path))}")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


class Outputs:
    """The outputs recorded for one key, one file per variant (format and its settings)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.record = directory / _RECORD

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.record.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
            return {}
        return data

    def lookup(self, key: str, variant: str) -> tuple[bytes, int] | None:
        """(output, exit code) recorded for `key` in `variant`, or None."""
        data = self._load()
        entry = data.get("outputs", {}).get(variant) if data.get("key") == key else None
        if not isinstance(entry, dict):
            return None
        try:
            output = (self.directory / entry["file"]).read_bytes()
        except (OSError, KeyError, TypeError):
            return None
        if hashlib.sha256(output).hexdigest() != entry.get("sha256"):
            return None
        code = entry.get("exit_code")
        return (output, code) if isinstance(code, int) else None

    def remember(self, key: str, variant: str, output: bytes, exit_code: int) -> None:
        data = self._load()
        outputs = data.get("outputs", {}) if data.get("key") == key else {}
        name = f"cli-output.{hashlib.sha256(variant.encode()).hexdigest()[:16]}"
        try:
            write_atomic(self.directory / name, output)
            outputs[variant] = {
                "file": name,
                "sha256": hashlib.sha256(output).hexdigest(),
                "exit_code": exit_code,
            }
            write_atomic(
                self.record,
                json.dumps({"format": RECORD_FORMAT, "key": key, "outputs": outputs}) + "\n",
            )
        except OSError:
            pass  # not recorded: the next run checks again

    def forget(self) -> None:
        self.record.unlink(missing_ok=True)
