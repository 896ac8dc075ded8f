"""The adb server's protocol for the few services replay asks of it, every answer bounded.

adbutils (2.12.0) reads what a server sends as the server says: a shell command's output whole
into memory (`read_until_close`; shell v2's `read_exact(length)` with a 32-bit length taken from
the wire, which `recv`s up to 4 GiB at once), `sync` chunks likewise, each read bounded only by
a socket timeout that starts again with every byte; and it runs `adb start-server` on its own
when a connection is refused. A server that streams output for ever, claims a 4 GB packet or
trickles a byte at a time held replay for as long as it liked and cost as much memory as it
sent. So replay speaks the services it needs itself, one connection each (`Channel`):

- `host:devices` and `host-serial:<serial>:features`: a 4-hex-digit length, then text (at most
  64 KiB by construction);
- `host:transport:<serial>`, then `shell,v2:<command>` (packets: a kind byte, a 32-bit length,
  the bytes; kind 3 carries the exit code) or `shell:<command>; echo X4EXIT:$?` (output until
  the server closes; the exit code follows the marker, as adbutils does it);
- `host:transport:<serial>`, then `sync:` with `RECV` (chunks `DATA`, then `DONE`) or `SEND`.

The bounds: each read waits at most the quiet timeout, and at most what is left of the
exchange's `Deadline` (past it while bytes still flow: `Overdue`). A length field above
`PACKET_LIMIT`, a status that is neither `OKAY` nor `FAIL`, a length that is not hex or a
packet of no known shape is a `ProtocolError`: the peer does not speak adb. A command's
output is kept up to `KEEP` bytes, the rest counted and dropped (`Output.dropped`); a pulled
file is read up to `FILE_LIMIT` (`TooLarge` past it). A `FAIL` answer is `Failed`, its text
escaped (`report.escaping.printable`): a server's words never reach a terminal raw.
"""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass

from trailblaze.report.escaping import printable

KEEP = 4 * 1024 * 1024
"""The most of one command's output replay keeps (`dumpsys window windows` on a busy device is
a few hundred KiB)."""
FILE_LIMIT = 64 * 1024 * 1024
"""The most a pulled file (a screen dump, a screenshot) may be."""
PACKET_LIMIT = 1024 * 1024
"""The largest shell packet or sync chunk adb sends is 64 KiB (`SYNC_DATA_MAX`) or its 1 MiB
`MAX_PAYLOAD`; a length field above this is not adb."""
_FAIL_LIMIT = 64 * 1024
MARKER = b"X4EXIT:"
"""The exit-code marker of a shell without shell_v2 (adbutils' own, so either reads the other)."""
_TAIL = 64
_OKAY = b"OKAY"
_FAIL = b"FAIL"
_SHOWN = 40


class ProtocolError(Exception):
    """The peer's answer is not adb (garbage, an absurd length): the device is lost."""


class Overdue(Exception):
    """The exchange's deadline passed while the peer was still sending."""


class Failed(Exception):
    """The server answered `FAIL`; the message is its own (escaped)."""


class TooLarge(Exception):
    """A pulled file larger than the limit."""


class Closed(EOFError):
    """The server closed the connection before it answered a request at all (an empty read)."""


