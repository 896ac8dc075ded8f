"""The shared remote result cache, on Bazel's HTTP remote-cache protocol.

Two key spaces under one base URL, as Bazel, bazel-remote and an nginx WebDAV location serve
them: `{base}/ac/{key}` (the action cache: any 64-character lowercase hex key) and
`{base}/cas/{sha256}` (the content-addressed store: the key is the SHA-256 of the body).
`GET` fetches (200, or 404 for a miss) and `PUT` stores.

What is shared: the type gate's verdict on one trail (its findings), under a key that covers
every input of that verdict and no path or mtime (`results.ResultKey`, the local cache's key). An action-cache entry holds
the findings with their digest, or, when they are large, the digest of a CAS body holding them;
either way the bytes are checked against the digest, and the entry against the key it was
stored for, before they are trusted.

Faults never decide a check: a server that is down, answers 5xx or an unexpected status, is
slower than the timeout, or sends a short, altered or malformed body is one warning, and the
run goes on locally (the remote is not asked again in that run). Writes happen only for
verdicts the caller proved, and not at all in read-only mode (pull-request builds). Every
exchange is bounded in time and size, and a run's exchanges by a total budget (`transport`).

Configuration: `--remote-cache URL` or `TRAILBLAZE_REMOTE_CACHE`, `--remote-cache-read-only` or
`TRAILBLAZE_REMOTE_CACHE_READ_ONLY` (a switch: `options.env_switch`), a header for auth in
`TRAILBLAZE_REMOTE_CACHE_HEADER` (`Name=Value`, as Bazel's `--remote_header`), basic auth as
`http://user:password@host/` (percent-encoded), `TRAILBLAZE_REMOTE_CACHE_TIMEOUT_MS` (default
5000: silence while connecting or reading), `TRAILBLAZE_REMOTE_CACHE_DEADLINE_MS` (60000: one
request, whole), `..._BUDGET_MS` (300000: a run's requests in all) and `..._MAX_MB` (256: one
body, as read and as inflated). Messages show the URL only through `redaction.redacted_url`.
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import math
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote, unquote, urlsplit

from trailblaze.errors import TrailblazeError
from trailblaze.finding import FINDING_FIELDS, position_in_range
from trailblaze.options import REMOTE_ENV, env_flag, env_milliseconds
from trailblaze.options import REMOTE_READ_ONLY_ENV as READ_ONLY_ENV
from trailblaze.redaction import redacted_url
from trailblaze.report.escaping import printable
from trailblaze.state.keys import content_digest
from trailblaze.state.signing import Trust, Unverified
from trailblaze.state.transport import (
    AC_LIMIT,
    DEADLINE_ENV,
    DEFAULT_BUDGET,
    DEFAULT_DEADLINE,
    DEFAULT_MAX_BYTES,
    MAX_MB_ENV,
    BoundedHTTPConnection,
    BoundedHTTPSConnection,
    Budget,
    Clock,
    TransportFault,
    budget_for,
    budget_seconds,
    describe,
    read_body,
)

HEADER_ENV = "TRAILBLAZE_REMOTE_CACHE_HEADER"
TIMEOUT_ENV = "TRAILBLAZE_REMOTE_CACHE_TIMEOUT_MS"
DEFAULT_TIMEOUT = 5.0
ENTRY_FORMAT = 1
"""The layout of an action-cache entry and of its key: a change makes every old entry a miss."""
INLINE_LIMIT = 16 * 1024
"""Findings up to this many bytes live in the action-cache entry; larger ones in the CAS."""
CONNECTIONS = 4
"""Requests in flight at once (one keep-alive connection each)."""
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HEADER_VALUE = re.compile(r"^[\t\x20-\x7e]*$")
"""What a header value may hold: printable ASCII and tabs (http.client sends nothing else
safely: another character was a UnicodeEncodeError or a forged header line)."""
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
"""What a URL path keeps as it is; anything else (a space, a non-ASCII letter) is
percent-encoded, as a browser does."""


class RemoteConfigError(TrailblazeError, ValueError):
    """A remote-cache setting that cannot work (bad URL or header): a usage error."""


class RemoteFault(Exception):
    """The remote cache did not give a usable answer; the message says what happened."""


@dataclass(frozen=True, slots=True)
class RemoteConfig:
    """Where the remote cache is and how it is talked to."""

    base: str
    """`scheme://host[:port][/path]`, no credentials, no query, no trailing slash."""
    read_only: bool = False
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    """Silence allowed while connecting or reading (`transport`)."""
    deadline: float = DEFAULT_DEADLINE
    """One request, from connecting to the last byte of its answer."""
    budget: float = DEFAULT_BUDGET
    """A run's requests in all (while no run shares its own: `transport.run_budget`)."""
    max_bytes: int = DEFAULT_MAX_BYTES
    """One body, as it comes and as it inflates."""
    trust: Trust = field(default_factory=Trust)
    """The keys entries are signed and checked with (`signing.py`)."""

    @classmethod
    def resolve(
        cls,
        url: str | None = None,
        *,
        read_only: bool = False,
        env: Mapping[str, str] | None = None,
        public_keys: Sequence[str] = (),
    ) -> RemoteConfig | None:
        """The remote cache to use: `url`, else `TRAILBLAZE_REMOTE_CACHE`; None when neither.

        `public_keys` are the workspace's `remote-cache-public-keys`: with some, entries are
        read only when signed by one of them, and written only when a signing key is set
        (unsigned entries would only displace signed ones: without a key, reading only)."""
        environ = os.environ if env is None else env
        raw = (url if url is not None else environ.get(REMOTE_ENV, "")).strip()
        if not raw:
            return None
        try:  # urlsplit refuses some hosts ("http://[::1"), `port` a bad number
            parts = urlsplit(raw)
            port = parts.port
        except ValueError:
            parts, port = urlsplit(""), -1
        hostname = _ascii_host(parts.hostname)
        if parts.scheme not in ("http", "https") or not hostname or port == -1:
            raise RemoteConfigError(
                f"remote cache URL {redacted_url(raw)!r} is not http(s)://HOST[:PORT][/PATH]"
            )
        if "@" in parts.path + parts.query + parts.fragment:
            # `http://user:pa/ss@host/` is the host `user` and the path `/ss@host/`: the rest of
            # the password would go to another server, in the path of every request.
            raise RemoteConfigError(
                f"remote cache URL {redacted_url(raw)!r} has an '@' after its host: "
                "percent-encode a '/', '?', '#' or '@' in its user or password "
                "(%2F, %3F, %23, %40)"
            )
        headers: list[tuple[str, str]] = []
        if parts.username is not None:
            user = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            token = base64.b64encode(user.encode("utf-8")).decode("ascii")
            headers.append(("Authorization", f"Basic {token}"))
        header = environ.get(HEADER_ENV, "").strip()
        if header:
            name, sep, value = header.partition("=")
            name = name.strip()
            if not sep or not _HEADER_NAME.match(name) or "\n" in value or "\r" in value:
                # Nothing of the value is shown: without its `=`, all of it may be the secret.
                raise RemoteConfigError(
                    f"{HEADER_ENV} must be NAME=VALUE with a valid header name "
                    "(its value is not shown: it may hold a secret)"
                )
            if not _HEADER_VALUE.match(value):
                raise RemoteConfigError(
                    f"{HEADER_ENV}: the value of {name} must be printable ASCII (a character "
                    "outside it cannot be sent in an HTTP header)"
                )
            headers = [(n, v) for n, v in headers if n.lower() != name.lower()]
            headers.append((name, value.strip()))
        host = hostname if ":" not in hostname else f"[{hostname}]"
        netloc = f"{host}:{port}" if port is not None else host
        trust = Trust.resolve(public_keys, environ)
        path = quote(parts.path.rstrip("/"), safe=_PATH_SAFE)
        return cls(
            base=f"{parts.scheme}://{netloc}{path}",
            read_only=env_flag(READ_ONLY_ENV, environ)
            or read_only
            or (trust.verifies and not trust.signs),
            headers=tuple(headers),
            timeout=_timeout(environ),
            deadline=env_milliseconds(DEADLINE_ENV, DEFAULT_DEADLINE, floor=0.05, env=environ),
            budget=budget_seconds(environ),
            max_bytes=_max_bytes(environ),
            trust=trust,
        )

    @property
    def shown(self) -> str:
        """The base URL as messages show it (`redaction.redacted_url`)."""
        return redacted_url(self.base)


