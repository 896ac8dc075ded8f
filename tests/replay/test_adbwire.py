"""Replay's reading of the adb server, bounded: against the fake device (a device without
shell_v2, files, a FAIL) and against hostile adb servers on loopback (`bench/hostile.py`).

The hostile cases run `trailblaze replay` as a user does, in a child process, and check what
the user sees (a clear device error, the exit code, no traceback, no raw escape) and what it
cost: wall time within the deadline plus slack, and peak resident memory (`os.wait4`).
"""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from bench.hostile import ESCAPES, SERIAL, HostileAdb, Measured, measure
from fakeadb import FakeAdbServer, FakeDevice, load_specs
from trailblaze.replay import adbwire
from trailblaze.replay.adb import DEADLINE_ENV, connect
from trailblaze.replay.device import DeviceError, DeviceLostError

from .support import SAMPLE_APP, child_env, trail_text

DEADLINE = 2.0
SLACK = 5.0
MEMORY_SLACK_MIB = 48
"""What a run may hold past the baseline: the output kept (4 MiB for the output and again for
stdout, as bytes and as text) and noise."""
LIST_APPS = "- mobile_listInstalledApps: {}"
# The first command a device receives is the model read, before its first trail: the device is
# lost there, and the trail's first tool fails on the lost device.
LOST = (
    "FAILED mobile_listInstalledApps t.trail.yaml:5:11: emulator-5554: device lost during "
    "`getprop ro.product.model`: "
)
NOT_ADB = "the adb server's answer is not adb: "
OVERDUE = f"not done within its deadline of 2 s while the device kept sending ({DEADLINE_ENV})"

# The outcome a user sees: the exit code, and the line that says why.
EXPECTED: dict[str, tuple[int, str]] = {
    "garbage": (
        2,
        "trailblaze replay: no device: cannot list devices on the adb server at {address}: "
        f"{NOT_ADB}it answered 'HTTP' instead of OKAY or FAIL",
    ),
    "bad-length": (
        2,
        "trailblaze replay: no device: cannot list devices on the adb server at {address}: "
        f"{NOT_ADB}a length that is not hex: 'zz\\x1b['",
    ),
    "fail-escapes": (
        2,
        "trailblaze replay: no device: cannot list devices on the adb server at {address}: "
        "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mthe server is not ready",
    ),
    "huge": (1, LOST + NOT_ADB + "a length field of 4294967295 bytes (adb sends at most 1048576)"),
    "endless": (1, LOST + OVERDUE),
    "endless-v1": (1, LOST + OVERDUE),
    "trickle": (1, LOST + OVERDUE),
    "escapes": (
        1,
        "FAILED mobile_listInstalledApps t.trail.yaml:5:11: emulator-5554: `pm list packages` "
        "failed with exit code 1: \\x1b]0;owned\\x07\\x1b[2J\\x1b[31mboom\\x0dfine",
    ),
    "flood": (
        0,
        "emulator-5554: `pm list packages` [trailblaze: output cut: 29360128 bytes past the "
        "first 4 MiB were not kept]",
    ),
}
BOUND = {"endless": DEADLINE, "endless-v1": DEADLINE, "trickle": DEADLINE}


def replay_child(where: Path, port: int, *options: str) -> Measured:
    (where / "t.trail.yaml").write_text(trail_text(LIST_APPS), encoding="utf-8")
    env = child_env(port, **{DEADLINE_ENV: str(int(DEADLINE * 1000))})
    argv = [sys.executable, "-m", "trailblaze", "replay", "t.trail.yaml", *options]
    return measure(argv, cwd=where, env=env, timeout=90)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Measured:
    """The same replay on the fake device: its time and memory."""
    with FakeAdbServer(FakeDevice.load(SAMPLE_APP)) as fake:
        ran = replay_child(tmp_path_factory.mktemp("baseline"), fake.port)
    assert ran.code == 0, ran.stdout + ran.stderr
    return ran


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_a_hostile_adb_server_is_a_device_error_in_bounded_time_and_memory(
    mode: str, baseline: Measured, tmp_path: Path
) -> None:
    with HostileAdb(mode) as peer:
        ran = replay_child(tmp_path, peer.port)
    assert not peer.errors
    print(f"{mode}: {ran.wall:.2f} s, peak {ran.peak_mib:.0f} MiB ({ran.code})")
    code, line = EXPECTED[mode]
    shown = ran.stdout + ran.stderr
    assert ran.code == code, shown
    assert line.format(address=f"127.0.0.1:{peer.port}") in shown.splitlines() or (
        line.format(address=f"127.0.0.1:{peer.port}") in shown
    ), shown
    assert "Traceback" not in shown
    assert "\x1b" not in shown
    assert ran.wall < baseline.wall + BOUND.get(mode, 0.0) + SLACK
    assert ran.peak_mib < baseline.peak_mib + MEMORY_SLACK_MIB


