"""``Device`` over a real adb server through adbutils: the only module that imports adbutils.

The client is always an explicit ``AdbClient(host, port, socket_timeout=...)``: the import-time
singleton ``adbutils.adb`` freezes the environment of whoever imported adbutils first. Commands
go through ``shell2`` in list form, so adbutils quotes every argument and, on devices with the
``shell_v2`` feature, we get real exit codes and a dropped connection reads as an error instead
of as empty output. Every call carries our own timeout: adbutils' default for shell is 600 s.

adbutils errors are translated at this boundary: a transport that is gone (refused, reset, EOF,
timeout, "device not found") is ``DeviceLostError``; anything else is ``DeviceError`` with the
server's message.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import adbutils
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

from trailblaze.replay.device import (
    IDLE_RETRY_DELAYS,
    AmbiguousDeviceError,
    CommandTimeout,
    DeviceError,
    DeviceLostError,
    NoDeviceError,
    ShellDevice,
    ShellResult,
)
from trailblaze.toolchain import proc

logger = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5037

# Server replies that mean the device left (unplugged, emulator killed, adbd restarted).
_GONE_MARKERS = ("not found", "offline", "no devices", "connection closed", "closed")


class AdbDevice(ShellDevice):
    """A device reached through an adb server. Build it with ``connect``."""

    def __init__(
        self,
        device: Any,
        *,
        address: str,
        timeout: float,
        shell_v2: bool,
        idle_retry_delays: Sequence[float] = IDLE_RETRY_DELAYS,
    ) -> None:
        super().__init__(idle_retry_delays=idle_retry_delays)
        self._device = device
        self._serial: str = device.serial
        self._address = address
        self._timeout = timeout
        self._shell_v2 = shell_v2
        self._lost: str | None = None

    @property
    def serial(self) -> str:
        return self._serial

    def __repr__(self) -> str:
        return f"AdbDevice(serial={self._serial!r}, server={self._address})"

    def _run(self, argv: Sequence[str], timeout: float | None = None) -> ShellResult:
        self._check_alive()
        try:
            raw = self._device.shell2(
                list(argv), timeout=timeout or self._timeout, encoding=None, v2=self._shell_v2
            )
        except AdbTimeout as exc:
            if timeout is not None and self._answers():
                raise CommandTimeout(
                    f"{self._serial}: `{shlex.join(argv)}` did not finish within {timeout:g} s "
                    "and was abandoned (the device still answers)"
                ) from exc
            raise self._translate(exc, shlex.join(argv)) from exc
        except Exception as exc:
            raise self._translate(exc, shlex.join(argv)) from exc
        output = raw.output.decode("utf-8", errors="replace")
        stdout = raw.stdout.decode("utf-8", errors="replace") if self._shell_v2 else output
        return ShellResult(
            raw.returncode, output, stdout, raw.stderr.decode("utf-8", errors="replace")
        )

    def _answers(self) -> bool:
        """Whether the device still runs a command (after a caller's command timed out)."""
        try:
            probe = self._device.shell2(
                ["echo", "alive"], timeout=self._timeout, encoding=None, v2=self._shell_v2
            )
        except Exception:  # any failure means no: the caller then reports the device lost
            return False
        return bool(probe.returncode == 0 and b"alive" in probe.output)

    def _read_file(self, path: str) -> bytes:
        self._check_alive()
        try:
            data: bytes = self._device.sync.read_bytes(path)
        except Exception as exc:
            raise self._translate(exc, f"pull {path}") from exc
        return data

    def _write_file(self, path: str, data: bytes) -> None:
        self._check_alive()
        try:
            # bytes, never a str: adbutils reads a str as the path of a local file to send.
            self._device.sync.push(bytes(data), path, mode=0o644, check=True)
        except Exception as exc:
            raise self._translate(exc, f"push {path}") from exc

    def _check_alive(self) -> None:
        # After the transport died, every later call fails the same way at once instead of
        # reconnecting to a device that may have come back in another state.
        if self._lost is not None:
            raise DeviceLostError(self._lost)

    def _translate(self, exc: Exception, what: str) -> Exception:
        lost = _is_lost(exc)
        if lost is None:
            if isinstance(exc, AdbError | ValueError):
                return DeviceError(f"{self._serial}: `{what}` failed: {_message(exc)}")
            return exc  # not a device problem: a bug, let it surface with its traceback
        message = f"{self._serial}: device lost during `{what}`: {lost}"
        self._lost = message
        return DeviceLostError(message)


def _message(exc: BaseException) -> str:
    text = " ".join(str(a) for a in exc.args if not isinstance(a, bytes)) or type(exc).__name__
    return text.strip()


def _is_lost(exc: BaseException) -> str | None:
    """Why ``exc`` means the transport is gone, or None for an ordinary command failure."""
    if isinstance(exc, AdbTimeout):
        return f"no answer in time ({_message(exc)})"
    if isinstance(exc, AdbConnectionError):
        return f"the adb server is unreachable ({_message(exc)})"
    if isinstance(exc, EOFError | ConnectionError | TimeoutError):
        return f"the connection dropped ({type(exc).__name__}: {_message(exc)})"
    if isinstance(exc, OSError):
        return f"socket error ({_message(exc)})"
    if isinstance(exc, AdbError):
        text = _message(exc).lower()
        # shell2 over v1 raises "shell output invalid" when the exit marker never arrived:
        # the stream was cut before the command finished.
        if any(marker in text for marker in _GONE_MARKERS) or "shell output invalid" in text:
            return _message(exc)
        # adbutils reads the 4-byte status and reports what came instead: nothing at all means
        # the server or the device closed the connection before answering (an empty read).
        if text.startswith("unknown data: b''") or text == 'unknown data: b""':
            return "the connection closed before the device answered (empty read)"
    return None


def _server_address(host: str | None, port: int | None) -> tuple[str, int]:
    host = host or os.environ.get("ANDROID_ADB_SERVER_HOST") or DEFAULT_HOST
    if port is None:
        raw = os.environ.get("ANDROID_ADB_SERVER_PORT")
        try:
            port = int(raw) if raw else DEFAULT_PORT
        except ValueError:
            raise NoDeviceError(f"ANDROID_ADB_SERVER_PORT is not a port number: {raw!r}") from None
    return host, port


def connect(
    serial: str | None,
    host: str | None = None,
    port: int | None = None,
    timeout: float = 10.0,
) -> AdbDevice:
    """Pick a device on the adb server and return it as a ``Device``.

    ``serial`` selects that device (it must be ready); without one, the single ready device is
    used. ``NoDeviceError`` / ``AmbiguousDeviceError`` list what is there. Host and port default
    to ``ANDROID_ADB_SERVER_HOST`` / ``ANDROID_ADB_SERVER_PORT``, then 127.0.0.1:5037.
    ``timeout`` bounds every socket read, so a wedged device fails with ``DeviceLostError``.
    """
    (device,) = connect_many((serial,) if serial else (), host=host, port=port, timeout=timeout)
    return device


def connect_many(
    serials: Sequence[str] = (),
    *,
    every: bool = False,
    host: str | None = None,
    port: int | None = None,
    timeout: float = 10.0,
) -> list[AdbDevice]:
    """The devices to replay on: the named ones, ``every`` ready one, or the only one."""
    host, port = _server_address(host, port)
    address = f"{host}:{port}"
    client = adbutils.AdbClient(host=host, port=port, socket_timeout=timeout)
    try:
        infos = client.list()
    except Exception as exc:
        reason = _is_lost(exc)
        if reason is None:
            raise
        raise DeviceLostError(
            f"cannot list devices on the adb server at {address}: {reason}"
        ) from exc
    states = {info.serial: info.state for info in infos}
    ready = sorted(s for s, state in states.items() if state == "device")
    others = ", ".join(f"{s} ({state})" for s, state in sorted(states.items()) if state != "device")
    not_ready = f"; not ready: {others}" if others else ""
    chosen: list[str] = []
    for serial in dict.fromkeys(serials):
        if serial not in states:
            listed = ", ".join(ready) if ready else "none"
            raise NoDeviceError(
                f"no device {serial!r} on the adb server at {address} "
                f"(ready devices: {listed}{not_ready})",
                ready,
            )
        if states[serial] != "device":
            raise NoDeviceError(
                f"device {serial!r} is {states[serial]}, not ready "
                f"(ready devices: {', '.join(ready) or 'none'})",
                ready,
            )
        chosen.append(serial)
    if every:
        chosen = sorted(set(chosen) | set(ready))
    if not chosen:
        if not ready:
            raise NoDeviceError(
                f"no Android device on the adb server at {address}{not_ready}", ready
            )
        if len(ready) > 1:
            raise AmbiguousDeviceError(
                f"{len(ready)} devices are connected ({', '.join(ready)}); choose one by serial "
                "(--device, repeatable) or use them all (--all-devices)",
                ready,
            )
        chosen = ready
    return [_open(client, serial, address, timeout) for serial in chosen]


def _open(client: Any, serial: str, address: str, timeout: float) -> AdbDevice:
    device = client.device(serial=serial)
    try:
        # adbutils reads features with its 600 s default; ask once with our timeout and hand the
        # answer to shell2 so it never asks again.
        with device.open_transport("features", timeout=timeout) as conn:
            features = set(conn.read_string_block().split(","))
    except Exception as exc:
        reason = _is_lost(exc)
        if reason is None and not isinstance(exc, AdbError):
            raise
        raise DeviceLostError(
            f"{serial}: cannot read device features: {reason or _message(exc)}"
        ) from exc
    device._features = features
    shell_v2 = "shell_v2" in features
    if not shell_v2:
        logger.warning(
            "%s has no shell_v2: exit codes come from an echo marker and a dropped connection "
            "may look like empty output",
            serial,
        )
    return AdbDevice(device, address=address, timeout=timeout, shell_v2=shell_v2)


# -- the adb server ----------------------------------------------------------------------------

#: `adb start-server` forks the server and returns once it listens; a cold start takes ~1-3 s.
START_TIMEOUT = 30.0
_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class AdbMissingError(NoDeviceError):
    """No adb server runs and there is no adb program to start one."""


class AdbServer:
    """The adb server replay talks to; ``stop`` ends it only if ``ensure_server`` started it."""

    def __init__(self, host: str, port: int, started_with: str | None) -> None:
        self.host = host
        self.port = port
        self.started_with = started_with

    def stop(self) -> None:
        if self.started_with is None:
            return
        try:
            adbutils.AdbClient(host=self.host, port=self.port, socket_timeout=5).server_kill()
        except Exception as exc:  # it may be gone already; what matters is that it is not left
            logger.debug("stopping the adb server at %s:%s: %s", self.host, self.port, exc)
        if _listening(self.host, self.port):
            logger.warning(
                "the adb server started at %s:%s did not stop; kill it with `%s -P %s kill-server`",
                self.host,
                self.port,
                self.started_with,
                self.port,
            )
        self.started_with = None


def _listening(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def find_adb(env: Mapping[str, str] | None = None) -> str:
    """The adb program to start a server with: ``ADBUTILS_ADB_PATH``, ``adb`` on PATH, then the
    one adbutils bundles (adbutils' own order); ``AdbMissingError`` says what to do."""
    env = os.environ if env is None else env
    named = env.get("ADBUTILS_ADB_PATH")
    if named:
        if os.path.isfile(named) and os.access(named, os.X_OK):
            return named
        raise AdbMissingError(
            f"ADBUTILS_ADB_PATH is {named!r}, which is not an executable file: no adb program "
            "to start the adb server with"
        )
    found = shutil.which("adb", path=env.get("PATH"))
    if found:
        return found
    bundled = Path(adbutils.__file__).parent / "binaries" / "adb"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return str(bundled)
    raise AdbMissingError(
        "no adb program: install the Android SDK platform-tools (adb on PATH) or set "
        "ADBUTILS_ADB_PATH to one"
    )


def ensure_server(
    host: str | None = None, port: int | None = None, env: Mapping[str, str] | None = None
) -> AdbServer:
    """The adb server at host:port, started (and later stoppable) if none listens there."""
    host, port = _server_address(host, port)
    if _listening(host, port) or host not in _LOCAL_HOSTS:
        return AdbServer(host, port, None)
    try:
        adb = find_adb(env)
    except AdbMissingError as exc:
        raise AdbMissingError(f"no adb server at {host}:{port} and {exc}") from None
    try:
        result = proc.run([adb, "-P", str(port), "start-server"], timeout=START_TIMEOUT)
    except proc.ProcError as exc:
        raise AdbMissingError(f"no adb server at {host}:{port}, and {exc}") from None
    if not result.ok or not _listening(host, port, timeout=3.0):
        output = (result.stderr.strip() or result.stdout.strip() or "no output")[:300]
        raise NoDeviceError(
            f"no adb server at {host}:{port}, and `{adb} -P {port} start-server` did not start "
            f"one (exit code {result.returncode}: {output})"
        )
    logger.info("started an adb server at %s:%s with %s", host, port, adb)
    return AdbServer(host, port, adb)
