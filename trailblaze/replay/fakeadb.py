"""A fake adb server on 127.0.0.1 that serves ``FakeDevice`` models to the real adbutils client.

It speaks what adbutils 2.12.0 sends (replay.md §3.2, §3.5): ``host:version`` (41, asked before
every transport), ``host:devices[-l]``, ``host:tport:serial:`` (8-byte transport id),
``host:transport:``, ``host:transport-id:``, ``host-serial:<serial>:<cmd>`` (features,
get-state, ...), ``shell:`` (v1: output in execution order, ends when we close), ``shell,v2:``
(packets with a real exit code) and ``sync:`` (STAT, LIST, RECV, SEND). A small shell runs each
command line: ``;``, ``&&``, ``||``, ``|``, quotes, ``$?``, simple redirections, and the
builtins adbutils' own helpers use (``echo``, ``rm``, ``cat``, ``grep``).

``python -m trailblaze.replay.fakeadb MODEL.yaml [--port N]`` serves a model until Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import re
import socket
import socketserver
import stat
import struct
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

from trailblaze.replay.fakescreen import (
    STDERR,
    STDOUT,
    CommandResult,
    FakeDevice,
    ModelError,
    load_devices,
)

logger = logging.getLogger(__name__)

DEFAULT_VERSION = 41
_DIRECTORIES = frozenset(
    {"/", "/data", "/data/local", "/data/local/tmp", "/sdcard", "/sdcard/Download"}
)

# --- the shell ------------------------------------------------------------------------------

_STATUS = None  # a `$?` inside a word, expanded when the command runs
WordPart = str | None
Word = tuple[WordPart, ...]
_OPERATORS = (";", "&&", "||", "|", "&")
_REDIRECTS = (">>", ">", "2>&1", "2>", "<")


class ShellSyntaxError(ValueError):
    """The fake's shell cannot parse the line (an unclosed quote)."""


class _Token(NamedTuple):
    op: str | None  # operator or redirect; None for a word
    word: Word = ()


def tokenize(line: str) -> list[_Token]:
    """Split a shell line into words and operators, honouring quotes like ``sh`` does."""
    tokens: list[_Token] = []
    parts: list[WordPart] = []
    buf: list[str] = []
    in_word = False
    i, n = 0, len(line)

    def flush() -> None:
        nonlocal in_word
        if buf:
            parts.append("".join(buf))
            buf.clear()
        if in_word:
            tokens.append(_Token(None, tuple(parts)))
            parts.clear()
        in_word = False

    while i < n:
        c = line[i]
        if c in " \t\n":
            flush()
            i += 1
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError(f"unterminated quote in {line!r}")
            buf.append(line[i + 1 : end])
            in_word = True
            i = end + 1
        elif c == '"':
            i += 1
            in_word = True
            while i < n and line[i] != '"':
                if line[i] == "\\" and i + 1 < n and line[i + 1] in '"\\$`':
                    buf.append(line[i + 1])
                    i += 2
                elif line.startswith("$?", i):
                    parts.append("".join(buf))
                    buf.clear()
                    parts.append(_STATUS)
                    i += 2
                else:
                    buf.append(line[i])
                    i += 1
            if i >= n:
                raise ShellSyntaxError(f"unterminated quote in {line!r}")
            i += 1
        elif c == "\\" and i + 1 < n:
            buf.append(line[i + 1])
            in_word = True
            i += 2
        elif line.startswith("$?", i):
            parts.append("".join(buf))
            buf.clear()
            parts.append(_STATUS)
            in_word = True
            i += 2
        elif (
            not in_word
            and any(line.startswith(r, i) for r in _REDIRECTS if r[0] == "2")
            and c == "2"
        ):
            flush()
            redirect = "2>&1" if line.startswith("2>&1", i) else "2>"
            tokens.append(_Token(redirect))
            i += len(redirect)
        elif c in ";&|<>":
            flush()
            op = next(o for o in (*_OPERATORS, *_REDIRECTS) if line.startswith(o, i))
            tokens.append(_Token(op))
            i += len(op)
        else:
            buf.append(c)
            in_word = True
            i += 1
    flush()
    return tokens


