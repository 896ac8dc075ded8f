"""``Device`` over a real adb server: the only module that imports adbutils.

Commands, files and the device listing go through ``adbwire``, our bounded reading of the adb
server's protocol: adbutils reads a command's output whole, trusts the 32-bit lengths the
server sends and lets any trickle of bytes restart its timeout (``adbwire`` says how), so a
hostile or broken server could hold replay for ever or fill its memory. Each framework command
(a tap, a dump, ``dumpsys``) has a deadline however its output flows (``deadline``, default
60 s, ``TRAILBLAZE_REPLAY_COMMAND_DEADLINE_MS``) besides the quiet timeout of each read
(``timeout``); a caller's command (``android_adbShell``) has its own timeout as both. Output
past ``adbwire.KEEP`` is dropped, and the text says so. adbutils remains for what replay does
to the server itself: stopping one it started, and finding the adb program it bundles.

Errors are translated at this boundary: a transport that is gone (refused, reset, EOF, no
answer in time, an answer that is not adb, "device not found") is ``DeviceLostError``;
anything else is ``DeviceError`` with the server's message, escaped.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path

import adbutils

from trailblaze.replay import adbwire
from trailblaze.replay.adbwire import Deadline, Failed, Overdue, ProtocolError, TooLarge
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
from trailblaze.report.escaping import printable
from trailblaze.toolchain import proc

logger = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5037
DEADLINE_ENV = "TRAILBLAZE_REPLAY_COMMAND_DEADLINE_MS"
DEFAULT_DEADLINE = 60.0
"""The most one framework command, or one file pulled or pushed, may take on the device."""

# Server replies that mean the device left (unplugged, emulator killed, adbd restarted).
_GONE_MARKERS = ("not found", "offline", "no devices", "connection closed", "closed")


class AdbDevice(ShellDevice):
    """A device reached through an adb server. Build it with ``connect``."""

    def __init__(
        self,
        serial: str,
        *,
        host: str,
        port: int,
        timeout: float,
        shell_v2: bool,
        deadline: float = DEFAULT_DEADLINE,
        idle_retry_delays: Sequence[float] = IDLE_RETRY_DELAYS,
    ) -> None:
        super().__init__(idle_retry_delays=idle_retry_delays)
        self._serial = serial
        self._target = adbwire.Target(host, port, serial)
        self._address = f"{host}:{port}"
        self._timeout = timeout
        self._deadline = deadline
        self._shell_v2 = shell_v2
        self._lost: str | None = None

    @property
    def serial(self) -> str:
        return self._serial

    def __repr__(self) -> str:
        return f"AdbDevice(serial={self._serial!r}, server={self._address})"

    def _run(self, argv: Sequence[str], timeout: float | None = None) -> ShellResult:
        self._check_alive()
        what = shlex.join(argv)
        # A caller's command may be silent for all of its timeout; a framework command answers
        # within the quiet timeout, and ends within the deadline.
        deadline = Deadline(timeout, timeout) if timeout is not None else self._limit()
        try:
            raw = adbwire.shell(self._target, what, v2=self._shell_v2, deadline=deadline)
        except (TimeoutError, Overdue) as exc:
            if timeout is not None and self._answers():
                raise CommandTimeout(
                    f"{self._serial}: `{printable(what)}` did not finish within {timeout:g} s "
                    "and was abandoned (the device still answers)"
                ) from exc
            raise self._translate(exc, what, deadline) from exc
        except Exception as exc:
            raise self._translate(exc, what, deadline) from exc
        output, stdout = _text(raw.output), _text(raw.stdout)
        if raw.dropped:
            note = (
                f"\n[trailblaze: output cut: {raw.dropped} bytes past the first "
                f"{adbwire.KEEP >> 20} MiB were not kept]"
            )
            logger.warning("%s: `%s`%s", self._serial, printable(what), note.replace("\n", " "))
            output, stdout = output + note, stdout + note
        return ShellResult(
            raw.returncode, output, stdout if self._shell_v2 else output, _text(raw.stderr)
        )

    def _limit(self) -> Deadline:
        return Deadline(self._deadline, self._timeout)

    def _answers(self) -> bool:
        """Whether the device still runs a command (after a caller's command timed out)."""
        try:
            probe = adbwire.shell(
                self._target,
                "echo alive",
                v2=self._shell_v2,
                deadline=Deadline(self._timeout, self._timeout),
            )
        except Exception:  # any failure means no: the caller then reports the device lost
            return False
        return probe.returncode == 0 and b"alive" in probe.output

    def _read_file(self, path: str) -> bytes:
        self._check_alive()
        deadline = self._limit()
        try:
            return adbwire.pull(self._target, path, deadline)
        except Exception as exc:
            raise self._translate(exc, f"pull {path}", deadline) from exc

    def _write_file(self, path: str, data: bytes) -> None:
        self._check_alive()
        deadline = self._limit()
        try:
            adbwire.push(self._target, path, bytes(data), mode=0o644, deadline=deadline)
        except Exception as exc:
            raise self._translate(exc, f"push {path}", deadline) from exc

    def _check_alive(self) -> None:
        # After the transport died, every later call fails the same way at once instead of
        # reconnecting to a device that may have come back in another state.
        if self._lost is not None:
            raise DeviceLostError(self._lost)

    def _translate(self, exc: Exception, what: str, deadline: Deadline) -> Exception:
        what = printable(what)  # a trail's text may be in it (a command's words, a path)
        lost = _is_lost(exc, deadline)
        if lost is None:
            if isinstance(exc, Failed | TooLarge):
                return DeviceError(f"{self._serial}: `{what}` failed: {exc}")
            return exc  # not a device problem: a bug, let it surface with its traceback
        message = f"{self._serial}: device lost during `{what}`: {lost}"
        self._lost = message
        return DeviceLostError(message)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _message(exc: BaseException) -> str:
    text = " ".join(str(a) for a in exc.args if not isinstance(a, bytes)) or type(exc).__name__
    return printable(text.strip())


def _is_lost(exc: BaseException, deadline: Deadline | None = None) -> str | None:
    """Why ``exc`` means the transport is gone, or None for an ordinary command failure."""
    if isinstance(exc, Overdue):
        limit = f" {deadline.seconds:g} s" if deadline is not None else ""
        return (
            f"not done within its deadline of{limit} while the device kept sending ({DEADLINE_ENV})"
        )
    if isinstance(exc, ProtocolError):
        return f"the adb server's answer is not adb: {_message(exc)}"
    if isinstance(exc, TimeoutError):
        quiet = f" ({deadline.quiet:g} s)" if deadline is not None else ""
        return f"no answer in time{quiet}"
    if isinstance(exc, adbwire.Closed):
        return "the connection closed before the device answered (empty read)"
    if isinstance(exc, ConnectionRefusedError):
        return f"the adb server is unreachable ({_message(exc)})"
    if isinstance(exc, EOFError | ConnectionError):
        return f"the connection dropped ({type(exc).__name__}: {_message(exc)})"
    if isinstance(exc, OSError):
        return f"socket error ({_message(exc)})"
    if isinstance(exc, Failed):
        text = str(exc).lower()
        if any(marker in text for marker in _GONE_MARKERS):
            return _message(exc)
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
    deadline: float = DEFAULT_DEADLINE,
) -> AdbDevice:
    """Pick a device on the adb server and return it as a ``Device``.

    ``serial`` selects that device (it must be ready); without one, the single ready device is
    used. ``NoDeviceError`` / ``AmbiguousDeviceError`` list what is there. Host and port default
    to ``ANDROID_ADB_SERVER_HOST`` / ``ANDROID_ADB_SERVER_PORT``, then 127.0.0.1:5037.
    ``timeout`` bounds every socket read, so a wedged device fails with ``DeviceLostError``;
    ``deadline`` every framework command, however its output flows.
    """
    (device,) = connect_many(
        (serial,) if serial else (), host=host, port=port, timeout=timeout, deadline=deadline
    )
    return device


