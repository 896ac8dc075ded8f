"""End to end: real adbutils over a real socket against the fake adb server.

`doit replay` and `trailblaze replay` as users run them (a subprocess where it matters: Ctrl-C,
doit's own command line), the clipboard round trip through the batch scope, device selection
and a device that disconnects in the middle of a recording.
"""

from __future__ import annotations

import gc
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakeadb import FakeAdbServer, FakeDevice, load_devices
from tests.conftest import REPO_WORKSPACE
from trailblaze.cli.main import main
from trailblaze.replay.run import ReplayRequest, replay
from trailblaze.replay.scope import KILL_SWITCH
from trailblaze.replay.scripted.host import BLANK_UNKNOWN_TOKENS_ENV
from trailblaze.toolchain.compilers import Compiler

from .support import (
    BUNDLED_MODEL,
    CLIPBOARD_CHECKED,
    FAST,
    OPEN_FORMS,
    PACKAGE,
    ROOT,
    SAMPLE_APP,
    child_env,
    trail_text,
)

pytestmark = REPO_WORKSPACE

LIST_APPS = "- mobile_listInstalledApps: {}"


def write_trail(tmp_path: Path, *recordings: str, name: str = "t.trail.yaml") -> Path:
    path = tmp_path / name
    path.write_text(trail_text(*recordings), encoding="utf-8")
    return path


def test_clipboard_round_trip_replays_green_through_adbutils(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))

    run = replay(ReplayRequest(trails=(write_trail(tmp_path, CLIPBOARD_CHECKED),)), options=FAST)

    assert run.exit_code == 0
    assert run.device == "emulator-5554"
    step = run.trails[0].steps[0]
    assert [t.status for t in step.tools] == ["passed"] * 6
    assert len({t.trace_id for t in step.tools}) == 1
    assert model.field_value(PACKAGE, "name") == "Jane Doe"
    assert "am broadcast -a clipper.set --es text 'Jane Doe'" in server.commands["emulator-5554"]


