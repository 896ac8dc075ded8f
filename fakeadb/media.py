"""What the fake device shows and records: ``screencap``'s PNG, ``logcat``, ``screenrecord``.

- ``screen_png`` draws the screen as a real (small) PNG of the device's size: a colour per
  screen (the app and screen name pick it), an app bar, and a band per element, so two screens
  look different in a report. Written with ``zlib`` and ``struct`` (no imaging library).
- ``Logcat`` is the device's log buffer: every event the device records becomes a line in the
  ``threadtime`` format; ``logcat -c`` clears it, ``logcat -d`` prints it (``-t N``: the last N).
- ``Recorder`` runs ``screenrecord FILE`` as a process with a pid: it writes some bytes to the
  file, then waits for ``kill -2 PID`` (SIGINT, as adb users stop it) or its time limit, and
  finishes the file. ``pidof screenrecord`` finds it.
"""

from __future__ import annotations

import hashlib
import struct
import threading
import time
import zlib
from collections.abc import Sequence

#: A real device's screenrecord stops by itself after this many seconds.
DEFAULT_TIME_LIMIT = 180.0
#: What the recording writes: an MP4 file's first box, then a marker per second recorded.
MP4_HEAD = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def colour(name: str) -> tuple[int, int, int]:
    """A light colour that ``name`` picks: the same screen always looks the same."""
    digest = hashlib.sha256(name.encode()).digest()
    return (96 + digest[0] % 144, 96 + digest[1] % 144, 96 + digest[2] % 144)


def png(width: int, height: int, bands: Sequence[tuple[int, int, tuple[int, int, int]]],
        background: tuple[int, int, int]) -> bytes:  # fmt: skip
    """An RGB PNG of ``background`` with horizontal ``bands`` (top, bottom, colour)."""
    rows = []
    plain = b"\x00" + bytes(background) * width
    for y in range(height):
        row = plain
        for top, bottom, rgb in bands:
            if top <= y < bottom:
                row = b"\x00" + bytes(rgb) * width
        rows.append(row)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(b"".join(rows), 6))
        + _chunk(b"IEND", b"")
    )


def screen_png(width: int, height: int, screen: str, elements: Sequence[tuple[int, int]]) -> bytes:
    """The screen ``screen`` (``package/name``) with an element band per (top, bottom)."""
    background = colour(screen)
    darker = tuple(max(0, c - 64) for c in background)
    bar = (0, max(1, height // 12), (darker[0], darker[1], darker[2]))
    lighter = tuple(min(255, c + 48) for c in background)
    shade = (lighter[0], lighter[1], lighter[2])
    bands = [bar, *((max(0, t), min(height, b), shade) for t, b in elements)]
    return png(width, height, bands, background)


class Logcat:
    """The device's log buffer (callers hold the device lock)."""

    #: A real device keeps a few hundred KiB per buffer; the fake keeps this many lines.
    LIMIT = 20_000

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, tag: str, message: str, level: str = "I", pid: int = 1234) -> None:
        stamp = time.strftime("%m-%d %H:%M:%S", time.localtime())
        millis = int(time.time() * 1000) % 1000
        for text in message.splitlines() or [""]:
            self.lines.append(f"{stamp}.{millis:03d}  {pid:5d}  {pid:5d} {level} {tag}: {text}")
        del self.lines[: -self.LIMIT]

    def command(self, args: list[str]) -> tuple[int, str, str]:
        """``logcat -c`` / ``logcat -d [-v FORMAT] [-t N]``: (exit code, stdout, stderr)."""
        if args == ["-c"]:
            self.lines.clear()
            return 0, "", ""
        if "-d" not in args:
            return 1, "", "logcat: the fake prints its buffer with -d only (no streaming)\n"
        lines = self.lines
        if "-t" in args:
            at = args.index("-t")
            try:
                lines = lines[-int(args[at + 1]) :]
            except (IndexError, ValueError):
                return 1, "", "logcat: -t needs a number\n"
        return 0, "".join(f"{line}\n" for line in lines), ""


class Recording:
    """One running ``screenrecord``: it ends on SIGINT or at its time limit."""

    def __init__(self, pid: int, path: str, limit: float) -> None:
        self.pid = pid
        self.path = path
        self.limit = limit
        self.stopped = threading.Event()
        self.started = time.monotonic()


class Recorder:
    """The device's ``screenrecord`` processes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[int, Recording] = {}
        self._next_pid = 9000

    def start(self, path: str, limit: float) -> Recording:
        with self._lock:
            self._next_pid += 1
            recording = Recording(self._next_pid, path, limit)
            self._running[recording.pid] = recording
            return recording

    def wait(self, recording: Recording) -> float:
        """Block until the recording is stopped or runs out; the seconds it recorded."""
        recording.stopped.wait(recording.limit)
        with self._lock:
            self._running.pop(recording.pid, None)
        return time.monotonic() - recording.started

    def pids(self) -> list[int]:
        with self._lock:
            return sorted(self._running)

    def signal(self, pid: int, number: int) -> bool:
        """``kill -NUMBER PID``: False when no such process; 0 only asks whether it runs."""
        with self._lock:
            recording = self._running.get(pid)
        if recording is None:
            return False
        if number != 0:
            recording.stopped.set()
        return True

    def stop_all(self) -> None:
        with self._lock:
            running = list(self._running.values())
        for recording in running:
            recording.stopped.set()