class _Command(NamedTuple):
    words: tuple[Word, ...]
    redirects: tuple[tuple[str, Word], ...]


def _parse(tokens: list[_Token]) -> list[tuple[str, list[_Command]]]:
    """[(operator before, pipeline)]: the first operator is ``;``."""
    items: list[tuple[str, list[_Command]]] = []
    pipeline: list[_Command] = []
    words: list[Word] = []
    redirects: list[tuple[str, Word]] = []
    pending = ";"
    i = 0

    def end_command() -> None:
        if words or redirects:
            pipeline.append(_Command(tuple(words), tuple(redirects)))
        words.clear()
        redirects.clear()

    while i < len(tokens):
        token = tokens[i]
        if token.op is None:
            words.append(token.word)
        elif token.op == "2>&1":
            redirects.append((token.op, ()))
        elif token.op in _REDIRECTS:
            if i + 1 >= len(tokens) or tokens[i + 1].op is not None:
                raise ShellSyntaxError(f"missing file after {token.op}")
            redirects.append((token.op, tokens[i + 1].word))
            i += 1
        elif token.op == "|":
            end_command()
        else:
            end_command()
            if pipeline:
                items.append((pending, list(pipeline)))
            pipeline.clear()
            pending = ";" if token.op == "&" else token.op
        i += 1
    end_command()
    if pipeline:
        items.append((pending, list(pipeline)))
    return items


def _expand(word: Word, status: int) -> str:
    return "".join(str(status) if part is None else part for part in word)


