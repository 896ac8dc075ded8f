"""The ``Device`` protocol replay tools drive, its error types, and the adb command layer.

A ``Device`` is what a replayed tool may do to an Android device: read the screen
(``uiautomator dump``), tap, type, press keys, start and stop apps. ``ShellDevice`` implements
the whole protocol on top of one primitive (run an argv list on the device shell, read a file),
so the adb command lines of replay.md §2 are built and parsed in exactly one place: the
adbutils implementation (``adb.AdbDevice``) and the in-memory fake (``fake.ModelDevice``)
only move those lines.

Errors: ``DeviceError`` is an ordinary tool failure (a command failed); ``DeviceLostError`` means
the transport is gone and the run must stop. Device selection problems are usage errors
(``NoDeviceError``, ``AmbiguousDeviceError``) and list the serials the user can choose from.
"""

from __future__ import annotations

import abc
import enum
import logging
import operator
import re
import shlex
import time
from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable

from trailblaze.errors import TrailblazeError
from trailblaze.redaction import redacted_url
from trailblaze.report.escaping import printable

logger = logging.getLogger(__name__)

#: Where dumps are written before being pulled. /data/local/tmp is writable by the shell user on
#: every image, unlike /sdcard on some emulators before the first boot completes.
DUMP_PATH = "/data/local/tmp/trailblaze-uidump.xml"

#: Pauses between ``uiautomator dump`` attempts that hit "could not get idle state" (an
#: animation is running). Short: the next frame usually settles it.
IDLE_RETRY_DELAYS: tuple[float, ...] = (0.1, 0.25, 0.5)

IDLE_STATE_ERROR = "could not get idle state"


class DeviceError(Exception):
    """A device command failed: an ordinary tool failure, the run can go on."""


class DeviceLostError(DeviceError):
    """The transport to the device is gone (refused, reset, EOF, timeout): fatal for the run."""


class UnsupportedInputError(DeviceError):
    """The device cannot perform this input (non-ASCII text, a literal ``%s``, a bad key)."""


class CommandTimeout(DeviceError):
    """A caller's command (``run_command``) outlived its timeout while the device still
    answers: an ordinary tool failure, not a lost device."""


