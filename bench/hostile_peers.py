"""What a hostile peer costs: wall time and peak RSS of `trailblaze check --remote-cache` and
`trailblaze replay` against each hostile server of `bench/hostile.py`, next to a baseline.

    .venv/bin/python -m bench.hostile_peers [--runs 3] [--out bench/results/hostile-peers.md]

Each case starts its server on loopback, runs the entry point in a child process as a user
would (`bench.hostile.measure`: the child's own `ru_maxrss` through `os.wait4`) and keeps the
median wall time, the largest peak RSS, the exit code and the line that says what happened.
A case fails the run (exit 1) when it gave a traceback, let a raw escape through, or took
longer than its bound plus `SLACK`.

The check runs on a copy of the bundled `trailmaps/` with the type gate off, so that the peak is
the check's own process and not the compiler's (a compiler run does not touch the remote and
adds the same to every case). Its baseline is the same check against a port where nothing
listens; replay's is the same trail on the fake device.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.hostile import ADB_MODES, HTTP_MODES, HostileAdb, HostileHttp, Measured, measure
from bench.nginx import free_port
from fakeadb import FakeAdbServer, FakeDevice
from trailblaze.options import DISABLE_ENV
from trailblaze.replay.adb import DEADLINE_ENV as COMMAND_DEADLINE_ENV
from trailblaze.state.transport import BUDGET_ENV, DEADLINE_ENV, MAX_MB_ENV

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_APP = ROOT / "tests" / "data" / "replay" / "sample_app.yaml"
DEADLINE_S = 2.0
BUDGET_S = 2.5
LIMIT_MIB = 16
SLACK = 5.0
"""Seconds a loaded two-core machine may add to a bound."""
CHECK_SETTINGS = {DEADLINE_ENV: str(int(DEADLINE_S * 1000)), MAX_MB_ENV: str(LIMIT_MIB)}
TRAIL = (
    "trail:\n  - step: list apps\n    recording:\n      android:\n"
    "        - mobile_listInstalledApps: {}\n"
)


@dataclass(frozen=True)
class Case:
    entry: str
    """`check` or `replay`."""
    mode: str
    """The peer's mode (`baseline` for none)."""
    settings: str
    """What was set, as the table shows it."""
    bound: float
    """The seconds the case may hold the entry point, past the baseline."""
    run: Callable[[Path], tuple[Measured, str]]
    """Runs the case once in a fresh directory: what was measured, and where the peer was."""


@dataclass(frozen=True)
class Row:
    case: Case
    runs: list[Measured]

    @property
    def wall(self) -> float:
        return statistics.median(r.wall for r in self.runs)

    @property
    def peak(self) -> float:
        return max(r.peak_mib for r in self.runs)

    @property
    def codes(self) -> set[int]:
        return {r.code for r in self.runs}

    def problems(self, baseline: float) -> list[str]:
        found = []
        for ran in self.runs:
            shown = ran.stdout + ran.stderr
            if "Traceback" in shown:
                found.append("a traceback")
            if "\x1b" in shown:
                found.append("a raw escape")
            if ran.wall > baseline + self.case.bound + SLACK:
                found.append(f"{ran.wall:.1f} s, past its bound")
        return sorted(set(found))


def _check_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAILBLAZE_REMOTE_")}
    return {**env, "NO_COLOR": "1", DISABLE_ENV: "1", **extra}


def _check_baseline(settings: dict[str, str]) -> Callable[[Path], tuple[Measured, str]]:
    def run(where: Path) -> tuple[Measured, str]:
        shutil.copytree(ROOT / "trailmaps", where / "trailmaps")
        url = f"http://127.0.0.1:{free_port()}/cache"  # nothing listens: refused at once
        argv = [sys.executable, "-m", "trailblaze", "check", "--remote-cache", url]
        return measure(argv, cwd=where, env=_check_env(**settings), timeout=120), url

    return run


def _check_case(
    mode: str, settings: dict[str, str], *, pace: float
) -> Callable[[Path], tuple[Measured, str]]:
    def run(where: Path) -> tuple[Measured, str]:
        shutil.copytree(ROOT / "trailmaps", where / "trailmaps")
        with HostileHttp(mode, pace=pace) as peer:
            argv = [sys.executable, "-m", "trailblaze", "check", "--remote-cache", peer.url]
            ran = measure(argv, cwd=where, env=_check_env(**settings), timeout=400)
        if peer.errors:
            raise RuntimeError(f"the hostile server {mode} failed: {peer.errors}")
        return ran, peer.url

    return run


def _replay_env(port: int) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANDROID_", "TRAILBLAZE_")) or k == "TRAILBLAZE_TOOLCHAIN_DIR"
    }
    env.update(
        ANDROID_ADB_SERVER_PORT=str(port),
        ADBUTILS_ADB_PATH="/bin/false",  # never start a real adb server
        NO_COLOR="1",
        **{COMMAND_DEADLINE_ENV: str(int(DEADLINE_S * 1000))},
    )
    return env


def _replay(where: Path, port: int) -> Measured:
    (where / "t.trail.yaml").write_text(TRAIL, encoding="utf-8")
    argv = [sys.executable, "-m", "trailblaze", "replay", "t.trail.yaml"]
    return measure(argv, cwd=where, env=_replay_env(port), timeout=120)


