"""Several devices, fanned out and spread: `python -m bench.replay_fanout [--runs 5]`.

Two fake phones behind one fake adb server (`fakeadb`, real sockets), each answering every
command after a fixed latency (`faults.delay`, as a device's round trip), and 20 trails of three
taps each, replayed fanned out (every trail on each phone, the default, `--all-devices`), spread
(`--all-devices --spread`: each trail once, on the next free phone) and, for scale, on one phone
alone. Each run goes through `replay`, what the command line calls (the adb connection, the
JSON report), in this process, so that a Python start does not blur the figures. The runs are
interleaved; each is checked against its JSON report and against the phones' own command logs
(every trail the report says ran on a phone appears whole, three taps, in that phone's log, and
nothing else does).

Medians of `--runs` go to `bench/results/replay-fanout.md` (`--out`), with each phone's trail
count. It takes about half a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakeadb import FakeAdbServer, load_devices
from trailblaze.replay.run import ReplayRequest, replay

ROOT = Path(__file__).resolve().parent.parent
PHONES = {"emulator-5554": "Pixel 7", "emulator-5556": "Pixel Tablet"}
TRAILS = 20
TAPS = 3
LATENCY = 0.03
"""Seconds each phone waits before answering a command."""
TAP = re.compile(r"input tap (\d+) \d+")
TRAIL = """\
trail:
  - step: tap trail {n}
    recording:
      android:
        - tapOnPoint: {{x: {n}, y: 1}}
        - tapOnPoint: {{x: {n}, y: 1}}
        - tapOnPoint: {{x: {n}, y: 2}}
"""


@dataclass(frozen=True)
class Flags:
    """What the command line would say: `--all-devices [--spread]`, or `--device SERIAL`."""

    every: bool = True
    spread: bool = False
    serials: tuple[str, ...] = ()


MODES: dict[str, Flags] = {
    "fanned out (default)": Flags(),
    "spread (--spread)": Flags(spread=True),
    "one phone": Flags(every=False, serials=(next(iter(PHONES)),)),
}


@dataclass
class Mode:
    walls: list[float] = field(default_factory=list)
    per_device: dict[str, int] = field(default_factory=dict)
    """Trails each phone ran in the last run (from its command log, checked against the JSON)."""
    runs: int = 0
    """Trail runs in the report of the last run."""


def write_trails(root: Path) -> None:
    for n in range(TRAILS):
        (root / f"t{n:02d}.trail.yaml").write_text(TRAIL.format(n=n), "utf-8")


def trails_in(commands: list[str]) -> list[int]:
    """The trails a phone's log shows, each checked to have run whole and alone."""
    taps = [int(m.group(1)) for c in commands if (m := TAP.fullmatch(c))]
    order = sorted(set(taps), key=taps.index)
    if taps != [n for n in order for _ in range(TAPS)]:
        raise SystemExit(f"a phone's taps are not whole trails one at a time: {taps}")
    return order


def run_once(server: FakeAdbServer, root: Path, flags: Flags, mode: Mode) -> None:
    before = {serial: len(commands) for serial, commands in server.commands.items()}
    report = root / "replay.json"
    request = ReplayRequest(
        trails=(root,), json_path=report, serials=flags.serials, all_devices=flags.every,
        spread=flags.spread,
    )  # fmt: skip
    started = time.perf_counter()
    run = replay(request)
    wall = time.perf_counter() - started
    if run.exit_code != 0:
        raise SystemExit(f"replay {flags} failed: {run.counts()}")
    data: dict[str, Any] = json.loads(report.read_text("utf-8"))
    reported = Counter(t["device"]["serial"] for t in data["trails"])
    logged = {
        serial: trails_in(commands[before[serial] :])
        for serial, commands in server.commands.items()
    }
    for serial, ran in logged.items():
        if len(ran) != reported.get(serial, 0):
            raise SystemExit(f"{serial}: the report says {reported[serial]}, the log {ran}")
    every = sorted(n for ran in logged.values() for n in ran)
    expected = list(range(TRAILS)) * (len(data["devices"]) if data["mode"] == "fan-out" else 1)
    if every != sorted(expected):
        raise SystemExit(f"{flags}: the phones ran {every}")
    mode.walls.append(wall)
    mode.per_device = {serial: len(ran) for serial, ran in logged.items()}
    mode.runs = len(data["trails"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replay_fanout", description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/replay-fanout.md")
    args = parser.parse_args(argv)
    devices = load_devices(
        {"devices": [{"serial": serial, "model": model} for serial, model in PHONES.items()]}
    )
    for device in devices:
        device.faults.delay = LATENCY
    modes = {name: Mode() for name in MODES}
    saved = dict(os.environ)
    try:
        with tempfile.TemporaryDirectory() as tmp, FakeAdbServer(devices) as server:
            # replay() finds the adb server (and no default device) where a user's run does.
            os.environ.pop("ANDROID_SERIAL", None)
            os.environ["ANDROID_ADB_SERVER_PORT"] = str(server.port)
            root = Path(tmp)
            write_trails(root)
            for _ in range(args.runs):
                for name, flags in MODES.items():  # interleaved: drift hits every mode alike
                    run_once(server, root, flags, modes[name])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    device_work = TRAILS * TAPS * LATENCY
    lines = [
        "# Replay on two devices: fanned out and spread",
        "",
        f"`python -m bench.replay_fanout --runs {args.runs}`: {TRAILS} trails of {TAPS} taps, two "
        f"fake phones answering each command after {LATENCY * 1000:.0f} ms "
        f"({device_work:.1f} s of device time for the {TRAILS} trails on one phone), "
        "`replay()` with the adb connection and the JSON report, runs interleaved. "
        f"{os.cpu_count()} cores, Python {platform.python_version()}.",
        "",
        "| mode | median wall | runs (s) | trail runs | trails on emulator-5554 (Pixel 7) | "
        "trails on emulator-5556 (Pixel Tablet) |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for name, mode in modes.items():
        counts = " | ".join(str(mode.per_device.get(serial, 0)) for serial in PHONES)
        walls = ", ".join(f"{w:.2f}" for w in mode.walls)
        lines.append(
            f"| {name} | {statistics.median(mode.walls):.2f} s | {walls} | {mode.runs} | {counts} |"
        )
    fan = statistics.median(modes["fanned out (default)"].walls)
    spread = statistics.median(modes["spread (--spread)"].walls)
    one = statistics.median(modes["one phone"].walls)
    lines += [
        "",
        f"Fanned out, the two phones do twice the work of one phone in {fan / one:.2f}x its "
        f"time (they replay in parallel); spread takes {spread / fan:.2f}x the fanned-out time "
        "for half the coverage. The trail counts per phone (the last run's) are read from each "
        "phone's own command log and checked against the JSON report (every trail whole, one at "
        "a time).",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", "utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
