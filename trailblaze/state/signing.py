"""Signed remote-cache entries: Ed25519 signatures made by trusted writers, checked by readers.

Bazel trusts any cache whose bodies match their digests; that catches corruption, not forgery:
whoever can write to the cache (its operator, a compromised server, a pull-request build with
write access) could store a pass. With keys configured, every action-cache entry we write
(a trail's verdict, a run entry, its files entry and shard index, its trail rows) is signed,
and a reader takes only entries signed by a key it trusts. The CAS bodies an entry names are
covered through their digests, which the signed entry holds.

Settings (`Trust.resolve`):

- `[tool.trailblaze] remote-cache-public-keys = ["ed25519:<base64>", ...]` in the workspace's
  `pyproject.toml`: the keys readers accept, several at once while a key is rotated. With
  none, entries are read as before, signed or not.
- `TRAILBLAZE_REMOTE_CACHE_SIGNING_KEY` (the private key itself) or
  `TRAILBLAZE_REMOTE_CACHE_SIGNING_KEY_FILE` (a file holding it): the writer's key, a PEM
  PKCS #8 Ed25519 key (`trailblaze signing-key FILE` makes one, as does `openssl genpkey
  -algorithm ed25519`) or `ed25519-private:<base64 of its 32-byte seed>`. Never in
  `pyproject.toml`. A read-only job needs none.

A signed entry is its payload (the JSON each kind of entry is), a line break, then
`ed25519 <key id> <signature in base64>`. The signature covers a fixed label, the action-cache
key the entry is stored under, and the payload: an entry moved to another key does not verify.
The key id is the first 16 hex digits of the SHA-256 of the raw public key.

`cryptography` is imported only when a key is configured.
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trailblaze.errors import TrailblazeError
from trailblaze.state.keys import content_digest, digest

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

PUBLIC_KEYS_SETTING = "remote-cache-public-keys"
SIGNING_KEY_ENV = "TRAILBLAZE_REMOTE_CACHE_SIGNING_KEY"
SIGNING_KEY_FILE_ENV = "TRAILBLAZE_REMOTE_CACHE_SIGNING_KEY_FILE"
PUBLIC_PREFIX = "ed25519:"
PRIVATE_PREFIX = "ed25519-private:"
_LABEL = b"trailblaze-doit remote-cache entry 1\0"
_MARK = b"ed25519 "
_KEY_FILE_LIMIT = 64 * 1024
_B64_32 = re.compile(r"^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$")


class SigningError(TrailblazeError, ValueError):
    """A signing or public key that cannot be used: a configuration error (exit 2)."""


class Unverified(ValueError):
    """An entry without a valid signature by a trusted key (the message says which)."""


@dataclass(frozen=True, slots=True)
class Trust:
    """The keys of one remote cache: the public keys readers accept, the writer's own key."""

    public: tuple[str, ...] = ()
    """`ed25519:<base64>` keys, sorted; empty: signatures are not checked."""
    secret: bytes | None = field(default=None, repr=False, compare=False)
    """The writer's 32-byte Ed25519 seed; None: this run does not sign."""

    @classmethod
    def resolve(cls, public: Sequence[str], env: Mapping[str, str] | None = None) -> Trust:
        """The trust of a run: `public` from `pyproject.toml`, the signing key from the
        environment. A key that cannot be read, or a signing key whose public key readers
        do not accept, is a `SigningError`."""
        environ = os.environ if env is None else env
        keys = tuple(sorted(set(public)))
        for key in keys:
            _public_key(key)  # each one checked now, not at the first entry read
        secret = _signing_secret(environ)
        if secret is not None and keys:
            mine = public_key_text(secret)
            if mine not in keys:
                raise SigningError(
                    f"the signing key ({_name_env(environ)}) is not one of "
                    f"{PUBLIC_KEYS_SETTING} in pyproject.toml: readers would refuse what it "
                    f"signs; add its public key, {mine}"
                )
        return cls(keys, secret)

    @property
    def verifies(self) -> bool:
        """Whether entries must be signed by one of `public` to be read."""
        return bool(self.public)

    @property
    def signs(self) -> bool:
        return self.secret is not None

    @property
    def scope(self) -> str:
        return trust_scope(self.public)

    def seal(self, key: str, payload: bytes) -> bytes:
        """`payload`, to be stored under `ac/<key>`, with its signature (as it is without a
        signing key)."""
        if self.secret is None:
            return payload
        private = _private_key(self.secret)
        signature = private.sign(_message(key, payload))
        ident = key_id(private.public_key())
        return b"%s\n%s%s %s" % (payload, _MARK, ident.encode(), base64.b64encode(signature))

    def open(self, key: str, raw: bytes) -> bytes:
        """The payload of the entry `raw` read from `ac/<key>`: checked against the public keys
        when there are some (`Unverified` when it is not signed by one of them); a signature
        is dropped unchecked when there are none."""
        payload, trailer = _split(raw)
        if not self.public:
            return payload
        where = f"the entry under ac/{key[:12]}…"
        if trailer is None:
            raise Unverified(f"{where} is not signed ({PUBLIC_KEYS_SETTING} asks for a signature)")
        ident, signature = trailer
        if not ident:
            raise Unverified(f"{where} carries a signature line that cannot be read")
        trusted = {key_id(_public_key(text)): text for text in self.public}
        if ident not in trusted:
            raise Unverified(
                f"{where} is signed by a key not in {PUBLIC_KEYS_SETTING} (key id {ident})"
            )
        from cryptography.exceptions import InvalidSignature  # noqa: PLC0415 - keys configured

        try:
            _public_key(trusted[ident]).verify(signature, _message(key, payload))
        except InvalidSignature:
            raise Unverified(
                f"the signature of {where} does not verify (forged or altered)"
            ) from None
        return payload


