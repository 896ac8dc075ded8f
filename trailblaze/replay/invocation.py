"""One tool call on its way through the engine, and what the engine's callers and hooks see.

An ``Invocation`` is a call about to be dispatched: a recorded ``ToolCall`` (with its YAML
node), a nested call (a name and raw arguments), or a ``runIf`` branch. A ``Frame`` is one
dispatch in progress: the invocation, the batch's context, the nesting depth, and the results
and logs of the calls it makes. ``Dispatcher`` is what the modules that run calls inside calls
(``conditional`` for ``runIf``, ``nested`` for the others) need from the engine, so they never import it.

``ToolEvent`` / ``Hooks`` are the before/after hooks (replay.md §1.2); ``RecordingOutcome`` is
what one step recording gives back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

from trailblaze.finding import Location
from trailblaze.replay.arguments import Tokens
from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import (
    ExpectedFailure,
    FailureKind,
    FatalToolError,
    ToolError,
    ToolFailure,
)
from trailblaze.replay.results import Failure, Status, ToolResult
from trailblaze.replay.toolsource import ToolSource
from trailblaze.trail.model import ToolCall
from trailblaze.trail.runif import RunIf
from trailblaze.yaml.node import YMap

_FAILURES: dict[FailureKind, type[ToolFailure]] = {
    "expected": ExpectedFailure,
    "error": ToolError,
    "fatal": FatalToolError,
}


@dataclass(frozen=True, slots=True)
class ToolEvent:
    """What a hook sees: the tool about to run (before) or that ran successfully (after)."""

    trail: str
    step: int
    tool: str
    position: str | None
    location: Location
    trace_id: str
    result: ToolResult | None = None


Hook = Callable[[ToolEvent], None]


@dataclass(frozen=True, slots=True)
class Hooks:
    before: Hook | None = None
    after: Hook | None = None


@dataclass(frozen=True, slots=True)
class RecordingOutcome:
    tools: tuple[ToolResult, ...]
    failure: Failure | None = None
    cancelled: bool = False

    @property
    def passed(self) -> bool:
        return self.failure is None and not self.cancelled


@dataclass(frozen=True, slots=True)
class Invocation:
    name: str
    location: Location
    position: str | None = None
    node: YMap | None = None
    raw: Any = None
    call: ToolCall | None = None
    tree: RunIf | None = None
    framework: bool = False
    """Resolve the name in the framework catalog only (a framework tool's own nested calls)."""
    by_code: bool = False
    """Made by a scripted tool (``ctx.tools``): the workspace's own code, not a recording, so a
    host tool it calls runs as the code says (``trail.hostpolicy`` does not apply)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One dispatch in progress; the calls it makes add their results to ``children``."""

    invocation: Invocation
    context: ExecutionContext
    depth: int
    children: list[ToolResult] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    """What a scripted tool logged and printed, in order."""

    @property
    def prefix(self) -> str:
        """What the positions of this call's own calls start with: its position and a separator."""
        position = self.invocation.position
        return f"{position} › " if position else ""


class Dispatcher(Protocol):
    """The engine, as the modules that run calls inside a call see it."""

    @property
    def tokens(self) -> Tokens: ...

    @property
    def tools(self) -> ToolSource: ...

    @property
    def trail(self) -> str: ...

    def dispatch(self, invocation: Invocation, context: ExecutionContext, depth: int) -> ToolResult:
        """Run one call (hooks, timing, failure classification) and give its result."""
        ...

    def of_call(
        self, call: ToolCall, position: str | None = None, tree: RunIf | None = None
    ) -> Invocation:
        """The invocation of a recorded call, located in the trail."""
        ...

    def arguments(self, invocation: Invocation, schema: dict[str, Any] | None) -> dict[str, Any]:
        """The call's arguments: tokens substituted, parsed with ``schema`` (a tool error else)."""
        ...


def skipped(invocations: Sequence[Invocation], status: Status, why: str) -> list[ToolResult]:
    """The results of calls that did not run, and why."""
    return [
        ToolResult(i.name, status, i.location, position=i.position, detail=why) for i in invocations
    ]


def fail(kind: FailureKind, message: str) -> NoReturn:
    """Fail the calling tool the way an inner call failed (same kind)."""
    raise _FAILURES[kind](message)
