"""Many devices: ``--device`` repeated and ``--all-devices``; trails spread over the devices in
parallel, one trail per device at a time, one report; a device lost mid-run costs only its own
trail. Real adbutils against one fake adb server holding two phones, through ``replay``, the
``trailblaze replay`` command line and a real ``doit replay`` process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakeadb import FakeAdbServer, load_devices
from tests.conftest import MINIMAL_MANIFEST, write_tree
from trailblaze.cli.main import main
from trailblaze.replay.adb import connect_many
from trailblaze.replay.device import Device
from trailblaze.replay.results import RunResult
from trailblaze.replay.run import ReplayRequest, replay

from .support import FAST, child_env, trail_text

PHONES = ("emulator-5554", "emulator-5556")
#: Every command takes this long on the fake phones, as a device's round trip does.
LATENCY = 0.02


@pytest.fixture
def phones() -> Iterator[FakeAdbServer]:
    devices = load_devices({"devices": [{"serial": serial} for serial in PHONES]})
    for device in devices:
        device.faults.delay = LATENCY
    with FakeAdbServer(devices) as server:
        yield server


def _trails(tmp_path: Path, count: int) -> list[Path]:
    """Trail n taps (n, 1), (n, 1), (n, 2): its commands show which trail a device ran."""
    paths = []
    for n in range(count):
        path = tmp_path / f"t{n:02d}.trail.yaml"
        taps = f"- tapOnPoint: {{x: {n}, y: 1}}\n- tapOnPoint: {{x: {n}, y: 1}}\n"
        path.write_text(trail_text(taps + f"- tapOnPoint: {{x: {n}, y: 2}}"))
        paths.append(path)
    return paths


def _devices(server: FakeAdbServer, *serials: str) -> list[Device]:
    return list(connect_many(serials, port=server.port, timeout=5))


def _run(server: FakeAdbServer, trails: list[Path], *serials: str) -> RunResult:
    return replay(
        ReplayRequest(trails=tuple(trails)), devices=_devices(server, *serials), options=FAST
    )


def _trail_order(commands: list[str]) -> list[int]:
    """The trails a device ran, one entry per tap."""
    return [int(m.group(1)) for c in commands if (m := re.fullmatch(r"input tap (\d+) \d", c))]


def test_trails_spread_over_two_devices_one_trail_per_device_at_a_time(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    run = _run(phones, _trails(tmp_path, 20), *PHONES)

    assert [t.status for t in run.trails] == ["passed"] * 20
    assert [Path(t.path).name for t in run.trails] == [f"t{n:02d}.trail.yaml" for n in range(20)]
    by_device = {serial: [t for t in run.trails if t.device == serial] for serial in PHONES}
    assert all(len(trails) >= 5 for trails in by_device.values()), {
        k: len(v) for k, v in by_device.items()
    }
    for serial, ran in by_device.items():
        order = _trail_order(phones.commands[serial])
        # Three taps per trail, never interleaved with another trail's on the same device.
        assert order == [n for n in sorted(set(order), key=order.index) for _ in range(3)]
        assert sorted(set(order)) == sorted(int(Path(t.path).stem[1:3]) for t in ran)
    assert run.devices == PHONES
    assert run.device is None
    data = run.to_json()
    assert data["devices"] == list(PHONES)
    assert {t["device"] for t in data["trails"]} == set(PHONES)


def test_two_devices_replay_twenty_trails_faster_than_one(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    trails = _trails(tmp_path, 20)
    started = time.monotonic()
    one = _run(phones, trails, PHONES[0])
    alone = time.monotonic() - started
    started = time.monotonic()
    two = _run(phones, trails, *PHONES)
    together = time.monotonic() - started

    assert one.exit_code == two.exit_code == 0
    # 20 trails x 3 taps x the latency: about 1.2 s of device time on one phone, half on two.
    assert together < alone * 0.8, (alone, together)


def test_a_device_lost_mid_run_costs_only_its_own_trail(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    lost = phones.device(PHONES[1])
    lost.faults.disconnect_after = 4  # its second trail, at the second tap

    run = _run(phones, _trails(tmp_path, 10), *PHONES)

    statuses = [(t.status, t.device) for t in run.trails]
    failed = [t for t in run.trails if t.status == "failed"]
    assert len(failed) == 1, statuses
    (gone,) = failed
    assert gone.device == PHONES[1]
    failure = gone.steps[0].failure
    assert failure is not None
    assert (failure.kind, failure.failed_tool, failure.successful) == (
        "fatal",
        "tapOnPoint",
        ("tapOnPoint",),
    )
    assert failure.error.startswith("emulator-5556: device lost during `input tap ")
    assert [t.status for t in run.trails].count("passed") == 9
    assert {t.device for t in run.trails if t.status == "passed"} == set(PHONES)
    assert run.counts()["trails_skipped"] == 0


def test_when_every_device_is_lost_the_rest_is_not_run(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    for serial in PHONES:
        phones.device(serial).faults.disconnect_after = 1

    run = _run(phones, _trails(tmp_path, 5), *PHONES)

    assert [t.status for t in run.trails].count("failed") == 2
    rest = [t for t in run.trails if t.status == "skipped"]
    assert len(rest) == 3
    assert all(
        (t.reason or "").startswith("not run: every device was lost (emulator-5554: ") for t in rest
    )


def test_all_devices_from_the_command_line_gives_one_report(
    phones: FakeAdbServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(phones.port))
    monkeypatch.setenv("NO_COLOR", "1")
    _trails(tmp_path, 4)
    report = tmp_path / "out" / "replay.json"

    assert main(["replay", str(tmp_path), "--all-devices", "--json", str(report)]) == 0

    out = capsys.readouterr().out
    assert (
        "trailblaze replay on 2 devices (emulator-5554, emulator-5556): 4 trails: 4 passed" in out
    )
    assert re.search(r"PASS \S+t00\.trail\.yaml on emulator-555[46] ", out)
    data = json.loads(report.read_text())
    assert data["devices"] == list(PHONES)
    assert len(data["trails"]) == 4


def test_repeated_device_flags_choose_those_devices(
    phones: FakeAdbServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(phones.port))
    _trails(tmp_path, 2)

    assert main(["replay", str(tmp_path), "--device", PHONES[1], "--device", PHONES[1]]) == 0

    assert phones.commands[PHONES[0]] == []
    assert len(_trail_order(phones.commands[PHONES[1]])) == 6


DODO = """\
from trailblaze.doit_tasks import make_tasks

