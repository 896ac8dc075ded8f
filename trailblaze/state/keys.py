"""Every digest the project computes: cache keys, content digests, our own code's digest.

The modules that own a key decide which inputs it covers (`ResultKey`, `RunInputs`, the no-op
key, the surfaces plan, ...); how those inputs become a digest is decided here, once:

- `digest(*parts)`: SHA-256 over the parts, each preceded by its length (8 bytes, little
  endian). No two part lists share an encoding, so no two share a digest by construction:
  `("ab", "c")`, `("a", "bc")` and `("abc",)` differ. Text is UTF-8 with lone surrogates
  passed through (`surrogatepass`), which gives every string exactly one encoding (a path
  that is not UTF-8 comes from `os` with its bytes as surrogates: `surrogateescape` would
  give it the encoding of another string).
- `content_digest(data)`: the plain SHA-256 of some bytes, hex. The remote cache's CAS
  addresses are exactly that (Bazel's protocol), and a body fetched from it is checked
  against it; also what tells one file's content (`file_digest`) or one catalog (`Catalog.version`).
- `stamps_digest` / `stamped_digest`: a header and every input path with its stamp (size,
  mtime, inode; `fsutil.stamp_of`) or `missing`: what tells that a set of files changed
  without reading them (doit's up-to-date check, the command line's no-op).
- `mac` / `mac_matches`: an HMAC-SHA-256 under a secret of the user's, over length-prefixed
  parts as `digest` encodes them: what authenticates a file we wrote for ourselves in a place
  someone else may write too (`state.kept`).
- `code_stamps_digest` / `code_content_digest`: our own package (modules, catalog, SDK
  declarations, the Node runtime), found by one walker (`package_files`) from
  `trailblaze.PACKAGE_DIR`, by stamps (the no-op key) or by content (the run key): editing any
  file of it is a change even when the version number is not.

No other module of the package imports `hashlib` (a test keeps it so).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
from collections.abc import Iterable

from trailblaze import PACKAGE_DIR
from trailblaze.fsutil import stamp_of

MISSING = "missing"
"""What stands for the stamp, or the content digest, of a file that does not exist."""


def digest(*parts: str | bytes) -> str:
    """The key of `parts`: SHA-256 over the length-prefixed parts (see the module docstring)."""
    return digest_of(parts)


def digest_of(parts: Iterable[str | bytes]) -> str:
    """`digest` of the parts an iterable gives (a long list need not become arguments)."""
    return hashlib.sha256(_encoded(parts)).hexdigest()


def _encoded(parts: Iterable[str | bytes]) -> bytes:
    """The parts, each preceded by its length (see the module docstring)."""
    chunks: list[bytes] = []
    append = chunks.append
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        append(len(data).to_bytes(8, "little"))
        append(data)
    return b"".join(chunks)


def mac(secret: bytes, *parts: str | bytes) -> bytes:
    """The HMAC-SHA-256 (32 bytes) of the length-prefixed `parts` under `secret`."""
    return hmac.new(secret, _encoded(parts), hashlib.sha256).digest()


def mac_matches(secret: bytes, tag: bytes, *parts: str | bytes) -> bool:
    """Whether `tag` is `mac(secret, *parts)`, compared in constant time."""
    return hmac.compare_digest(mac(secret, *parts), tag)


def content_digest(data: bytes) -> str:
    """The SHA-256 of `data`, hex: a CAS address, a file's content."""
    return hashlib.sha256(data).hexdigest()


def file_digest(path: str) -> tuple[str, os.stat_result | None]:
    """The `content_digest` of a file's bytes (or why there are none: `missing`,
    `unreadable:<errno>`) and its `os.stat` (None: missing, or not to be opened).

    `os.open` and `os.read`, not `open()`: a buffered file object per input is most of the
    cost of hashing ten thousand small trails (one `fstat` and one read each here)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return MISSING, None
    except OSError as exc:
        return f"unreadable:{exc.errno}", None
    st = None
    try:
        st = os.fstat(fd)
        data = os.read(fd, st.st_size + 1)
        if len(data) != st.st_size:
            # Changed since the fstat, or a short read: the bytes to the end, as `read()` gives.
            chunks = [data]
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            data = b"".join(chunks)
    except OSError as exc:
        # A directory named like a trail, an unreadable file: the check reports it.
        return f"unreadable:{exc.errno}", st
    finally:
        os.close(fd)
    return content_digest(data), st


def stamps_digest(header: str, paths: Iterable[str], seen: dict[str, os.stat_result | None]) -> str:
    """`stamped_digest` of `header` and every path as `os.stat` finds it now. The `os.stat` of
    each path goes into `seen` (None: missing), so the pipeline need not stat it again."""
    stat = os.stat
    entries: list[str] = []
    append = entries.append
    for path in paths:
        try:
            st: os.stat_result | None = stat(path)
        except OSError:
            st = None
        seen[path] = st
        append(path)
        append(stamp_of(st) if st is not None else MISSING)
    return digest(header, "\0".join(entries))


def stamped_digest(header: str, stats: Iterable[tuple[str, os.stat_result | None]]) -> str:
    """The digest of `header` and of every (path, its `os.stat` or None: missing).

    Two parts: the header, and every path and its stamp joined by NULs. No path holds a NUL
    and no stamp does, so the list reads back one way only; one part for ten thousand paths
    is one encode and one hash update instead of ten thousand (the no-op's hot path)."""
    entries: list[str] = []
    append = entries.append
    for path, st in stats:
        append(path)
        append(stamp_of(st) if st is not None else MISSING)
    return digest(header, "\0".join(entries))


def package_files(root: str = PACKAGE_DIR) -> list[tuple[str, str]]:
    """(path relative to `root` with `/`, absolute path) of every file of our own package, in
    a stable order: every file but bytecode, so that a data file of a new kind is covered too."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(dirpath, name)
            found.append((os.path.relpath(path, root).replace(os.sep, "/"), path))
    return found


def code_stamps_digest(root: str = PACKAGE_DIR) -> str:
    """Our own files by place and stamp (`package_files`; one that vanished meanwhile is
    left out): what the command line's no-op key holds of our code, cheap enough for every run.

    The running package's (`root` by default) is walked once per process: the no-op key, the
    state store's tag (`Store`, opened several times by a no-op and by doit's up-to-date
    checks) and doit's key all ask for it, and the code this process runs is the one its
    files held when first asked (a file edited during a run does not describe that run)."""
    if root == PACKAGE_DIR:
        return _running_code_stamps()
    return _code_stamps(root)


@functools.cache
def _running_code_stamps() -> str:
    return _code_stamps(PACKAGE_DIR)


def _code_stamps(root: str) -> str:
    pairs = []
    for _, path in package_files(root):
        try:
            pairs.append((path, os.stat(path)))
        except OSError:
            continue
    return stamped_digest("trailblaze-code-stamps", pairs)


def code_content_digest(root: str = PACKAGE_DIR) -> str:
    """Our own files by relative path and content (`package_files`): what the run key holds
    of our code, the same on every machine with the same package."""
    return digest(
        "trailblaze-code-content",
        *(f"{rel}\0{file_digest(path)[0]}" for rel, path in package_files(root)),
    )