def _timeout(env: Mapping[str, str]) -> float:
    return env_milliseconds(TIMEOUT_ENV, DEFAULT_TIMEOUT, floor=0.05, env=env)


def _max_bytes(env: Mapping[str, str]) -> int:
    """`TRAILBLAZE_REMOTE_CACHE_MAX_MB` in bytes (at least 64 KiB); the default, with a warning
    (as the milliseconds settings), when it is not a positive number."""
    raw = env.get(MAX_MB_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    try:
        megabytes = float(raw)
    except ValueError:
        megabytes = math.nan
    if not math.isfinite(megabytes) or megabytes <= 0:
        logging.getLogger(__name__).warning(
            "%s=%r is not a number of MiB; using %d", MAX_MB_ENV, raw, DEFAULT_MAX_BYTES >> 20
        )
        return DEFAULT_MAX_BYTES
    return max(64 * 1024, int(megabytes * 1024 * 1024))


def _ascii_host(hostname: str | None) -> str | None:
    """`hostname` as the network knows it (a non-ASCII name in its IDNA form); None when it
    cannot be one (the socket's encoding of it was a traceback)."""
    if not hostname or hostname.isascii():
        return hostname
    try:
        return hostname.encode("idna").decode("ascii")
    except UnicodeError:
        return None


# -- the protocol ------------------------------------------------------------------------------


class HttpCache:
    """`GET`/`PUT` on `{base}/ac/{key}` and `{base}/cas/{sha256}`; one keep-alive connection
    per thread. Every problem is a `RemoteFault`; a 404 is a miss (None)."""

    def __init__(self, config: RemoteConfig) -> None:
        parts = urlsplit(config.base)
        self.config = config
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._prefix = parts.path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPConnection] = set()
        self.budget: Budget = budget_for(config.budget)
        """Shared with every client of the run in progress (`transport.run_budget`)."""
        self.requests = 0
        self.bytes_read = 0
        self.bytes_written = 0

    def get_ac(self, key: str) -> bytes | None:
        return self._get("ac", key)

    def put_ac(self, key: str, data: bytes) -> None:
        self._put("ac", key, data)

    def get_cas(self, key: str) -> bytes | None:
        """A CAS body, checked against its key."""
        data = self._get("cas", key)
        if data is not None and content_digest(data) != key:
            raise RemoteFault(f"the body of cas/{key[:12]}… does not match its digest")
        return data

    def put_cas(self, data: bytes) -> str:
        key = content_digest(data)
        self._put("cas", key, data)
        return key

    def close(self) -> None:
        """Close every thread's connection (call when no request is in flight)."""
        with self._lock:
            conns, self._open = self._open, set()
        for conn in conns:
            conn.close()

    def _drop(self) -> None:
        """Close this thread's connection: the next request opens a new one."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            self._local.conn = None
            with self._lock:
                self._open.discard(conn)
            conn.close()

    def _get(self, space: str, key: str) -> bytes | None:
        status, data = self._request("GET", space, key)
        if status == 404:
            return None
        if status != 200:
            raise RemoteFault(f"GET {space}/{key[:12]}… answered HTTP {status}")
        with self._lock:
            self.bytes_read += len(data)
        return data

    def _put(self, space: str, key: str, data: bytes) -> None:
        status, _ = self._request("PUT", space, key, data)
        if status not in (200, 201, 204):
            raise RemoteFault(f"PUT {space}/{key[:12]}… answered HTTP {status}")
        with self._lock:
            self.bytes_written += len(data)

    def _connection(self) -> tuple[BoundedHTTPConnection, bool]:
        """This thread's connection, and whether it has served a request before."""
        conn: BoundedHTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn, True
        cls = BoundedHTTPSConnection if self._https else BoundedHTTPConnection
        conn = cls(self._host, self._port, timeout=self.config.timeout)
        self._local.conn = conn
        with self._lock:
            self._open.add(conn)
        return conn, False

    def _request(
        self, method: str, space: str, key: str, body: bytes | None = None
    ) -> tuple[int, bytes]:
        if not _HEX64.match(key):
            raise ValueError(f"not a cache key: {key!r}")
        path = f"{self._prefix}/{space}/{key}"
        headers = dict(self.config.headers)
        if body is not None:
            headers["Content-Type"] = "application/octet-stream"
        with self._lock:
            self.requests += 1
        what = f"{method} {space}/{key[:12]}…"
        limit = min(self.config.max_bytes, AC_LIMIT) if space == "ac" else self.config.max_bytes
        try:
            with self.budget.exchange(self.config.timeout, self.config.deadline) as clock:
                return self._exchange(
                    what, clock, method=method, path=path, body=body, headers=headers, limit=limit
                )
        except TransportFault as exc:  # the budget was spent before it began
            raise RemoteFault(f"{what}: {exc}") from None

    def _exchange(
        self,
        what: str,
        clock: Clock,
        *,
        method: str,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
        limit: int,
    ) -> tuple[int, bytes]:
        for attempt in (1, 2):
            conn, reused = self._connection()
            try:
                conn.begin(clock)
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                data = read_body(response, limit)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                self._drop()
                # A kept-alive connection the server closed while idle: once more, afresh.
                if attempt == 1 and reused and not clock.over():
                    continue
                raise RemoteFault(f"{what}: {describe(exc, clock)}") from None
            except (OSError, http.client.HTTPException, TransportFault, UnicodeError) as exc:
                self._drop()
                raise RemoteFault(f"{what}: {describe(exc, clock)}") from None
            if response.will_close:
                self._drop()
            return response.status, data
        raise AssertionError("unreachable")  # pragma: no cover