def _replay_case(mode: str | None) -> Callable[[Path], tuple[Measured, str]]:
    def run(where: Path) -> tuple[Measured, str]:
        if mode is None:
            with FakeAdbServer(FakeDevice.load(SAMPLE_APP)) as fake:
                return _replay(where, fake.port), f"127.0.0.1:{fake.port}"
        with HostileAdb(mode) as peer:
            ran = _replay(where, peer.port)
        if peer.errors:
            raise RuntimeError(f"the hostile adb server {mode} failed: {peer.errors}")
        return ran, f"127.0.0.1:{peer.port}"

    return run


def cases() -> list[Case]:
    limits = f"deadline {DEADLINE_S:g} s, body {LIMIT_MIB} MiB"
    found = [Case("check", "baseline", "nothing listens", 0.0, _check_baseline(CHECK_SETTINGS))]
    for mode in HTTP_MODES:
        settings, shown, bound, pace = CHECK_SETTINGS, limits, 0.0, 0.5
        if mode == "trickle":
            bound = DEADLINE_S
        if mode == "slow":
            settings = {**CHECK_SETTINGS, BUDGET_ENV: str(int(BUDGET_S * 1000))}
            shown, bound, pace = f"{limits}, budget {BUDGET_S:g} s", BUDGET_S, 1.5
        found.append(Case("check", mode, shown, bound, _check_case(mode, settings, pace=pace)))
    for mode in ("endless", "huge", "bomb", "bomb-files"):
        found.append(Case("check", mode, "defaults", 0.0, _check_case(mode, {}, pace=0.5)))
    found.append(Case("replay", "baseline", "fake device", 0.0, _replay_case(None)))
    command = f"command deadline {DEADLINE_S:g} s"
    for mode in ADB_MODES:
        bound = DEADLINE_S if mode in ("endless", "endless-v1", "trickle") else 0.0
        found.append(Case("replay", mode, command, bound, _replay_case(mode)))
    return found


_SAYS = (
    "trailblaze: warning: remote cache ",
    "trailblaze replay: ",
    "FAILED mobile_",
    "emulator-5554: `",
)


def what_it_said(ran: Measured, peer: str) -> str:
    """The line that says what happened, shortened for a table cell."""
    for raw in (ran.stderr + ran.stdout).splitlines():
        line = raw.strip()
        if line.startswith(_SAYS) and "passed" not in line:
            line = line.removeprefix(f"{_SAYS[0]}{peer}: ").replace(peer, "PEER")
            line = line.removesuffix("; working locally for the rest of this run")
            return (line if len(line) <= 200 else line[:200] + "…").replace("|", "\\|")
    return "(no warning: the report of a local run)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "hostile-peers.md")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    said: dict[str, str] = {}
    baselines: dict[str, float] = {}
    failed = False
    with tempfile.TemporaryDirectory(prefix="hostile-peers-") as tmp:
        for n, case in enumerate(cases()):
            runs = []
            if case.mode == "baseline":  # a first run warms the files and imports all share
                where = Path(tmp) / f"{n}-warm"
                where.mkdir()
                case.run(where)
            for i in range(args.runs):
                where = Path(tmp) / f"{n}-{i}"
                where.mkdir()
                ran, peer = case.run(where)
                runs.append(ran)
                said[f"{case.entry}/{case.mode}/{case.settings}"] = what_it_said(ran, peer)
            row = Row(case, runs)
            if case.mode == "baseline":
                baselines[case.entry] = row.wall
            problems = row.problems(baselines[case.entry])
            failed = failed or bool(problems)
            rows.append(row)
            print(
                f"{case.entry:6} {case.mode:12} {case.settings:40} {row.wall:6.2f} s "
                f"{row.peak:6.0f} MiB exit {sorted(row.codes)} {', '.join(problems)}",
                flush=True,
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(_table(rows, said, baselines, args.runs), encoding="utf-8")
    print(f"wrote {args.out}")
    return 1 if failed else 0


def _table(rows: list[Row], said: dict[str, str], baselines: dict[str, float], runs: int) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    lines = [
        "# Hostile peers: what each costs",
        "",
        f"{stamp}: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; `python -m bench.hostile_peers --runs {runs}`. Wall time "
        "is the median of the runs (each baseline after one unmeasured run), peak RSS the "
        "largest `ru_maxrss` of the entry point's process (`os.wait4`). `check` is `trailblaze check --remote-cache URL` on a fresh copy "
        "of `trailmaps/` (type gate off, so the peak is the check's own); `replay` is "
        "`trailblaze replay` of one `mobile_listInstalledApps` call. The servers are in "
        "`bench/hostile.py`.",
        "",
        "| entry | peer | settings | exit | wall s | past baseline s | peak RSS MiB | what the user sees |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        case = row.case
        codes = ", ".join(str(c) for c in sorted(row.codes))
        extra = row.wall - baselines[case.entry]
        problems = row.problems(baselines[case.entry])
        seen = said[f"{case.entry}/{case.mode}/{case.settings}"]
        if problems:
            seen = f"**{', '.join(problems)}** {seen}"
        lines.append(
            f"| {case.entry} | {case.mode} | {case.settings} | {codes} | {row.wall:.2f} | "
            f"{extra:+.2f} | {row.peak:.0f} | {seen} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
