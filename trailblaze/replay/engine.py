"""The replay engine: one step recording, tool by tool, inside its batch scope.

The per-tool loop is upstream's (replay.md §1.2): check cancellation, fire the before-hook,
dispatch exactly one tool, stop at the first failure (attributing it: the successful prefix,
the failed tool, the error), fire the after-hook on success. A hook's own exception is reported
on the tool's result, never fatal. Every dispatched tool gives one ``ToolResult`` (the log
record) and one log line.

Dispatch resolves the name (``toolsource``), parses the arguments (``arguments``: tokens, then
the tool's JSON Schema) and runs the Android implementation (``tools``). ``runIf`` and composed
YAML tools are run here, recursively through the same dispatch: same context, same hooks, same
cancellation, their calls reported with a position such as ``runIf.then[1]``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from trailblaze.argvalues import json_args
from trailblaze.finding import Location
from trailblaze.replay.arguments import Tokens, expand_body, parse_arguments, substitute
from trailblaze.replay.context import ExecutionContext, ReplayOptions
from trailblaze.replay.device import Device
from trailblaze.replay.failure import (
    Cancelled,
    ExpectedFailure,
    FailureKind,
    FatalToolError,
    ToolError,
    ToolFailure,
    classify,
)
from trailblaze.replay.matches import find
from trailblaze.replay.results import Failure, Status, ToolResult
from trailblaze.replay.scope import batch_scope
from trailblaze.replay.scripted import OPEN_SCHEMA, SCRIPTED_KINDS
from trailblaze.replay.selector import compile_selector
from trailblaze.replay.tools import ANDROID_TOOLS, REFUSED
from trailblaze.replay.toolsource import ResolvedTool, ToolSource
from trailblaze.runif import RUNIF, Branch, RunIf, parse_runif
from trailblaze.trail import ToolCall
from trailblaze.yamlnode import YMap

logger = logging.getLogger(__name__)

#: Composed tools calling composed tools: deeper than this is a cycle, not a design.
MAX_NESTING = 8
_SELECTOR_SCHEMA = {"$ref": "#/$defs/TrailblazeNodeSelector"}
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
class _Invocation:
    name: str
    location: Location
    position: str | None = None
    node: YMap | None = None
    raw: Any = None
    call: ToolCall | None = None
    tree: RunIf | None = None
    framework: bool = False
    """Resolve the name in the framework catalog only (a framework tool's own nested calls)."""


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
    ) -> None:
        self.device = device
        self.trail_file = trail_file
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
        return context

    # -- the per-tool loop ---------------------------------------------------------------------

    def run_recording(
        self, calls: Sequence[ToolCall], *, step: int = 0, single_batch: bool = False
    ) -> RecordingOutcome:
        """Run one step's recorded calls; ``single_batch`` for the legacy ``- tools:`` block."""
        self._step = step
        results: list[ToolResult] = []
        with batch_scope(self._new_context, force=single_batch, env=self.env) as scope:
            invocations = [self._of_call(call) for call in calls]
            for i, call in enumerate(calls):
                if self.cancel.is_set():
                    results.extend(
                        self._skipped(invocations[i:], "cancelled", "cancelled before it started")
                    )
                    return RecordingOutcome(tuple(results), cancelled=True)
                result = self._dispatch(invocations[i], scope.context(), 0)
                results.append(result)
                if result.status == "cancelled":
                    results.extend(self._skipped(invocations[i + 1 :], "cancelled", "cancelled"))
                    return RecordingOutcome(tuple(results), cancelled=True)
                if result.status == "failed":
                    results.extend(
                        self._skipped(
                            invocations[i + 1 :], "skipped", f"not run: {call.name} failed"
                        )
                    )
                    failure = Failure(
                        tuple(r.tool for r in results[:i]),
                        call.name,
                        result.location,
                        result.error or "failed",
                        result.error_kind or "error",
                    )
                    return RecordingOutcome(tuple(results), failure)
        return RecordingOutcome(tuple(results))

    def _of_call(
        self, call: ToolCall, position: str | None = None, tree: RunIf | None = None
    ) -> _Invocation:
        location = Location(self.trail, call.line, call.column, call.key_path)
        return _Invocation(call.name, location, position, call.args, None, call, tree)

    # -- one dispatch --------------------------------------------------------------------------

    def _dispatch(
        self, invocation: _Invocation, context: ExecutionContext, depth: int
    ) -> ToolResult:
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
            self.trail,
            self._step,
            invocation.name,
            invocation.position,
            invocation.location,
            context.trace_id,
        )
        hook_errors = self._fire("before", self.hooks.before, event)
        children: list[ToolResult] = []
        logs: list[str] = []
        started = time.monotonic()
        with context.timeline.meter() as phases:
            try:
                detail = self._execute(invocation, context, depth, children, logs)
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
            children=tuple(children),
            phases=dict(phases),
            logs=tuple(logs),
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

    def _execute(
        self,
        invocation: _Invocation,
        context: ExecutionContext,
        depth: int,
        children: list[ToolResult],
        logs: list[str],
    ) -> str | None:
        if depth > MAX_NESTING:
            raise ToolError(
                f"tools nest more than {MAX_NESTING} levels deep (a composed tool calls itself?)"
            )
        name = invocation.name
        if name == RUNIF:
            with context.phase("act"):
                return self._run_runif(self._tree(invocation), invocation, context, depth, children)
        resolved = (
            self.tools.lookup_framework(name) if invocation.framework else self.tools.lookup(name)
        )
        if resolved is None:
            raise ToolError(
                f"tool '{name}' is not supported by this device: {self.tools.unknown(name)}"
            )
        if resolved.kind == "yaml":
            params = self._arguments(invocation, resolved.schema)
            with context.phase("act"):
                return self._run_composed(
                    resolved.body, params, invocation, context, depth, children
                )
        if resolved.kind in SCRIPTED_KINDS:
            return self._run_scripted(resolved, invocation, context, depth, children, logs)
        implementation = resolved.implementation or name
        if resolved.kind == "framework" and implementation in REFUSED:
            raise ToolError(
                f"tool '{name}' cannot run on Android replay: {REFUSED[implementation]}"
            )
        impl = ANDROID_TOOLS.get(implementation) if resolved.kind == "framework" else None
        if impl is None:
            why = "Android replay does not implement it"
            if resolved.kind != "framework":
                why = f"replay cannot run a tool of kind '{resolved.kind}'"
            raise ToolError(f"tool '{name}' is not supported by this device ({why})")
        args = self._arguments(invocation, resolved.schema)

        def run_tools(calls: Sequence[Any], label: str) -> None:
            # A framework tool's nested calls mean framework tools: a trailmap's own tool of
            # the same name (the corpus' eraseText.tool.yaml calls mobile_maestro) must not
            # capture them.
            self._run_nested(calls, label, invocation, context, depth, children)

        try:
            with context.phase("act"), context.nesting(run_tools):
                return impl.run(context, args)
        finally:
            if impl.mutates:
                context.invalidate()

    def _run_scripted(
        self,
        resolved: ResolvedTool,
        invocation: _Invocation,
        context: ExecutionContext,
        depth: int,
        children: list[ToolResult],
        logs: list[str],
    ) -> str:
        """A scripted tool in a Node child; its ``ctx.tools`` calls come back to ``_dispatch``."""
        scripts = self.tools.scripts
        if scripts is None:
            raise ToolError(
                f"scripted tool '{resolved.name}' could not run: replay has no workspace to run "
                "it from"
            )
        args = self._arguments(invocation, resolved.schema or OPEN_SCHEMA)
        prefix = f"{invocation.position} › " if invocation.position else ""

        def call(name: str, raw: dict[str, Any], index: int) -> ToolResult:
            position = f"{prefix}{invocation.name}.calls[{index}]"
            result = self._dispatch(
                _Invocation(name, invocation.location, position, raw=raw), context, depth + 1
            )
            children.append(result)
            return result

        module = resolved.module
        if module is None and resolved.kind == "descriptor" and resolved.source is not None:
            module = scripts.host.descriptor_script(resolved.source)
        outcome = scripts.run(
            resolved.name,
            module,
            args,
            context=context,
            call=call,
            logs=logs,
            validate=lambda schema: self._arguments(invocation, schema),
        )
        # Only a tool that succeeded writes to the trail's memory.
        context.memory.update(outcome.sets)
        for key in outcome.deletions:
            context.memory.pop(key, None)
        return outcome.detail

    def _arguments(self, invocation: _Invocation, schema: dict[str, Any] | None) -> dict[str, Any]:
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

    def _run_nested(
        self,
        calls: Sequence[Any],
        label: str,
        invocation: _Invocation,
        context: ExecutionContext,
        depth: int,
        children: list[ToolResult],
    ) -> None:
        """Calls a tool makes (``context.run_tools``): ``ToolCall`` or ``(name, raw_args)``."""
        prefix = f"{invocation.position} › " if invocation.position else ""
        subs: list[_Invocation] = []
        for i, call in enumerate(calls):
            position = f"{prefix}{label}[{i}]"
            if isinstance(call, ToolCall):
                subs.append(self._of_call(call, position))
            else:
                name, raw = call
                subs.append(
                    _Invocation(name, invocation.location, position, raw=raw, framework=True)
                )
        self._run_sequence(subs, context, depth, children)

    # -- composed YAML tools -------------------------------------------------------------------

    def _run_composed(
        self,
        body: tuple[tuple[str, Any], ...],
        params: dict[str, Any],
        invocation: _Invocation,
        context: ExecutionContext,
        depth: int,
        children: list[ToolResult],
    ) -> str:
        calls = expand_body(body, params)
        prefix = f"{invocation.position} › " if invocation.position else ""
        subs = [
            _Invocation(name, invocation.location, f"{prefix}{invocation.name}.tools[{i}]", raw=raw)
            for i, (name, raw) in enumerate(calls)
        ]
        self._run_sequence(subs, context, depth, children)
        return f"ran {len(calls)} tool(s)"

    def _run_sequence(
        self,
        invocations: Sequence[_Invocation],
        context: ExecutionContext,
        depth: int,
        children: list[ToolResult],
    ) -> None:
        """Run nested calls in order; the first failure fails the caller, the rest are skipped."""
        for i, invocation in enumerate(invocations):
            result = self._dispatch(invocation, context, depth + 1)
            children.append(result)
            if result.status == "passed":
                continue
            rest = invocations[i + 1 :]
            if result.status == "cancelled":
                children.extend(self._skipped(rest, "cancelled", "cancelled"))
                raise Cancelled
            children.extend(self._skipped(rest, "skipped", f"not run: {result.tool} failed"))
            kind = result.error_kind or "error"
            raise _FAILURES[kind](f"{result.label} failed: {result.error}")

    def _skipped(
        self, invocations: Sequence[_Invocation], status: Status, why: str
    ) -> list[ToolResult]:
        return [
            ToolResult(i.name, status, i.location, position=i.position, detail=why)
            for i in invocations
        ]

    # -- runIf ---------------------------------------------------------------------------------

    def _tree(self, invocation: _Invocation) -> RunIf:
        if invocation.tree is not None:
            return invocation.tree
        assert invocation.call is not None, "runIf only comes from a recording"
        tree, findings = parse_runif(invocation.call, self.trail)
        if tree is None:
            # Trails are validated before they start; this is a recording built in code.
            raise ToolError(findings[0].text if findings else "invalid runIf")
        return tree

    def _branch(self, branch: Branch, prefix: str) -> _Invocation:
        return self._of_call(branch.call, f"{prefix}{branch.position}", branch.runif)

    def _run_runif(
        self,
        tree: RunIf,
        invocation: _Invocation,
        context: ExecutionContext,
        depth: int,
        children: list[ToolResult],
    ) -> str:
        prefix = f"{invocation.position} › " if invocation.position else ""
        if tree.selector is not None:
            values = substitute(
                json_args(tree.selector, _SELECTOR_SCHEMA, self.tools.catalog.defs), self.tokens
            )
            compiled = compile_selector(values)
            matches = find(compiled, context.screen(fresh=True))
            holds = bool(matches)
            condition = (
                f"selector matched {matches[0].describe()}" if holds else "selector matched nothing"
            )
        else:
            assert tree.condition_tool is not None
            with context.evaluating_condition():
                result = self._dispatch(
                    self._branch(tree.condition_tool, prefix), context, depth + 1
                )
            children.append(result)
            if result.status == "cancelled":
                raise Cancelled
            holds = result.status == "passed"
            if not holds and result.error_kind != "expected":
                branches = [self._branch(b, prefix) for b in (*tree.then, *tree.otherwise)]
                children.extend(self._skipped(branches, "skipped", "the condition could not run"))
                kind = result.error_kind or "error"
                raise _FAILURES[kind](
                    f"runIf.condition: '{result.tool}' could not run, so the condition is neither "
                    f"true nor false: {result.error}"
                )
            condition = f"{result.tool} {'succeeded' if holds else 'failed as expected'}"
        taken, other = (tree.then, tree.otherwise) if holds else (tree.otherwise, tree.then)
        try:
            self._run_sequence([self._branch(b, prefix) for b in taken], context, depth, children)
        finally:
            children.extend(
                self._skipped(
                    [self._branch(b, prefix) for b in other], "skipped", "branch not taken"
                )
            )
        if not taken:
            return f"{condition}: condition false, no else branch"
        branch = "then" if holds else "else"
        return f"{condition}: ran {branch} ({len(taken)} call(s))"
