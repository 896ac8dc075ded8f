"""The cyclic garbage collector paused while work allocates much and frees nothing.

A check makes tens of thousands of long-lived objects (records, findings, reports decoded or
rendered) and no reference cycle worth collecting: each collection their allocation sets off
walks every one of them again and frees nothing. `gc_paused()` turns the collector off for such
a stretch and back on after it, only if it was on before: pauses nest, overlap across threads
(the collector is the process's, so it comes back when the last pause ends), and a collector
the caller turned off stays off. `gc_off_for_good()` is for a process that lives for one
batch of such work (a parse worker).

`keep_out_of_the_way()` is for a process that lives long and keeps what it made (the language
server's warm workspace): what is alive now is left out of every later collection.
`set_aside_for_exit()` is for a process about to exit (the `trailblaze` command), or done with
a check (doit's, which exits or goes on to another workspace's check: `let_back()` first): the
collections still to come, the interpreter's last one at exit included, would walk everything
the pipeline made, to free memory the exit gives back anyway. `gc_paused(set_aside=True)` does
the same when its pause ends, before the collector comes back: the pipeline's import in the
command (`for_one_command`), doit's check.

No other module of the package switches the collector.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
"""How many pauses are open, in every thread."""
_restore = False
"""Whether the collector was on when the first of the open pauses began."""
_set_aside = False
"""Whether one of the open pauses asked for what is alive to be set aside when the last ends."""
_one_command = False
"""This process exits when its one command is done (`for_one_command`)."""


@contextlib.contextmanager
def gc_paused(*, set_aside: bool = False) -> Iterator[None]:
    """No cyclic garbage collection inside (see the module docstring).

    `set_aside`: when the last open pause ends, everything alive is set aside (as by
    `set_aside_for_exit`) before the collector comes back. Without it, the first allocation
    after the pause sets off a collection of everything the pause made: 2-3 ms after the
    pipeline's import (12,000 objects), as much after a check. For what lives until the
    process exits (the `trailblaze` command: `for_one_command`), or until `let_back` (doit)."""
    global _depth, _restore, _set_aside  # noqa: PLW0603 - the collector is one per process, so is its pause
    with _lock:
        if _depth == 0:
            _restore = gc.isenabled()
        _depth += 1
        gc.disable()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            _set_aside = _set_aside or set_aside
            if _depth == 0:
                if _set_aside:
                    gc.freeze()
                    _set_aside = False
                if _restore:
                    gc.enable()


def for_one_command() -> None:
    """This process exits when its command is done (the `trailblaze` program, not a test or an
    editor calling its `main`): `one_command` says so to the pauses that may set aside."""
    global _one_command  # noqa: PLW0603 - a property of the process
    _one_command = True


def one_command() -> bool:
    """Whether `for_one_command` was called in this process."""
    return _one_command


def gc_off_for_good() -> None:
    """No cyclic garbage collection in this process from now on: for a worker process whose
    whole life is one kind of work that allocates much and frees nothing."""
    gc.disable()


def keep_out_of_the_way() -> None:
    """Leave every object alive now out of the collector's later passes (`gc.freeze`).

    The language server keeps a large workspace's stages (ten thousand trails' paths and
    records) for as long as it runs; every full collection would walk them all again, tens of
    milliseconds in the middle of some edit's answer, and free nothing. Reference counting
    still frees them when they are dropped; a cycle among them (a workspace dropped since the
    last call) is freed by the full collection each call makes first."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def set_aside_for_exit() -> None:
    """Leave every object alive now out of the collections still to come, the one at exit
    included, without collecting first (`gc.freeze`): for a process whose work is done."""
    gc.freeze()


def let_back() -> None:
    """Undo `set_aside_for_exit` in a process that goes on after all (doit's next check, in a
    monorepo): what was set aside is collected once now, a cycle dropped since included, and
    as usual after. Nothing when nothing was set aside."""
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()
