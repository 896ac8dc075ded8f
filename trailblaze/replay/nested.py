"""Calls made inside a call, run through the engine's one dispatch.

- ``run_composed``: a composed YAML tool (``*.tool.yaml`` with ``tools:``) runs its body, the
  call's parameters substituted; positions ``<tool>.tools[i]``.
- ``run_nested``: the calls a framework tool makes (``context.run_tools``: ``mobile_maestro``,
  ``runTrail``, ...), resolved in the framework catalog only; positions ``<label>[i]``.
- ``run_scripted``: a scripted tool in its Node child; its ``ctx.tools`` calls come back here
  one at a time; positions ``<tool>.calls[i]``.
- ``run_sequence``: calls in order; the first failure fails the caller with the same kind, the
  rest are reported as not run.

Every inner call shares the caller's context (one batch), hooks and cancellation, and adds its
result to the caller's ``Frame``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trailblaze.replay.arguments import expand_body
from trailblaze.replay.failure import Cancelled, ToolError
from trailblaze.replay.invocation import Dispatcher, Frame, Invocation, fail, skipped
from trailblaze.replay.results import ToolResult
from trailblaze.replay.scripted import OPEN_SCHEMA
from trailblaze.replay.toolsource import ResolvedTool
from trailblaze.trail.model import ToolCall


def run_sequence(engine: Dispatcher, invocations: Sequence[Invocation], frame: Frame) -> None:
    """Run nested calls in order; the first failure fails the caller, the rest are skipped."""
    for i, invocation in enumerate(invocations):
        result = engine.dispatch(invocation, frame.context, frame.depth + 1)
        frame.children.append(result)
        if result.status == "passed":
            continue
        rest = invocations[i + 1 :]
        if result.status == "cancelled":
            frame.children.extend(skipped(rest, "cancelled", "cancelled"))
            raise Cancelled
        frame.children.extend(skipped(rest, "skipped", f"not run: {result.tool} failed"))
        fail(result.error_kind or "error", f"{result.label} failed: {result.error}")


def run_nested(engine: Dispatcher, calls: Sequence[Any], label: str, frame: Frame) -> None:
    """Calls a tool makes (``context.run_tools``): ``ToolCall`` or ``(name, raw_args)``."""
    subs: list[Invocation] = []
    for i, call in enumerate(calls):
        position = f"{frame.prefix}{label}[{i}]"
        if isinstance(call, ToolCall):
            subs.append(engine.of_call(call, position))
        else:
            name, raw = call
            where = frame.invocation.location
            subs.append(Invocation(name, where, position, raw=raw, framework=True))
    run_sequence(engine, subs, frame)


def run_composed(
    engine: Dispatcher, body: tuple[tuple[str, Any], ...], params: dict[str, Any], frame: Frame
) -> str:
    """A composed YAML tool: its body's calls, with the call's parameters substituted."""
    calls = expand_body(body, params)
    invocation = frame.invocation
    subs = [
        Invocation(
            name, invocation.location, f"{frame.prefix}{invocation.name}.tools[{i}]", raw=raw
        )
        for i, (name, raw) in enumerate(calls)
    ]
    run_sequence(engine, subs, frame)
    return f"ran {len(calls)} tool(s)"


def run_scripted(engine: Dispatcher, resolved: ResolvedTool, frame: Frame) -> str:
    """A scripted tool in a Node child; its ``ctx.tools`` calls come back to ``dispatch``."""
    scripts = engine.tools.scripts
    if scripts is None:
        raise ToolError(
            f"scripted tool '{resolved.name}' could not run: replay has no workspace to run it from"
        )
    invocation, context = frame.invocation, frame.context
    args = engine.arguments(invocation, resolved.schema or OPEN_SCHEMA)

    def call(name: str, raw: dict[str, Any], index: int) -> ToolResult:
        position = f"{frame.prefix}{invocation.name}.calls[{index}]"
        result = engine.dispatch(
            Invocation(name, invocation.location, position, raw=raw, by_code=True),
            context,
            frame.depth + 1,
        )
        frame.children.append(result)
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
        logs=frame.logs,
        validate=lambda schema: engine.arguments(invocation, schema),
    )
    # Only a tool that succeeded writes to the trail's memory.
    context.memory.update(outcome.sets)
    for key in outcome.deletions:
        context.memory.pop(key, None)
    return outcome.detail
