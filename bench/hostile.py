"""Hostile peers on loopback, and a way to measure what a child process spent meeting them.

    with HostileHttp("trickle") as peer:      # peer.url: http://127.0.0.1:PORT/cache
        ran = measure([sys.executable, "-m", "trailblaze", "check", "--remote-cache", peer.url])
        ran.wall, ran.peak_mib, ran.code, ran.stderr

`HostileHttp` plays a remote cache (Bazel's HTTP protocol) that misbehaves on every request:

- `trickle`: a valid answer, one byte every `pace` seconds (status line and headers included);
- `endless`: `200` without a length, then bytes until the client goes;
- `chunked`: `200` chunked, chunks until the client goes;
- `huge`: `200` claiming a length of 4 TB, then bytes until the client goes;
- `bomb`: a well-formed entry under any `ac/` key (format, key, digest) whose run entry body
  is zlib of 320 MiB of zeros (320 KiB on the wire; its digest is right), and whose files' body
  is not stored;
- `bomb-files`: the first `ac/` entry asked for (a fresh clone's files entry) names one
  generated file of 1 TiB whose body is the bomb; every other key is a miss;
- `escapes`: a status line of terminal escapes (it retitles and clears a terminal);
- `slow`: every request answered `404` after `pace` seconds, keeping the connection.

`HostileAdb` plays an adb server with one device, `emulator-5554`, that answers the host
services (`host:version`, `host:devices`, features, `host:transport:`) and misbehaves on a shell
command (or, for `garbage` and `bad-length`, on its first answer):

- `garbage`: the first answer is an HTTP error page;
- `bad-length`: `OKAY`, then a length that is not hex;
- `fail-escapes`: the device listing is `FAIL` with a message of terminal escapes;
- `huge`: a shell v2 packet claiming 4 GB, then bytes until the client goes;
- `endless`: shell v2 output packets until the client goes, never an exit code;
- `endless-v1`: a device without shell_v2, output until the client goes;
- `trickle`: shell v2 output, one byte every `pace` seconds, never an exit code;
- `flood`: 32 MiB of shell v2 output, then exit code 0 (a command that ends, with too much);
- `escapes`: shell v2 output of terminal escapes and a carriage return, then exit code 1 (a
  failing command whose output a message quotes).

Every loop is bounded in time (`lifetime`, default 120 s) and stops when the client hangs up;
`stop` (the context's exit) ends them all. Nothing listens beyond 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import TracebackType

from trailblaze.runs.runcache import RUN_FORMAT
from trailblaze.state.keys import content_digest

HTTP_MODES = ("trickle", "endless", "chunked", "huge", "bomb", "bomb-files", "escapes", "slow")
ADB_MODES = (
    "garbage",
    "bad-length",
    "fail-escapes",
    "huge",
    "endless",
    "endless-v1",
    "trickle",
    "flood",
    "escapes",
)
ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b[31m"
"""A terminal title, a cleared screen and red text: what must never reach a terminal raw."""
_BLOCK = b"\x00" * 64 * 1024


BOMB_MIB = 320


@cache
def zlib_bomb() -> bytes:
    """zlib of 320 MiB of zeros (past the default limit of 256): about 320 KiB."""
    packer = zlib.compressobj(9)
    zeros = b"\x00" * (1 << 20)
    return b"".join([*(packer.compress(zeros) for _ in range(BOMB_MIB)), packer.flush()])


class _Peer:
    """A loopback server: one thread accepting, one per connection, all bounded in time."""

    def __init__(self, mode: str, *, pace: float = 0.5, lifetime: float = 120.0) -> None:
        self.mode = mode
        self.pace = pace
        self.lifetime = lifetime
        self.seen: list[str] = []
        """What the clients asked for (request lines, adb services), in order."""
        self.errors: list[str] = []
        """What went wrong in the peer itself (a bug of the test, not of the client)."""
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port: int = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True, name="hostile-peer")

    def __enter__(self) -> _Peer:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            conns, self._conns = self._conns, set()
        for sock in (self._listener, *conns):
            # A shutdown wakes a thread blocked in accept or recv; a close alone does not.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self._thread.join(5)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._conns.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(self.lifetime)
        until = time.monotonic() + self.lifetime
        try:
            self.serve(conn, until)
        except OSError:
            pass  # the client hung up or timed out: what a bounded client does
        except Exception as exc:  # kept for the test to see, not lost in a thread
            self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            with self._lock:
                self._conns.discard(conn)
            conn.close()

    def serve(self, conn: socket.socket, until: float) -> None:
        raise NotImplementedError

    def _going(self, until: float) -> bool:
        return not self._stop.is_set() and time.monotonic() < until

    def flow(self, conn: socket.socket, until: float, make: Callable[[], bytes]) -> None:
        """Send what `make` gives until the client goes, time runs out or the peer stops."""
        while self._going(until):
            conn.sendall(make())

    def trickle(self, conn: socket.socket, until: float, data: bytes) -> None:
        """`data` one byte at a time, `pace` seconds apart, then the same again."""
        while self._going(until):
            for byte in data:
                if not self._going(until):
                    return
                conn.sendall(bytes([byte]))
                self._stop.wait(self.pace)


def _recv_head(conn: socket.socket) -> bytes | None:
    """An HTTP request's head (and body, by its Content-Length), at most 1 MiB."""
    data = b""
    while b"\r\n\r\n" not in data:
        part = conn.recv(65536)
        if not part or len(data) > 1 << 20:
            return None
        data += part
    head, _, rest = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            left = int(value) - len(rest)
            while left > 0:
                part = conn.recv(min(left, 65536))
                if not part:
                    return None
                left -= len(part)
    return head


