"""The one subprocess helper: every external program (npm, node, tsc, ...) is started here.

`run` runs a program to its end; `spawn` starts one that lives on (a Node child serving requests
on its pipes) and returns a `Spawned` handle. List arguments only, never a shell. A missing
program is a `ProcError` whose message names it. `run` always captures and returns stdout and
stderr, a timeout kills the child's whole process group and raises `ProcTimeout` with what was
captured so far, and ^C kills the children before the `KeyboardInterrupt` goes on; a `Spawned`
program is the caller's to end (`close`, `kill`), and neither that nor `wait` can hang.

Every child is started in a session (and process group) of its own, so that a kill reaches
everything it started, and a signal meant for us (the terminal's ^C) is ours to handle. On
Linux a child also dies with the process that started it, however that died (`kill -9`
included): the kernel sends it SIGKILL (`PR_SET_PDEATHSIG`).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

logger = logging.getLogger(__name__)

# What to tell a user whose PATH lacks a program we know; anything else gets the bare message.
_INSTALL_HINTS = {
    "npm": "install Node.js 20 and npm",
    "node": "install Node.js 20 and npm",
}

# After SIGTERM on ^C, how long the children get to clean up before SIGKILL.
_TERMINATE_GRACE = 2.0
# After SIGKILL, how long we wait for the pipes to drain; a grandchild that left the process
# group could hold them open forever.
_DRAIN_TIMEOUT = 5.0


@dataclass(frozen=True, slots=True)
class ProcResult:
    """A finished program: its exit code and everything it printed (decoded as UTF-8)."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    duration: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class ProcError(Exception):
    """A program could not be run, or not to the end."""


class ProcTimeout(ProcError):
    """The program outlived its timeout and was killed; carries the output captured until then."""

    def __init__(
        self, argv: tuple[str, ...], timeout: float, stdout: str, stderr: str, duration: float
    ) -> None:
        super().__init__(f"{shlex.join(argv)} timed out after {timeout:g} s and was killed")
        self.argv = argv
        self.timeout = timeout
        self.stdout = stdout
        self.stderr = stderr
        self.duration = duration


def run(
    argv: Sequence[str],
    *,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float,
    input: str | None = None,
    merge_stderr: bool = False,
    cancel: threading.Event | None = None,
) -> ProcResult:
    """Run `argv` to completion; a non-zero exit is returned, not raised.

    `env` replaces the environment (and its PATH is the one searched); `input` is written to
    stdin, otherwise stdin is empty so a program that asks a question cannot hang the build.
    `merge_stderr` sends stderr into stdout, interleaved as printed (`stderr` is then empty).
    `cancel` set while it runs kills it, as a timeout does, and raises `ProcCancelled`.
    """
    args = _arguments(argv, "run")
    logger.debug("run: %s", shlex.join(args))
    start = time.monotonic()
    proc = _start(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
    )
    payload = input.encode("utf-8") if input is not None else None
    try:
        out, err = _communicate(proc, payload, timeout, cancel)
    except _Cancelled:
        _kill_group(proc, signal.SIGKILL)
        _drain(proc)
        raise ProcCancelled(f"{shlex.join(args)} was stopped: the run was cancelled") from None
    except subprocess.TimeoutExpired:
        _kill_group(proc, signal.SIGKILL)
        out, err = _drain(proc)
        raise ProcTimeout(
            args, timeout, _decode(out), _decode(err), time.monotonic() - start
        ) from None
    except KeyboardInterrupt:
        logger.debug("interrupted: stopping %s", shlex.join(args))
        _stop(proc)
        raise
    except BaseException:
        _kill_group(proc, signal.SIGKILL)
        _drain(proc)
        raise
    duration = time.monotonic() - start
    logger.debug("exit %s after %.3f s: %s", proc.returncode, duration, args[0])
    return ProcResult(args, proc.returncode, _decode(out), _decode(err), duration)