class Deadline:
    """The time one exchange has: each wait is at most `quiet` and at most what is left."""

    def __init__(self, seconds: float, quiet: float) -> None:
        self.seconds = seconds
        self.quiet = quiet
        self.end = time.monotonic() + seconds

    def wait(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise Overdue(f"not done within {self.seconds:g} s")
        return min(self.quiet, left)

    def over(self) -> bool:
        return time.monotonic() >= self.end


def shown(data: bytes) -> str:
    """A few bytes from the peer as a message may quote them: escaped, cut short."""
    text = printable(data[:_SHOWN].decode("utf-8", errors="replace"))
    more = "…" if len(data) > _SHOWN else ""
    return f"'{text}{more}'"


class Channel:
    """One connection to the adb server, every read and write bounded by `deadline`."""

    def __init__(self, host: str, port: int, deadline: Deadline) -> None:
        self.deadline = deadline
        self.received = 0
        """Bytes read so far (none: the server closed before it answered at all)."""
        self._sock = socket.create_connection((host, port), timeout=deadline.wait())

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._sock.close()

    def send(self, data: bytes) -> None:
        self._sock.settimeout(self.deadline.wait())
        self._sock.sendall(data)

    def recv(self, most: int) -> bytes:
        """Up to `most` bytes as they come (b"": the server closed)."""
        self._sock.settimeout(self.deadline.wait())
        try:
            data = self._sock.recv(most)
        except TimeoutError:
            if self.deadline.over():
                raise Overdue(f"not done within {self.deadline.seconds:g} s") from None
            raise
        self.received += len(data)
        return data

    def read(self, count: int) -> bytes:
        """Exactly `count` bytes; EOFError when the server closes first."""
        parts: list[bytes] = []
        left = count
        while left:
            data = self.recv(min(left, 64 * 1024))
            if not data:
                raise EOFError(f"the connection closed after {count - left} of {count} bytes")
            parts.append(data)
            left -= len(data)
        return b"".join(parts)

    def length(self, limit: int) -> int:
        """A little-endian 32-bit length field, at most `limit`."""
        value: int = struct.unpack("<I", self.read(4))[0]
        if value > limit:
            raise ProtocolError(f"a length field of {value} bytes (adb sends at most {limit})")
        return value

    def block(self) -> str:
        """A 4-hex-digit length and that many bytes, as text."""
        head = self.read(4)
        try:
            size = int(head.decode("ascii"), 16)
        except (UnicodeDecodeError, ValueError):
            raise ProtocolError(f"a length that is not hex: {shown(head)}") from None
        return self.read(size).decode("utf-8", errors="replace")

    def request(self, service: str) -> None:
        """Ask for `service`: returns on OKAY, `Failed` on FAIL, `ProtocolError` otherwise."""
        payload = service.encode("utf-8")
        self.send(f"{len(payload):04x}".encode("ascii") + payload)
        first = self.recv(4)
        if not first:
            raise Closed("the connection closed before the server answered")
        status = first + (self.read(4 - len(first)) if len(first) < 4 else b"")
        if status == _OKAY:
            return
        if status == _FAIL:
            raise Failed(printable(self.block()))
        raise ProtocolError(f"it answered {shown(status)} instead of OKAY or FAIL")


@dataclass(frozen=True, slots=True)
class Target:
    """A device on an adb server."""

    host: str
    port: int
    serial: str

    def channel(self, deadline: Deadline) -> Channel:
        """A connection to the device (`host:transport:<serial>`)."""
        channel = Channel(self.host, self.port, deadline)
        try:
            channel.request(f"host:transport:{self.serial}")
        except BaseException:
            channel.close()
            raise
        return channel


def host_query(host: str, port: int, service: str, deadline: Deadline) -> str:
    """The text a host service answers (`host:devices`, `host-serial:S:features`)."""
    with Channel(host, port, deadline) as channel:
        channel.request(service)
        return channel.block()


@dataclass(frozen=True, slots=True)
class Output:
    """What one shell command sent, each stream kept up to `KEEP` bytes."""

    returncode: int
    output: bytes
    stdout: bytes
    stderr: bytes
    dropped: int = 0
    """Bytes of output past `KEEP`, counted and not kept."""


class _Kept:
    """The first `limit` bytes of a stream; the rest only counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.limit - self.size
        if room > 0:
            part = data[:room]
            self.parts.append(part)
            self.size += len(part)

    def value(self) -> bytes:
        return b"".join(self.parts)


def shell(target: Target, command: str, *, v2: bool, deadline: Deadline) -> Output:
    """Run `command` on the device's shell and read what it sends, within `deadline`."""
    with target.channel(deadline) as channel:
        if v2:
            channel.request(f"shell,v2:{command}")
            return _shell_v2(channel)
        channel.request(f"shell:{command}; echo {MARKER.decode()}$?")
        return _shell_v1(channel)


def _shell_v2(channel: Channel) -> Output:
    output, stdout, stderr = _Kept(KEEP), _Kept(KEEP), _Kept(KEEP)
    while True:
        kind = channel.read(1)[0]
        data = channel.read(channel.length(PACKET_LIMIT))
        if kind == 1:
            stdout.add(data)
            output.add(data)
        elif kind == 2:
            stderr.add(data)
            output.add(data)
        elif kind == 3:
            if len(data) != 1:
                raise ProtocolError(f"an exit packet of {len(data)} bytes")
            return Output(
                data[0],
                output.value(),
                stdout.value(),
                stderr.value(),
                dropped=output.total - output.size,
            )
        elif kind > 5:  # 0 stdin, 4 close stdin, 5 window size: not sent to a client
            raise ProtocolError(f"a shell packet of unknown kind {kind}")


def _shell_v1(channel: Channel) -> Output:
    kept = _Kept(KEEP)
    tail = b""
    while True:
        data = channel.recv(64 * 1024)
        if not data:
            break
        kept.add(data)
        tail = (tail + data)[-_TAIL:]
    whole = kept.total == kept.size
    text = kept.value() if whole else tail
    at = text.rfind(MARKER)
    if at == -1:
        raise EOFError("the output ended without the exit marker: cut before the command ended")
    code = text[at + len(MARKER) :].strip()
    if not code.isdigit():
        raise ProtocolError(f"an exit code that is not a number: {shown(code)}")
    if whole:
        return Output(int(code), text[:at], text[:at], b"")
    output = kept.value()
    return Output(int(code), output, output, b"", dropped=kept.total - kept.size)


def pull(target: Target, path: str, deadline: Deadline) -> bytes:
    """A device file's bytes (sync `RECV`), at most `FILE_LIMIT`."""
    with target.channel(deadline) as channel:
        channel.request("sync:")
        name = path.encode("utf-8")
        channel.send(b"RECV" + struct.pack("<I", len(name)) + name)
        parts: list[bytes] = []
        size = 0
        while True:
            kind = channel.read(4)
            if kind == b"DATA":
                data = channel.read(channel.length(PACKET_LIMIT))
                size += len(data)
                if size > FILE_LIMIT:
                    raise TooLarge(f"{path} is larger than {FILE_LIMIT / 1048576:g} MiB; not read")
                parts.append(data)
            elif kind == b"DONE":
                return b"".join(parts)
            elif kind == _FAIL:
                message = channel.read(channel.length(_FAIL_LIMIT))
                raise Failed(printable(message.decode("utf-8", errors="replace")))
            else:
                raise ProtocolError(f"a sync answer {shown(kind)}")


def push(target: Target, path: str, data: bytes, *, mode: int, deadline: Deadline) -> None:
    """Write `data` at `path` on the device (sync `SEND`); `Failed` with the device's reason."""
    with target.channel(deadline) as channel:
        channel.request("sync:")
        spec = f"{path},{0o100000 | mode}".encode()  # S_IFREG | mode
        channel.send(b"SEND" + struct.pack("<I", len(spec)) + spec)
        for start in range(0, len(data), 64 * 1024):
            chunk = data[start : start + 64 * 1024]
            channel.send(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
        channel.send(b"DONE" + struct.pack("<I", int(time.time())))
        status = channel.read(4)
        if status == _OKAY:
            return
        if status == _FAIL:
            message = channel.read(channel.length(_FAIL_LIMIT))
            raise Failed(printable(message.decode("utf-8", errors="replace")))
        raise ProtocolError(f"a sync answer {shown(status)}")
