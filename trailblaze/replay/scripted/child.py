"""One Node child process (``data/scripting/host.cjs``) and the JSON lines on its pipes.

A child serves one replay thread: every scripted tool that thread runs, one invocation after
another, and the invocations nested in them (a tool's ``ctx.tools`` call that is itself a
scripted tool runs in the same child while its caller waits). Messages about an invocation
carry its id; reading for one invocation keeps the others' messages for when they read.

The child is given a new *session* when the trail it serves changes (``session_for``), so a
trail's calls share their modules' state and the next trail starts from fresh modules. A child
that exits, is killed, or stops answering is gone: ``ChildGone`` says why, and the next call
gets a new child. The process is ``toolchain.proc``'s (``spawn``): in a session of its own, so
that a kill reaches whatever it started and the terminal's Ctrl-C is the replay's to handle
(it stops at the next tool boundary), and dying with the thread that started it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from trailblaze.toolchain.proc import spawn

logger = logging.getLogger(__name__)

_STDERR_LINES = 200
_EXIT_WAIT = 2.0
"""Seconds a child that closed its stdout gets to exit before it is killed."""


class ChildGone(Exception):
    """The child cannot answer any more (it exited, was stopped, or stayed silent too long)."""


class NodeChild:
    """A running ``node host.cjs``. Used by one thread (the one that starts it: the child
    dies with it); ``close`` may come from another. Raises ``ProcError`` when it cannot start."""

    def __init__(
        self, argv: list[str], *, cwd: Path, env: Mapping[str, str], hello: dict[str, Any]
    ) -> None:
        self._process = spawn(argv, cwd=cwd, env=env)
        self._buffer = b""
        self._stash: dict[int, deque[dict[str, Any]]] = {}
        self._active: set[int] = set()
        self._ids = 0
        self._lock = threading.Lock()
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self._stopped: str | None = None
        self._session_owner: object | None = None
        self.sessions = 0
        """How many sessions (trails) it has served."""
        self._reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._reader.start()
        self.send(hello)

    @property
    def alive(self) -> bool:
        return self._stopped is None and self._process.poll() is None

    def next_id(self) -> int:
        """The id of a new invocation; its messages are kept for it until ``forget``."""
        self._ids += 1
        self._active.add(self._ids)
        return self._ids

    def session_for(self, owner: object) -> int:
        """The session of the trail ``owner`` stands for (its memory): a new one when it changed.

        The owner is held, so no other trail's object can take its identity while it is current.
        """
        if owner is not self._session_owner:
            self._session_owner = owner
            self.sessions += 1
        return self.sessions

    def send(self, message: dict[str, Any]) -> None:
        stdin = self._process.stdin
        data = (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            stdin.write(data)
            stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass  # it exited; the next receive says why

    def receive(
        self, invocation: int, *, timeout: float, check: Callable[[], None]
    ) -> dict[str, Any]:
        """The next message for ``invocation`` (or one for none: a crash).

        ``check`` runs between reads (the run's cancellation); ``ChildGone`` when the child
        exits or says nothing for ``invocation`` within ``timeout`` seconds.
        """
        queued = self._stash.get(invocation)
        if queued:
            return queued.popleft()
        fd = self._process.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                while (newline := self._buffer.find(b"\n")) >= 0:
                    line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
                    message = _parse(line)
                    if message is None:
                        continue
                    owner = message.get("id")
                    if owner is None or owner == invocation:
                        return message
                    if owner in self._active:
                        self._stash.setdefault(owner, deque()).append(message)
                    # else: a finished invocation's late words (a log line of a promise it
                    # left running): nobody reads them any more.
                check()
                if self._stopped is not None:
                    raise ChildGone(self._stopped)
                left = deadline - time.monotonic()
                if left <= 0:
                    self.kill(f"it did not answer within {timeout:g} s, so it was stopped")
                    raise ChildGone(f"it did not answer within {timeout:g} s, so it was stopped")
                if not selector.select(min(left, 0.1)):
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    # Its stdout closed: it is ending (or, if it lives on, no use any more).
                    code = self._process.wait(_EXIT_WAIT)
                    if code is None:
                        code = self._process.kill()
                    check()
                    self._stopped = f"node exited ({_exit(code)}) before it returned"
                    raise ChildGone(self._stopped)
                self._buffer += chunk

    def forget(self, invocation: int) -> None:
        """A finished invocation: what is left of its messages, and what comes later, is dropped."""
        self._active.discard(invocation)
        self._stash.pop(invocation, None)

    def stderr_tail(self, count: int = 5) -> list[str]:
        """The last lines the child itself (not a tool) wrote to stderr."""
        time.sleep(0.05)  # let the reader catch the last lines of a child that just died
        with self._lock:
            return [line for line in self._stderr if line.strip()][-count:]

    def kill(self, why: str) -> None:
        """Stop the child at once; a thread still reading from it gets ``ChildGone(why)``."""
        if self._stopped is None:
            self._stopped = why
        self._process.kill()
        self._close_pipes()

    def close(self, *, grace: float = 2.0) -> None:
        """End the child: its stdin closes, so it exits by itself; killed if it does not."""
        if self._stopped is None:
            self._stopped = "the replay run ended"
        self._process.close(grace)
        self._close_pipes()

    def _close_pipes(self) -> None:
        """Once it has ended: its pipes closed, the stderr reader given time to finish first."""
        for stream in (self._process.stdin, self._process.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        self._reader.join(timeout=2)
        with contextlib.suppress(OSError):
            self._process.stderr.close()

    def _drain_stderr(self) -> None:
        stderr = self._process.stderr
        with contextlib.suppress(OSError, ValueError):
            for raw in stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                with self._lock:
                    self._stderr.append(line)
                logger.info("[node] %s", line)


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        parsed = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _exit(code: int | None) -> str:
    if code is None:
        return "status unknown: it would not be reaped"
    return f"killed by signal {-code}" if code < 0 else f"exit {code}"
