"""What every stage of one check reads: the workspace, its options, its store, and the clock.

A check is a flat sequence of stages (`trailblaze.check.run`); each takes this context and the
record of the stages before it, and returns a record of its own.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Protocol

import msgspec

from trailblaze.options import CheckOptions
from trailblaze.state.scratch import Layout
from trailblaze.state.store import Store
from trailblaze.toolmodel.catalog import Catalog
from trailblaze.workspace import Workspace

if TYPE_CHECKING:
    from trailblaze.check.typegate.jobs import GateResult, Job
    from trailblaze.toolchain.compilers import Compiler


class Progress(Protocol):
    """Reports progress of the long phases (parsing, generating) of big runs."""

    def start(self, phase: str, total: int) -> None: ...
    def advance(self, done: int) -> None: ...
    def stop(self) -> None: ...


class PrimedCompile(Protocol):
    """A compiler started before the run (`typegate.primed.PrimedCompiler`)."""

    def __call__(self, jobs: list[Job], compiler: Compiler) -> GateResult | None:
        """The batch's result; None: the gate compiles it as usual."""
        ...

    def close(self) -> None:
        """Stop it: no batch of this run is for it (every later one is given back)."""
        ...


class Timer(msgspec.Struct):
    """The time each phase of a run took, summed per name (the stats' `seconds`)."""

    seconds: dict[str, float] = msgspec.field(default_factory=dict)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            total = self.seconds.get(name, 0.0) + time.perf_counter() - start
            self.seconds[name] = round(total, 4)


class CheckContext(msgspec.Struct, frozen=True):
    """One check's fixed inputs. The store is open for the whole run and committed at its end."""

    ws: Workspace
    options: CheckOptions
    layout: Layout
    store: Store
    catalog: Catalog
    timer: Timer
    progress: Progress | None = None
    texts: Mapping[str, bytes] = msgspec.field(default_factory=dict)
    """Trail files whose content is given, not read (an editor's unsaved buffer, by the path
    the scan gives): checked as if the file held these bytes."""
    primed: PrimedCompile | None = None
    """A compiler the caller started before the run (`typegate.primed`): the type gate gives it
    a batch first, and compiles as usual what it gives back."""
