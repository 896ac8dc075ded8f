"""The fake device's screen, log and recorder, as adbutils reaches them over a real socket:
``screencap -p`` draws a real PNG of the screen's size (a colour per screen), ``logcat`` keeps
what the device did, ``screenrecord`` runs until ``kill -2`` of its pid."""

from __future__ import annotations

import struct
import threading
import time
import zlib
from typing import Any

import adbutils
import pytest

from fakeadb import FakeAdbServer, FakeDevice
from tests.replay.support import PACKAGE


@pytest.fixture
def adb_device(server: FakeAdbServer) -> Any:
    client = adbutils.AdbClient(host="127.0.0.1", port=server.port, socket_timeout=5)
    return client.device("emulator-5554")


def png_size_and_first_pixel(data: bytes) -> tuple[int, int, bytes]:
    """Decode our PNG's header and first row by the format's rules (length, type, CRC)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, dict[bytes, bytes]()
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        chunks[kind] = chunks.get(kind, b"") + body
        at += 12 + length
    width, height, depth, colour_type = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour_type) == (8, 2)  # 8-bit RGB
    raw = zlib.decompress(chunks[b"IDAT"])
    assert len(raw) == height * (1 + 3 * width)
    return width, height, raw[1 : 1 + 3 * width * 4]


def test_screencap_draws_a_png_of_the_screen_size_a_colour_per_screen(
    adb_device: Any, model: FakeDevice
) -> None:
    home = adb_device.shell("screencap -p", encoding=None)
    width, height, _ = png_size_and_first_pixel(home)
    assert (width, height) == (1080, 2400)

    adb_device.shell(f"monkey -p {PACKAGE} -c android.intent.category.LAUNCHER 1")
    adb_device.shell("screencap -p /sdcard/app.png")
    app = model.read_file("/sdcard/app.png")
    assert app is not None
    assert png_size_and_first_pixel(app)[:2] == (1080, 2400)
    # The app's screen is another colour than the launcher's: a report tells them apart.
    assert png_size_and_first_pixel(app)[2] != png_size_and_first_pixel(home)[2]


def test_logcat_keeps_what_the_device_did_until_cleared(adb_device: Any) -> None:
    adb_device.shell("logcat -c")
    adb_device.shell(f"monkey -p {PACKAGE} -c android.intent.category.LAUNCHER 1")
    log = adb_device.shell("logcat -d -v threadtime")
    assert f"I fakeadb: launch {PACKAGE}" in log
    assert len(adb_device.shell("logcat -d -t 1").splitlines()) == 1
    adb_device.shell("logcat -c")
    assert adb_device.shell("logcat -d") == ""


def test_screenrecord_runs_until_sigint_of_its_pid(adb_device: Any, model: FakeDevice) -> None:
    done: list[str] = []
    recorder = threading.Thread(
        target=lambda: done.append(
            adb_device.shell("screenrecord --bit-rate 2000000 /sdcard/a.mp4")
        )
    )
    recorder.start()
    deadline = time.monotonic() + 5
    pid = ""
    while not pid and time.monotonic() < deadline:
        pid = adb_device.shell("pidof screenrecord").strip()
    assert pid.isdigit()
    time.sleep(0.2)
    assert recorder.is_alive(), "screenrecord ended before it was stopped"
    assert adb_device.shell(f"kill -2 {pid}; echo $?").strip() == "0"
    recorder.join(5)
    assert not recorder.is_alive()
    assert done == [""]
    video = model.read_file("/sdcard/a.mp4")
    assert video is not None
    assert video[4:8] == b"ftyp"
    assert adb_device.shell("pidof screenrecord; echo $?").strip() == "1"
    assert "No such process" in adb_device.shell(f"kill -2 {pid}")


def test_screenrecord_without_a_file_fails_like_the_device(adb_device: Any) -> None:
    assert "Must specify output file" in adb_device.shell("screenrecord --time-limit 3")