class DeviceSelectionError(TrailblazeError):
    """No single device could be chosen: a usage error, not a tool failure."""

    def __init__(self, message: str, available: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.available: tuple[str, ...] = tuple(available)


class NoDeviceError(DeviceSelectionError):
    """No device is connected, or the requested serial is not among the ready ones."""


class AmbiguousDeviceError(DeviceSelectionError):
    """Several devices are ready and none was named."""


class KeyCode(enum.IntEnum):
    """Android key codes replay tools send (android.view.KeyEvent)."""

    HOME = 3
    BACK = 4
    TAB = 61  # upstream's on-device map sends 62 (SPACE) for TAB; that is a bug (replay.md §2.1)
    SPACE = 62
    ENTER = 66
    DEL = 67
    ESCAPE = 111
    FORWARD_DEL = 112
    MOVE_HOME = 122
    MOVE_END = 123


@runtime_checkable
class Device(Protocol):
    """What replay tools may do to a device. Coordinates are screen pixels."""

    @property
    def serial(self) -> str:
        """The adb serial of the device."""
        ...

    def dump_hierarchy(self) -> str:
        """Return the uiautomator XML of the current screen (idle-state errors are retried)."""
        ...

    def tap(self, x: int, y: int) -> None:
        """Tap at a point."""
        ...

    def long_press(self, x: int, y: int, duration_ms: int = 500) -> None:
        """Press and hold at a point."""
        ...

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 400) -> None:
        """Move a finger from one point to another."""
        ...

    def input_text(self, text: str) -> None:
        """Type ASCII text into the focused field."""
        ...

    def keyevent(self, *codes: int | str) -> None:
        """Press keys, in order, in one command (ints or names such as ``KEYCODE_TAB``)."""
        ...

    def start_app(self, package: str) -> None:
        """Launch the package's launcher activity."""
        ...

    def force_stop(self, package: str) -> None:
        """Kill the package's process."""
        ...

    def clear_app_data(self, package: str) -> None:
        """Wipe the package's data (``pm clear``); also stops it."""
        ...

    def list_packages(self) -> list[str]:
        """Installed package names, sorted."""
        ...

    def set_clipboard(self, text: str) -> None:
        """Set the device clipboard through the Clipper app's broadcast."""
        ...

    def open_url(self, url: str) -> None:
        """Open a URL with a VIEW intent."""
        ...

    def window_size(self) -> tuple[int, int]:
        """Screen (width, height) in pixels, as ``wm size`` reports it."""
        ...

    def product_model(self) -> str | None:
        """The device's model (``ro.product.model``), printable and cut short; None when it
        does not say."""
        ...

    def is_keyboard_shown(self) -> bool:
        """Whether the soft keyboard (IME) is showing."""
        ...

    def current_package(self) -> str | None:
        """The package of the focused window, or None when it cannot be told."""
        ...

    def list_packages_detailed(self, *, include_system: bool = True) -> list[tuple[str, str]]:
        """Installed (package, APK path) pairs, sorted; third-party only unless asked."""
        ...

    def grant_permission(self, package: str, permission: str) -> None:
        """Grant a runtime permission (``pm grant``)."""
        ...

    def set_app_op(self, package: str, operation: str, mode: str = "allow") -> None:
        """Set an AppOps operation's mode for a package (``appops set``)."""
        ...

    def set_demo_mode(self, enable: bool) -> None:
        """Enter or leave the System UI demo mode (fixed clock and status icons)."""
        ...

    def set_network(self, connected: bool) -> None:
        """Turn Wi-Fi and mobile data on or off (``svc wifi|data``)."""
        ...

    def screenshot(self) -> bytes:
        """The screen as PNG bytes (``screencap -p``)."""
        ...

    def write_file(self, path: str, data: bytes) -> None:
        """Write ``data`` at ``path`` on the device (adb push): it replaces a file there."""
        ...

    def read_file(self, path: str) -> bytes:
        """The bytes of the device file at ``path`` (adb pull; bounded by the transport)."""
        ...

    def scan_media(self, path: str) -> None:
        """Ask the media scanner to add the file at ``path`` to the MediaStore."""
        ...

    def send_broadcast(
        self, action: str, component: str, extras: Sequence[tuple[str, str, str]] = ()
    ) -> str:
        """Send an explicit broadcast (``am broadcast -a ACTION -n PKG/CLASS``) with extras as
        (``am`` flag such as ``--es``, key, value); what ``am`` printed."""
        ...

    def run_command(
        self, argv: Sequence[str], *, timeout: float, run_as: str | None = None
    ) -> ShellResult:
        """Run a caller's command (``android_adbShell``) as given, each word quoted: its exit
        code and output, whatever they are. ``run_as`` runs it as that debuggable package;
        ``CommandTimeout`` when it runs longer than ``timeout`` seconds."""
        ...


class ShellResult(NamedTuple):
    """One device shell command's outcome. ``output`` is stdout and stderr in arrival order;
    ``stdout`` is ``output`` when the device cannot keep the streams apart (no shell_v2)."""

    returncode: int
    output: str
    stdout: str = ""
    stderr: str = ""


_KEY_NAME = re.compile(r"(?:KEYCODE_)?[A-Z][A-Z0-9_]*")
_PACKAGE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_WM_SIZE = re.compile(r"(Override|Physical) size:\s*(\d+)x(\d+)")
_FOCUS = re.compile(r"mCurrentFocus=Window\{[^}]*?\s(?P<pkg>[^\s/{}]+)/[^\s{}]+\}")
_FOCUSED_APP = re.compile(r"mFocusedApp=.*?ActivityRecord\{\S+ \S+ (?P<pkg>[^\s/{}]+)/")
_PACKAGE_LINE = re.compile(r"^package:(\S+)\s*$", re.MULTILINE)
_PACKAGE_PATH_LINE = re.compile(r"^package:(\S+)=([^=\s]+)\s*$", re.MULTILINE)
_PERMISSION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CLASS = re.compile(r"\.?[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)*")
#: The ``am`` flags of the extra types a broadcast may carry.
EXTRA_FLAGS = frozenset({"--es", "--ez", "--ei", "--el", "--ef", "--ed", "--eu"})
#: Where screenshots are written before being pulled (next to the dumps).
SCREENSHOT_PATH = "/data/local/tmp/trailblaze-screen.png"
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: The longest device model name kept.
MODEL_LIMIT = 80


