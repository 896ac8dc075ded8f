"""The replay engine: one step recording, tool by tool, inside its batch scope.

The per-tool loop is upstream's (replay.md §1.2): check cancellation, fire the before-hook,
dispatch exactly one tool, stop at the first failure (attributing it: the successful prefix,
the failed tool, the error), fire the after-hook on success. A hook's own exception is reported
on the tool's result, never fatal. Every dispatched tool gives one ``ToolResult`` (the log
record) and one log line.

Dispatch resolves the name (``toolsource``), parses the arguments (``arguments``: tokens, then
the tool's JSON Schema) and runs the Android implementation (``tools``) or the scripted tool
(``scripted``). Calls made inside a call (a composed YAML tool's body, a framework tool's
nested calls, a scripted tool's ``ctx.tools``: ``nested``; ``runIf`` branches:
``conditional``) go through the same dispatch: same context, same hooks, same cancellation, their results reported with a
position such as ``runIf.then[1]``. The records a dispatch passes around are ``invocation``'s.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from trailblaze.finding import Location
from trailblaze.replay.arguments import Tokens, parse_arguments
from trailblaze.replay.conditional import run_runif
from trailblaze.replay.context import ExecutionContext, ReplayOptions
from trailblaze.replay.device import Device
from trailblaze.replay.failure import Cancelled, ToolError, classify
from trailblaze.replay.invocation import (
    Frame,
    Hook,
    Hooks,
    Invocation,
    RecordingOutcome,
    ToolEvent,
    skipped,
)
from trailblaze.replay.nested import run_composed, run_nested, run_scripted
from trailblaze.replay.plan import DEFAULT_DRIVER
from trailblaze.replay.results import Failure, ToolResult
from trailblaze.replay.scope import batch_scope
from trailblaze.replay.scripted import SCRIPTED_KINDS
from trailblaze.replay.tools import ANDROID_TOOLS, REFUSED
from trailblaze.replay.toolsource import ToolSource
from trailblaze.trail.hostcalls import HOST_TOOLS, HostCall
from trailblaze.trail.model import ToolCall
from trailblaze.trail.runif import RUNIF, RunIf

logger = logging.getLogger(__name__)

#: Composed tools calling composed tools: deeper than this is a cycle, not a design.
MAX_NESTING = 8


class Runner:
    """Replays the recordings of one trail on one device."""

    def __init__(
        self,
        device: Device,
        tools: ToolSource,
        *,
        trail: str,
        tokens: Tokens | None = None,
        options: ReplayOptions | None = None,
        cancel: threading.Event | None = None,
        hooks: Hooks | None = None,
        env: Mapping[str, str] | None = None,
        trail_file: Path | None = None,
        driver: str = DEFAULT_DRIVER,
    ) -> None:
        self.device = device
        self.trail_file = trail_file
        self.driver = driver
        self.tools = tools
        self.trail = trail
        self.tokens = tokens or Tokens()
        self.options = options or ReplayOptions()
        self.cancel = cancel or threading.Event()
        self.hooks = hooks or Hooks()
        self.env = os.environ if env is None else env
        # One memory per trail: steps share it, tools (inputTextRandom, ...) set values in it.
        self.memory: dict[str, str] = dict(self.tokens.memory)
        self.tokens = replace(self.tokens, memory=self.memory)
        self._step = 0

    def _new_context(self, batched: bool) -> ExecutionContext:
        context = ExecutionContext(
            self.device, self.options, self.cancel, batched=batched, memory=self.memory
        )
        context.trail_path = self.trail
        context.trail_file = self.trail_file
        context.driver_type = self.driver
        context.sensitive = self.tokens.sensitive
        context.ships_runif = self.tools.ships_runif
        context.waypoints = self.tools.waypoints
        return context

    # -- the per-tool loop ---------------------------------------------------------------------

    def run_recording(
        self, calls: Sequence[ToolCall], *, step: int = 0, single_batch: bool = False
    ) -> RecordingOutcome:
        """Run one step's recorded calls; ``single_batch`` for the legacy ``- tools:`` block."""
        self._step = step
        results: list[ToolResult] = []
        with batch_scope(self._new_context, force=single_batch, env=self.env) as scope:
            invocations = [self.of_call(call) for call in calls]
            for i, call in enumerate(calls):
                if self.cancel.is_set():
                    results.extend(
                        skipped(invocations[i:], "cancelled", "cancelled before it started")
                    )
                    return RecordingOutcome(tuple(results), cancelled=True)
                result = self.dispatch(invocations[i], scope.context(), 0)
                results.append(result)
                if result.status == "cancelled":
                    results.extend(skipped(invocations[i + 1 :], "cancelled", "cancelled"))
                    return RecordingOutcome(tuple(results), cancelled=True)
                if result.status == "failed":
                    results.extend(
                        skipped(invocations[i + 1 :], "skipped", f"not run: {call.name} failed")
                    )
                    failure = Failure(
                        successful=tuple(r.tool for r in results[:i]),
                        failed_tool=call.name,
                        location=result.location,
                        error=result.error or "failed",
                        kind=result.error_kind or "error",
                    )
                    return RecordingOutcome(tuple(results), failure)
        return RecordingOutcome(tuple(results))

    def of_call(
        self, call: ToolCall, position: str | None = None, tree: RunIf | None = None
    ) -> Invocation:
        location = Location(self.trail, call.line, call.column, call.key_path)
        return Invocation(call.name, location, position, node=call.args, call=call, tree=tree)

    # -- one dispatch --------------------------------------------------------------------------

    def dispatch(self, invocation: Invocation, context: ExecutionContext, depth: int) -> ToolResult:
        base = ToolResult(
            invocation.name,
            "cancelled",
            invocation.location,
            position=invocation.position,
            trace_id=context.trace_id,
        )
        if self.cancel.is_set():
            return replace(base, detail="cancelled before it started")
        event = ToolEvent(
            trail=self.trail,
            step=self._step,
            tool=invocation.name,
            position=invocation.position,
            location=invocation.location,
            trace_id=context.trace_id,
        )
        hook_errors = self._fire("before", self.hooks.before, event)
        frame = Frame(invocation, context, depth)
        started = time.monotonic()
        with context.timeline.meter() as phases:
            try:
                detail = self._execute(frame)
            except Cancelled:
                result = replace(base, detail="cancelled while it ran")
            except Exception as exc:
                failure = classify(exc)
                if failure is None:
                    raise
                result = replace(
                    base, status="failed", error=failure.message, error_kind=failure.kind
                )
            else:
                result = replace(base, status="passed", detail=detail)
        result = replace(
            result,
            duration=time.monotonic() - started,
            children=tuple(frame.children),
            phases=dict(phases),
            logs=tuple(frame.logs),
        )
        if result.status == "passed":
            hook_errors += self._fire("after", self.hooks.after, replace(event, result=result))
        result = replace(result, hook_errors=hook_errors)
        logger.info(
            "%s step %d %s: %s%s (%.2fs) [%s]",
            self.trail,
            self._step,
            result.label,
            result.status,
            f": {result.error}" if result.error else "",
            result.duration,
            context.trace_id,
        )
        return result

    def _fire(self, which: str, hook: Hook | None, event: ToolEvent) -> tuple[str, ...]:
        if hook is None:
            return ()
        try:
            hook(event)
        except Exception as exc:  # a hook is the caller's code: report it, keep replaying
            logger.warning("%s-hook failed for %s: %s", which, event.tool, exc, exc_info=True)
            return (f"{which}-hook: {type(exc).__name__}: {exc}",)
        return ()

    def _execute(self, frame: Frame) -> str | None:
        if frame.depth > MAX_NESTING:
            raise ToolError(
                f"tools nest more than {MAX_NESTING} levels deep (a composed tool calls itself?)"
            )
        invocation, context = frame.invocation, frame.context
        name = invocation.name
        if name == RUNIF and not self.tools.ships_runif:
            with context.phase("act"):
                return run_runif(self, frame)
        resolved = (
            self.tools.lookup_framework(name) if invocation.framework else self.tools.lookup(name)
        )
        if resolved is None:
            raise ToolError(
                f"tool '{name}' is not supported by this device: {self.tools.unknown(name)}"
            )
        if resolved.kind == "yaml":
            params = self.arguments(invocation, resolved.schema)
            with context.phase("act"):
                return run_composed(self, resolved.body, params, frame)
        if resolved.kind in SCRIPTED_KINDS:
            return run_scripted(self, resolved, frame)
        implementation = resolved.implementation or name
        if resolved.kind == "framework" and implementation in REFUSED:
            raise ToolError(
                f"tool '{name}' cannot run on Android replay: {REFUSED[implementation]}"
            )
        host = HOST_TOOLS.get(implementation) if resolved.kind == "framework" else None
        args: dict[str, Any] | None = None
        if host is not None and not invocation.by_code:
            # A recording's call (or a composed tool's): the workspace must allow it. The
            # preflight refused what it could see; this is what only the run knows (tokens
            # filled in, a trail runTrail reads).
            args = self.arguments(invocation, resolved.schema)
            via = (name,) if name == implementation else (name, implementation)
            trail_dir = self.trail_file.parent if self.trail_file is not None else None
            why = self.options.host.refusal(
                HostCall(host, via, args), cwd=Path.cwd(), trail_dir=trail_dir
            )
            if why is not None:
                raise ToolError(f"tool '{name}' refused: {why}")
        impl = ANDROID_TOOLS.get(implementation) if resolved.kind == "framework" else None
        if impl is None:
            why = "Android replay does not implement it"
            if resolved.kind != "framework":
                why = f"replay cannot run a tool of kind '{resolved.kind}'"
            raise ToolError(f"tool '{name}' is not supported by this device ({why})")
        if args is None:
            args = self.arguments(invocation, resolved.schema)

        def run_tools(calls: Sequence[Any], label: str) -> None:
            # A framework tool's nested calls mean framework tools: a trailmap's own tool of
            # the same name (the corpus' eraseText.tool.yaml calls mobile_maestro) must not
            # capture them.
            run_nested(self, calls, label, frame)

        try:
            with context.phase("act"), context.nesting(run_tools):
                return impl.run(context, args)
        finally:
            if impl.mutates:
                context.invalidate()

    def arguments(self, invocation: Invocation, schema: dict[str, Any] | None) -> dict[str, Any]:
        if schema is None:
            raise ToolError(
                f"tool '{invocation.name}' has no argument schema to parse its call with"
            )
        where = invocation.location
        return parse_arguments(
            invocation.name,
            schema,
            node=invocation.node,
            raw=invocation.raw,
            tokens=self.tokens,
            path=where.path,
            line=where.line,
            column=where.column,
        )
