"""One remote-cache warning for a whole doit run, across the worker processes of `doit -n N`.

Each process keeps its own `monorepo.SharedRemote`; the workers a doit run forks share the
run's identity (`RUN`, taken when this module loads: `doit_tasks.actions` imports it as doit loads
the tasks, in the main process), and the first of them to warn creates a marker file named by
it (`O_EXCL`: exactly one can). The main process removes the marker when it exits. Spawned
workers (another start method) have identities of their own: each warns once, as before.

It imports nothing of the package.
"""

from __future__ import annotations

import atexit
import os
import time
from pathlib import Path

Run = tuple[int, int]
"""(the pid of the run's main process, when it loaded the tasks in ns)."""


def warned_marker(run: Run) -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    # Not `tempfile.gettempdir()`: `tempfile` costs doit's no-op its import.
    return Path(os.environ.get("TMPDIR") or "/tmp") / f"trailblaze-warned-{uid}-{run[0]}-{run[1]}"


def first_to_warn(run: Run | None) -> bool:
    """Whether this process is the run's first to warn (True in the main process, and when the
    marker cannot be made: a warning too many beats a warning lost)."""
    if run is None or os.getpid() == run[0]:
        return True
    try:
        fd = os.open(warned_marker(run), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return False
    except OSError:
        return True
    os.close(fd)
    return True


RUN: Run = (os.getpid(), time.time_ns())
"""This run (the process that loaded this module first, and the workers it forks)."""
atexit.register(lambda: warned_marker(RUN).unlink(missing_ok=True))  # the main process's exit
