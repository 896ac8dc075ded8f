"""Many devices: ``--device`` repeated or comma-separated and ``--all-devices``. By default every
trail runs on every device (fan-out, as Trailblaze does), in parallel across devices, one trail
per device at a time; ``--spread`` runs each trail once on the next free device. One report,
each run naming its device's serial and model; a lost device costs only its own runs. Real
adbutils against one fake adb server holding two phones, through ``replay``, the ``trailblaze
replay`` command line and a real ``doit replay`` process."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakeadb import FakeAdbServer, ModelDevice, load_devices
from tests.conftest import MINIMAL_MANIFEST, write_tree
from trailblaze.cli.main import main
from trailblaze.replay.adb import connect_many
from trailblaze.replay.device import Device
from trailblaze.replay.render import render_summary, render_trail
from trailblaze.replay.results import RunResult, TrailResult, junit_xml
from trailblaze.replay.run import ReplayRequest, replay
from trailblaze.report.console import make_console

from .support import FAST, child_env, trail_text

PHONES = ("emulator-5554", "emulator-5556")
MODELS = {"emulator-5554": "Pixel 7", "emulator-5556": "Pixel Tablet"}
#: Every command takes this long on the fake phones, as a device's round trip does.
LATENCY = 0.02
MODEL_READ = "getprop ro.product.model"


@pytest.fixture
def phones() -> Iterator[FakeAdbServer]:
    devices = load_devices(
        {"devices": [{"serial": serial, "model": MODELS[serial]} for serial in PHONES]}
    )
    for device in devices:
        device.faults.delay = LATENCY
    with FakeAdbServer(devices) as server:
        yield server


@pytest.fixture
def on_phones(phones: FakeAdbServer, monkeypatch: pytest.MonkeyPatch) -> FakeAdbServer:
    """The two phones, where the command line's adb client looks (`ANDROID_ADB_SERVER_PORT`)."""
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(phones.port))
    return phones


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


def _run(
    server: FakeAdbServer, trails: list[Path], *serials: str, spread: bool = False
) -> RunResult:
    return replay(
        ReplayRequest(trails=tuple(trails), spread=spread),
        devices=_devices(server, *serials),
        options=FAST,
    )


def _trail_order(commands: list[str]) -> list[int]:
    """The trails a device ran, one entry per tap."""
    return [int(m.group(1)) for c in commands if (m := re.fullmatch(r"input tap (\d+) \d", c))]


def _ran_whole(commands: list[str]) -> list[int]:
    """The trails a device ran, in order, each checked to have run whole (three taps, never
    interleaved with another trail's on the same device)."""
    order = _trail_order(commands)
    trails = sorted(set(order), key=order.index)
    assert order == [n for n in trails for _ in range(3)], order
    return trails


def _number(trail: TrailResult) -> int:
    return int(Path(trail.path).stem[1:3])


def _console(run: RunResult, *, show_device: bool = True) -> list[str]:
    buffer = io.StringIO()
    console = make_console(buffer, color=False)
    for trail in run.trails:
        render_trail(console, trail, show_device=show_device)
    render_summary(console, run)
    return buffer.getvalue().splitlines()


# -- fan-out: every trail on every device ------------------------------------------------------