def trust_scope(public: Sequence[str]) -> str:
    """What the local state that may hold remote verdicts is kept under: empty without public
    keys, else a digest of them. A verdict served from the remote under some keys (or none) is
    never reused locally under others: it would pass without the signature they ask for."""
    return digest("trailblaze-trust", *sorted(set(public))) if public else ""


def _message(key: str, payload: bytes) -> bytes:
    return _LABEL + key.encode("ascii") + b"\0" + payload


def _split(raw: bytes) -> tuple[bytes, tuple[str, bytes] | None]:
    """The payload and (key id, signature) of an entry; None when it carries no signature line.

    The payloads we write are JSON on one line: a signature is the last line, or none is."""
    payload, sep, last = raw.rpartition(b"\n")
    if not sep or not last.startswith(_MARK):
        return raw, None
    parts = last[len(_MARK) :].split(b" ")
    if len(parts) != 2 or not re.fullmatch(rb"[0-9a-f]{16}", parts[0]):
        return payload, ("", b"")  # a signature line we did not write: not verified
    try:
        signature = base64.b64decode(parts[1], validate=True)
    except (binascii.Error, ValueError):
        signature = b""
    return payload, (parts[0].decode("ascii"), signature)


def key_id(public: Ed25519PublicKey) -> str:
    return content_digest(_raw_public(public))[:16]


def public_key_text(secret: bytes) -> str:
    """`ed25519:<base64>`, the public key of a 32-byte seed, as `pyproject.toml` lists it."""
    return PUBLIC_PREFIX + base64.b64encode(_raw_public(_private_key(secret).public_key())).decode()


def _raw_public(public: Ed25519PublicKey) -> bytes:
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415 - keys configured

    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


@functools.cache
def _public_key(text: str) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PublicKey,
    )

    encoded = text[len(PUBLIC_PREFIX) :] if text.startswith(PUBLIC_PREFIX) else ""
    if not _B64_32.match(encoded):
        raise SigningError(
            f"{PUBLIC_KEYS_SETTING}: {text[:60]!r} is not 'ed25519:' and 32 bytes in base64"
        )
    try:
        return Ed25519PublicKey.from_public_bytes(base64.b64decode(encoded))
    except ValueError:
        raise SigningError(
            f"{PUBLIC_KEYS_SETTING}: {text!r} is not an Ed25519 public key"
        ) from None


@functools.cache
def _private_key(secret: bytes) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
    )

    return Ed25519PrivateKey.from_private_bytes(secret)


def _name_env(env: Mapping[str, str]) -> str:
    if env.get(SIGNING_KEY_ENV, "").strip():
        return SIGNING_KEY_ENV
    return f"{SIGNING_KEY_FILE_ENV}={env.get(SIGNING_KEY_FILE_ENV, '').strip()}"


def _signing_secret(env: Mapping[str, str]) -> bytes | None:
    """The writer's seed from the environment, or None; never shown in a message."""
    inline = env.get(SIGNING_KEY_ENV, "").strip()
    path = env.get(SIGNING_KEY_FILE_ENV, "").strip()
    if inline and path:
        raise SigningError(f"set {SIGNING_KEY_ENV} or {SIGNING_KEY_FILE_ENV}, not both")
    if path:
        try:
            with open(path, "rb") as handle:
                data = handle.read(_KEY_FILE_LIMIT + 1)
        except OSError as exc:
            raise SigningError(
                f"{SIGNING_KEY_FILE_ENV}: cannot read {path}: {exc.strerror or exc}"
            ) from None
        if len(data) > _KEY_FILE_LIMIT:
            raise SigningError(f"{SIGNING_KEY_FILE_ENV}: {path} is too large to be a key")
        return parse_private_key(data, f"{SIGNING_KEY_FILE_ENV} ({path})")
    if inline:
        return parse_private_key(inline.encode("utf-8", "replace"), SIGNING_KEY_ENV)
    return None


def parse_private_key(data: bytes, where: str) -> bytes:
    """The 32-byte seed of a PEM PKCS #8 Ed25519 private key or of `ed25519-private:<base64>`;
    a `SigningError` naming `where` (never the key's text) otherwise."""
    text = data.strip()
    if text.startswith(PRIVATE_PREFIX.encode()):
        try:
            seed = base64.b64decode(text[len(PRIVATE_PREFIX) :], validate=True)
        except (binascii.Error, ValueError):
            seed = b""
        if len(seed) != 32:
            raise SigningError(f"{where}: not 'ed25519-private:' and 32 bytes in base64")
        return seed
    if text.startswith(b"-----BEGIN"):
        from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
        from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
            Ed25519PrivateKey,
        )

        try:
            key = serialization.load_pem_private_key(text, password=None)
        except (ValueError, TypeError) as exc:
            raise SigningError(
                f"{where}: not an unencrypted PEM private key ({type(exc).__name__})"
            ) from None
        if not isinstance(key, Ed25519PrivateKey):
            raise SigningError(f"{where}: a private key, but not an Ed25519 one")
        return key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
    raise SigningError(
        f"{where}: not an Ed25519 private key (PEM, or 'ed25519-private:' and its seed in base64)"
    )


def new_private_key() -> tuple[bytes, bytes]:
    """A new key: its PEM (PKCS #8, unencrypted) and its 32-byte seed."""
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
    )

    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    seed = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return pem, seed
