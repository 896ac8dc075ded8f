"""The subprocess helper, with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.test_rooms import modules_importing, package_copy
from trailblaze.toolchain.proc import (
    ProcCancelled,
    ProcError,
    ProcResult,
    ProcTimeout,
    Spawned,
    run,
    spawn,
)

PY = sys.executable


def _gone(pid: int, within: float = 3.0) -> bool:
    """The process no longer runs (reaped, or a zombie waiting for init to reap it)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def test_output_is_captured() -> None:
    result = run([PY, "-c", "import sys; print('out'); print('err', file=sys.stderr)"], timeout=30)
    assert result == ProcResult(result.argv, 0, "out\n", "err\n", result.duration)
    assert result.argv == (PY, "-c", "import sys; print('out'); print('err', file=sys.stderr)")
    assert result.ok
    assert result.duration > 0


def test_non_zero_exit_is_returned_with_its_output(tmp_path: Path) -> None:
    result = run(
        [PY, "-c", "import os, sys; print(os.getcwd()); sys.exit('failed')"],
        cwd=tmp_path,
        timeout=30,
    )
    assert result.returncode == 1
    assert not result.ok
    assert result.stdout == f"{tmp_path}\n"
    assert result.stderr == "failed\n"


def test_merged_output_keeps_the_order_it_was_printed_in() -> None:
    code = "import sys; print('a', flush=True); print('b', file=sys.stderr, flush=True); print('c')"
    result = run([PY, "-c", code], timeout=30, merge_stderr=True)
    assert (result.stdout, result.stderr) == ("a\nb\nc\n", "")


def test_a_cancelled_run_kills_the_program_at_once() -> None:
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(ProcCancelled) as caught:
        run([PY, "-c", "import time; time.sleep(30)"], timeout=60, cancel=cancel)
    assert time.monotonic() - started < 5
    assert str(caught.value).endswith("was stopped: the run was cancelled")
    # Not cancelled: it runs to the end, input and output kept across the polls.
    code = "import sys, time; time.sleep(0.3); print(sys.stdin.read())"
    done = run([PY, "-c", code], timeout=30, input="kept", cancel=threading.Event())
    assert done.stdout == "kept\n"


def test_env_replaces_the_environment() -> None:
    result = run(
        [PY, "-c", "import os; print(os.environ.get('ONLY'), os.environ.get('HOME'))"],
        env={"ONLY": "this"},
        timeout=30,
    )
    assert result.stdout == "this None\n"


def test_undecodable_output_is_kept_not_fatal() -> None:
    result = run([PY, "-c", "import sys; sys.stdout.buffer.write(b'a\\xffb')"], timeout=30)
    assert result.stdout == "a\ufffdb"


def test_stdin_input_is_passed() -> None:
    result = run(
        [PY, "-c", "import sys; print(sys.stdin.read().upper())"], input="héllo\n", timeout=30
    )
    assert result.stdout == "HÉLLO\n\n"


def test_without_input_stdin_is_empty_so_nothing_waits_for_it() -> None:
    result = run([PY, "-c", "import sys; print(repr(sys.stdin.read()))"], timeout=30)
    assert result.stdout == "''\n"


def test_missing_program_is_a_message(tmp_path: Path) -> None:
    with pytest.raises(ProcError) as info:
        run(["npm", "install"], env={"PATH": str(tmp_path)}, timeout=30)
    assert str(info.value) == "npm not found on PATH: install Node.js 20 and npm"
    with pytest.raises(ProcError) as info:
        run(["no-such-program-trailblaze"], timeout=30)
    assert str(info.value) == "no-such-program-trailblaze not found on PATH"
    with pytest.raises(ProcError) as info:
        run([str(tmp_path / "bin" / "tsc"), "--version"], timeout=30)
    assert str(info.value) == f"{tmp_path / 'bin' / 'tsc'} not found"


def test_a_file_that_cannot_be_executed_is_a_message(tmp_path: Path) -> None:
    script = tmp_path / "tsc"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(ProcError, match=r"^cannot run .*tsc: Permission denied$"):
        run([str(script)], timeout=30)


def test_a_command_string_is_refused() -> None:
    with pytest.raises(
        TypeError, match=r"^run\(\) takes a list of arguments, not a command string$"
    ):
        run("echo hi", timeout=30)


def test_timeout_kills_the_process_group_and_keeps_partial_output() -> None:
    # The sleep is a grandchild: killing only the shell would leave it running.
    start = time.monotonic()
    with pytest.raises(ProcTimeout) as info:
        run(["sh", "-c", "sleep 30 & echo $!; echo waiting >&2; wait"], timeout=0.5)
    elapsed = time.monotonic() - start
    assert elapsed < 5
    error = info.value
    pid = int(error.stdout.split()[0])
    assert _gone(pid), f"sleep {pid} survived the timeout"
    assert error.stderr == "waiting\n"
    assert error.timeout == 0.5
    assert 0.5 <= error.duration < 5
    assert (
        str(error)
        == "sh -c 'sleep 30 & echo $!; echo waiting >&2; wait' timed out after 0.5 s and was killed"
    )
    assert isinstance(error, ProcError)