def encode_input_text(text: str) -> str:
    """Return ``text`` as ``input text`` needs it (spaces as ``%s``), or raise.

    ``input text`` turns ``%s`` into a space, so a literal ``%s`` cannot be typed, and it only
    injects ASCII key events (replay.md §3.5.9).
    """
    bad = sorted({c for c in text if not (" " <= c <= "~")})
    if bad:
        shown = ", ".join(repr(c) for c in bad)
        raise UnsupportedInputError(
            f"cannot type {text!r}: `adb shell input text` only types printable ASCII, "
            f"not {shown} (use key events for Enter/Tab, the clipboard for other text)"
        )
    if "%s" in text:
        raise UnsupportedInputError(
            f"cannot type {text!r}: `adb shell input text` reads '%s' as a space, "
            "so a literal '%s' cannot be typed"
        )
    return text.replace(" ", "%s")


def keyevent_args(codes: Sequence[int | str]) -> list[str]:
    """Validate key codes and return them as ``input keyevent`` arguments."""
    if not codes:
        raise UnsupportedInputError("keyevent needs at least one key code")
    args: list[str] = []
    for code in codes:
        if isinstance(code, bool) or not isinstance(code, int | str):
            raise UnsupportedInputError(f"invalid key code {code!r}: expected an int or a name")
        if isinstance(code, int):
            if code < 0:
                raise UnsupportedInputError(f"invalid key code {code}: must not be negative")
            args.append(str(int(code)))
        elif code.isdigit():
            args.append(code)
        elif _KEY_NAME.fullmatch(code):
            args.append(code if code.startswith("KEYCODE_") else f"KEYCODE_{code}")
        else:
            raise UnsupportedInputError(
                f"invalid key code {code!r}: expected a number or a name like KEYCODE_TAB"
            )
    return args


def _coordinate(value: int) -> str:
    # operator.index rejects floats: adbutils reads floats <= 1.0 as screen fractions, and a
    # float here means the caller computed something it did not mean to send.
    if isinstance(value, bool):
        raise TypeError(f"coordinate must be an int, not {value!r}")
    return str(operator.index(value))


def _duration(duration_ms: int) -> str:
    if isinstance(duration_ms, bool) or operator.index(duration_ms) < 0:
        raise UnsupportedInputError(f"invalid duration {duration_ms!r} ms")
    return str(operator.index(duration_ms))


def _package(package: str) -> str:
    if not _PACKAGE.fullmatch(package):
        raise UnsupportedInputError(f"invalid Android package name {package!r}")
    return package


def _permission(name: str) -> str:
    if not _PERMISSION.fullmatch(name):
        raise UnsupportedInputError(f"invalid Android permission or operation name {name!r}")
    return name


def _why(result: ShellResult) -> str:
    """The part of a failed command's output worth showing: stderr when it said anything."""
    return _excerpt(result.stderr if result.stderr.strip() else result.output)


def _excerpt(text: str, limit: int = 300) -> str:
    """A device's output as a message quotes it: cut short, escaped (it may hold terminal
    escapes); its lines stay lines, a carriage return (which would overwrite one) is escaped."""
    text = text.strip()
    if not text:
        return "no output"
    text = text if len(text) <= limit else text[:limit] + "…"
    return printable(text, newlines=True).replace("\r", "\\x0d")