def test_device_output_of_terminal_escapes_is_escaped_on_the_terminal_and_in_the_reports(
    tmp_path: Path,
) -> None:
    with HostileAdb("escapes") as peer:
        ran = replay_child(tmp_path, peer.port, "--junit", "j.xml", "--json", "r.json")
    assert ran.code == 1, ran.stdout + ran.stderr
    quoted = "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mboom\\x0dfine"
    lines = ran.stdout.splitlines()
    failed = next(i for i, line in enumerate(lines) if line.lstrip().startswith("FAILED mobile"))
    assert lines[failed].endswith(quoted)
    assert lines[failed + 1] == "second line"  # the device's lines stay lines
    assert "\x1b" not in ran.stdout + ran.stderr
    assert "\r" not in ran.stdout + ran.stderr
    junit = (tmp_path / "j.xml").read_text("utf-8")
    failure = ET.fromstring(junit).find("testsuite/testcase/failure")  # well-formed XML
    assert failure is not None
    assert failure.get("message", "").endswith(f"{quoted}\nsecond line")
    results = json.loads((tmp_path / "r.json").read_text("utf-8"))
    (step,) = results["trails"][0]["steps"]
    assert step["failure"]["error"].endswith(f"{quoted}\nsecond line")


# -- in process, against the fake device ----------------------------------------------------------


def test_a_device_without_shell_v2_runs_commands_through_the_exit_marker() -> None:
    model = FakeDevice(load_specs({"features": ["cmd"]})[0])
    with FakeAdbServer(model) as fake:
        device = connect(None, port=fake.port, timeout=5.0)
        ran = device.run_command(["cat", "/nope"], timeout=5)
        assert (ran.returncode, ran.output) == (1, "cat: /nope: No such file or directory\n")
        assert ran.stdout == ran.output  # one stream, as the device sends it
        assert device.run_command(["echo", "X4EXIT:7"], timeout=5).output == "X4EXIT:7\n"


def test_a_fail_answer_is_a_device_error_with_its_text_escaped() -> None:
    model = FakeDevice.load(SAMPLE_APP)
    with FakeAdbServer(model) as fake:
        device = connect(None, port=fake.port, timeout=5.0)
        with pytest.raises(DeviceError) as missing:
            device._read_file(f"/sdcard/{ESCAPES}.xml")
        assert not isinstance(missing.value, DeviceLostError)
        assert str(missing.value) == (
            "emulator-5554: `pull /sdcard/\\x1b]0;owned\\x07\\x1b[2J\\x1b[31m.xml` failed: open "
            "failed: No such file or directory: /sdcard/\\x1b]0;owned\\x07\\x1b[2J\\x1b[31m.xml"
        )
        device.write_file("/sdcard/a.bin", b"\x00\xffdata")
        assert model.runtime.files.read("/sdcard/a.bin") == b"\x00\xffdata"
        with pytest.raises(DeviceError, match=r"`push /sdcard/Download` failed: .*a directory"):
            device.write_file("/sdcard/Download", b"x")


def test_a_file_past_the_limit_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    model = FakeDevice.load(SAMPLE_APP)
    model.runtime.files.write("/sdcard/big.png", b"\x89PNG" + b"\x00" * (300 * 1024))
    monkeypatch.setattr(adbwire, "FILE_LIMIT", 256 * 1024)
    with FakeAdbServer(model) as fake:
        device = connect(None, port=fake.port, timeout=5.0)
        with pytest.raises(DeviceError) as large:
            device._read_file("/sdcard/big.png")
        assert str(large.value) == (
            "emulator-5554: `pull /sdcard/big.png` failed: /sdcard/big.png is larger than 0.25 MiB; "
            "not read"
        )


def test_the_deadline_setting_reaches_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    with HostileAdb("trickle", pace=0.05) as peer:
        device = connect(SERIAL, port=peer.port, timeout=5.0, deadline=0.5)
        with pytest.raises(DeviceLostError) as lost:
            device.tap(1, 1)
        assert str(lost.value) == (
            "emulator-5554: device lost during `input tap 1 1`: not done within its deadline "
            f"of 0.5 s while the device kept sending ({DEADLINE_ENV})"
        )
    assert os.environ.get(DEADLINE_ENV) is None
