"""The batch scope: how long an execution context lives (replay.md §1.5, §1.6).

Upstream's ``ToolBatchScope``: a per-thread marker around one step recording's tool loop.
Entering allocates nothing; the first dispatch builds the context, later dispatches reuse it,
and leaving closes what was built (idempotent). Entering while a scope is active on the thread
runs inside the outer one.

``TRAILBLAZE_DISABLE_BATCHED_TOOL_EXECUTION`` (a switch, ``options.env_switch``; unset keeps
batching, and ``replay`` refuses a value it does not know before it starts) is read at each entry and turns the scope into a pass-through: every dispatch builds
a fresh context. ``force=True`` is the legacy ``- tools:`` block, which never went through the
wrapper and is always one batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from trailblaze.options import env_flag
from trailblaze.replay.context import ExecutionContext

KILL_SWITCH = "TRAILBLAZE_DISABLE_BATCHED_TOOL_EXECUTION"

ContextFactory = Callable[[bool], ExecutionContext]
"""Builds a context; its argument says whether the context is shared by a batch."""

_active = threading.local()


def batching_disabled(env: Mapping[str, str] | None = None) -> bool:
    return env_flag(KILL_SWITCH, env)


class BatchScope:
    """Hands out execution contexts for the dispatches of one recording."""

    def __init__(self, factory: ContextFactory, *, batched: bool) -> None:
        self.batched = batched
        self._factory = factory
        self._shared: ExecutionContext | None = None
        self._built: list[ExecutionContext] = []

    def context(self) -> ExecutionContext:
        """The context for the next top-level dispatch: the shared one, or a fresh one."""
        if not self.batched:
            return self._build()
        if self._shared is None:
            self._shared = self._build()
        return self._shared

    def _build(self) -> ExecutionContext:
        context = self._factory(self.batched)
        self._built.append(context)
        return context

    def close(self) -> None:
        for context in self._built:
            context.close()
        self._shared = None


def active_scope() -> BatchScope | None:
    """The scope active on this thread, if any (tests use it to see that a scope was closed)."""
    scope: BatchScope | None = getattr(_active, "scope", None)
    return scope


@contextmanager
def batch_scope(
    factory: ContextFactory, *, force: bool = False, env: Mapping[str, str] | None = None
) -> Iterator[BatchScope]:
    outer = active_scope()
    if outer is not None:
        yield outer
        return
    scope = BatchScope(factory, batched=force or not batching_disabled(env))
    _active.scope = scope
    try:
        yield scope
    finally:
        _active.scope = None
        scope.close()