def test_every_trail_runs_on_each_device_and_each_device_log_shows_all_twenty(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    run = _run(phones, _trails(tmp_path, 20), *PHONES)

    # One result per trail and device, in plan order, then device order.
    assert [(Path(t.path).name, t.device) for t in run.trails] == [
        (f"t{n:02d}.trail.yaml", serial) for n in range(20) for serial in PHONES
    ]
    assert [t.status for t in run.trails] == ["passed"] * 40
    assert {(t.device, t.device_model) for t in run.trails} == set(MODELS.items())
    for serial in PHONES:
        commands = phones.commands[serial]
        # The model is read once, before the device's first trail; then all 20, in plan order.
        assert commands[0] == MODEL_READ
        assert commands.count(MODEL_READ) == 1
        assert _ran_whole(commands) == list(range(20))
    assert (run.devices, run.device, run.spread) == (PHONES, None, False)
    assert run.device_models == MODELS
    assert run.exit_code == 0


def test_fanned_out_runs_in_parallel_across_devices(phones: FakeAdbServer, tmp_path: Path) -> None:
    trails = _trails(tmp_path, 20)
    started = time.monotonic()
    one = _run(phones, trails, PHONES[0])
    alone = time.monotonic() - started
    started = time.monotonic()
    two = _run(phones, trails, *PHONES)
    together = time.monotonic() - started

    assert (len(one.trails), len(two.trails)) == (20, 40)
    assert one.exit_code == two.exit_code == 0
    # Twice the device work (20 trails x 3 taps x the latency on each phone) in about the time
    # of one phone: the phones replay at the same time.
    assert together < alone * 1.6, (alone, together)


def test_json_has_one_entry_per_trail_and_device_with_serial_and_model(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    trails = _trails(tmp_path, 3)
    (tmp_path / "bad.trail.yaml").write_text("trail: []\n")

    run = _run(phones, [*trails, tmp_path / "bad.trail.yaml"], *PHONES)
    data = json.loads(json.dumps(run.to_json()))

    assert data["version"] == 2
    assert (data["mode"], data["device"]) == ("fan-out", None)
    assert data["devices"] == [{"serial": s, "model": MODELS[s]} for s in PHONES]
    assert data["device_counts"] == {
        s: {"passed": 3, "failed": 0, "skipped": 0, "cancelled": 0} for s in PHONES
    }
    entries = [(Path(t["path"]).name, t["device"], t["status"]) for t in data["trails"]]
    # The refused trail ran on no device: one entry, no device.
    assert entries == [
        *(
            (f"t{n:02d}.trail.yaml", {"serial": s, "model": MODELS[s]}, "passed")
            for n in range(3)
            for s in PHONES
        ),
        ("bad.trail.yaml", None, "refused"),
    ]
    assert data["counts"]["trails"] == 7
    assert data["exit_code"] == 1


def test_junit_has_a_suite_per_trail_and_device_named_by_the_device(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    run = _run(phones, _trails(tmp_path, 2), *PHONES)

    root = ET.fromstring(junit_xml(run))
    suites = root.findall("testsuite")
    assert [Path(s.get("name") or "").name for s in suites] == [
        f"t{n:02d}.trail.yaml on {serial} ({MODELS[serial]})" for n in range(2) for serial in PHONES
    ]
    for suite, serial in zip(suites, PHONES * 2, strict=True):
        properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert properties == {"device.serial": serial, "device.model": MODELS[serial]}
        case = suite.find("testcase")
        assert case is not None
        assert (case.get("classname") or "").endswith(f".t00.trail [{serial}]") or (
            case.get("classname") or ""
        ).endswith(f".t01.trail [{serial}]")
    assert root.get("tests") == "4"


def test_the_console_names_each_run_device_and_counts_per_device(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    phones.device(PHONES[1]).faults.disconnect_after = 1 + 3 + 1  # model, t00, t01's first tap

    lines = _console(_run(phones, _trails(tmp_path, 3), *PHONES))

    heads = [line for line in lines if line.startswith(("PASS", "FAIL", "SKIP"))]
    assert re.fullmatch(r"PASS \S+t00\.trail\.yaml on emulator-5554 \(Pixel 7\) \d+\.\ds", heads[0])
    assert re.fullmatch(
        r"PASS \S+t00\.trail\.yaml on emulator-5556 \(Pixel Tablet\) \d+\.\ds", heads[1]
    )
    assert heads[5].startswith("SKIP ")
    assert re.fullmatch(
        r"SKIP \S+t02\.trail\.yaml on emulator-5556 \(Pixel Tablet\): not run: the device was "
        r"lost \(emulator-5556: device lost during `input tap 1 1`: .+\)",
        heads[5],
    )
    summary = lines.index(
        "trailblaze replay on 2 devices (emulator-5554 (Pixel 7), emulator-5556 (Pixel Tablet)), "
        "every trail on each: 6 trail runs: 4 passed, 1 failed, 0 refused, 1 skipped"
    )
    assert lines[summary + 1 : summary + 3] == [
        "  emulator-5554 (Pixel 7): 3 trails: 3 passed, 0 failed, 0 not run",
        "  emulator-5556 (Pixel Tablet): 3 trails: 1 passed, 1 failed, 1 not run",
    ]
    assert lines[-1] == "FAILED (exit 1)"


def test_a_device_lost_mid_run_reports_its_remaining_trails_not_run_and_the_other_goes_on(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    phones.device(PHONES[1]).faults.disconnect_after = 1 + 3 + 1  # model, t00, t01's first tap

    run = _run(phones, _trails(tmp_path, 10), *PHONES)

    first = [t for t in run.trails if t.device == PHONES[0]]
    assert [t.status for t in first] == ["passed"] * 10
    assert _ran_whole(phones.commands[PHONES[0]]) == list(range(10))
    lost = [t for t in run.trails if t.device == PHONES[1]]
    assert [t.status for t in lost] == ["passed", "failed"] + ["skipped"] * 8
    failure = lost[1].steps[0].failure
    assert failure is not None
    assert (failure.kind, failure.failed_tool, failure.successful) == (
        "fatal",
        "tapOnPoint",
        ("tapOnPoint",),
    )
    assert failure.error.startswith("emulator-5556: device lost during `input tap 1 1`")
    for trail in lost[2:]:
        assert (trail.reason or "").startswith(
            "not run: the device was lost (emulator-5556: device lost during `input tap 1 1`"
        )
        assert {s.status for s in trail.steps} == {"skipped"}
    assert run.exit_code == 1
    assert run.device_counts() == {
        PHONES[0]: {"passed": 10, "failed": 0, "skipped": 0, "cancelled": 0},
        PHONES[1]: {"passed": 1, "failed": 1, "skipped": 8, "cancelled": 0},
    }


def test_a_device_lost_before_its_first_trail_fails_that_trail_and_the_other_runs_all(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    phones.device(PHONES[0]).faults.disconnect_after = 0  # gone at the model read

    run = _run(phones, _trails(tmp_path, 4), *PHONES)

    gone = [t for t in run.trails if t.device == PHONES[0]]
    # No model was read (the device is named by its serial); its first trail fails on the lost
    # device, attributed to its first tool, and never passes for a run that did not happen.
    assert [(t.status, t.device_model) for t in gone] == [("failed", None)] + [
        ("skipped", None)
    ] * 3
    failure = gone[0].steps[0].failure
    assert failure is not None
    assert (failure.kind, failure.failed_tool, failure.successful) == ("fatal", "tapOnPoint", ())
    lost = "emulator-5554: device lost during `getprop ro.product.model`: "
    assert failure.error.startswith(lost)
    assert all(
        (t.reason or "").startswith(f"not run: the device was lost ({lost}") for t in gone[1:]
    ), [t.reason for t in gone]
    assert [t.status for t in run.trails if t.device == PHONES[1]] == ["passed"] * 4
    assert _ran_whole(phones.commands[PHONES[1]]) == list(range(4))
    assert phones.commands[PHONES[0]] == ["getprop ro.product.model"]
    assert run.exit_code == 1


def test_a_device_with_no_model_is_named_by_its_serial(tmp_path: Path) -> None:
    devices = load_devices(
        {
            "devices": [
                {"serial": "emulator-5554", "model": "Pixel 7"},
                {"serial": "emulator-5556", "properties": {"ro.product.model": ""}},
            ]
        }
    )
    with FakeAdbServer(devices) as server:
        run = _run(server, _trails(tmp_path, 1), *PHONES)

    assert [(t.device, t.device_model, t.device_label) for t in run.trails] == [
        ("emulator-5554", "Pixel 7", "emulator-5554 (Pixel 7)"),
        ("emulator-5556", None, "emulator-5556"),
    ]
    assert run.to_json()["devices"][1] == {"serial": "emulator-5556", "model": None}
    lines = _console(run)
    heads = [line for line in lines if line.startswith("PASS")]
    assert re.fullmatch(r"PASS \S+t00\.trail\.yaml on emulator-5556 \d+\.\ds", heads[1])
    assert "  emulator-5556: 1 trail: 1 passed, 0 failed, 0 not run" in lines


def test_a_model_the_device_makes_up_is_escaped_and_cut_short(tmp_path: Path) -> None:
    hostile = "\x1b[2J" + "M" * 500
    devices = load_devices({"serial": "emulator-5554", "properties": {"ro.product.model": hostile}})
    with FakeAdbServer(devices) as server:
        run = _run(server, _trails(tmp_path, 1), "emulator-5554")

    # Its first 80 characters, the escape shown as text.
    assert run.trails[0].device_model == "\\x1b[2J" + "M" * 76 + "…"
    assert run.trails[0].status == "passed"


def test_a_model_holding_a_secret_value_is_shown_redacted(tmp_path: Path) -> None:
    devices = load_devices({"serial": "emulator-5554", "model": "Pixel hunter2-build"})
    with FakeAdbServer(devices) as server:
        run = replay(
            ReplayRequest(trails=tuple(_trails(tmp_path, 1)), secrets=("token=hunter2",)),
            devices=_devices(server, "emulator-5554"),
            options=FAST,
        )

    assert run.trails[0].device_model == "Pixel [secret:token]-build"
    assert run.device_models == {"emulator-5554": "Pixel [secret:token]-build"}
    assert "hunter2" not in "\n".join(_console(run))


def test_cancel_stops_every_device_at_a_trail_boundary(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    cancel = threading.Event()
    run = replay(
        ReplayRequest(trails=tuple(_trails(tmp_path, 6))),
        devices=_devices(phones, *PHONES),
        options=FAST,
        cancel=cancel,
        on_trail=lambda trail: cancel.set(),
    )

    assert run.cancelled
    assert run.exit_code == 1
    # The first trail to finish asks to stop: each device ends the trail it is in (at a tool
    # boundary) and starts no other.
    before = [t for t in run.trails if t.reason == "cancelled before it started"]
    assert len(before) >= 10, [(t.status, t.reason) for t in run.trails]
    assert all(t.status == "cancelled" and t.device in PHONES for t in before)
    for serial in PHONES:
        assert set(_trail_order(phones.commands[serial])) <= {0}


class _BrokenPhone(ModelDevice):
    """A phone whose code has a bug (not a device error): it must surface, not vanish."""

    def product_model(self) -> str | None:
        raise RuntimeError("a bug in the device layer")


def test_a_bug_in_one_device_worker_is_raised_not_a_short_report(tmp_path: Path) -> None:
    fine, broken = load_devices({"devices": [{"serial": s} for s in PHONES]})

    with pytest.raises(RuntimeError, match="a bug in the device layer"):
        replay(
            ReplayRequest(trails=tuple(_trails(tmp_path, 2))),
            devices=[ModelDevice(fine), _BrokenPhone(broken)],
            options=FAST,
        )
    assert _ran_whole(fine.commands) == [0, 1]  # the other device finished its trails


# -- --spread: each trail once, on the next free device -----------------------------------------


def test_spread_splits_the_twenty_trails_each_device_log_shows_its_share_and_all_ran_once(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    run = _run(phones, _trails(tmp_path, 20), *PHONES, spread=True)

    assert [Path(t.path).name for t in run.trails] == [f"t{n:02d}.trail.yaml" for n in range(20)]
    assert [t.status for t in run.trails] == ["passed"] * 20
    shares = {serial: _ran_whole(phones.commands[serial]) for serial in PHONES}
    for serial, share in shares.items():
        assert share == sorted(_number(t) for t in run.trails if t.device == serial)
        assert len(share) >= 5, shares
        assert all(t.device_model == MODELS[serial] for t in run.trails if t.device == serial)
    assert sorted(shares[PHONES[0]] + shares[PHONES[1]]) == list(range(20))
    assert run.to_json()["mode"] == "spread"


def test_spread_is_faster_than_fan_out(phones: FakeAdbServer, tmp_path: Path) -> None:
    trails = _trails(tmp_path, 20)
    started = time.monotonic()
    _run(phones, trails, *PHONES)
    fanned = time.monotonic() - started
    started = time.monotonic()
    _run(phones, trails, *PHONES, spread=True)
    spread = time.monotonic() - started

    # Half the device work on each phone.
    assert spread < fanned * 0.8, (fanned, spread)


def test_spread_a_device_lost_mid_run_costs_only_its_own_trail(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    phones.device(PHONES[1]).faults.disconnect_after = 1 + 3 + 1  # model, a trail, a tap

    run = _run(phones, _trails(tmp_path, 10), *PHONES, spread=True)

    failed = [t for t in run.trails if t.status == "failed"]
    assert [t.device for t in failed] == [PHONES[1]]
    failure = failed[0].steps[0].failure
    assert failure is not None
    assert (failure.kind, failure.failed_tool, failure.successful) == (
        "fatal",
        "tapOnPoint",
        ("tapOnPoint",),
    )
    assert [t.status for t in run.trails].count("passed") == 9
    assert {t.device for t in run.trails if t.status == "passed"} == set(PHONES)
    assert run.counts()["trails_skipped"] == 0


def test_spread_when_every_device_is_lost_the_rest_is_not_run(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    for serial in PHONES:
        phones.device(serial).faults.disconnect_after = 2  # the model, then one tap

    run = _run(phones, _trails(tmp_path, 5), *PHONES, spread=True)

    assert [t.status for t in run.trails].count("failed") == 2
    rest = [t for t in run.trails if t.status == "skipped"]
    assert len(rest) == 3
    assert all(
        (t.reason or "").startswith("not run: every device was lost (emulator-5554: ") for t in rest
    )


# -- the command line --------------------------------------------------------------------------


def test_all_devices_from_the_command_line_gives_one_report(
    on_phones: FakeAdbServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    _trails(tmp_path, 4)
    report = tmp_path / "out" / "replay.json"

    assert main(["replay", str(tmp_path), "--all-devices", "--json", str(report)]) == 0

    out = capsys.readouterr().out
    assert (
        "trailblaze replay on 2 devices (emulator-5554 (Pixel 7), emulator-5556 (Pixel Tablet)), "
        "every trail on each: 8 trail runs: 8 passed"
    ) in out
    assert re.search(r"PASS \S+t00\.trail\.yaml on emulator-5554 \(Pixel 7\) ", out)
    assert re.search(r"PASS \S+t00\.trail\.yaml on emulator-5556 \(Pixel Tablet\) ", out)
    data = json.loads(report.read_text())
    assert [d["serial"] for d in data["devices"]] == list(PHONES)
    assert len(data["trails"]) == 8


@pytest.mark.parametrize(
    "flags",
    [["--device", "emulator-5554,emulator-5556"], ["--device", PHONES[0], "--device", PHONES[1]]],
    ids=["comma", "repeated"],
)
def test_device_flags_comma_separated_or_repeated_fan_out(
    on_phones: FakeAdbServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
) -> None:
    _trails(tmp_path, 2)

    assert main(["replay", str(tmp_path), *flags, "--no-color"]) == 0

    for serial in PHONES:
        assert _ran_whole(on_phones.commands[serial]) == [0, 1]
    assert "  emulator-5556 (Pixel Tablet): 2 trails: 2 passed, 0 failed, 0 not run\n" in (
        capsys.readouterr().out
    )


def test_spread_from_the_command_line(
    on_phones: FakeAdbServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _trails(tmp_path, 6)

    assert main(["replay", str(tmp_path), "--all-devices", "--spread", "--no-color"]) == 0

    shares = [_ran_whole(on_phones.commands[serial]) for serial in PHONES]
    assert sorted(shares[0] + shares[1]) == list(range(6))
    assert (
        "trailblaze replay on 2 devices (emulator-5554 (Pixel 7), emulator-5556 (Pixel Tablet)), "
        "spread over them: 6 trails: 6 passed"
    ) in capsys.readouterr().out


def test_repeated_device_flags_choose_those_devices(
    on_phones: FakeAdbServer,
    tmp_path: Path,
) -> None:
    _trails(tmp_path, 2)

    assert main(["replay", str(tmp_path), "--device", PHONES[1], "--device", PHONES[1]]) == 0

    assert on_phones.commands[PHONES[0]] == []
    assert _ran_whole(on_phones.commands[PHONES[1]]) == [0, 1]


def test_an_empty_serial_in_the_comma_form_is_a_usage_error(
    on_phones: FakeAdbServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _trails(tmp_path, 1)

    assert main(["replay", str(tmp_path), "--device", "emulator-5554,"]) == 2

    assert capsys.readouterr().err == (
        "trailblaze replay: --device 'emulator-5554,': an empty serial\n"
    )
    assert on_phones.commands == {serial: [] for serial in PHONES}


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


def test_doit_replay_with_comma_separated_devices_runs_every_trail_on_each(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    ws = _doit_workspace(tmp_path, 6)

    code, out, report = _doit_replay(ws, phones, "--device", ",".join(PHONES))

    assert code == 0, out
    assert (
        "trailblaze replay on 2 devices (emulator-5554 (Pixel 7), emulator-5556 (Pixel Tablet)), "
        "every trail on each: 12 trail runs: 12 passed"
    ) in out
    assert report["mode"] == "fan-out"
    assert [d["serial"] for d in report["devices"]] == list(PHONES)
    assert [t["device"]["serial"] for t in report["trails"]] == list(PHONES) * 6
    for serial in PHONES:
        assert _ran_whole(phones.commands[serial]) == list(range(6))


def test_doit_replay_spread_on_all_devices_loses_only_the_trail_of_the_lost_device(
    phones: FakeAdbServer, tmp_path: Path
) -> None:
    ws = _doit_workspace(tmp_path, 6)
    phones.device(PHONES[1]).faults.disconnect_after = 1 + 3 + 1  # model, a trail, a tap

    code, out, report = _doit_replay(ws, phones, "--all-devices", "--spread")

    assert code != 0, out
    assert "trailblaze replay: a trail failed, was refused or was cancelled" in out
    assert report["mode"] == "spread"
    assert len(report["trails"]) == 6
    failed = [t for t in report["trails"] if t["status"] != "passed"]
    assert [(t["status"], t["device"]["serial"]) for t in failed] == [("failed", PHONES[1])], out
    # The lost phone's log ends with the trail it lost (its second tap was sent, not answered).
    shares = [sorted(set(_trail_order(phones.commands[serial]))) for serial in PHONES]
    assert sorted(shares[0] + shares[1]) == list(range(6))