def decoded_entry(
    raw: bytes, key: str, format_: int, what: str, trust: Trust | None = None
) -> dict[str, Any]:
    """One of our action-cache entries as JSON: an object of format `format_` stored for `key`
    and, when `trust` has public keys, signed by one of them (a `RemoteFault` naming it `what`
    when it is not)."""
    try:
        payload = (trust or _UNSIGNED).open(key, raw)
    except Unverified as exc:
        raise RemoteFault(str(exc)) from None
    entry = peer_json(payload, what)
    if not isinstance(entry, dict) or entry.get("format") != format_:
        raise RemoteFault(f"{what} is of an unknown format")
    if entry.get("key") != key:
        raise RemoteFault(f"the entry under ac/{key[:12]}… was stored for another key")
    return entry


def sealed_entry(payload: dict[str, Any] | bytes, key: str, trust: Trust) -> bytes:
    """An action-cache entry to store under `ac/<key>`: `payload` (compact JSON; bytes: that
    JSON already) with its signature when `trust` has a signing key."""
    data = (
        payload
        if isinstance(payload, bytes)
        else json.dumps(payload, separators=(",", ":")).encode()
    )
    return trust.seal(key, data)


def peer_json(data: bytes | str, what: str) -> Any:
    """JSON from the remote cache (`RemoteFault` when it is not JSON); nesting too deep for
    the parser is not JSON either (a RecursionError, not a traceback)."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        raise RemoteFault(f"{what} is not JSON (cut short or altered)") from None


_UNSIGNED = Trust()


# -- type-gate verdicts ------------------------------------------------------------------------


def _canonical(findings: list[dict[str, Any]]) -> bytes:
    return json.dumps(findings, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


_FIELD_SET = frozenset(FINDING_FIELDS)
_FINDING_TYPES: dict[str, tuple[type, ...]] = {
    "kind": (str,),
    "path": (str,),
    "line": (int,),
    "column": (int,),
    "message": (str,),
    "key_path": (str,),
    "code": (str,),
    "fatal": (bool,),
    "step": (int, type(None)),
    "classifier": (str, type(None)),
    "tool": (str, type(None)),
    "trailmap": (str, type(None)),
    "position": (str, type(None)),
    "property": (str, type(None)),
}


def _valid_findings(data: Any, path: str) -> list[dict[str, Any]]:
    """Findings of one trail's type check as stored by `encode`, or a `RemoteFault`."""
    if not isinstance(data, list):
        raise RemoteFault("an entry's findings are not a list")
    for item in data:
        if (
            not isinstance(item, dict)
            or item.keys() != _FIELD_SET
            or not all(isinstance(item[k], t) for k, t in _FINDING_TYPES.items() if k in item)
            or item["kind"] not in ("type", "warning")  # warnings: codegen's quoted-number
            or item["path"] != path
            or not position_in_range(item["line"], item["column"])
        ):
            raise RemoteFault(f"an entry holds a finding that is not one of {path}'s type findings")
    return data


