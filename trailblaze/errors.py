"""The one root of every user error: `TrailblazeError`.

A user error is a mistake in what the user gave us (a command line, a `[tool.trailblaze]`
table, a `--shard`, a remote-cache URL, a YAML document) or in their machine's setup (no
workspace, no compiler, no device). Each module's own error type subclasses the root, and the
entry points (`trailblaze` in `cli.py`, the doit actions in `doit_tasks.py`) catch the root in
one place: the user sees `trailblaze <command>: <message>` and the exit code of the error,
never a traceback. Anything that is not a `TrailblazeError` is a bug and keeps its traceback.

Expected failures of the input being checked are not errors at all: they are findings.

This module imports nothing of the package, so that every module may import it.
"""

from __future__ import annotations

import errno
from typing import ClassVar


class TrailblazeError(Exception):
    """A user error: its message says what is wrong and what to do; no traceback is shown."""

    exit_code: ClassVar[int] = 2
    """The exit code of a command that ends with this error: 2 is `report.EXIT_USAGE` (usage
    or configuration error), the code of every user error unless its type says otherwise."""


class UsageError(TrailblazeError):
    """A bad command line or configuration: exit 2 with the message."""


class MachineError(TrailblazeError):
    """The machine refused a read or write the command needed (a full disk, a read-only file
    system, no permission, too many open files): exit 2 with the file and the reason."""


_MACHINE_ERRNOS = frozenset(
    (
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
        errno.EIO,
        errno.EMFILE,
        errno.ENFILE,
        errno.ENAMETOOLONG,
    )
)


def machine_error(exc: BaseException) -> MachineError | None:
    """The `MachineError` an `OSError` of the machine's is (None for any other exception: a bug
    keeps its traceback). The entry points turn such an error into their one message."""
    if not isinstance(exc, OSError) or exc.errno not in _MACHINE_ERRNOS:
        return None
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        reason += "; free some space and run again"
    where = f"{exc.filename}: " if exc.filename else ""
    return MachineError(f"{where}{reason}")
