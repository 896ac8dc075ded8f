"""The remote cache's HTTP exchanges, bounded in time and in size.

A peer decides how fast its bytes come and how many it sends; a check must not wait or buffer
for as long as it likes. Three bounds hold for every exchange (`HttpCache` in `remote.py`):

- a **quiet timeout**: connecting, and each read, waits at most `RemoteConfig.timeout` for a
  byte (`TRAILBLAZE_REMOTE_CACHE_TIMEOUT_MS`);
- a **deadline**: the whole exchange, from connecting to the last byte of the answer, takes at
  most `RemoteConfig.deadline` however the bytes flow (`TRAILBLAZE_REMOTE_CACHE_DEADLINE_MS`):
  a server that trickles one byte a second meets it. Every read of the answer (status line,
  headers, body) waits at most what is left of it; sending is one `sendall` bounded by it;
- a **budget**: the time one run spends waiting on the remote cache in all (wall time while at
  least one exchange is in flight, across every client of the run: `Budget`,
  `TRAILBLAZE_REMOTE_CACHE_BUDGET_MS`). Once it is spent, every exchange is refused at once:
  the remote is down for the rest of the run.

A body is read up to `RemoteConfig.max_bytes` before anything is kept: a `Content-Length`
above it is refused before a byte of the body is read, and a body without one (or longer than
it said) is cut off as soon as it passes the limit (`read_body`).

Everything that goes wrong is a `TransportFault` whose message names the bound and the setting
that moves it; the caller (`remote.HttpCache`) makes it its usual `RemoteFault`. Text the peer
sent (a status line) reaches a message only escaped (`report.escaping.printable`).
"""

from __future__ import annotations

import http.client
import io
import socket
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NamedTuple

from trailblaze.options import env_milliseconds
from trailblaze.report.escaping import printable

DEADLINE_ENV = "TRAILBLAZE_REMOTE_CACHE_DEADLINE_MS"
BUDGET_ENV = "TRAILBLAZE_REMOTE_CACHE_BUDGET_MS"
MAX_MB_ENV = "TRAILBLAZE_REMOTE_CACHE_MAX_MB"
DEFAULT_DEADLINE = 60.0
"""Bazel's `--remote_timeout` default: a large body on a slow link still fits."""
DEFAULT_BUDGET = 300.0
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
"""A body of any kind, as it comes and as it inflates (the rows of about 50,000 trails)."""
AC_LIMIT = 16 * 1024 * 1024
"""An action-cache entry is a small JSON record (a trail's findings up to 16 KiB inline, a run
entry's digest, the names of a workspace's generated files): never more than this."""
_CHUNK = 64 * 1024
_PEER_TEXT = 120
"""The most of a peer's own text (a status line) a message quotes."""


class TransportFault(Exception):
    """One exchange did not give a usable answer; the message says what happened."""


class Budget:
    """The time one run may spend waiting on the remote cache, shared by all its clients.

    Spent is the wall time during which at least one exchange is in flight: four exchanges in
    parallel for one second spend one second, as they hold the run for one second.
    """

    def __init__(self, seconds: float = DEFAULT_BUDGET) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._spent = 0.0
        self._busy = 0
        self._since = 0.0

    def left(self) -> float:
        """Seconds left (<= 0: spent)."""
        with self._lock:
            return self.seconds - self._spent_now(time.monotonic())

    def _spent_now(self, now: float) -> float:
        return self._spent + (now - self._since if self._busy else 0.0)

    @contextmanager
    def exchange(self, timeout: float, deadline: float) -> Iterator[Clock]:
        """One exchange's clock, its time counted against the budget while it runs;
        `TransportFault` at once when the budget is spent."""
        with self._lock:
            now = time.monotonic()
            left = self.seconds - self._spent_now(now)
            if left <= 0:
                raise TransportFault(_budget_spent(self.seconds))
            if not self._busy:
                self._since = now
            self._busy += 1
        clock = Clock(now, timeout, min(deadline, left), budget=self, by_budget=left < deadline)
        try:
            yield clock
        finally:
            with self._lock:
                self._busy -= 1
                if not self._busy:
                    self._spent += time.monotonic() - self._since


def budget_seconds(env: Mapping[str, str] | None = None) -> float:
    """A run's budget as `TRAILBLAZE_REMOTE_CACHE_BUDGET_MS` sets it (default 300 s)."""
    return env_milliseconds(BUDGET_ENV, DEFAULT_BUDGET, floor=0.05, env=env)


_run_budget: Budget | None = None


@contextmanager
def run_budget(budget: Budget) -> Iterator[Budget]:
    """Every client made inside shares `budget` (one run: `runs.monorepo.check_remote`)."""
    global _run_budget  # noqa: PLW0603 - the one run of this process at a time
    previous, _run_budget = _run_budget, budget
    try:
        yield budget
    finally:
        _run_budget = previous


def budget_for(seconds: float) -> Budget:
    """The budget of the run in progress, else one of `seconds` of the client's own."""
    return _run_budget if _run_budget is not None else Budget(seconds)


class Clock:
    """The time one exchange has: `wait` is what the next socket operation may wait."""

    def __init__(
        self, start: float, timeout: float, allowed: float, *, budget: Budget, by_budget: bool
    ) -> None:
        self.start = start
        self.timeout = timeout
        self.allowed = allowed
        self.end = start + allowed
        self.budget = budget
        self.by_budget = by_budget
        """Whether the end is the budget's rather than the exchange's deadline."""

    def wait(self) -> float:
        """Seconds the next connect, send or read may wait; `TimeoutError` once none is left."""
        left = self.end - time.monotonic()
        if left <= 0:
            raise TimeoutError("past the deadline")
        return min(self.timeout, left)

    def over(self) -> bool:
        return time.monotonic() >= self.end - 0.001

    def timed_out(self) -> str:
        """What a timeout means on this clock."""
        if not self.over():
            return f"no answer within {self.timeout:.1f} s"
        if self.by_budget:
            return _budget_spent(self.budget.seconds)
        return (
            f"no complete answer within {self.allowed:.1f} s, however it came "
            f"(the deadline of one request, {DEADLINE_ENV})"
        )


