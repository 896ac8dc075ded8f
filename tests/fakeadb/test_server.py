"""The fake adb server as adbutils 2.12.0 sees it, its shell, its sync service, its model files."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import adbutils
import pytest

from fakeadb import (
    FakeAdbServer,
    FakeDevice,
    ModelError,
    load_devices,
    load_specs,
)
from tests.replay.support import PACKAGE, ROOT, SAMPLE_APP
from trailblaze.replay.hierarchy import Bounds


def client(server: FakeAdbServer) -> Any:
    return adbutils.AdbClient(host="127.0.0.1", port=server.port, socket_timeout=5)


@pytest.fixture
def adb_device(server: FakeAdbServer) -> Any:
    return client(server).device("emulator-5554")


@pytest.fixture
def fleet() -> Iterator[FakeAdbServer]:
    devices = load_devices(
        {
            "devices": [
                {"serial": "emulator-5554"},
                {"serial": "127.0.0.1:5555", "model": "Pixel_8"},
                {"serial": "emulator-5558", "state": "offline"},
            ]
        }
    )
    with FakeAdbServer(devices) as fake:
        yield fake


# --- host services ------------------------------------------------------------------------


def test_version_and_device_lists(fleet: FakeAdbServer) -> None:
    adb = client(fleet)
    assert adb.server_version() == 41
    assert [(d.serial, d.state) for d in adb.list()] == [
        ("emulator-5554", "device"),
        ("127.0.0.1:5555", "device"),
        ("emulator-5558", "offline"),
    ]
    extended = adb.list(extended=True)
    assert [d.transport_id for d in extended] == [1, 2, 3]
    assert extended[1].tags["model"] == "Pixel_8"
    assert [d.serial for d in adb.device_list()] == ["emulator-5554", "127.0.0.1:5555"]


def test_serials_with_colons_and_transport_ids(fleet: FakeAdbServer) -> None:
    adb = client(fleet)
    by_serial = adb.device("127.0.0.1:5555")
    assert by_serial.get_state() == "device"
    assert by_serial.get_serialno() == "127.0.0.1:5555"
    assert by_serial.shell(["getprop", "ro.product.model"]) == "Pixel_8"
    by_id = adb.device(transport_id=2)
    assert by_id.shell("getprop ro.serialno") == "127.0.0.1:5555"
    assert "shell_v2" in by_id.get_features()


# adbutils leaks the connection when a transport request FAILs (open_transport, check_okay).
@pytest.mark.filterwarnings("ignore:unclosed <socket:ResourceWarning")
def test_unknown_and_offline_devices_fail_like_adb(fleet: FakeAdbServer) -> None:
    adb = client(fleet)
    with pytest.raises(adbutils.AdbError, match="device 'emulator-1' not found"):
        adb.device("emulator-1").get_state()
    assert adb.device("emulator-5558").get_state() == "offline"
    with pytest.raises(adbutils.AdbError, match="device offline"):
        adb.device("emulator-5558").get_features()


def test_an_older_server_gets_the_legacy_transport_request(model: FakeDevice) -> None:
    with FakeAdbServer(model, version=39) as fake:
        device = client(fake).device("emulator-5554")
        assert device.shell(["echo", "hi"]) == "hi"
        assert fake.commands["emulator-5554"] == ["echo hi"]


# --- shell --------------------------------------------------------------------------------


def test_shell_v1_keeps_execution_order(adb_device: Any) -> None:
    # stderr of the first command must come before the exit marker adbutils appends
    # (replay.md §3.5.2), otherwise shell2 fails to parse the exit code.
    result = adb_device.shell2("cat /nope; echo done", v2=False)
    assert result.returncode == 0
    assert result.output == "cat: /nope: No such file or directory\ndone\n"


def test_shell_v2_separates_streams_and_reports_exit_codes(adb_device: Any) -> None:
    result = adb_device.shell2(["cat", "/nope"], v2=True)
    assert (result.returncode, result.stdout, result.stderr) == (
        1,
        "",
        "cat: /nope: No such file or directory\n",
    )
    assert adb_device.shell2("frobnicate", v2=True).returncode == 127


def test_a_device_without_shell_v2_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    device = FakeDevice(load_specs({"features": ["cmd"]})[0])
    with FakeAdbServer(device) as fake, caplog.at_level(logging.WARNING):
        result = client(fake).device("emulator-5554").shell2("false || echo fallback", v2=True)
    assert (result.returncode, result.output) == (0, "fallback\n")
    assert "shell_v2 specified but not supported" in caplog.text


@pytest.mark.parametrize(
    ("line", "rc", "output"),
    [
        ("echo a; false && echo no || echo yes", 0, "a\nyes\n"),
        ("false; echo $?", 0, "1\n"),
        ("true && echo ok; echo X4EXIT:$?", 0, "ok\nX4EXIT:0\n"),
        ("echo 'a;b' \"c $?\" d\\ e", 0, "a;b c 0 d e\n"),
        ("echo one two | grep -c o", 0, "1\n"),
        ("echo hello | grep -q nope", 1, ""),
        ("cat /nope 2>/dev/null; echo $?", 0, "1\n"),
        ("cat /nope 2>&1 | grep -c such", 0, "1\n"),
        ("echo saved > /sdcard/x.txt; cat /sdcard/x.txt", 0, "saved\n"),
        ("echo hi >> /sdcard/in; echo ho >> /sdcard/in; grep -c h < /sdcard/in", 0, "2\n"),
        ("false; echo $? | grep 1", 0, "1\n"),
        ("rm /nope", 1, "rm: /nope: No such file or directory\n"),
        ("nope-command", 127, "/system/bin/sh: nope-command: inaccessible or not found\n"),
        ("sh -c 'echo a; false; echo $?'", 0, "a\n1\n"),
        (
            "sh run.sh",
            2,
            "/system/bin/sh: the fake runs `sh -c COMMAND` only, no scripts or interactive "
            "shells\n",
        ),
        (
            f"run-as {PACKAGE} sh -c 'echo in; cat /nope'",
            1,
            "in\ncat: /nope: No such file or directory\n",
        ),
        (f"run-as {PACKAGE} --user 0 echo as user", 0, "as user\n"),
        ("run-as", 1, "usage: run-as <package-name> [--user <uid>] <command> [<args>]\n"),
        ("run-as com.example.gone echo", 1, "run-as: unknown package: com.example.gone\n"),
        (
            "echo 'unterminated",
            2,
            '/system/bin/sh: syntax error: unterminated quote in "echo \'unterminated"\n',
        ),
    ],
)
def test_shell_lines(model: FakeDevice, line: str, rc: int, output: str) -> None:
    result = model.run(line)
    assert (result.returncode, result.text()) == (rc, output)


def test_package_state_can_be_grepped(adb_device: Any) -> None:
    line = f"dumpsys package {PACKAGE} | grep stopped=true"
    assert adb_device.shell2(line, v2=True).returncode == 0
    adb_device.app_start(PACKAGE)
    assert adb_device.shell2(line, v2=True).returncode == 1
    assert adb_device.shell(["pidof", PACKAGE]).isdigit()


def test_adbutils_helpers_work(adb_device: Any, server: FakeAdbServer) -> None:
    adb_device.app_start(PACKAGE)
    assert adb_device.app_current().package == PACKAGE
    assert adb_device.window_size() == (1080, 2400)
    assert adb_device.rotation() == 0
    assert adb_device.list_packages() == sorted(server.device().installed)
    adb_device.click(324, 2300)
    adb_device.send_keys("x")
    adb_device.keyevent("KEYCODE_BACK")
    adb_device.app_stop(PACKAGE)
    assert server.commands["emulator-5554"][-4:] == [
        "input tap 324 2300",
        "input text x",
        "input keyevent KEYCODE_BACK",
        f"am force-stop {PACKAGE}",
    ]


def test_adbutils_dump_hierarchy(adb_device: Any, server: FakeAdbServer) -> None:
    adb_device.app_start(PACKAGE)
    xml = adb_device.dump_hierarchy()
    assert xml.startswith("<?xml")
    assert 'text="Tap Me"' in xml
    assert server.commands["emulator-5554"][-1] == (
        "rm -f /data/local/tmp/uidump.xml; "
        "uiautomator dump /data/local/tmp/uidump.xml && echo success"
    )


def test_dump_to_dev_tty_prints_the_xml(adb_device: Any) -> None:
    output = adb_device.shell(["uiautomator", "dump", "/dev/tty"])
    assert output.startswith("<?xml")
    assert output.endswith("UI hierchary dumped to: /dev/tty")


# --- sync ---------------------------------------------------------------------------------


def test_sync_push_pull_stat_list(adb_device: Any, tmp_path: Path) -> None:
    sync = adb_device.sync
    assert sync.push(b"hello", "/data/local/tmp/a.txt") == 5
    assert sync.read_text("/data/local/tmp/a.txt") == "hello"
    info = sync.stat("/data/local/tmp/a.txt")
    assert (info.size, info.mode & 0o170000) == (5, 0o100000)
    assert sync.stat("/nope").mtime is None
    assert sync.exists("/data/local/tmp")
    assert [f.path for f in sync.list("/data/local/tmp")] == ["a.txt"]
    target = tmp_path / "a.txt"
    assert sync.pull("/data/local/tmp/a.txt", target) == 5
    assert target.read_bytes() == b"hello"
    with pytest.raises(adbutils.AdbError, match="No such file"):
        sync.read_bytes("/sdcard/missing.xml")


def test_large_files_cross_several_data_frames(adb_device: Any) -> None:
    payload = bytes(range(256)) * 1000
    adb_device.sync.push(payload, "/sdcard/big.bin")
    assert adb_device.sync.read_bytes("/sdcard/big.bin") == payload


# --- models -------------------------------------------------------------------------------


def test_a_server_can_be_built_from_a_spec_file() -> None:
    with FakeAdbServer(SAMPLE_APP) as fake:
        device = client(fake).device("emulator-5554")
        device.app_start(PACKAGE)
        assert fake.device().current_screen == f"{PACKAGE}/taps"
        assert [e.kind for e in fake.device().events] == ["launch"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"serail": "x"}, "<spec>: unknown key 'serail' (did you mean 'serial'?)"),
        ({"size": [1080]}, "<spec>: size: expected [width, height]"),
        (
            {"state": "asleep"},
            "<spec>: state: expected device, offline or unauthorized, not 'asleep'",
        ),
        (
            {"apps": [{"package": "p", "screens": {"home": {"elements": [{"txt": "a"}]}}}]},
            "<spec>: apps[0].screens.home.elements[0]: unknown key 'txt' (did you mean 'text'?)",
        ),
        (
            {
                "apps": [
                    {
                        "package": "p",
                        "screens": {"home": {"elements": [{"text": "a", "on_tap": "hom"}]}},
                    }
                ]
            },
            "<spec>: apps[0].screens.home: element 'a' goes to unknown screen 'hom' "
            "(did you mean 'home'?)",
        ),
        (
            {"apps": [{"package": "p", "screens": {"home": {"elements": [{"editable": True}]}}}]},
            "<spec>: apps[0].screens.home.elements[0]: "
            "an editable element needs an 'id' or a 'key'",
        ),
        (
            {
                "apps": [
                    {
                        "package": "p",
                        "screens": {"s": {"elements": [{"text": "a", "bounds": [5, 5, 1, 1]}]}},
                    }
                ]
            },
            "<spec>: apps[0].screens.s.elements[0].bounds: right/bottom must not be less than "
            "left/top in [5, 5, 1, 1]",
        ),
        ({"apps": [{"package": "p"}]}, "<spec>: apps[0]: an app needs at least one screen"),
        (
            {"devices": [{"serial": "a"}, {"serial": "a"}]},
            "<spec>: duplicate serial(s): a",
        ),
        (
            {"faults": {"idle_errors": -1}},
            "<spec>: faults.idle_errors: expected a whole number >= 0, got -1",
        ),
    ],
)
def test_bad_specs_say_where(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError) as caught:
        load_specs(spec)
    assert str(caught.value) == message


def test_a_bad_spec_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "device.yaml"
    path.write_text("apps: [\n", encoding="utf-8")
    with pytest.raises(ModelError) as caught:
        load_specs(path)
    assert str(caught.value).startswith(f"{path}:2:1: invalid YAML: ")
    with pytest.raises(ModelError, match="cannot read"):
        load_specs(tmp_path / "missing.yaml")


def test_a_spec_file_error_names_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "device.yaml"
    path.write_text(
        "serial: emulator-5554\n"
        "apps:\n"
        "  - package: com.example\n"
        "    screens:\n"
        "      home:\n"
        "        elements:\n"
        "          - {text: Hi, bounds: [0, 0, 10]}\n",
        encoding="utf-8",
    )
    with pytest.raises(ModelError) as caught:
        load_specs(path)
    assert str(caught.value) == (
        f"{path}:7:32: apps[0].screens.home.elements[0].bounds: "
        "expected [left, top, right, bottom], got [0, 0, 10]"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("serial: a\nserial: b\n", "2:1: duplicate key 'serial' (first defined at line 1)"),
        ("sdk: yes\n", "1:6: sdk: expected a whole number >= 0, got 'yes'"),
        ("apps:\n  - {package: p, screens: {s: {}}, lable: P}\n", "2:36: apps[0]: unknown key "
         "'lable' (did you mean 'label'?)"),
    ],
)  # fmt: skip
def test_spec_files_read_as_the_yaml_layer_reads_them(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "device.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelError) as caught:
        load_specs(path)
    assert str(caught.value) == f"{path}:{message}"


def test_spec_files_share_elements_with_merge_keys(tmp_path: Path) -> None:
    path = tmp_path / "device.yaml"
    path.write_text(
        "apps:\n"
        "  - package: com.example\n"
        "    screens:\n"
        "      home:\n"
        "        elements:\n"
        "          - &row {text: 'Row {n}', bounds: [0, 0, 100, 50], clickable: true}\n"
        "          - {<<: *row, text: Second, bounds: [0, 50, 100, 100]}\n",
        encoding="utf-8",
    )
    (spec,) = load_specs(path)
    first, second = spec.apps["com.example"].screens["home"].elements
    assert (second.text, second.clickable, second.bounds) == (
        "Second",
        True,
        Bounds(0, 50, 100, 100),
    )
    assert first.text == "Row {n}"


def test_demo_entry_point_serves_a_model(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakeadb", str(SAMPLE_APP), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("fake adb server for emulator-5554 listening on 127.0.0.1:")
        port = int(first.rsplit(":", 1)[1])
        adb = adbutils.AdbClient(host="127.0.0.1", port=port, socket_timeout=5)
        assert adb.device("emulator-5554").shell(["wm", "size"]) == "Physical size: 1080x2400"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "emulator-5554$ wm size" in err


def test_demo_entry_point_reports_a_bad_model(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("serail: x\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "fakeadb", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == f"error: {path}:1:1: unknown key 'serail' (did you mean 'serial'?)\n"


def test_the_product_side_never_imports_adbutils() -> None:
    code = (
        "import sys\n"
        "import trailblaze.replay, trailblaze.replay.device, trailblaze.replay.hierarchy\n"
        "import trailblaze.replay.selector, fakeadb\n"
        "import fakeadb.server\n"
        "assert 'adbutils' not in sys.modules, sorted(m for m in sys.modules if 'adb' in m)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=30)
