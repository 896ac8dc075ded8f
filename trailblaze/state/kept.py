"""Objects kept between runs in the scratch directory, sealed under a secret of the user's.

Some of what a run builds is cheaper to load than to build again (`check.keptphase`: the
workspace's stages and the type gate's preparation), but is made of objects only `pickle`
keeps, and unpickling runs whatever the bytes ask for. The scratch directory is inside the
workspace, and a workspace is not to be trusted (a cloned repository may carry a
`.trailblaze/` of someone else's): bytes from there are unpickled only when they carry an HMAC
under a secret that never was in the workspace.

- The secret: 32 random bytes in `<user cache>/trailblaze-doit/kept-secret` (the user cache
  is `$XDG_CACHE_HOME`, else `~/.cache`, as for the toolchain), made once, mode 0600,
  atomically (written under another name, then linked into place: two runs racing keep the
  first). One that is not a regular file of this user's, readable by others, or not 32 bytes
  is not used. No secret (the cache directory cannot be written): nothing is kept.
- A sealed file: `MAGIC`, the tag (32 bytes), the header's length (4 bytes, little endian),
  the header (JSON: what the file is keyed by, compared by its owner before anything is
  unpickled), then the pickled body. The tag covers a label, the place the file was written
  for (a file copied from elsewhere does not verify), the header and the body.

`open_sealed` gives the header and a way to unpickle the body, or None for anything but a file
we sealed for this place: missing, truncated, another format, another secret.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec
import orjson

from trailblaze.state.keys import mac, mac_matches

MAGIC = b"trailblaze-kept 1\n"
SECRET_NAME = "kept-secret"
LABEL = b"trailblaze-doit kept object 1"
_SECRET_SIZE = 32
_TAG_SIZE = 32
LIMIT = 64 * 1024 * 1024
"""A kept file larger than this is not read (ours are a few hundred kilobytes at most)."""


def user_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CACHE_HOME/trailblaze-doit`, else `~/.cache/trailblaze-doit` (a relative
    `XDG_CACHE_HOME` is invalid and ignored, as XDG says)."""
    environ = os.environ if env is None else env
    xdg = environ.get("XDG_CACHE_HOME", "").strip()
    cache = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return cache / "trailblaze-doit"


def local_secret(*, create: bool = True, env: Mapping[str, str] | None = None) -> bytes | None:
    """The user's secret for sealed files, made when missing and `create`; None when there is
    none to be had (see the module docstring)."""
    path = user_cache_dir(env) / SECRET_NAME
    found = _read_secret(path)
    if found is not None or not create:
        return found
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _make_secret(path)
    except (OSError, RuntimeError):
        return None
    return _read_secret(path)


def _read_regular(path: Path, fits: Callable[[os.stat_result], bool]) -> bytes | None:
    """The bytes of the regular file at `path` (not followed if a link) when its `fstat`
    `fits`; None otherwise or when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not fits(st):
            return None
        return os.read(fd, st.st_size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def _private_secret(st: os.stat_result) -> bool:
    return st.st_uid == os.geteuid() and not st.st_mode & 0o077 and st.st_size == _SECRET_SIZE


def _read_secret(path: Path) -> bytes | None:
    data = _read_regular(path, _private_secret)
    return data if data is not None and len(data) == _SECRET_SIZE else None


def _make_secret(path: Path) -> None:
    """A new secret at `path`, unless one is there already: written in full under a name of
    its own (mode 0600 from the start), then linked into place, which fails when another run
    linked its own first (that one is kept)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        try:
            os.fchmod(fd, 0o600)  # whatever the umask
            data = os.urandom(_SECRET_SIZE)
            if os.write(fd, data) != len(data):
                raise RuntimeError("short write")
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def seal(secret: bytes, place: str, header: Mapping[str, Any], body: object) -> bytes:
    """The sealed file's bytes: `header` (JSON) and `body` (pickled) under `secret`, for
    `place` (where it is to be written); a `ValueError` when `body` cannot be pickled."""
    head = orjson.dumps(header)
    try:
        data = pickle.dumps(body, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
        raise ValueError(f"cannot be kept: {exc}") from None
    tag = mac(secret, LABEL, place, head, data)
    return b"".join((MAGIC, tag, len(head).to_bytes(4, "little"), head, data))


class Sealed(msgspec.Struct, frozen=True):
    """A sealed file that verified: its header, and its body still pickled."""

    header: dict[str, Any]
    body: bytes

    def load(self) -> object:
        """The body, unpickled (verified bytes: ours, as we wrote them). Any failure to
        rebuild it (a class gone since) is None."""
        try:
            # Verified bytes (`open_sealed`): ours, as we wrote them.
            return pickle.loads(self.body)
        except Exception:  # whatever rebuilding them raises (a class gone since) is a miss
            return None


def open_sealed(path: Path, secret: bytes, place: str) -> Sealed | None:
    """The sealed file at `path` when it verifies under `secret` for `place`; None otherwise
    (nothing of it is unpickled here)."""
    raw = _read_regular(path, lambda st: st.st_size <= LIMIT)
    if raw is None:
        return None
    start = len(MAGIC) + _TAG_SIZE + 4
    if len(raw) < start or not raw.startswith(MAGIC):
        return None
    tag = raw[len(MAGIC) : len(MAGIC) + _TAG_SIZE]
    size = int.from_bytes(raw[start - 4 : start], "little")
    if start + size > len(raw):
        return None
    head, body = raw[start : start + size], raw[start + size :]
    if not mac_matches(secret, tag, LABEL, place, head, body):
        return None
    try:
        header = orjson.loads(head)
    except orjson.JSONDecodeError:
        return None
    return Sealed(header, body) if isinstance(header, dict) else None