class Shell:
    """Runs command lines against one ``FakeDevice``: builtins here, Android commands there."""

    def __init__(self, device: FakeDevice) -> None:
        self.device = device

    def run(self, line: str) -> CommandResult:
        try:
            items = _parse(tokenize(line))
        except ShellSyntaxError as exc:
            return CommandResult.of(stderr=f"/system/bin/sh: syntax error: {exc}\n", returncode=2)
        status = 0
        chunks: list[tuple[int, bytes]] = []
        for operator, pipeline in items:
            if (operator == "&&" and status != 0) or (operator == "||" and status == 0):
                continue
            status = self._pipeline(pipeline, status, chunks)
        return CommandResult(status, tuple(chunks))

    def _pipeline(self, pipeline: list[_Command], status: int, out: list[tuple[int, bytes]]) -> int:
        stdin = b""
        returncode = status
        for position, command in enumerate(pipeline):
            # `$?` inside a pipeline is the status from before the pipeline, as in sh.
            argv = [_expand(w, status) for w in command.words]
            redirects = [(kind, _expand(target, status)) for kind, target in command.redirects]
            for kind, path in redirects:
                if kind == "<":
                    with self.device.lock:
                        stdin = self.device.files.get(path, b"")
            result = self._command(argv, stdin)
            chunks = list(result.chunks)
            for kind, path in redirects:
                chunks = self._redirect(kind, path, chunks)
            if position == len(pipeline) - 1:
                out.extend(chunks)
            else:
                out.extend((s, d) for s, d in chunks if s == STDERR)
                stdin = b"".join(d for s, d in chunks if s == STDOUT)
            returncode = result.returncode
        return returncode

    def _redirect(
        self, kind: str, path: str, chunks: list[tuple[int, bytes]]
    ) -> list[tuple[int, bytes]]:
        if kind == "2>&1":
            return [(STDOUT, d) for _, d in chunks]
        if kind == "<":
            return chunks
        stream = STDERR if kind == "2>" else STDOUT
        data = b"".join(d for s, d in chunks if s == stream)
        if path != "/dev/null":
            with self.device.lock:
                previous = self.device.files.get(path, b"") if kind == ">>" else b""
                self.device.files[path] = previous + data
        return [(s, d) for s, d in chunks if s != stream]

    def _command(self, argv: list[str], stdin: bytes) -> CommandResult:
        if not argv:
            return CommandResult(0)
        overridden = self.device.override(argv)
        if overridden is not None:
            return overridden
        builtin = getattr(self, f"_builtin_{argv[0]}", None)
        if builtin is not None:
            result: CommandResult = builtin(argv[1:], stdin)
            return result
        result_or_none = self.device.execute(argv)
        if result_or_none is None:
            return CommandResult.of(
                stderr=f"/system/bin/sh: {argv[0]}: inaccessible or not found\n", returncode=127
            )
        return result_or_none

    def _builtin_true(self, args: list[str], stdin: bytes) -> CommandResult:
        return CommandResult(0)

    def _builtin_false(self, args: list[str], stdin: bytes) -> CommandResult:
        return CommandResult(1)

    def _builtin_echo(self, args: list[str], stdin: bytes) -> CommandResult:
        newline = "\n"
        if args[:1] == ["-n"]:
            args, newline = args[1:], ""
        return CommandResult.of(" ".join(args) + newline)

    def _builtin_sleep(self, args: list[str], stdin: bytes) -> CommandResult:
        try:
            time.sleep(min(float(args[0]), 5.0) if args else 0.0)
        except ValueError:
            return CommandResult.of(stderr=f"sleep: invalid number '{args[0]}'\n", returncode=1)
        return CommandResult(0)

    def _builtin_rm(self, args: list[str], stdin: bytes) -> CommandResult:
        force = any(a.startswith("-") and "f" in a for a in args)
        paths = [a for a in args if not a.startswith("-")]
        errors = []
        with self.device.lock:
            for path in paths:
                if self.device.files.pop(path, None) is None and not force:
                    errors.append(f"rm: {path}: No such file or directory\n")
        return CommandResult.of(stderr="".join(errors), returncode=1 if errors else 0)

    def _builtin_cat(self, args: list[str], stdin: bytes) -> CommandResult:
        if not args:
            return CommandResult(0, ((STDOUT, stdin),) if stdin else ())
        chunks: list[tuple[int, bytes]] = []
        rc = 0
        with self.device.lock:
            for path in args:
                data = self.device.files.get(path)
                if data is None:
                    chunks.append((STDERR, f"cat: {path}: No such file or directory\n".encode()))
                    rc = 1
                elif data:
                    chunks.append((STDOUT, data))
        return CommandResult(rc, tuple(chunks))

    def _builtin_ls(self, args: list[str], stdin: bytes) -> CommandResult:
        paths = [a for a in args if not a.startswith("-")] or ["/"]
        lines: list[str] = []
        for path in paths:
            names = _list_dir(self.device, path)
            if names is None:
                return CommandResult.of(
                    stderr=f"ls: {path}: No such file or directory\n", returncode=1
                )
            lines.extend(sorted(names))
        return CommandResult.of("".join(f"{n}\n" for n in lines))

    def _builtin_grep(self, args: list[str], stdin: bytes) -> CommandResult:
        flags = {c for a in args if a.startswith("-") and len(a) > 1 for c in a[1:]}
        rest = [a for a in args if not (a.startswith("-") and len(a) > 1)]
        if not rest:
            return CommandResult.of(
                stderr="usage: grep [-icvqEF] PATTERN [FILE...]\n", returncode=2
            )
        pattern, files = rest[0], rest[1:]
        text = stdin
        if files:
            with self.device.lock:
                text = b"".join(self.device.files.get(f, b"") for f in files)
        source = re.escape(pattern) if "F" in flags else pattern
        regex = re.compile(source, re.IGNORECASE if "i" in flags else 0)
        lines = text.decode(errors="replace").splitlines()
        hits = [line for line in lines if (regex.search(line) is not None) != ("v" in flags)]
        rc = 0 if hits else 1
        if "q" in flags:
            return CommandResult(rc)
        if "c" in flags:
            return CommandResult.of(f"{len(hits)}\n", returncode=rc)
        return CommandResult.of("".join(f"{h}\n" for h in hits), returncode=rc)


def _list_dir(device: FakeDevice, path: str) -> dict[str, tuple[int, int]] | None:
    """Immediate children of a directory as name -> (mode, size), or None if it is not one."""
    prefix = path.rstrip("/") + "/"
    entries: dict[str, tuple[int, int]] = {}
    with device.lock:
        files = dict(device.files)
    for known in _DIRECTORIES | set(files):
        if known.startswith(prefix) and known != prefix:
            name, _, below = known[len(prefix) :].partition("/")
            if below or known in _DIRECTORIES:
                entries[name] = (stat.S_IFDIR | 0o755, 4096)
            else:
                entries[name] = (stat.S_IFREG | 0o644, len(files[known]))
    if not entries and path.rstrip("/") not in _DIRECTORIES and path != "/":
        return None
    return entries