def test_timeout_of_a_direct_child() -> None:
    start = time.monotonic()
    with pytest.raises(ProcTimeout):
        run(["sleep", "30"], timeout=0.2)
    assert time.monotonic() - start < 5


def test_ctrl_c_kills_the_children_then_propagates(tmp_path: Path) -> None:
    # A real SIGINT into a real Python process that is waiting in run().
    pidfile = tmp_path / "pid"
    script = textwrap.dedent(
        f"""
        from trailblaze.toolchain.proc import run
        try:
            run(["sh", "-c", "echo $$ > {pidfile}; exec sleep 30"], timeout=60)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            raise SystemExit(130)
        """
    )
    parent = subprocess.Popen(
        [PY, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 20
        while not (pidfile.exists() and pidfile.read_text().strip()):
            assert time.monotonic() < deadline, "the child never started"
            time.sleep(0.02)
        child = int(pidfile.read_text())
        parent.send_signal(signal.SIGINT)
        out, err = parent.communicate(timeout=20)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    assert (parent.returncode, out) == (130, "interrupted\n"), err
    assert _gone(child), f"sleep {child} survived ^C"


def test_pid_helper_sees_a_live_process() -> None:
    # Guards the helper the kill tests rely on: it must not call a running process gone.
    with subprocess.Popen(["sleep", "30"]) as sleeper:
        try:
            assert not _gone(sleeper.pid, within=0.1)
        finally:
            os.kill(sleeper.pid, signal.SIGKILL)


def _child_of(parent: int, within: float = 30.0) -> int:
    """The pid of `parent`'s one child, once it has started."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == parent:
                return int(entry)
        time.sleep(0.02)
    raise AssertionError(f"process {parent} started no child within {within} s")


PARENT = """\
import sys
from trailblaze.toolchain.proc import run
run(sys.argv[1:], timeout=300)
"""


def _settle(pid: int, within: float = 60.0) -> None:
    """Wait until the process has used no CPU for a second: idle, waiting for something."""
    deadline = time.monotonic() + within
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        used = int(fields[11]) + int(fields[12])  # utime + stime
        if used != last:
            last, since = used, time.monotonic()
        elif time.monotonic() - since >= 1.0:
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} never went idle")


def kill_parent_of(
    argv: list[str], cwd: Path | None = None, *, settle: bool = False
) -> tuple[int, str]:
    """Run `argv` through `proc.run` in a parent process, kill -9 that parent once the child
    runs (with `settle`: once it idles), and return the child's pid and its program."""
    parent = subprocess.Popen([PY, "-c", PARENT, *argv], cwd=cwd)
    try:
        child = _child_of(parent.pid)
        time.sleep(0.2)  # past exec: the child is the program, not a fork of the parent
        if settle:
            _settle(child)
        program = os.readlink(f"/proc/{child}/exe")
    finally:
        parent.kill()
        parent.wait()
    return child, program


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_dies_with_its_parent_killed_with_sigkill() -> None:
    # The child has its own session, out of reach of anything sent to the parent's group; a
    # parent killed with SIGKILL runs no cleanup. The kernel kills the child (PDEATHSIG).
    child, program = kill_parent_of([PY, "-c", "import time; time.sleep(120)"])
    assert os.path.samefile(program, PY)
    assert _gone(child), "the child of a killed parent still runs"


# -- spawn: a program that lives on, with pipes ---------------------------------------------

ECHO = """\
import sys
print("ready", file=sys.stderr, flush=True)
for line in sys.stdin:
    sys.stdout.write(line.upper())
    sys.stdout.flush()
print("bye", file=sys.stderr, flush=True)
"""


def _read_line(fd: int, within: float = 20.0) -> bytes:
    data = b""
    deadline = time.monotonic() + within
    while not data.endswith(b"\n"):
        assert time.monotonic() < deadline, f"no line within {within} s: {data!r}"
        chunk = os.read(fd, 1024)
        assert chunk, f"end of output after {data!r}"
        data += chunk
    return data


def test_a_spawned_program_talks_over_its_pipes_and_ends_when_its_stdin_closes(
    tmp_path: Path,
) -> None:
    with spawn([PY, "-c", ECHO], cwd=tmp_path, env={**os.environ, "ONLY": "x"}) as child:
        assert child.argv == (PY, "-c", ECHO)
        assert child.stderr.readline() == b"ready\n"
        child.stdin.write(b"hello\n")  # unbuffered: no flush needed
        assert _read_line(child.stdout.fileno()) == b"HELLO\n"
        assert child.poll() is None
        assert child.wait(0.1) is None  # still running: no hang, no status
        assert child.close(grace=20) == 0
        assert child.stderr.read() == b"bye\n"


def test_a_spawned_program_has_a_session_of_its_own() -> None:
    # A signal to our process group (the terminal's ^C) is ours to handle, not the child's.
    with spawn(["sleep", "30"]) as child:
        assert os.getsid(child.pid) == os.getpgid(child.pid) == child.pid
        assert os.getpgid(child.pid) != os.getpgid(0)
        assert child.kill() == -signal.SIGKILL


def test_kill_reaches_everything_the_program_started_and_does_not_hang() -> None:
    with spawn(["sh", "-c", "sleep 30 & echo $!; wait"]) as child:
        grandchild = int(_read_line(child.stdout.fileno()))
        started = time.monotonic()
        assert child.kill() == -signal.SIGKILL
        assert time.monotonic() - started < 5
        assert _gone(grandchild), f"sleep {grandchild} survived the kill"
        assert child.kill() == -signal.SIGKILL  # again: nothing to do, the same status


def test_close_kills_a_program_that_does_not_end_when_its_stdin_closes() -> None:
    with spawn([PY, "-c", "import time; time.sleep(30)"]) as child:
        started = time.monotonic()
        assert child.close(grace=0.3) == -signal.SIGKILL
        assert 0.3 <= time.monotonic() - started < 5
        assert child.close(grace=0.3) == -signal.SIGKILL  # closing again is harmless


def test_spawn_refuses_what_run_refuses(tmp_path: Path) -> None:
    with pytest.raises(ProcError) as info:
        spawn(["node", "host.cjs"], env={"PATH": str(tmp_path)})
    assert str(info.value) == "node not found on PATH: install Node.js 20 and npm"
    with pytest.raises(ProcError) as info:
        spawn([str(tmp_path / "bin" / "node")])
    assert str(info.value) == f"{tmp_path / 'bin' / 'node'} not found"
    script = tmp_path / "node"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(ProcError, match=r"^cannot run .*node: Permission denied$"):
        spawn([str(script)])
    with pytest.raises(TypeError, match=r"^spawn\(\) takes a list of arguments"):
        spawn("node host.cjs")


INTERRUPTED = """\
import sys, time
from trailblaze.toolchain.proc import spawn
child = spawn(["sleep", "60"])
child.close_pipes()
try:
    # The pid is printed inside the try: the ^C may come before print returns.
    print(child.pid, flush=True)
    time.sleep(60)
except KeyboardInterrupt:
    # The ^C came to us (our group), not to the child: it is ours to end.
    print("running" if child.poll() is None else "gone", flush=True)
    raise SystemExit(child.kill())
"""


def test_ctrl_c_is_the_owners_to_handle_and_kill_reaches_the_child() -> None:
    parent = subprocess.Popen(
        [PY, "-c", INTERRUPTED], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        os.killpg(parent.pid, signal.SIGINT)  # as a terminal sends ^C: to the whole group
        out, _ = parent.communicate(timeout=20)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    assert out == "running\n"
    assert parent.returncode == 256 - signal.SIGKILL  # SystemExit(-9)
    assert _gone(child)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_spawned_program_dies_with_its_parent_killed_with_sigkill() -> None:
    script = "import sys, time\nfrom trailblaze.toolchain.proc import spawn\n"
    script += "spawn(sys.argv[1:])\ntime.sleep(300)\n"
    parent = subprocess.Popen([PY, "-c", script, "sleep", "120"])
    try:
        child = _child_of(parent.pid)
    finally:
        parent.kill()
        parent.wait()
    assert _gone(child), "the spawned child of a killed parent still runs"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_spawned_program_dies_with_the_thread_that_spawned_it() -> None:
    # What `spawn` warns of: the kernel's parent-death signal follows the spawning thread.
    spawned: list[Spawned] = []
    thread = threading.Thread(target=lambda: spawned.append(spawn(["sleep", "30"])))
    thread.start()
    thread.join()
    (child,) = spawned
    with child:
        assert child.wait(10) == -signal.SIGKILL


# -- no other module starts a program -------------------------------------------------------


def test_only_the_subprocess_helper_imports_subprocess() -> None:
    assert modules_importing("subprocess") == ["trailblaze.toolchain.proc"]


@pytest.mark.parametrize(
    "plant",
    [
        ("replay/scripted/child.py", "import subprocess\n"),
        ("cli/main.py", "def later():\n    from subprocess import run\n"),
    ],
)
def test_a_planted_subprocess_import_is_found(tmp_path: Path, plant: tuple[str, str]) -> None:
    found = modules_importing("subprocess", package_copy(tmp_path, plant))
    module = "trailblaze." + plant[0].removesuffix(".py").replace("/", ".")
    assert found == sorted(["trailblaze.toolchain.proc", module])