class Spawned:
    """A program `spawn` started, which lives until it ends by itself or is ended.

    `stdin`, `stdout` and `stderr` are pipes to it, unbuffered (bytes written to `stdin` go
    out at once; `os.read` on `stdout.fileno()` sees what it wrote). Closing them is the
    caller's business, once it is done reading (a thread draining `stderr`, say):
    `close_pipes`, or the end of a `with` block, which kills the program first. `wait`,
    `close` and `kill` never hang: each waits a bounded time.
    """

    def __init__(self, argv: tuple[str, ...], process: subprocess.Popen[bytes]) -> None:
        stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
        if stdin is None or stdout is None or stderr is None:
            raise ValueError("a spawned program has a pipe to each of its standard streams")
        self.argv = argv
        self.stdin: IO[bytes] = stdin
        self.stdout: IO[bytes] = stdout
        self.stderr: IO[bytes] = stderr
        self._process = process

    def __enter__(self) -> Spawned:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
        self.close_pipes()

    @property
    def pid(self) -> int:
        """Its process id, which is also its process group's and session's."""
        return self._process.pid

    def poll(self) -> int | None:
        """Its exit status once it has ended (killed by a signal: minus its number), else None."""
        return self._process.poll()

    def wait(self, timeout: float) -> int | None:
        """Its exit status, waiting at most `timeout` seconds for it; None while it runs on."""
        try:
            return self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> int | None:
        """SIGKILL to it and to everything it started (its process group), and its exit
        status; None only when even that did not end it within a few seconds (a process stuck
        in the kernel), rather than waiting on forever."""
        if self._process.returncode is None:
            # Not reaped yet, so its id is still its group's (a reaped one's may be reused).
            _kill_group(self._process, signal.SIGKILL)
        return self.wait(_DRAIN_TIMEOUT)

    def close(self, grace: float) -> int | None:
        """End it the polite way: its stdin is closed (a program serving requests read from it
        then exits by itself), and it is killed with its group when it has not ended within
        `grace` seconds. Its exit status, as `kill` gives it."""
        reaped = self._process.returncode is not None
        with contextlib.suppress(OSError):
            self.stdin.close()
        ended = self.wait(grace)
        if ended is not None:
            if not reaped:
                # Ended by itself just now: what it started in its group, if anything, goes too.
                _kill_group(self._process, signal.SIGKILL)
            return ended
        logger.debug("%s did not end within %g s: killed", shlex.join(self.argv), grace)
        return self.kill()

    def close_pipes(self) -> None:
        """Close our end of each of its pipes (once nothing reads them any more)."""
        for stream in (self.stdin, self.stdout, self.stderr):
            with contextlib.suppress(OSError):
                stream.close()


