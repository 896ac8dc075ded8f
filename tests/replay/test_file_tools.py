"""The SDK's author tools that put files on the device and send broadcasts, through real
adbutils over a real socket to the fake adb server.

Each test replays a recording and checks what its author sees: the bytes that arrived on the
device, the broadcast that reached it, or the failure with its location and a message that
says why (and that nothing was sent).
"""

from __future__ import annotations

import base64

import pytest

from fakeadb import FakeAdbServer, FakeDevice
from trailblaze.replay.adb import connect
from trailblaze.replay.device import Device
from trailblaze.replay.invocation import RecordingOutcome

from .support import PACKAGE, calls, runner

WHERE = "t.trail.yaml:5:11"
ODD = b"\x89PNG\r\n\x1a\n\x00\xff binary \x1b[0m"


@pytest.fixture
def adb(server: FakeAdbServer) -> Device:
    return connect(None, port=server.port, timeout=5)


def replay(device: Device, recording: str) -> RecordingOutcome:
    return runner(device).run_recording(calls(recording))


def error_of(outcome: RecordingOutcome) -> tuple[str, str, str]:
    failure = outcome.failure
    assert failure is not None, outcome.tools
    return (failure.location.text, failure.kind, failure.error)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_bytes_are_written_where_asked_and_replace_a_file(adb: Device, model: FakeDevice) -> None:
    model.runtime.files.write("/sdcard/Download/setup.bin", b"old and longer than the new one")
    recording = (
        f"- android_writeBytesToFile: {{devicePath: /sdcard/Download/setup.bin, "
        f"base64Content: '{b64(ODD)}'}}"
    )
    outcome = replay(adb, recording)

    assert outcome.passed, outcome.failure
    assert outcome.tools[0].detail == f"wrote {len(ODD)} bytes to /sdcard/Download/setup.bin"
    assert model.files["/sdcard/Download/setup.bin"] == ODD
    # Pushed with adb's sync protocol: no file body travelled on a shell line.
    assert model.commands == []


def test_bad_content_or_path_fails_before_anything_reaches_the_device(
    adb: Device, model: FakeDevice
) -> None:
    before = dict(model.files)
    not_b64 = replay(
        adb, "- android_writeBytesToFile: {devicePath: /sdcard/x, base64Content: 'a*b='}"
    )
    assert error_of(not_b64) == (
        WHERE,
        "error",
        "android_writeBytesToFile: base64Content is not base64 (Only base64 data is allowed)",
    )
    relative = replay(
        adb, f"- android_writeBytesToFile: {{devicePath: x.bin, base64Content: '{b64(b'x')}'}}"
    )
    assert error_of(relative)[2] == (
        "android_writeBytesToFile: devicePath 'x.bin' must be an absolute path to a file"
    )
    nested = replay(adb, "- android_writeFileToDownloads: {fileName: ../x.json, content: '{}'}")
    assert error_of(nested)[2] == (
        "android_writeFileToDownloads: fileName '../x.json' must be a plain file name (no '/')"
    )
    not_image = replay(
        adb,
        f"- android_writeImageToMediaStore: {{fileName: a.png, base64Content: '{b64(ODD)}', "
        "mimeType: text/plain}",
    )
    assert error_of(not_image)[2] == (
        "android_writeImageToMediaStore: mimeType 'text/plain' is not an image type (image/...)"
    )
    assert model.files == before
    assert model.commands == []


def test_text_lands_in_the_public_downloads_as_utf8(adb: Device, model: FakeDevice) -> None:
    recording = (
        '- android_writeFileToDownloads: {fileName: setup.json, content: "{\\"name\\": \\"Zoë\\"}"}'
    )
    outcome = replay(adb, recording)

    assert outcome.passed, outcome.failure
    assert model.files["/storage/emulated/0/Download/setup.json"] == '{"name": "Zoë"}'.encode()
    assert outcome.tools[0].detail == "wrote 16 bytes to /storage/emulated/0/Download/setup.json"


def test_an_image_is_written_and_handed_to_the_media_scanner(
    adb: Device, model: FakeDevice
) -> None:
    recording = (
        f"- android_writeImageToMediaStore: {{fileName: cat.png, base64Content: '{b64(ODD)}'}}"
    )
    outcome = replay(adb, recording)

    assert outcome.passed, outcome.failure
    assert model.files["/sdcard/Pictures/cat.png"] == ODD
    assert model.commands == [
        "am broadcast -a android.intent.action.MEDIA_SCANNER_SCAN_FILE "
        "-d file:///sdcard/Pictures/cat.png"
    ]
    assert model.events[-1] == ("media-scan", "file:///sdcard/Pictures/cat.png")


# -- android_sendBroadcast ------------------------------------------------------------------------

SIGN_IN = f"""
- android_sendBroadcast:
    action: com.example.SIGNIN
    componentPackage: {PACKAGE}
    componentClass: .SignInReceiver
    extras:
      - {{key: user, value: "ann; reboot"}}
      - {{key: attempts, value: "3", type: int}}
      - {{key: remember, value: "true", type: boolean}}
"""


def test_a_broadcast_reaches_the_receiver_with_typed_extras(adb: Device, model: FakeDevice) -> None:
    outcome = replay(adb, SIGN_IN)

    assert outcome.passed, outcome.failure
    assert model.commands[-1] == (
        f"am broadcast -a com.example.SIGNIN -n {PACKAGE}/.SignInReceiver "
        "--es user 'ann; reboot' --ei attempts 3 --ez remember true"
    )
    assert outcome.tools[0].detail == (
        "Broadcasting: Intent { act=com.example.SIGNIN flg=0x400000 (has extras) }\n"
        "Broadcast completed: result=0"
    )
    assert model.events[-1].kind == "broadcast"


def test_a_broadcast_the_device_rejects_or_cannot_type_fails_at_its_call(
    adb: Device, model: FakeDevice
) -> None:
    bad_number = replay(adb, SIGN_IN.replace('value: "3"', 'value: "three"'))
    assert error_of(bad_number)[:2] == (WHERE, "error")
    assert error_of(bad_number)[2].endswith(
        "failed with exit code 255: Exception occurred while executing 'broadcast':\n"
        'java.lang.NumberFormatException: For input string: "three"'
    )
    sent = len(model.commands)
    bad_type = replay(adb, SIGN_IN.replace("type: boolean", "type: bool"))
    assert error_of(bad_type)[2] == (
        "android_sendBroadcast: extras[2] (remember): type 'bool' is not one of string, "
        "boolean, int, integer, long, float, double, uri"
    )
    bad_class = replay(adb, SIGN_IN.replace(".SignInReceiver", "'Sign In'"))
    assert error_of(bad_class)[2] == (
        f"invalid receiver '{PACKAGE}/Sign In': expected <package>/<class>"
    )
    assert len(model.commands) == sent