def connect_many(
    serials: Sequence[str] = (),
    *,
    every: bool = False,
    host: str | None = None,
    port: int | None = None,
    timeout: float = 10.0,
    deadline: float = DEFAULT_DEADLINE,
) -> list[AdbDevice]:
    """The devices to replay on: the named ones, ``every`` ready one, or the only one."""
    host, port = _server_address(host, port)
    address = f"{host}:{port}"
    asking = Deadline(timeout, timeout)
    try:
        listing = adbwire.host_query(host, port, "host:devices", asking)
    except Exception as exc:
        reason = _is_lost(exc, asking) or (_message(exc) if isinstance(exc, Failed) else None)
        if reason is None:
            raise
        raise DeviceLostError(
            f"cannot list devices on the adb server at {address}: {reason}"
        ) from exc
    states: dict[str, str] = {}
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) >= 2:  # a serial and its state (what adbutils reads too)
            states[printable(fields[0])] = printable(fields[1])
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
    return [_open(host, port, serial, timeout, deadline) for serial in chosen]


def _open(host: str, port: int, serial: str, timeout: float, deadline: float) -> AdbDevice:
    asking = Deadline(timeout, timeout)
    try:
        features = set(
            adbwire.host_query(host, port, f"host-serial:{serial}:features", asking).split(",")
        )
    except Exception as exc:
        reason = _is_lost(exc, asking) or (_message(exc) if isinstance(exc, Failed) else None)
        if reason is None:
            raise
        raise DeviceLostError(f"{serial}: cannot read device features: {reason}") from exc
    shell_v2 = "shell_v2" in features
    if not shell_v2:
        logger.warning(
            "%s has no shell_v2: exit codes come from an echo marker and a dropped connection "
            "may look like empty output",
            serial,
        )
    return AdbDevice(
        serial, host=host, port=port, timeout=timeout, shell_v2=shell_v2, deadline=deadline
    )


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