class HostileHttp(_Peer):
    """A remote cache that misbehaves (see the module docstring)."""

    def __enter__(self) -> HostileHttp:
        if self.mode.startswith("bomb"):
            zlib_bomb()  # made before the first request: a second of work the client must not wait
        super().__enter__()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/cache"

    def serve(self, conn: socket.socket, until: float) -> None:
        while self._going(until):
            head = _recv_head(conn)
            if head is None:
                return
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            self.seen.append(line)
            method, path = line.split(" ")[:2]
            if not self.answer(conn, until, method, path):
                return

    def answer(self, conn: socket.socket, until: float, method: str, path: str) -> bool:
        """Answer one request; whether the connection may serve another."""
        mode = self.mode
        if mode == "trickle":
            body = b"x" * 100
            data = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + body
            self.trickle(conn, until, data)
            return False
        if mode in ("endless", "huge"):
            length = b"Content-Length: 4000000000000\r\n" if mode == "huge" else b""
            conn.sendall(b"HTTP/1.1 200 OK\r\n" + length + b"Connection: close\r\n\r\n")
            self.flow(conn, until, lambda: _BLOCK)
            return False
        if mode == "chunked":
            conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            self.flow(conn, until, lambda: b"10000\r\n" + _BLOCK + b"\r\n")
            return False
        if mode == "escapes":
            conn.sendall(f"{ESCAPES}HTTP/9 weird\r\n\r\n".encode("latin-1"))
            return False
        if mode == "slow":
            self._stop.wait(self.pace)
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            return True
        if mode in ("bomb", "bomb-files"):
            return self._bomb(conn, method, path)
        raise ValueError(f"no HTTP mode {mode!r}")

    def _bomb(self, conn: socket.socket, method: str, path: str) -> bool:
        bomb = zlib_bomb()
        digest = content_digest(bomb)
        missing = "0" * 64
        space, _, key = path.rpartition("/")
        body, status = b"", "404 Not Found"
        if method != "GET":
            status = "200 OK"
        elif space.endswith("/cas"):
            if key == digest:
                body, status = bomb, "200 OK"
        elif self.mode == "bomb" or not any("/ac/" in line for line in self.seen[:-1]):
            files = self.mode == "bomb-files"
            entry = {
                "format": RUN_FORMAT,
                "key": key,
                "sha256": missing if files else digest,
                "files": [["trailmaps/notes/tools/x.d.ts", 1 << 40]] if files else [],
                "gitignores": {},
                "files_sha256": digest if files else missing,
            }
            body, status = json.dumps(entry).encode(), "200 OK"
        conn.sendall(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        return True


def _block(text: str | bytes) -> bytes:
    payload = text.encode() if isinstance(text, str) else text
    return f"{len(payload):04x}".encode() + payload


SERIAL = "emulator-5554"


class HostileAdb(_Peer):
    """An adb server that misbehaves (see the module docstring)."""

    def serve(self, conn: socket.socket, until: float) -> None:
        attached = False
        while self._going(until):
            head = _recv_exact(conn, 4)
            if head is None:
                return
            request = (_recv_exact(conn, int(head, 16)) or b"").decode(errors="replace")
            self.seen.append(request)
            mode = self.mode
            if mode == "garbage":
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                return
            if mode == "bad-length":
                conn.sendall(b"OKAYzz\x1b[" + b"x" * 40)
                return
            if mode == "fail-escapes" and request.startswith("host:devices"):
                conn.sendall(b"FAIL" + _block(f"{ESCAPES}the server is not ready"))
                return
            if not attached:
                attached = self._host(conn, request)
                if not attached:
                    return
                continue
            if request.startswith(("shell,v2:", "shell:")):
                conn.sendall(b"OKAY")
                self._shell(conn, until)
            else:
                conn.sendall(b"FAIL" + _block(f"unsupported service {request!r}"))
            return

    def _host(self, conn: socket.socket, request: str) -> bool:
        """Answer a host service; whether the connection now talks to the device."""
        features = "cmd" if self.mode == "endless-v1" else "shell_v2,cmd"
        answers = {
            "host:version": b"OKAY" + _block("0029"),
            "host:devices": b"OKAY" + _block(f"{SERIAL}\tdevice\n"),
            f"host-serial:{SERIAL}:features": b"OKAY" + _block(features),
        }
        if request in answers:
            conn.sendall(answers[request])
            return False
        if request == f"host:transport:{SERIAL}":
            conn.sendall(b"OKAY")
            return True
        if request == f"host:tport:serial:{SERIAL}":  # adbutils' way (then a transport id)
            conn.sendall(b"OKAY" + struct.pack("<Q", 1))
            return True
        conn.sendall(b"FAIL" + _block(f"unsupported host service {request!r}"))
        return False

    def _shell(self, conn: socket.socket, until: float) -> None:
        mode = self.mode
        packet = b"\x01" + struct.pack("<I", len(_BLOCK)) + _BLOCK
        if mode == "huge":
            conn.sendall(b"\x01" + struct.pack("<I", 0xFFFFFFFF))
            self.flow(conn, until, lambda: _BLOCK)
        elif mode == "endless":
            self.flow(conn, until, lambda: packet)
        elif mode == "endless-v1":
            self.flow(conn, until, lambda: _BLOCK)
        elif mode == "trickle":
            self.trickle(conn, until, b"\x01" + struct.pack("<I", 1 << 20) + b"x" * (1 << 20))
        elif mode == "flood":
            conn.sendall(packet * 512 + b"\x03" + struct.pack("<I", 1) + b"\x00")
        elif mode == "escapes":
            text = f"{ESCAPES}boom\rfine\nsecond line\n".encode()
            out = b"\x01" + struct.pack("<I", len(text)) + text
            conn.sendall(out + b"\x03" + struct.pack("<I", 1) + b"\x01")
        else:
            raise ValueError(f"no adb mode {mode!r}")


def _recv_exact(conn: socket.socket, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        part = conn.recv(count - len(data))
        if not part:
            return None
        data += part
    return data


@dataclass(frozen=True)
class Measured:
    """A child process's exit code, output, wall time and peak resident memory."""

    code: int
    stdout: str
    stderr: str
    wall: float
    peak_mib: float
    """`ru_maxrss` of the child (and of any child it waited for): its largest resident set."""


_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""
"""Spawns the measured command and reports its `os.wait4` figures. Measured directly from the
test process, a child's `ru_maxrss` is at least the test process's own: Linux counts the
address space a child had before its `exec`, which is the parent's (vfork), in the child's
peak. The launcher is a small process, so what it reports is the command's own."""


def measure(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float = 90.0,
) -> Measured:
    """Run `argv`, wait for it with `os.wait4` (its peak RSS) and time it; killed past `timeout`
    (a bound that did not hold: the caller's assertions then fail on its exit code)."""
    report = cwd / f".measured-{os.getpid()}-{threading.get_ident()}"
    start = time.monotonic()
    launcher = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, str(report), *argv],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a kill past the timeout reaches the command too
    )
    try:
        stdout, stderr = launcher.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(launcher.pid, signal.SIGKILL)
        stdout, stderr = launcher.communicate()
        stderr += f"\n(killed after {timeout} s)".encode()
    wall = time.monotonic() - start
    if not report.exists():
        return Measured(-9, stdout.decode(errors="replace"), stderr.decode(errors="replace"),
                        wall, float("nan"))  # fmt: skip
    code, peak = report.read_text().split()
    report.unlink()
    return Measured(
        int(code),
        stdout.decode(errors="replace"),
        stderr.decode(errors="replace"),
        wall,
        int(peak) / (1024 if sys.platform != "darwin" else 1024**2),
    )
