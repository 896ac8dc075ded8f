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
the pipeline made, to free memory the exit gives back anyway.

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


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside (see the module docstring)."""
    global _depth, _restore  # noqa: PLW0603 - the collector is one per process, so is its pause
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
            if _depth == 0 and _restore:
                gc.enable()


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