def _budget_spent(seconds: float) -> str:
    return (
        f"this run's {seconds:g} s for the remote cache are spent ({BUDGET_ENV}); "
        "it is not asked again"
    )


class _Reader(io.RawIOBase):
    """A response's bytes: each read waits at most what the clock leaves."""

    def __init__(self, sock: socket.socket, clock: Clock) -> None:
        super().__init__()
        self._sock = sock
        # A socket file holds a reference: the connection closing its socket (the answer said
        # `Connection: close`) leaves it open until this is closed, as `makefile` does.
        self._io = sock.makefile("rb", buffering=0)
        self._clock = clock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        self._sock.settimeout(self._clock.wait())
        return self._io.readinto(buffer)

    def close(self) -> None:
        self._io.close()
        super().close()


class _Bounded:
    """What `HTTPConnection` does, with every wait bounded by the exchange's `Clock`."""

    clock: Clock | None = None
    sock: socket.socket | None
    timeout: float | None

    def begin(self, clock: Clock) -> None:
        """Bound the next exchange by `clock`: connect within it, send within it."""
        self.clock = clock
        if self.sock is None:
            self.timeout = clock.wait()
            self.connect()  # type: ignore[attr-defined]
        assert self.sock is not None
        self.sock.settimeout(clock.wait())  # `sendall` as a whole (Python 3.5+)

    def response_class(  # a method: `getresponse` calls `self.response_class(sock, ...)`
        self, sock: socket.socket, debuglevel: int = 0, method: str | None = None
    ) -> http.client.HTTPResponse:
        assert self.clock is not None
        response = http.client.HTTPResponse(sock, debuglevel, method=method)
        response.fp.close()
        response.fp = io.BufferedReader(_Reader(sock, self.clock), _CHUNK)
        return response


class BoundedHTTPConnection(_Bounded, http.client.HTTPConnection):  # type: ignore[misc]
    pass


class BoundedHTTPSConnection(http.client.HTTPSConnection, BoundedHTTPConnection):  # type: ignore[misc]
    pass


def read_body(response: http.client.HTTPResponse, limit: int) -> bytes:
    """The body of `response`, refused (`TransportFault`) when it claims or brings more than
    `limit` bytes: nothing past the limit is read."""
    if response.length is not None and response.length > limit:
        raise TransportFault(
            f"the answer claims {response.length} bytes, more than the {_size(limit)} a body "
            f"may have ({MAX_MB_ENV})"
        )
    if response.length is not None:
        return response.read()  # at most `limit`; a shorter body is `IncompleteRead`
    parts: list[bytes] = []
    got = 0
    while True:
        part = response.read(min(_CHUNK, limit + 1 - got))
        if not part:
            return b"".join(parts)
        got += len(part)
        if got > limit:
            raise TransportFault(
                f"the answer's body goes on past the {_size(limit)} a body may have ({MAX_MB_ENV})"
            )
        parts.append(part)


def _size(count: int) -> str:
    return f"{count / 1048576:g} MiB"


def describe(exc: BaseException, clock: Clock | None) -> str:
    """What `exc`, met during an exchange on `clock`, means to a user."""
    if isinstance(exc, TransportFault):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return clock.timed_out() if clock is not None else "timed out"
    if isinstance(exc, http.client.IncompleteRead):
        got = len(exc.partial)
        announced = f" of {got + exc.expected}" if isinstance(exc.expected, int) else ""
        return f"the body was cut short after {got}{announced} bytes"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if clock is not None and clock.over() and isinstance(exc, OSError | http.client.HTTPException):
        return clock.timed_out()  # a read the deadline cut short
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc)
    if len(text) > _PEER_TEXT:
        text = text[:_PEER_TEXT] + "…"
    # The peer's own words (a status line): never raw on a terminal or in a log.
    return f"{type(exc).__name__}: {printable(text)}" if text else type(exc).__name__


# -- inflating ----------------------------------------------------------------------------------

_STEP = 1 << 20


class Inflated(NamedTuple):
    data: bytes
    """What `data` inflated to; empty when it went past the limit."""
    ended: bool
    """Whether the zlib stream ended (false: cut short, or past the limit)."""
    past: bool
    """Whether it inflates to more than the limit (nothing of it is kept)."""


def inflate_within(data: bytes, limit: int) -> Inflated:
    """zlib `data` inflated to at most `limit` bytes, a mebibyte at a time, so that a bomb is
    refused as it grows having held the limit once (zlib's own buffer for a `max_length` of the
    limit holds it twice: blocks, then the joined copy). `zlib.error` when it is not zlib."""
    inflater = zlib.decompressobj()
    parts: list[bytes] = []
    size, rest = 0, data
    while not inflater.eof:
        part = inflater.decompress(rest, min(_STEP, limit + 1 - size))
        rest = inflater.unconsumed_tail
        size += len(part)
        if size > limit:
            return Inflated(b"", False, True)
        if part:
            parts.append(part)
        elif not rest:
            break  # all of it read, and the stream goes on: cut short
    return Inflated(parts[0] if len(parts) == 1 else b"".join(parts), inflater.eof, False)