def spawn(
    argv: Sequence[str],
    *,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Spawned:
    """Start `argv` with pipes to its stdin, stdout and stderr, and return at once.

    As for `run`: list arguments, `env` replaces the environment (its PATH is the one
    searched), a missing program is a `ProcError` that names it, and the program has a
    session of its own. On Linux the kernel kills it when the *thread* that spawned it ends
    (that is how `PR_SET_PDEATHSIG` works), so spawn it from the thread that uses it, as replay
    does (one Node child per replay thread), not from a short-lived helper thread.
    """
    args = _arguments(argv, "spawn")
    logger.debug("spawn: %s", shlex.join(args))
    # Unbuffered: a request written is sent at once, and a reader may select() on stdout.
    process = _start(
        args, cwd=cwd, env=env, stdin=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
    )
    return Spawned(args, process)


def _arguments(argv: Sequence[str], caller: str) -> tuple[str, ...]:
    if isinstance(argv, str):
        raise TypeError(f"{caller}() takes a list of arguments, not a command string")
    args = tuple(str(arg) for arg in argv)
    if not args:
        raise ValueError(f"{caller}() needs a program to run")
    return args


def _start(
    args: tuple[str, ...],
    *,
    cwd: str | Path | None,
    env: Mapping[str, str] | None,
    stdin: int,
    stderr: int,
    bufsize: int = -1,
) -> subprocess.Popen[bytes]:
    """`args` started as every child of ours is: stdout a pipe, a session of its own, dying
    with its parent; a `ProcError` when it cannot start."""
    executable = _resolve(args[0], env)
    try:
        return subprocess.Popen(
            args,
            executable=executable,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=stderr,
            bufsize=bufsize,
            # Its own process group, so a timeout or ^C can kill everything it started (npm
            # runs scripts, the tsc wrapper runs the native binary), not only the direct child.
            start_new_session=True,
            # Its own session is out of reach of a signal to ours: without this, a compiler
            # whose parent was killed with SIGKILL would run on (`tsc --watch`: forever).
            # Safe with threads: the child only calls a C function resolved before the fork
            # (no import, no lock, nothing another thread could have held).
            preexec_fn=_die_with_parent(),  # noqa: PLW1509
        )
    except OSError as exc:
        raise ProcError(f"cannot run {args[0]}: {exc.strerror or exc}") from exc


class ProcCancelled(ProcError):
    """The caller's `cancel` event was set while the program ran; it was killed."""


class _Cancelled(Exception):
    pass


#: How often a run that can be cancelled looks at its event.
_CANCEL_POLL = 0.1


def _communicate(
    proc: subprocess.Popen[bytes],
    payload: bytes | None,
    timeout: float,
    cancel: threading.Event | None,
) -> tuple[bytes, bytes]:
    """`communicate`, in slices when `cancel` is given (a retry loses no output)."""
    if cancel is None:
        return proc.communicate(payload, timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        if cancel.is_set():
            raise _Cancelled
        left = deadline - time.monotonic()
        try:
            return proc.communicate(payload, timeout=max(0.0, min(left, _CANCEL_POLL)))
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise
        payload = None  # sent by the first call; a retry may not send it again


_PR_SET_PDEATHSIG = 1
_PR_GET_PDEATHSIG = 2


def _load_prctl() -> Callable[..., int] | None:
    """libc's `prctl`, resolved (and called once) in the parent: the child, between fork and
    exec, then only makes the call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, *[ctypes.c_ulong] * 4]
    function.restype = ctypes.c_int
    prctl: Callable[..., int] = function
    current = ctypes.c_int()
    if prctl(_PR_GET_PDEATHSIG, ctypes.addressof(current), 0, 0, 0) != 0:
        return None
    return prctl


_PRCTL = _load_prctl()


def _die_with_parent() -> Callable[[], None] | None:
    """What the child runs before exec: SIGKILL when the parent dies (Linux), or nothing.

    The signal comes when the thread that started the child ends; `run` waits for its child
    in that thread, so it is the process's death that counts. A parent that died before the
    call is noticed by the child's parent id changing: the child then ends at once.
    """
    prctl = _PRCTL
    if prctl is None:
        return None
    parent = os.getpid()
    kill = int(signal.SIGKILL)

    def die_with_parent() -> None:
        prctl(_PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return die_with_parent


def _resolve(program: str, env: Mapping[str, str] | None) -> str:
    """The executable to start, or a `ProcError` that names the missing program."""
    if os.sep in program or (os.altsep is not None and os.altsep in program):
        if not Path(program).is_file():
            raise ProcError(f"{program} not found")
        return program
    path = env.get("PATH", os.defpath) if env is not None else None
    found = shutil.which(program, path=path)
    if found is None:
        hint = _INSTALL_HINTS.get(program)
        message = f"{program} not found on PATH"
        raise ProcError(f"{message}: {hint}" if hint else message)
    return found


def _kill_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    # The group id is the child's pid (start_new_session); the group can outlive the child.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """^C: ask the whole group to stop, then kill it if it does not."""
    _kill_group(proc, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=_TERMINATE_GRACE)
    _kill_group(proc, signal.SIGKILL)
    _drain(proc)


def _drain(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Collect what the killed child wrote (communicate keeps output across a timeout)."""
    try:
        return proc.communicate(timeout=_DRAIN_TIMEOUT)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        # Something outside the group holds the pipes open; give up on the rest of its output
        # rather than hang. ValueError/OSError: the pipes were already closed.
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=_DRAIN_TIMEOUT)
        return b"", b""


def _decode(data: bytes | None) -> str:
    # Compilers and npm print UTF-8; a stray byte must not turn a diagnostic into a crash.
    return data.decode("utf-8", errors="replace") if data else ""
