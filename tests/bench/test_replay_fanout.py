"""bench/replay_fanout.py: one interleaved round on two fake phones, its table and its checks."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from bench.replay_fanout import main as bench_main
from bench.replay_fanout import trails_in


def test_one_round_writes_each_mode_with_the_trails_each_phone_ran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "replay-fanout.md"
    before = dict(os.environ)

    assert bench_main(["--runs", "1", "--out", str(out)]) == 0

    assert dict(os.environ) == before  # the fake server's port does not outlive the bench

    rows = {
        m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
        for m in re.finditer(
            r"^\| ([^|]+) \| [\d.]+ s \| [\d.]+ \| (\d+) \| (\d+) \| (\d+) \|$",
            out.read_text("utf-8"),
            re.MULTILINE,
        )
    }
    assert rows["fanned out (default)"] == (40, 20, 20)
    assert rows["one phone"] == (20, 20, 0)
    runs, first, second = rows["spread (--spread)"]
    assert (runs, first + second) == (20, 20)
    assert first > 0
    assert second > 0
    assert capsys.readouterr().out.startswith("# Replay on two devices: fanned out and spread\n")


def test_a_log_of_interleaved_trails_is_refused() -> None:
    assert trails_in(["getprop ro.product.model", *(["input tap 3 1"] * 3)]) == [3]
    with pytest.raises(SystemExit, match="not whole trails one at a time"):
        trails_in(["input tap 1 1", "input tap 2 1", "input tap 1 1"])
