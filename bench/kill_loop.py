"""The kill -9 loop: `trailblaze check` killed at random points, then run again.

    python -m bench.kill_loop [--trails 600] [--kills 20] [--seed 1] [--work bench/out/kill-loop]

On a generated workspace (`bench.generate`, with its planted errors), a clean cold check gives
the reference report (`--format json`). Then, `--kills` times: a check is started (half of the
times from nothing: no state, no cache, no generated modules; else on what the last runs left),
killed with SIGKILL at a random point of such a run's duration (a run that finishes first is
not a kill; the loop goes on until `--kills` runs were killed), and every process it started
(parse workers, the compiler) must be gone within `--grace` seconds. Then the check runs again
to the end, and its report must be the reference report, byte for byte.

The processes of one check are found by a token in their environment, which every descendant
inherits. The figures are printed and written to `<work>/kill-loop.json`; the exit status is 1
when any rerun differed or any process was left over.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.generate import Spec, ensure

TOKEN_ENV = "TRAILBLAZE_KILL_LOOP_TOKEN"


def descendants(token: str) -> list[int]:
    """Live processes (not zombies) whose environment holds `TOKEN_ENV=token`."""
    marker = f"{TOKEN_ENV}={token}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in environ.split(b"\0") and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def start(ws: Path, token: str, *, keep_output: bool) -> subprocess.Popen[bytes]:
    env = {**os.environ, TOKEN_ENV: token, "NO_COLOR": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "trailblaze", "check", str(ws), "--format", "json"],
        # A run to be killed writes nowhere: a full pipe nobody reads would stop it early.
        stdout=subprocess.PIPE if keep_output else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def complete_run(ws: Path) -> tuple[bytes, float]:
    token = uuid.uuid4().hex
    began = time.monotonic()
    proc = start(ws, token, keep_output=True)
    out, _ = proc.communicate(timeout=600)
    return out, time.monotonic() - began


def wait_gone(token: str, grace: float) -> tuple[float, int]:
    """Seconds until no process of `token` is left (or `grace`), and how many were left then."""
    began = time.monotonic()
    while True:
        left = descendants(token)
        waited = time.monotonic() - began
        if not left or waited >= grace:
            return waited, len(left)
        time.sleep(0.02)


def loop(ws: Path, kills: int, seed: int, grace: float) -> dict[str, Any]:
    rng = random.Random(seed)
    scratch = ws / ".trailblaze"
    shutil.rmtree(scratch, ignore_errors=True)
    reference, cold = complete_run(ws)
    report = json.loads(reference)
    # How long a run of each kind lasts, to kill it at a random point of it.
    duration = {True: cold, False: cold}
    rounds: list[dict[str, Any]] = []
    killed = 0
    while killed < kills and len(rounds) < 3 * kills:
        fresh = len(rounds) % 2 == 0
        if fresh:
            shutil.rmtree(scratch, ignore_errors=True)
        delay = rng.uniform(0.0, 0.9) * duration[fresh]
        token = uuid.uuid4().hex
        began = time.monotonic()
        proc = start(ws, token, keep_output=False)
        started = 0
        try:
            proc.wait(timeout=delay)
            finished = True
            duration[fresh] = time.monotonic() - began
        except subprocess.TimeoutExpired:
            finished = False
            started = len(descendants(token))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            killed += 1
        gone_after, left = wait_gone(token, grace) if not finished else (0.0, 0)
        again, seconds = complete_run(ws)
        rounds.append(
            {
                "round": len(rounds) + 1,
                "from_nothing": fresh,
                "killed_at_s": None if finished else round(delay, 3),
                "processes_at_the_kill": started,
                "all_gone_after_s": round(gone_after, 3),
                "left_over": left,
                "rerun_s": round(seconds, 3),
                "rerun_identical": again == reference,
            }
        )
        print(json.dumps(rounds[-1]), flush=True)
    return {
        "trails": len(report["trails"]),
        "findings": len(report["findings"]),
        "exit_code": report["exit_code"],
        "cold_s": round(cold, 3),
        "kills": killed,
        "reruns": len(rounds),
        "reruns_identical": sum(r["rerun_identical"] for r in rounds),
        "left_over": sum(r["left_over"] for r in rounds),
        "slowest_exit_s": max((r["all_gone_after_s"] for r in rounds), default=0.0),
        "most_processes_at_a_kill": max((r["processes_at_the_kill"] for r in rounds), default=0),
        "rounds": rounds,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trails", type=int, default=600)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--grace", type=float, default=10.0)
    parser.add_argument("--work", type=Path, default=Path("bench/out/kill-loop"))
    args = parser.parse_args(argv)
    ws = args.work.absolute() / f"ws-{args.trails}"
    ensure(ws, Spec(trails=args.trails))
    result = loop(ws, args.kills, args.seed, args.grace)
    summary = {k: v for k, v in result.items() if k != "rounds"}
    print(json.dumps(summary, indent=1))
    (args.work / "kill-loop.json").write_text(json.dumps(result, indent=1) + "\n")
    ok = (
        result["kills"] == args.kills
        and result["reruns_identical"] == result["reruns"]
        and result["left_over"] == 0
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