# --- the server -----------------------------------------------------------------------------


def _recv_exact(conn: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _block(text: str) -> bytes:
    payload = text.encode()
    return f"{len(payload):04x}".encode() + payload


class _Handler(socketserver.BaseRequestHandler):
    server: _TCPServer

    def handle(self) -> None:
        conn: socket.socket = self.request
        owner = self.server.owner
        owner._track(conn, add=True)
        try:
            self._serve(conn, owner)
        except (OSError, EOFError) as exc:
            # Clients hang up mid-reply all the time (timeouts, tests tearing down).
            logger.debug("fake adb connection ended: %s", exc)
        finally:
            owner._track(conn, add=False)

    def _serve(self, conn: socket.socket, owner: FakeAdbServer) -> None:
        device: FakeDevice | None = None
        while True:
            header = _recv_exact(conn, 4)
            if header is None:
                return
            try:
                length = int(header, 16)
            except ValueError:
                conn.sendall(b"FAIL" + _block(f"bad request header {header!r}"))
                return
            payload = _recv_exact(conn, length)
            if payload is None:
                return
            request = payload.decode(errors="replace")
            if device is not None:
                self._device_service(conn, owner, device, request)
                return
            reply, device, done = owner._host_service(request)
            conn.sendall(reply)
            if done:
                return

    def _device_service(
        self, conn: socket.socket, owner: FakeAdbServer, device: FakeDevice, request: str
    ) -> None:
        if request.startswith(("shell,v2:", "shell,v2,raw:")):
            self._shell(conn, owner, device, request.split(":", 1)[1], v2=True)
        elif request.startswith("shell:"):
            self._shell(conn, owner, device, request[len("shell:") :], v2=False)
        elif request == "sync:":
            conn.sendall(b"OKAY")
            _Sync(conn, device).serve()
        else:
            conn.sendall(b"FAIL" + _block(f"unsupported device service {request!r}"))

    def _shell(
        self, conn: socket.socket, owner: FakeAdbServer, device: FakeDevice, line: str, *, v2: bool
    ) -> None:
        if not line.strip():
            conn.sendall(b"FAIL" + _block("interactive shells are not supported by the fake"))
            return
        admission = device.admit(line)
        owner._log_command(device, line)
        conn.sendall(b"OKAY")
        if admission.dropped:
            # A reset, not a clean close: adbd dying mid-command is an error, never empty output.
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
            return
        if admission.delay and owner._stopping.wait(admission.delay):
            return
        result = Shell(device).run(line)
        if not v2:
            conn.sendall(b"".join(data for _, data in result.chunks))
            return
        packets = [
            bytes([stream]) + struct.pack("<I", len(data)) + data
            for stream, data in result.chunks
            if data
        ]
        packets.append(b"\x03" + struct.pack("<I", 1) + bytes([result.returncode & 0xFF]))
        conn.sendall(b"".join(packets))


class _Sync:
    """The ``sync:`` file protocol on one connection (adbutils sends one request per connection)."""

    def __init__(self, conn: socket.socket, device: FakeDevice) -> None:
        self.conn = conn
        self.device = device

    def serve(self) -> None:
        while True:
            header = _recv_exact(self.conn, 8)
            if header is None:
                return
            command, length = header[:4], struct.unpack("<I", header[4:])[0]
            if command == b"QUIT":
                return
            raw = _recv_exact(self.conn, length)
            if raw is None:
                return
            path = raw.decode(errors="replace")
            if command == b"STAT":
                self._stat(path)
            elif command == b"LIST":
                self._list(path)
            elif command == b"RECV":
                self._recv(path)
            elif command == b"SEND":
                if not self._send(path):
                    return
            else:
                self._fail(f"unknown sync command {command!r}")
                return

    def _fail(self, message: str) -> None:
        data = message.encode()
        self.conn.sendall(b"FAIL" + struct.pack("<I", len(data)) + data)

    def _stat(self, path: str) -> None:
        with self.device.lock:
            data = self.device.files.get(path)
        if data is not None:
            mode, size, mtime = stat.S_IFREG | 0o644, len(data), int(time.time())
        elif _list_dir(self.device, path) is not None:
            mode, size, mtime = stat.S_IFDIR | 0o755, 4096, int(time.time())
        else:
            mode = size = mtime = 0
        # One sendall: adbutils reads the 12-byte body with a single recv (replay.md §3.5.3).
        self.conn.sendall(b"STAT" + struct.pack("<III", mode, size, mtime))

    def _list(self, path: str) -> None:
        entries = _list_dir(self.device, path) or {}
        now = int(time.time())
        out = []
        for name, (mode, size) in sorted(entries.items()):
            encoded = name.encode()
            out.append(b"DENT" + struct.pack("<IIII", mode, size, now, len(encoded)) + encoded)
        out.append(b"DONE" + bytes(16))
        self.conn.sendall(b"".join(out))

    def _recv(self, path: str) -> None:
        with self.device.lock:
            data = self.device.files.get(path)
        if data is None:
            self._fail(f"open failed: No such file or directory: {path}")
            return
        out = []
        for start in range(0, len(data), 65536):
            chunk = data[start : start + 65536]
            out.append(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
        out.append(b"DONE" + bytes(4))
        self.conn.sendall(b"".join(out))

    def _send(self, spec: str) -> bool:
        path = spec.rsplit(",", 1)[0]
        data = b""
        while True:
            header = _recv_exact(self.conn, 8)
            if header is None:
                return False
            command, length = header[:4], struct.unpack("<I", header[4:])[0]
            if command == b"DATA":
                chunk = _recv_exact(self.conn, length)
                if chunk is None:
                    return False
                data += chunk
            elif command == b"DONE":
                break
            else:
                self._fail(f"unexpected {command!r} during SEND")
                return False
        if path in _DIRECTORIES:
            self._fail(f"{path} is a directory")
            return True
        with self.device.lock:
            self.device.files[path] = data
        self.conn.sendall(b"OKAY" + bytes(4))
        return True


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], owner: FakeAdbServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A bug in the fake must not print to the test's stderr unnoticed; it fails the client
        # side anyway, and the log keeps the traceback.
        logger.exception("fake adb server error serving %s", client_address)


ModelSource = FakeDevice | Iterable[FakeDevice] | Mapping[str, Any] | Path | str


class FakeAdbServer:
    """A fake adb server for ``FakeDevice`` models; use as a context manager.

    ``commands`` maps each serial to the exact shell lines received, in order.
    """

    def __init__(
        self,
        model_or_devices: ModelSource,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        version: int = DEFAULT_VERSION,
    ) -> None:
        if isinstance(model_or_devices, FakeDevice):
            devices = [model_or_devices]
        elif isinstance(model_or_devices, Mapping | Path | str):
            devices = load_devices(model_or_devices)
        else:
            devices = list(model_or_devices)
        self.devices: dict[str, FakeDevice] = {}
        for device in devices:
            if device.serial in self.devices:
                raise ModelError(f"two fake devices share the serial {device.serial!r}")
            self.devices[device.serial] = device
        self.host = host
        self.version = version
        self._requested_port = port
        self._server: _TCPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the fake adb server is not running")
        port: int = self._server.server_address[1]
        return port

    @property
    def commands(self) -> dict[str, list[str]]:
        return {serial: list(device.commands) for serial, device in self.devices.items()}

    def device(self, serial: str | None = None) -> FakeDevice:
        """The device with this serial (or the only one)."""
        if serial is None:
            if len(self.devices) != 1:
                raise KeyError("several fake devices: name a serial")
            return next(iter(self.devices.values()))
        return self.devices[serial]

    def start(self) -> FakeAdbServer:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _TCPServer((self.host, self._requested_port), self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-adb-{self.port}",
            daemon=True,
        )
        self._thread.start()
        logger.debug("fake adb server on %s:%d", self.host, self.port)
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeAdbServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- called from handler threads --

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _log_command(self, device: FakeDevice, line: str) -> None:
        logger.info("%s$ %s", device.serial, line)

    def _listing(self, long: bool) -> str:
        lines = []
        for transport_id, device in enumerate(self.devices.values(), start=1):
            if device.state == "gone":
                continue
            if long:
                model = device.spec.model
                lines.append(
                    f"{device.serial:<22} {device.state} product:{model} model:{model} "
                    f"device:{model} transport_id:{transport_id}"
                )
            else:
                lines.append(f"{device.serial}\t{device.state}")
        return "".join(f"{line}\n" for line in lines)

    def _lookup(self, serial: str) -> tuple[FakeDevice | None, str]:
        device = self.devices.get(serial)
        if device is None or device.state == "gone":
            return None, f"device '{serial}' not found"
        if device.state == "offline":
            return None, "device offline"
        if device.state == "unauthorized":
            return None, "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set"
        return device, ""

    def _by_transport_id(self, raw: str) -> tuple[FakeDevice | None, str]:
        devices = list(self.devices.values())
        if not raw.isdigit() or not 1 <= int(raw) <= len(devices):
            return None, f"no device with transport id '{raw}'"
        return self._lookup(devices[int(raw) - 1].serial)

    def _host_service(self, request: str) -> tuple[bytes, FakeDevice | None, bool]:
        """(reply, device the connection now talks to, whether to close)."""
        if request == "host:version":
            return b"OKAY" + _block(f"{self.version:04x}"), None, False
        if request in ("host:devices", "host:devices-l"):
            return b"OKAY" + _block(self._listing(request.endswith("-l"))), None, False
        if request == "host:kill":
            return b"OKAY", None, True
        if request.startswith("host:tport:serial:") and self.version >= 41:
            device, error = self._lookup(request[len("host:tport:serial:") :])
            if device is None:
                return b"FAIL" + _block(error), None, True
            transport_id = list(self.devices).index(device.serial) + 1
            return b"OKAY" + struct.pack("<Q", transport_id), device, False
        if request.startswith("host:transport:"):
            device, error = self._lookup(request[len("host:transport:") :])
            return (
                (b"FAIL" + _block(error), None, True)
                if device is None
                else (b"OKAY", device, False)
            )
        if request.startswith("host:transport-id:"):
            device, error = self._by_transport_id(request[len("host:transport-id:") :])
            return (
                (b"FAIL" + _block(error), None, True)
                if device is None
                else (b"OKAY", device, False)
            )
        if request == "host:transport-any":
            ready = [d for d in self.devices.values() if d.state == "device"]
            if len(ready) != 1:
                return (
                    b"FAIL" + _block("more than one device" if ready else "no devices"),
                    None,
                    True,
                )
            return b"OKAY", ready[0], False
        if request.startswith(("host-serial:", "host-transport-id:")):
            return self._device_query(request), None, True
        return b"FAIL" + _block(f"unsupported host service {request!r}"), None, True

    def _device_query(self, request: str) -> bytes:
        # Serials may contain ':' (127.0.0.1:5555), so the command is split off from the right.
        target, _, command = request.rpartition(":")
        kind, _, name = target.partition(":")
        device, error = self._lookup(name) if kind == "host-serial" else self._by_transport_id(name)
        if command == "get-state" and device is None and name in self.devices:
            state = self.devices[name].state
            if state != "gone":
                return b"OKAY" + _block(state)
        if device is None:
            return b"FAIL" + _block(error)
        answers = {
            "features": ",".join(device.spec.features),
            "get-state": device.state,
            "get-serialno": device.serial,
            "get-devpath": "usb:fake",
        }
        if command not in answers:
            return b"FAIL" + _block(f"unsupported device query {command!r}")
        return b"OKAY" + _block(answers[command])


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a fake device model until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m trailblaze.replay.fakeadb",
        description="Serve fake Android devices over the adb server protocol (demos, tests).",
    )
    parser.add_argument("model", type=Path, help="device spec YAML (one device or devices: [...])")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--quiet", action="store_true", help="do not log each shell command")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(message)s")
    try:
        server = FakeAdbServer(args.model, host=args.host, port=args.port)
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        server.start()
    except OSError as exc:
        print(
            f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 2
    serials = ", ".join(server.devices)
    print(f"fake adb server for {serials} listening on {args.host}:{server.port}", flush=True)
    print(f"  export ANDROID_ADB_SERVER_PORT={server.port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
