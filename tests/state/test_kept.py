"""Objects kept in the scratch directory are unpickled only when sealed under the user's own
secret (`trailblaze/state/kept.py`): a file planted in a workspace never runs code."""

from __future__ import annotations

import os
import pickle
import stat
from pathlib import Path

import pytest

from trailblaze.state.kept import (
    LABEL,
    MAGIC,
    SECRET_NAME,
    local_secret,
    open_sealed,
    seal,
    user_cache_dir,
)
from trailblaze.state.keys import mac


class Planted:
    """A pickle that creates a file when it is loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home / "trailblaze-doit"


def test_the_user_cache_follows_xdg_and_ignores_a_relative_value(tmp_path: Path) -> None:
    assert user_cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "trailblaze-doit"
    assert user_cache_dir({"XDG_CACHE_HOME": "relative"}) == (
        Path.home() / ".cache" / "trailblaze-doit"
    )


def test_the_secret_is_made_once_private_to_the_user(cache: Path) -> None:
    first = local_secret()
    assert first is not None
    assert len(first) == 32
    path = cache / SECRET_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert local_secret() == first
    assert local_secret(create=False) == first
    assert sorted(p.name for p in cache.iterdir()) == [SECRET_NAME]  # no temporary left


def test_no_secret_is_made_when_not_asked(cache: Path) -> None:
    assert local_secret(create=False) is None
    assert not cache.exists()


@pytest.mark.parametrize("problem", ["readable by others", "a link", "too short", "a directory"])
def test_a_secret_that_is_not_private_or_not_one_is_not_used(cache: Path, problem: str) -> None:
    path = cache / SECRET_NAME
    cache.mkdir(parents=True)
    if problem == "readable by others":
        path.write_bytes(b"k" * 32)
        path.chmod(0o644)
    elif problem == "a link":
        target = cache / "elsewhere"
        target.write_bytes(b"k" * 32)
        target.chmod(0o600)
        path.symlink_to(target)
    elif problem == "too short":
        path.write_bytes(b"k" * 31)
        path.chmod(0o600)
    else:
        path.mkdir()
    assert local_secret(create=False) is None
    # Nor is one made in its place: what is there is left as it is.
    assert local_secret() is None


def test_no_secret_when_the_cache_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x", "utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert local_secret() is None


def test_what_is_sealed_opens_with_its_header_and_body(tmp_path: Path) -> None:
    secret = os.urandom(32)
    place = str(tmp_path / "kept")
    data = seal(secret, place, {"key": "k1"}, {"body": [1, 2]})
    (tmp_path / "kept").write_bytes(data)
    sealed = open_sealed(tmp_path / "kept", secret, place)
    assert sealed is not None
    assert sealed.header == {"key": "k1"}
    assert sealed.load() == {"body": [1, 2]}


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :]


def test_anything_but_what_we_sealed_for_this_place_does_not_open(tmp_path: Path) -> None:
    secret = os.urandom(32)
    path = tmp_path / "kept"
    place = str(path)
    data = seal(secret, place, {"key": "k1"}, {"body": [1, 2]})
    tampered = {
        "a byte of the body flipped": _flip(data, len(data) - 3),
        "a byte of the header flipped": _flip(data, len(MAGIC) + 32 + 4 + 2),
        "a byte of the tag flipped": _flip(data, len(MAGIC) + 1),
        "truncated": data[:-5],
        "cut in the header": data[: len(MAGIC) + 20],
        "another format": b"trailblaze-kept 2\n" + data[len(MAGIC) :],
        "sealed with another secret": seal(os.urandom(32), place, {"key": "k1"}, {}),
        "sealed for another place": seal(secret, str(tmp_path / "other"), {"key": "k1"}, {}),
        "empty": b"",
    }
    for name, raw in tampered.items():
        path.write_bytes(raw)
        assert open_sealed(path, secret, place) is None, name
    path.unlink()
    assert open_sealed(path, secret, place) is None


def test_a_planted_pickle_is_never_loaded(tmp_path: Path) -> None:
    secret = os.urandom(32)
    path = tmp_path / "kept"
    marker = tmp_path / "pwned"
    body = pickle.dumps(Planted(marker))
    forged_tag = b"\0" * 32
    head = b"{}"
    planted = {
        "a bare pickle": body,
        "our layout, a made-up tag": MAGIC
        + forged_tag
        + len(head).to_bytes(4, "little")
        + head
        + body,
        "sealed with another secret": seal(os.urandom(32), str(path), {}, Planted(marker)),
    }
    assert not marker.exists()  # sealing pickles, it does not load
    for name, raw in planted.items():
        path.write_bytes(raw)
        sealed = open_sealed(path, secret, str(path))
        assert sealed is None, name
        assert not marker.exists(), name


def test_a_body_that_no_longer_unpickles_is_a_miss(tmp_path: Path) -> None:
    # Sealed by us, but naming a class that is gone since (our code changed): no traceback.
    secret = os.urandom(32)
    path = tmp_path / "kept"
    head = b"{}"
    gone = b"\x80\x04cno_such_module\nThing\n."
    tag = mac(secret, LABEL, str(path), head, gone)
    path.write_bytes(MAGIC + tag + len(head).to_bytes(4, "little") + head + gone)
    sealed = open_sealed(path, secret, str(path))
    assert sealed is not None
    assert sealed.load() is None