def test_with_the_kill_switch_the_round_trip_fails_at_the_paste(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
    monkeypatch.setenv(KILL_SWITCH, "1")

    run = replay(ReplayRequest(trails=(write_trail(tmp_path, CLIPBOARD_CHECKED),)), options=FAST)

    assert run.exit_code == 1
    step = run.trails[0].steps[0]
    assert step.status == "failed"
    failure = step.failure
    assert failure is not None
    assert failure.failed_tool == "mobile_pasteClipboard"
    assert failure.successful == (
        "launchApp",
        "tapOnElementBySelector",
        "mobile_setClipboard",
        "tapOnElementBySelector",
    )
    assert (failure.location.line, failure.location.column) == (20, 11)
    assert failure.error.startswith("device clipboard is empty: ")
    assert [t.status for t in step.tools] == ["passed"] * 4 + ["failed", "skipped"]
    assert model.field_value(PACKAGE, "name") == ""


@pytest.mark.parametrize("name", [KILL_SWITCH, BLANK_UNKNOWN_TOKENS_ENV])
def test_a_bad_replay_switch_is_refused_before_any_device_work(
    name: str,
    server: FakeAdbServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
    monkeypatch.setenv(name, "perhaps")
    code = main(["replay", str(write_trail(tmp_path, CLIPBOARD_CHECKED))])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        f"trailblaze replay: {name}='perhaps' is not a switch: "
        "use 1/0, true/false, yes/no or on/off (any case)\n"
    )
    assert [c for commands in server.commands.values() for c in commands] == []


def test_doit_replay_passes_on_the_bundled_workspace(tmp_path: Path, tsc: Compiler) -> None:
    model = FakeDevice.load(BUNDLED_MODEL)
    results = tmp_path / "replay.json"
    with FakeAdbServer(model) as server:
        done = subprocess.run(
            [
                sys.executable, "-m", "doit",
                "--db-file", str(tmp_path / "doit.sqlite3"),
                "replay",
                "--arg=title=Weekend plans", "--arg=email=ada@example.com",
                "--json", str(results), "--junit", str(tmp_path / "junit.xml"),
            ],
            check=False, cwd=ROOT, env=child_env(server.port), capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "trailblaze replay on emulator-5554 (sdk_gphone64_x86_64): 12 trails: 10 passed, 0 failed, 0 refused, 2 skipped "
        "(2 need the AI runner)\n"
        "  steps: 35 passed, 0 failed, 6 skipped (6 need the AI runner)\n"
        "  where the time went: "
    ) in done.stdout
    assert "    capture " in done.stdout
    assert "\npassed\n" in done.stdout
    report = json.loads(results.read_text("utf-8"))
    statuses = {t["path"]: t["status"] for t in report["trails"]}
    assert statuses == {
        "trailmaps/notes/trails/create-note.trail.yaml": "passed",
        "trailmaps/notes/trails/drafts/blaze.yaml": "skipped",
        "trailmaps/notes/trails/legacy/clipboard.trail.yaml": "passed",
        "trailmaps/notes/trails/pin-note.trail.yaml": "passed",
        "trailmaps/notes/trails/scripted-clipboard.trail.yaml": "passed",
        "trailmaps/notes/trails/search.trail.yaml": "passed",
        "trailmaps/shop/trails/add-to-cart.trail.yaml": "passed",
        "trailmaps/shop/trails/checkout.trail.yaml": "passed",
        "trailmaps/shop/trails/legacy/browse.trail.yaml": "passed",
        "trailmaps/shop/trails/login/trail.yaml": "passed",
        "trailmaps/shop/trails/settings.trail.yaml": "passed",
        "trailmaps/shop/trails/wishlist.trail.yaml": "skipped",
    }
    assert model.field_value("com.example.shop", "email") == "ada@example.com"
    assert (tmp_path / "junit.xml").read_text("utf-8").startswith("<?xml")


SCRIPTED_TRAIL = ROOT / "trailmaps" / "notes" / "trails" / "scripted-clipboard.trail.yaml"
NOTES = "com.example.notes"


def test_the_bundled_trail_with_a_scripted_launch_tool_replays_green(
    tsc: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = FakeDevice.load(BUNDLED_MODEL)
    with FakeAdbServer(model) as server:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
        run = replay(ReplayRequest(trails=(SCRIPTED_TRAIL,)), options=FAST)
        commands = server.commands["emulator-5554"]

    assert run.exit_code == 0, run.to_json()
    trailhead, paste, verify = run.trails[0].steps
    launch = trailhead.tools[0]
    assert (launch.tool, launch.detail) == ("notes_launchApp", f"launched {NOTES}")
    # The script's own launchApp call ran on the device, in the trailhead's context.
    assert [(c.position, c.tool, c.detail) for c in launch.children] == [
        ("notes_launchApp.calls[0]", "launchApp", f"launched {NOTES} (REINSTALL)")
    ]
    assert launch.children[0].trace_id == launch.trace_id
    assert f"pm clear {NOTES}" in commands
    assert [t.tool for t in paste.tools] == [
        "tapOnElementWithText",
        "notes_copyText",
        "tapOnElementBySelector",
        "mobile_pasteClipboard",
    ]
    copy = paste.tools[1]
    assert [(c.tool, c.status) for c in copy.children] == [("mobile_setClipboard", "passed")]
    assert len({t.trace_id for t in (*paste.tools, *copy.children)}) == 1
    assert "am broadcast -a clipper.set --es text 'tea, honey, lemons'" in commands
    assert model.field_value(NOTES, "body") == "tea, honey, lemons"
    assert verify.status == "passed"
    assert not list((ROOT / ".trailblaze").glob("scripted-*"))  # the compiled tools are gone


def test_with_the_kill_switch_the_scripted_copy_is_lost_at_the_paste(
    tsc: Compiler, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = FakeDevice.load(BUNDLED_MODEL)
    monkeypatch.setenv(KILL_SWITCH, "1")
    with FakeAdbServer(model) as server:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
        run = replay(ReplayRequest(trails=(SCRIPTED_TRAIL,)), options=FAST)

    assert run.exit_code == 1
    trailhead, paste, verify = run.trails[0].steps
    assert trailhead.status == "passed"
    failure = paste.failure
    assert failure is not None
    assert (failure.failed_tool, failure.successful) == (
        "mobile_pasteClipboard",
        ("tapOnElementWithText", "notes_copyText", "tapOnElementBySelector"),
    )
    assert (failure.location.line, failure.location.column) == (31, 11)
    assert failure.error.startswith("device clipboard is empty: ")
    # The script's call ran in the script's own context, which the paste does not share.
    copy = paste.tools[1]
    assert copy.children[0].trace_id == copy.trace_id != paste.tools[3].trace_id
    assert model.field_value(NOTES, "body") == ""
    assert verify.status == "skipped"


def test_scripted_trails_on_two_devices_each_launch_on_their_own(
    tsc: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two device threads share the run's compiled tools; each script's calls go to its device.
    shutil.copytree(ROOT / "trailmaps", tmp_path / "trailmaps")
    trails = tmp_path / "trailmaps" / "notes" / "trails"
    shutil.copy(trails / SCRIPTED_TRAIL.name, trails / "scripted-again.trail.yaml")
    spec = BUNDLED_MODEL.read_text("utf-8")
    phones = []
    for serial in ("emulator-5554", "emulator-5556"):
        path = tmp_path / f"{serial}.yaml"
        path.write_text(spec.replace("serial: emulator-5554", f"serial: {serial}"), "utf-8")
        phones.append(FakeDevice.load(path))
    scripted = [trails / SCRIPTED_TRAIL.name, trails / "scripted-again.trail.yaml"]
    with FakeAdbServer(phones) as server:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
        run = replay(ReplayRequest(trails=tuple(scripted), all_devices=True), options=FAST)

    assert run.exit_code == 0, run.to_json()
    # Fanned out: each phone runs both trails.
    assert [t.device for t in run.trails] == ["emulator-5554", "emulator-5556"] * 2
    for phone in phones:
        assert f"pm clear {NOTES}" in phone.commands
        assert phone.field_value(NOTES, "body") == "tea, honey, lemons"


def test_no_device_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAdbServer([]) as server:
        port = server.port
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
        code = main(["replay", str(write_trail(tmp_path, LIST_APPS))])

    assert code == 2
    assert capsys.readouterr().err == (
        f"trailblaze replay: no Android device on the adb server at 127.0.0.1:{port}\n"
    )


# adbutils does not close the socket of a refused connect (adbutils/_adb.py _create_socket).
@pytest.mark.filterwarnings("ignore:unclosed <socket:ResourceWarning")
def test_no_adb_server_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the probe closes
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))

    code = main(["replay", str(write_trail(tmp_path, LIST_APPS))])
    gc.collect()  # the leaked socket warns here, where it is expected, not in a later test

    assert code == 2
    assert capsys.readouterr().err == (
        f"trailblaze replay: no adb server at 127.0.0.1:{port}, and `/bin/false -P {port} "
        "start-server` did not start one (exit code 1: no output)\n"
    )


@pytest.fixture
def two_phones() -> Iterator[FakeAdbServer]:
    devices = load_devices({"devices": [{"serial": "emulator-5554"}, {"serial": "emulator-5556"}]})
    with FakeAdbServer(devices) as server:
        yield server


def test_several_devices_without_a_serial_is_a_usage_error(
    two_phones: FakeAdbServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(two_phones.port))

    code = main(["replay", str(write_trail(tmp_path, LIST_APPS))])

    assert code == 2
    assert capsys.readouterr().err == (
        "trailblaze replay: 2 devices are connected (emulator-5554, emulator-5556); "
        "choose one by serial (--device, repeatable) or use them all (--all-devices)\n"
    )
    assert two_phones.commands == {"emulator-5554": [], "emulator-5556": []}


@pytest.mark.parametrize("how", ["--device", "ANDROID_SERIAL"])
def test_a_serial_chooses_the_device(
    two_phones: FakeAdbServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(two_phones.port))
    argv = ["replay", str(write_trail(tmp_path, LIST_APPS))]
    if how == "--device":
        argv += ["--device", "emulator-5556"]
    else:
        monkeypatch.setenv("ANDROID_SERIAL", "emulator-5556")

    assert main(argv) == 0
    assert two_phones.commands == {
        "emulator-5554": [],
        "emulator-5556": ["getprop ro.product.model", "pm list packages"],
    }


def test_a_device_that_disconnects_mid_recording_fails_cleanly(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The model is read first, launchApp sends 2 commands, the tap's dump 1.
    model.faults.disconnect_after = 4
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
    first = write_trail(
        tmp_path, OPEN_FORMS + "- pressBack: {}", "- pressBack: {}", name="a.trail.yaml"
    )
    second = write_trail(tmp_path, LIST_APPS, name="b.trail.yaml")

    run = replay(ReplayRequest(trails=(first, second)), options=FAST)

    assert run.exit_code == 1
    lost, after = run.trails
    assert [s.status for s in lost.steps] == ["failed", "skipped"]
    failure = lost.steps[0].failure
    assert failure is not None
    assert (failure.kind, failure.failed_tool, failure.successful) == (
        "fatal",
        "tapOnElementBySelector",
        ("launchApp",),
    )
    assert "device lost during `input tap" in failure.error
    assert lost.steps[1].reason == "not run: the device was lost"
    assert after.status == "skipped"
    assert after.reason is not None
    assert after.reason.startswith(
        "not run: the device was lost (emulator-5554: device lost during"
    )


def test_ctrl_c_stops_at_the_next_tool_boundary(tmp_path: Path) -> None:
    model = FakeDevice.load(SAMPLE_APP)
    model.faults.delays["input tap"] = 1.0
    taps = "\n".join(f"- tapOnPoint: {{x: {10 + i}, y: 10}}" for i in range(3))
    path = write_trail(tmp_path, taps, "- pressBack: {}")
    with FakeAdbServer(model) as server:
        child = subprocess.Popen(
            [sys.executable, "-m", "trailblaze", "replay", str(path)],
            env=child_env(server.port), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while not any(c.startswith("input tap") for c in model.commands):
                assert time.monotonic() < deadline, "the replay never tapped"
                assert child.poll() is None, child.communicate()
                time.sleep(0.02)
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
    assert child.returncode == 1, out + err
    assert "Traceback" not in err
    assert [c for c in model.commands if c.startswith("input")] == ["input tap 10 10"]
    assert f"CANCELLED {path} " in out
    body, table = out.split("  where the time went: ")
    # The one tap ran into its 1 s delay: that is act time (startup varies with the machine).
    act = re.search(r"^    act +(\d+\.\d+)s ", table, re.MULTILINE)
    assert act is not None, table
    assert 1.0 <= float(act.group(1)) < 5, table
    assert table.endswith("cancelled: stopped at a tool boundary (exit 1)\n")
    assert (body + "  where the time went: ").endswith(
        "  cancelled step 1 step 1 [android] - cancelled\n"
        f"    ok tapOnPoint {path}:5:11\n"
        f"    cancelled tapOnPoint {path}:6:11 - cancelled before it started\n"
        f"    cancelled tapOnPoint {path}:7:11 - cancelled before it started\n"
        "  cancelled step 2 step 2 - cancelled\n"
        "trailblaze replay on emulator-5554 (sdk_gphone64_x86_64): 1 trail: 0 passed, 0 failed, 0 refused, 0 skipped, "
        "1 cancelled\n"
        "  steps: 0 passed, 0 failed, 0 skipped (0 need the AI runner), 2 cancelled\n"
        "  where the time went: "
    )
    assert out.startswith("Ctrl-C: stopping after the current tool (again to abort)\n")