T = TypeVar("T")
R = TypeVar("R")


class RemoteResults:
    """Trail verdicts in a remote cache: fetched in parallel, stored only when proven.

    The first fault is one warning (through `warn`) and ends the use of the remote for this
    run; what was fetched and verified before it stays good.
    """

    def __init__(self, config: RemoteConfig, warn: Callable[[str], None] | None = None) -> None:
        self.config = config
        self.http = HttpCache(config)
        self._warn = warn or _stderr
        self._lock = threading.Lock()
        self.fault: str | None = None
        self.hits = 0
        self.misses = 0
        self.stored = 0
        self._pool = ThreadPoolExecutor(CONNECTIONS, thread_name_prefix="remote-cache")

    @property
    def usable(self) -> bool:
        return self.fault is None

    def stats(self) -> dict[str, Any]:
        return {
            "remote_hits": self.hits,
            "remote_misses": self.misses,
            "remote_stored": self.stored,
            "remote_requests": self.http.requests,
            "remote_bytes_read": self.http.bytes_read,
            "remote_bytes_written": self.http.bytes_written,
            "remote_fault": self.fault,
        }

    def fetch(self, wanted: Iterable[tuple[str, str]]) -> dict[str, list[dict[str, Any]]]:
        """(key, trail path) pairs -> the verified findings of every key the remote holds."""
        pairs = list(wanted)
        if not pairs or not self.usable:
            return {}
        found: dict[str, list[dict[str, Any]]] = {}
        for key, findings in self._pool.map(self._fetch_one, pairs):
            if findings is not None:
                found[key] = findings
        with self._lock:
            self.hits += len(found)
            self.misses += len(pairs) - len(found)
        return found

    def store(self, entries: Iterable[tuple[str, list[dict[str, Any]]]]) -> None:
        """Proven verdicts (key, findings) to the remote; nothing in read-only mode."""
        if self.config.read_only or not self.usable:
            return
        done = sum(self._pool.map(self._store_one, list(entries)))
        with self._lock:
            self.stored += done

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self.http.close()

    def each(self, work: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """`work` on every item, on the client's connections (another kind of entry's own
        fetch or store: the unit tests' results)."""
        return list(self._pool.map(work, items))

    def give_up(self, message: str) -> None:
        """The first fault of the run: one warning, and the remote is not asked again."""
        self._fault(message)

    def _fetch_one(self, pair: tuple[str, str]) -> tuple[str, list[dict[str, Any]] | None]:
        key, path = pair
        if not self.usable:
            return key, None
        try:
            return key, self._decode(self.http.get_ac(key), key, path)
        except RemoteFault as exc:
            self._fault(str(exc))
            return key, None

    def _decode(self, body: bytes | None, key: str, path: str) -> list[dict[str, Any]] | None:
        if body is None:
            return None
        entry = decoded_entry(body, key, ENTRY_FORMAT, "an action-cache entry", self.config.trust)
        digest = entry.get("sha256")
        if not isinstance(digest, str) or not _HEX64.match(digest):
            raise RemoteFault("an action-cache entry without a digest")
        if "findings" in entry:
            findings = _valid_findings(entry["findings"], path)
            if content_digest(_canonical(findings)) != digest:
                raise RemoteFault("an action-cache entry does not match its digest")
            return findings
        data = self.http.get_cas(digest)
        if data is None:
            return None  # evicted from the CAS: a miss, the verdict is worked out again
        return _valid_findings(peer_json(data, f"the body of cas/{digest[:12]}…"), path)

    def _store_one(self, entry: tuple[str, list[dict[str, Any]]]) -> int:
        key, findings = entry
        if not self.usable:
            return 0
        data = _canonical(findings)
        digest = content_digest(data)
        record: dict[str, Any] = {"format": ENTRY_FORMAT, "key": key, "sha256": digest}
        try:
            if len(data) > INLINE_LIMIT:
                self.http.put_cas(data)  # the body first: an entry never points at nothing
            else:
                record["findings"] = findings
            self.http.put_ac(key, sealed_entry(record, key, self.config.trust))
        except RemoteFault as exc:
            self._fault(str(exc))
            return 0
        return 1

    def _fault(self, message: str) -> None:
        with self._lock:
            if self.fault is not None:
                return
            self.fault = message
        self._warn(  # a peer's words may be in it: escaped, whoever prints it
            printable(
                f"remote cache {self.config.shown}: {message}; working locally for the rest of "
                "this run"
            )
        )


def _stderr(message: str) -> None:
    print(f"trailblaze: warning: {message}", file=sys.stderr, flush=True)
