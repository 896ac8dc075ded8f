"""kill -9 of a check: its parse workers die with it, and the next run's report is a clean run's.

The full loop (twenty kills at random points) is `python -m bench.kill_loop`; this kills once, at
the point that used to leave workers behind: while they parse.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
import uuid
from pathlib import Path

import pytest

from bench.generate import Spec, generate
from bench.kill_loop import complete_run, descendants, start, wait_gone
from tests.toolchain.test_proc import _gone, kill_parent_of
from trailblaze.check.workers import PARALLEL_MIN
from trailblaze.toolchain.compilers import Compiler

pytestmark = [pytest.mark.usefixtures("tsc"), pytest.mark.slow]


def test_workers_die_with_a_killed_check_and_the_rerun_matches_a_clean_run(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    generate(ws, Spec(trails=PARALLEL_MIN + 64, seed=5))
    reference, _ = complete_run(ws)
    shutil.rmtree(ws / ".trailblaze")

    token = uuid.uuid4().hex
    check = start(ws, token, keep_output=False)
    deadline = time.monotonic() + 60
    while len(descendants(token)) < 3 and check.poll() is None:  # the check and two workers
        assert time.monotonic() < deadline, "the parse workers never started"
        time.sleep(0.01)
    assert check.poll() is None, "the check finished before its workers were seen"
    check.send_signal(signal.SIGKILL)
    check.wait()
    waited, left = wait_gone(token, grace=5.0)
    assert left == 0, f"{left} process(es) of the killed check still run after {waited:.1f} s"
    assert waited < 2.0

    again, _ = complete_run(ws)
    assert again == reference


def test_trailblaze_jobs_beyond_the_work_forks_one_worker_per_chunk(tmp_path: Path) -> None:
    """A fork pool starts all its workers at once: `TRAILBLAZE_JOBS=100000` forked that many."""
    ws = tmp_path / "ws"
    generate(ws, Spec(trails=PARALLEL_MIN + 64, seed=5))  # five chunks of 64
    token = uuid.uuid4().hex
    env = {**os.environ, "TRAILBLAZE_JOBS": "40"}  # enough to see, few enough to be harmless
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        check = start(ws, token, keep_output=False)
        most = 0
        while check.poll() is None:
            most = max(most, len(_pythons(descendants(token))))
            time.sleep(0.005)
    assert check.returncode in (0, 1)
    # The check and its five workers, and a few compilers caught between fork and exec (when
    # they are still the check's image); before, all 40 workers.
    assert 3 <= most <= 1 + 5 + 4, most


def _pythons(pids: list[int]) -> list[int]:
    """The check's own processes among `pids`: the check and its forked workers."""
    found = []
    for pid in pids:
        try:
            if b"trailblaze" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


def test_the_compiler_dies_with_a_killed_parent(tsc: Compiler, tmp_path: Path) -> None:
    # `--watch` never ends by itself: once it idles, watching, nothing but the kernel's
    # PR_SET_PDEATHSIG (set by proc.run in the child) stops it when the process that started
    # it is killed with SIGKILL (a write to the dead parent's pipe would, but it writes none).
    (tmp_path / "a.ts").write_text("const a: number = 1;\n")
    (tmp_path / "tsconfig.json").write_text(
        '{"compilerOptions": {"noEmit": true}, "files": ["a.ts"]}'
    )
    argv = [*tsc.argv_prefix, "--watch", "-p", str(tmp_path)]
    child, program = kill_parent_of(argv, cwd=tmp_path, settle=True)
    assert os.path.samefile(program, argv[0])  # the compiler itself (the native binary)
    assert _gone(child), "tsc still runs after its parent was killed"
