"""What the compiler read beyond a check's inputs: the run's record of it, and how a file is told.

The keys of a check are made of its inputs (trails, manifests, the tool files of each trailmap),
but the type gate's compilers read more: a type a scripted tool imports from `tools/build/`, a
package in a `node_modules` of the workspace or above it, a declaration file anywhere. The proof
of compile names every file a compiler read (`--listFiles`); the type gate keeps those that are
neither ours (what we write for the compilers in the scratch directory, the files we generate
into `tools/`) nor the pinned toolchain's, nor inputs already, with the `package.json` of each
package they belong to (it decides which of the package's files is read), and records them
here, each with its token, once per run (`COMPILE_READS`). Every key that can repeat a verdict covers them:

- the command line's no-op and doit's up-to-date check by stamp: they stat the recorded files
  with the inputs (`recorded_paths`);
- the per-trail result key and the type gate's own memos by token (`read_token`: the content's
  digest), read before the compiles that may read them;
- a run entry of the remote cache by token too: it lists them (`shown_read`), and a reader whose
  files differ takes the entry as a miss.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trailblaze.fsutil import Stamp, stamp_of
from trailblaze.state.keys import MISSING, digest, file_digest
from trailblaze.state.store import Kind, Store

READ_LIMIT = 64 << 20
"""The largest file read for its token; a larger one is told by its size alone, and no verdict
that depends on it is cached by content."""

_UNTOLD = ("unreadable:", "large:", "special:")
"""How the tokens of files whose content could not be told begin."""


def read_token(path: str, limit: int = READ_LIMIT) -> tuple[str, os.stat_result | None]:
    """The token of a file the compiler read, and its `os.stat` taken before reading it.

    A regular file's token is the digest of its bytes; a file that is gone is `missing`. A
    directory, a device, a pipe (nothing a compiler lists, but a run entry may name anything)
    is never opened, nor is a file over `limit` (`READ_LIMIT`): their tokens say what they
    are, and `told` is false of them."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return MISSING, None
    except OSError as exc:
        return f"unreadable:{exc.errno}", None
    if not stat.S_ISREG(st.st_mode):
        return f"special:{stat.S_IFMT(st.st_mode)}", st
    if st.st_size > min(limit, READ_LIMIT):
        return f"large:{st.st_size}", st
    token, _ = file_digest(path)
    return token, st


def told(token: str) -> bool:
    """Whether a token tells the file's content (or that it is missing)."""
    return not token.startswith(_UNTOLD)


def shown_read(path: str, root: Path) -> str:
    """A recorded file as the shared keys name it: relative to the workspace root with `/`
    inside it, absolute outside it (the same on every clone at any place)."""
    prefix = str(root) + os.sep
    if path.startswith(prefix):
        return path[len(prefix) :].replace(os.sep, "/")
    return path


def resolve_read(name: str, root: Path) -> str | None:
    """The file a shared key's `name` stands for in the workspace at `root`, or None when the
    name cannot be one that `shown_read` gives (a relative name that climbs out, an empty one)."""
    if os.path.isabs(name):
        return os.path.normpath(name) if name == os.path.normpath(name) else None
    parts = name.split("/")
    if not name or any(part in ("", ".", "..") for part in parts):
        return None
    return os.path.join(str(root), *parts)


@dataclass(frozen=True, slots=True)
class Read:
    """One recorded file: its token, and its stamp when the token was read (None: missing)."""

    token: str
    stamp: Stamp | None


def _reads(data: Any) -> dict[str, Read]:
    if not isinstance(data, dict):
        raise TypeError("recorded reads are a mapping")
    out: dict[str, Read] = {}
    for path, pair in data.items():
        if (
            not isinstance(path, str)
            or not isinstance(pair, list)
            or len(pair) != 2
            or not isinstance(pair[0], str)
            or not (pair[1] is None or isinstance(pair[1], str))
        ):
            raise TypeError("malformed recorded read")
        out[path] = Read(pair[0], pair[1])
    return out


def _reads_json(reads: Mapping[str, Read]) -> dict[str, list[str | None]]:
    return {path: [read.token, read.stamp] for path, read in sorted(reads.items())}


COMPILE_READS: Kind[dict[str, Read]] = Kind("compile-reads", _reads, _reads_json)
"""The files the last run's compilers read beyond the inputs (absolute path -> `Read`).

It vouches for no file: a reader that finds one changed must still see the list, so that its
key differs from the one recorded with it."""


def recorded_reads(store: Store) -> dict[str, Read]:
    """The files the last run's compilers read beyond the inputs ({}: none, or no record)."""
    return store.get(COMPILE_READS) or {}


def recorded_paths(store: Store) -> list[str]:
    """The paths of `recorded_reads`, sorted: what the stamp keys add to the inputs."""
    return sorted(recorded_reads(store))


def record_reads(store: Store, reads: Mapping[str, tuple[str, os.stat_result | None]]) -> None:
    """Stage the run's record: each file's token and the `os.stat` it was read with."""
    store.put(
        COMPILE_READS,
        "",
        {
            path: Read(token, stamp_of(st) if st is not None else None)
            for path, (token, st) in reads.items()
        },
    )


def reads_digest(tokens: Mapping[str, str], root: Path) -> str:
    """The digest of recorded files and their tokens, as the shared keys name them."""
    shown = sorted((shown_read(path, root), token) for path, token in tokens.items())
    return digest(
        "trailblaze-compile-reads", "\0".join(f"{name}\0{token}" for name, token in shown)
    )


def add_reads(store: Store, reads: Mapping[str, tuple[str, os.stat_result | None]]) -> None:
    """Stage `reads` (files another phase's keys were made of, the unit tests' packages) into
    the run's record, beside what the compilers read: the no-op keys cover them too."""
    current = dict(recorded_reads(store))
    for path, (token, st) in reads.items():
        current[path] = Read(token, stamp_of(st) if st is not None else None)
    store.put(COMPILE_READS, "", current)
