"""A fake adb server on 127.0.0.1 that serves ``FakeDevice`` models to the real adbutils client.

It speaks what adbutils 2.12.0 sends (replay.md §3.2, §3.5): ``host:version`` (41, asked before
every transport), ``host:devices[-l]``, ``host:tport:serial:`` (8-byte transport id),
``host:transport:``, ``host:transport-id:``, ``host-serial:<serial>:<cmd>`` (features,
get-state, ...), ``shell:`` (v1: output in execution order, ends when we close), ``shell,v2:``
(packets with a real exit code) and ``sync:`` (``sync``). Each command line runs in the
fake's shell (``shell``).

``python -m fakeadb MODEL.yaml [--port N]`` serves a model until Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import socket
import socketserver
import struct
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from fakeadb.device import FakeDevice, load_devices
from fakeadb.spec import ModelError
from fakeadb.sync import SyncSession, recv_exact

logger = logging.getLogger(__name__)

DEFAULT_VERSION = 41


_PACKET = 64 << 10


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
            header = recv_exact(conn, 4)
            if header is None:
                return
            try:
                length = int(header, 16)
            except ValueError:
                conn.sendall(b"FAIL" + _block(f"bad request header {header!r}"))
                return
            payload = recv_exact(conn, length)
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
            SyncSession(conn, device.runtime.files).serve()
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
        if admission.dropped and device.faults.disconnect_mode == "close":
            conn.close()  # no status at all: the client reads nothing
            return
        conn.sendall(b"OKAY")
        if admission.dropped:
            # A reset, not a clean close: adbd dying mid-command is an error, never empty output.
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
            return
        if admission.delay and owner._stopping.wait(admission.delay):
            return
        result = device.run(line)
        if not v2:
            conn.sendall(b"".join(data for _, data in result.chunks))
            return
        # adbd sends a long output in packets of at most its payload size (here 64 KiB).
        packets = [
            bytes([stream]) + struct.pack("<I", len(part)) + part
            for stream, data in result.chunks
            for part in (data[i : i + _PACKET] for i in range(0, len(data), _PACKET))
        ]
        packets.append(b"\x03" + struct.pack("<I", 1) + bytes([result.returncode & 0xFF]))
        conn.sendall(b"".join(packets))


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
        self.killed = threading.Event()
        """Set when a client sent ``host:kill`` (``adb kill-server``)."""
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
        for device in self.devices.values():
            device.programs.recorder.stop_all()  # a screenrecord left running ends with us
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

    def _find(self, serial: str) -> tuple[FakeDevice | None, str]:
        """The device with this serial in any state but gone, or (None, why not)."""
        device = self.devices.get(serial)
        if device is None or device.state == "gone":
            return None, f"device '{serial}' not found"
        return device, ""

    def _find_by_transport_id(self, raw: str) -> tuple[FakeDevice | None, str]:
        devices = list(self.devices.values())
        if not raw.isdigit() or not 1 <= int(raw) <= len(devices):
            return None, f"no device with transport id '{raw}'"
        return self._find(devices[int(raw) - 1].serial)

    @staticmethod
    def _usable(found: tuple[FakeDevice | None, str]) -> tuple[FakeDevice | None, str]:
        """The found device if it can take a transport, else (None, the adb error)."""
        device, error = found
        if device is None:
            return None, error
        if device.state == "offline":
            return None, "device offline"
        if device.state == "unauthorized":
            return None, "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set"
        return device, ""

    def _lookup(self, serial: str) -> tuple[FakeDevice | None, str]:
        return self._usable(self._find(serial))

    def _by_transport_id(self, raw: str) -> tuple[FakeDevice | None, str]:
        return self._usable(self._find_by_transport_id(raw))

    @staticmethod
    def _attach(found: tuple[FakeDevice | None, str]) -> tuple[bytes, FakeDevice | None, bool]:
        device, error = found
        return (b"FAIL" + _block(error), None, True) if device is None else (b"OKAY", device, False)

    def _host_service(self, request: str) -> tuple[bytes, FakeDevice | None, bool]:
        """(reply, device the connection now talks to, whether to close)."""
        if request == "host:version":
            return b"OKAY" + _block(f"{self.version:04x}"), None, False
        if request in ("host:devices", "host:devices-l"):
            return b"OKAY" + _block(self._listing(request.endswith("-l"))), None, False
        if request == "host:kill":
            # As adb does: answer, then go away (in another thread: this one is serving).
            self.killed.set()
            threading.Thread(target=self.stop, name="fake-adb-kill", daemon=True).start()
            return b"OKAY", None, True
        if request.startswith("host:tport:serial:") and self.version >= 41:
            device, error = self._lookup(request[len("host:tport:serial:") :])
            if device is None:
                return b"FAIL" + _block(error), None, True
            transport_id = list(self.devices).index(device.serial) + 1
            return b"OKAY" + struct.pack("<Q", transport_id), device, False
        if request.startswith("host:transport:"):
            return self._attach(self._lookup(request[len("host:transport:") :]))
        if request.startswith("host:transport-id:"):
            return self._attach(self._by_transport_id(request[len("host:transport-id:") :]))
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
        found = self._find(name) if kind == "host-serial" else self._find_by_transport_id(name)
        # adb answers get-state for any known device (offline, unauthorized, ...), not just
        # for one that could take a transport.
        if command == "get-state" and found[0] is not None:
            return b"OKAY" + _block(found[0].state)
        device, error = self._usable(found)
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
        prog="python -m fakeadb",
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
        server.killed.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