globals().update(make_tasks("."))
"""


def _doit_workspace(tmp_path: Path, count: int) -> Path:
    """A workspace whose dodo.py takes our tasks, with ``count`` trails like ``_trails``'."""
    write_tree(
        tmp_path,
        {"dodo.py": DODO, "trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app")},
    )
    trails = tmp_path / "trailmaps" / "app" / "trails"
    trails.mkdir()
    _trails(trails, count)
    return tmp_path


def _doit_replay(ws: Path, server: FakeAdbServer, *args: str) -> tuple[int, str, dict[str, Any]]:
    """``doit replay ARGS`` in its own process: exit code, output, the JSON report."""
    report = ws / "replay.json"
    done = subprocess.run(
        [sys.executable, "-m", "doit", "--db-file", str(ws / "doit.sqlite3"), "replay",
         *args, "--json", str(report)],
        check=False, cwd=ws, env=child_env(server.port), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr, json.loads(report.read_text("utf-8"))


def test_doit_replay_with_repeated_devices_uses_both_into_one_report(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    ws = _doit_workspace(tmp_path, 6)

    code, out, report = _doit_replay(ws, phones, "--device", PHONES[0], "--device", PHONES[1])

    assert code == 0, out
    assert (
        "trailblaze replay on 2 devices (emulator-5554, emulator-5556): 6 trails: 6 passed" in out
    )
    assert report["devices"] == list(PHONES)
    assert [t["status"] for t in report["trails"]] == ["passed"] * 6
    assert {t["device"] for t in report["trails"]} == set(PHONES)
    for serial in PHONES:
        ran = sorted(
            int(Path(t["path"]).stem[1:3]) for t in report["trails"] if t["device"] == serial
        )
        assert sorted(set(_trail_order(phones.commands[serial]))) == ran


def test_doit_replay_on_all_devices_loses_only_the_trail_of_the_lost_device(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    ws = _doit_workspace(tmp_path, 6)
    phones.device(PHONES[1]).faults.disconnect_after = 4  # its second trail, at the second tap

    code, out, report = _doit_replay(ws, phones, "--all-devices")

    assert code != 0, out
    assert "trailblaze replay: a trail failed, was refused or was cancelled" in out
    assert report["devices"] == list(PHONES)
    failed = [t for t in report["trails"] if t["status"] != "passed"]
    assert [(t["status"], t["device"]) for t in failed] == [("failed", PHONES[1])], out
    failure = failed[0]["steps"][0]["failure"]
    assert (failure["kind"], failure["failed_tool"], failure["successful"]) == (
        "fatal",
        "tapOnPoint",
        ["tapOnPoint"],
    )
    passed = [t for t in report["trails"] if t["status"] == "passed"]
    assert len(passed) == 5
    assert {t["device"] for t in passed} == set(PHONES)
