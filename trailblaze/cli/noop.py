"""The command line's no-op: a check whose inputs did not change repeats its recorded output.

`doit check` skips an unchanged workspace through doit's bookkeeping; `trailblaze check` (what
CI runs, because it chooses the report format) does the same here. The key is a digest of
every input file's path and stamp (size, mtime, inode; the same inputs as the doit task), and
of every file the last run's compilers read beyond them (`state.reads`: a type a scripted tool
imports from `tools/build/` or a `node_modules`), with everything else that shapes the output: the options, the format, the directory the command
runs in (paths are shown relative to it), our version and the stamps of our own files. A run whose check was complete (no
infrastructure problem) records its output under that key; the next run with the same key
writes the recorded bytes and exits with the recorded code, without loading the pipeline.

The record is in the state store (`OUTPUT`), the output bytes in a scratch file it vouches for
(`scratch.Layout.cli_output`). Anything missing, unreadable or changed is a miss: the check runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from trailblaze import __version__
from trailblaze.state.keys import code_stamps_digest, stamped_digest, stamps_digest
from trailblaze.state.reads import recorded_paths
from trailblaze.state.scratch import Layout, write_scratch
from trailblaze.state.store import Kind, Store


class Recalled(NamedTuple):
    """What `Outputs.recall` found: the key, the `os.stat` of every file in it, the recorded
    reads it holds, and the output recorded for it."""

    key: str
    stats: dict[str, os.stat_result | None]
    reads: list[str]
    recorded: tuple[bytes, int] | None


def inputs_key(paths: Iterable[str], settings: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The no-op key of a run, and the `os.stat` of every input (None: missing) for the
    pipeline. It covers every input path with its stamp (`keys.stamps_digest`), the settings,
    our version and the stamps of our own files (`keys.code_stamps_digest`)."""
    seen: dict[str, os.stat_result | None] = {}
    return stamps_digest(_header(settings), paths, seen), seen


def known_key(
    paths: Iterable[str], settings: Mapping[str, Any], stats: Mapping[str, os.stat_result | None]
) -> str | None:
    """`inputs_key` from the `os.stat` of every input taken before the check ran (a fresh
    clone's run entry looked at each); None when some input is not in `stats` (statting it
    now could stamp an edit made while the check ran with the output of the check before it)."""
    paths = list(paths)
    if any(path not in stats for path in paths):
        return None
    return stamped_digest(_header(settings), ((path, stats[path]) for path in paths))


def _header(settings: Mapping[str, Any]) -> str:
    return json.dumps(
        {**settings, "version": __version__, "code": code_stamps_digest()}, sort_keys=True
    )


def _exit_code(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("not an exit code")
    return value


OUTPUT: Kind[int] = Kind("cli-output", _exit_code)
"""Per output variant: the exit code of the run whose output `Layout.cli_output` holds, keyed
by the run's `inputs_key`, vouching for that file."""


class Outputs:
    """The outputs recorded for one key, one file per variant (format and its settings)."""

    def __init__(self, scratch: Path) -> None:
        self.layout = Layout(scratch)

    def any_recorded(self) -> bool:
        """Whether there may be a recorded output: False in a fresh clone (no state store)."""
        return self.layout.store.exists()

    def recall(
        self, files: list[str], settings: Mapping[str, Any], variant: str | None
    ) -> Recalled:
        """The no-op key of a run over `files` and the files the last run's compilers read
        (`inputs_key`), and the output recorded for it in `variant` (None: none, or none asked)."""
        with Store.open(self.layout) as store:
            reads = recorded_paths(store)
            key, stats = inputs_key([*files, *reads], settings)
            code = store.get(OUTPUT, variant, key) if variant is not None else None
        recorded = None
        if code is not None and variant is not None:
            try:
                recorded = (self.layout.cli_output(variant).read_bytes(), code)
            except OSError:
                recorded = None
        return Recalled(key=key, stats=stats, reads=reads, recorded=recorded)

    def reads(self) -> list[str]:
        """The files the last run's compilers read beyond the inputs, as recorded now."""
        if not self.layout.store.exists():
            return []
        with Store.open(self.layout) as store:
            return recorded_paths(store)

    def remember(self, key: str, variant: str, output: bytes, exit_code: int) -> None:
        path = self.layout.cli_output(variant)
        with Store.open(self.layout) as store:
            for other in store.slots(OUTPUT):
                if store.get(OUTPUT, other, key) is None:
                    store.drop(OUTPUT, other)  # another key's: the workspace changed since
            try:
                write_scratch(path, output, self.layout.scratch, always=True)
            except OSError:
                store.drop(OUTPUT, variant)  # not recorded: the next run checks again
            else:
                store.put(OUTPUT, variant, exit_code, key=key, files=[path])
            store.commit()

    def forget(self) -> None:
        with Store.open(self.layout) as store:
            for variant in store.slots(OUTPUT):
                store.drop(OUTPUT, variant)
            store.commit()