class ShellDevice(abc.ABC):
    """``Device`` on top of a device shell: builds the adb command lines and reads their output.

    Subclasses move bytes: ``_run`` executes an argv list (quoted with ``shlex`` on the wire, the
    way adbutils' list form does) and ``_read_file`` pulls a file.
    """

    def __init__(self, *, idle_retry_delays: Sequence[float] = IDLE_RETRY_DELAYS) -> None:
        self._idle_retry_delays = tuple(idle_retry_delays)

    @property
    @abc.abstractmethod
    def serial(self) -> str:
        """The adb serial of the device."""

    @abc.abstractmethod
    def _run(self, argv: Sequence[str], timeout: float | None = None) -> ShellResult:
        """Run one command on the device shell.

        ``timeout`` bounds a caller's command (``run_command``): past it, ``CommandTimeout`` if
        the device still answers. Without it, the device's own bound applies, and running past
        it means the device is lost.
        """

    @abc.abstractmethod
    def _read_file(self, path: str) -> bytes:
        """Return a device file's bytes."""

    @abc.abstractmethod
    def _write_file(self, path: str, data: bytes) -> None:
        """Write a device file (created with its directories, or replaced)."""

    def _check(self, argv: Sequence[str]) -> str:
        result = self._run(argv)
        if result.returncode != 0:
            raise DeviceError(
                f"{self.serial}: `{shlex.join(argv)}` failed with exit code "
                f"{result.returncode}: {_why(result)}"
            )
        return result.output

    def dump_hierarchy(self) -> str:
        attempts = len(self._idle_retry_delays) + 1
        for attempt in range(attempts):
            result = self._run(["uiautomator", "dump", DUMP_PATH])
            if IDLE_STATE_ERROR in result.output.lower():
                if attempt + 1 == attempts:
                    raise DeviceError(
                        f"{self.serial}: uiautomator dump failed {attempts} times: the screen "
                        f"never became idle ({_excerpt(result.output)})"
                    )
                delay = self._idle_retry_delays[attempt]
                logger.debug("%s: dump not idle, retrying in %.2fs", self.serial, delay)
                time.sleep(delay)
                continue
            if (
                result.returncode != 0
                or "ERROR" in result.output
                or "dumped to" not in result.output.lower()
            ):
                raise DeviceError(
                    f"{self.serial}: uiautomator dump failed (exit code {result.returncode}): "
                    f"{_excerpt(result.output)}"
                )
            break
        data = self._read_file(DUMP_PATH)
        try:
            xml = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DeviceError(f"{self.serial}: uiautomator dump is not UTF-8: {exc}") from exc
        if not xml.lstrip().startswith("<?xml"):
            raise DeviceError(
                f"{self.serial}: uiautomator dump is not XML (it starts with {xml[:40]!r})"
            )
        return xml

    def tap(self, x: int, y: int) -> None:
        self._check(["input", "tap", _coordinate(x), _coordinate(y)])

    def long_press(self, x: int, y: int, duration_ms: int = 500) -> None:
        # A swipe that does not move is how `input` spells a long press.
        cx, cy = _coordinate(x), _coordinate(y)
        self._check(["input", "swipe", cx, cy, cx, cy, _duration(duration_ms)])

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 400) -> None:
        points = [_coordinate(v) for v in (x1, y1, x2, y2)]
        self._check(["input", "swipe", *points, _duration(duration_ms)])

    def input_text(self, text: str) -> None:
        encoded = encode_input_text(text)
        if encoded:
            self._check(["input", "text", encoded])

    def keyevent(self, *codes: int | str) -> None:
        self._check(["input", "keyevent", *keyevent_args(codes)])

    def start_app(self, package: str) -> None:
        argv = ["monkey", "-p", _package(package), "-c", "android.intent.category.LAUNCHER", "1"]
        result = self._run(argv)
        if result.returncode != 0 or "monkey aborted" in result.output.lower():
            raise DeviceError(f"{self.serial}: cannot launch {package}: {_why(result)}")

    def force_stop(self, package: str) -> None:
        self._check(["am", "force-stop", _package(package)])

    def clear_app_data(self, package: str) -> None:
        result = self._run(["pm", "clear", _package(package)])
        if result.returncode != 0 or "Success" not in result.output:
            raise DeviceError(f"{self.serial}: cannot clear the data of {package}: {_why(result)}")

    def list_packages(self) -> list[str]:
        return sorted(_PACKAGE_LINE.findall(self._check(["pm", "list", "packages"])))

    def set_clipboard(self, text: str) -> None:
        self._check(["am", "broadcast", "-a", "clipper.set", "--es", "text", text])

    def open_url(self, url: str) -> None:
        argv = ["am", "start", "-a", "android.intent.action.VIEW", "-d", url]
        output = self._check(argv)
        # `am start` exits 0 on some images even when nothing can handle the intent.
        if "Error" in output:
            raise DeviceError(f"{self.serial}: cannot open {redacted_url(url)}: {_excerpt(output)}")

    def window_size(self) -> tuple[int, int]:
        output = self._check(["wm", "size"])
        sizes = {kind: (int(w), int(h)) for kind, w, h in _WM_SIZE.findall(output)}
        size = sizes.get("Override") or sizes.get("Physical")
        if size is None:
            raise DeviceError(f"{self.serial}: unexpected `wm size` output: {_excerpt(output)}")
        return size

    def product_model(self) -> str | None:
        result = self._run(["getprop", "ro.product.model"])
        if result.returncode != 0:
            return None
        # A device (or a peer posing as one) may answer anything: its first line, looked at
        # only as far as the limit, escaped.
        line = result.output.lstrip()[: MODEL_LIMIT + 1].partition("\n")[0].strip()
        model = printable(line[:MODEL_LIMIT]) + ("…" if len(line) > MODEL_LIMIT else "")
        return model or None

    def is_keyboard_shown(self) -> bool:
        return "mInputShown=true" in self._check(["dumpsys", "input_method"])

    def list_packages_detailed(self, *, include_system: bool = True) -> list[tuple[str, str]]:
        argv = ["pm", "list", "packages", "-f"] + ([] if include_system else ["-3"])
        pairs = [(pkg, path) for path, pkg in _PACKAGE_PATH_LINE.findall(self._check(argv))]
        return sorted(pairs)

    def grant_permission(self, package: str, permission: str) -> None:
        self._check(["pm", "grant", _package(package), _permission(permission)])

    def set_app_op(self, package: str, operation: str, mode: str = "allow") -> None:
        self._check(["appops", "set", _package(package), _permission(operation), mode])

    def set_demo_mode(self, enable: bool) -> None:
        demo = ["am", "broadcast", "-a", "com.android.systemui.demo", "-e", "command"]
        if not enable:
            self._check([*demo, "exit"])
            return
        self._check(["settings", "put", "global", "sysui_demo_allowed", "1"])
        self._check([*demo, "enter"])
        # What screenshots want to be fixed: the clock, a full battery, no notifications.
        self._check([*demo, "clock", "-e", "hhmm", "1200"])
        self._check([*demo, "battery", "-e", "level", "100", "-e", "plugged", "false"])
        self._check([*demo, "notifications", "-e", "visible", "false"])

    def set_network(self, connected: bool) -> None:
        state = "enable" if connected else "disable"
        self._check(["svc", "wifi", state])
        self._check(["svc", "data", state])

    def screenshot(self) -> bytes:
        self._check(["screencap", "-p", SCREENSHOT_PATH])
        data = self._read_file(SCREENSHOT_PATH)
        if not data.startswith(_PNG_MAGIC):
            raise DeviceError(f"{self.serial}: screencap did not write a PNG ({len(data)} bytes)")
        return data

    def current_package(self) -> str | None:
        output = self._check(["dumpsys", "window", "windows"])
        match = _FOCUS.search(output) or _FOCUSED_APP.search(output)
        return match.group("pkg") if match else None

    def write_file(self, path: str, data: bytes) -> None:
        if not path.startswith("/") or path.endswith("/") or "\x00" in path:
            raise UnsupportedInputError(f"invalid device file path {path!r}: not an absolute file")
        self._write_file(path, data)

    def read_file(self, path: str) -> bytes:
        if not path.startswith("/") or path.endswith("/") or "\x00" in path:
            raise UnsupportedInputError(f"invalid device file path {path!r}: not an absolute file")
        return self._read_file(path)

    def scan_media(self, path: str) -> None:
        uri = "file://" + path
        self._check(
            ["am", "broadcast", "-a", "android.intent.action.MEDIA_SCANNER_SCAN_FILE", "-d", uri]
        )

    def send_broadcast(
        self, action: str, component: str, extras: Sequence[tuple[str, str, str]] = ()
    ) -> str:
        package, _, cls = component.partition("/")
        if not action.strip():
            raise UnsupportedInputError("a broadcast needs an action")
        if not cls or not _CLASS.fullmatch(cls):
            raise UnsupportedInputError(
                f"invalid receiver {component!r}: expected <package>/<class>"
            )
        argv = ["am", "broadcast", "-a", action, "-n", f"{_package(package)}/{cls}"]
        for flag, key, value in extras:
            if flag not in EXTRA_FLAGS:
                raise UnsupportedInputError(f"invalid broadcast extra flag {flag!r}")
            argv += [flag, key, value]
        output = self._check(argv)
        # `am` prints an exception (a value of the wrong type) and often still exits 0.
        if "Error" in output or "Exception" in output:
            raise DeviceError(
                f"{self.serial}: broadcast {action} to {component} failed: {_excerpt(output)}"
            )
        return output.strip()

    def run_command(
        self, argv: Sequence[str], *, timeout: float, run_as: str | None = None
    ) -> ShellResult:
        words = [str(word) for word in argv]
        if not words or not words[0]:
            raise UnsupportedInputError("no command: its first word names the program to run")
        if timeout <= 0:
            raise UnsupportedInputError(f"invalid command timeout {timeout!r} s")
        if run_as is not None:
            words = ["run-as", _package(run_as), *words]
        return self._run(words, timeout=timeout)
