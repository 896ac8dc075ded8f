"""``runIf`` at replay: decide the condition, run the branch it picks, skip the other.

The tree was validated before the trail started (``runif.parse_runif``, both branches). A
selector condition holds when one fresh dump has at least one match. A tool condition is
dispatched nested, in the same batch context, and has three outcomes, never a boolean
(replay.md §1.8): success is true, an expected failure (an assertion not met) is false, and a
tool that could not run fails the ``runIf`` with its error. Branch calls run in order through
the same dispatch; their results carry positions such as ``runIf.then[1]``.
"""

from __future__ import annotations

from trailblaze.generate.argvalues import json_args
from trailblaze.replay.arguments import substitute
from trailblaze.replay.failure import Cancelled, ToolError
from trailblaze.replay.invocation import Dispatcher, Frame, Invocation, fail, skipped
from trailblaze.replay.matches import find
from trailblaze.replay.nested import run_sequence
from trailblaze.replay.selector import compile_selector
from trailblaze.trail.runif import Branch, RunIf, parse_runif

_SELECTOR_SCHEMA = {"$ref": "#/$defs/TrailblazeNodeSelector"}


def run_runif(engine: Dispatcher, frame: Frame) -> str:
    """Run the ``runIf`` of ``frame``; the detail says what the condition gave and what ran."""
    tree = _tree(engine, frame.invocation)
    context = frame.context

    def branch(b: Branch) -> Invocation:
        return engine.of_call(b.call, f"{frame.prefix}{b.position}", b.runif)

    if tree.selector is not None:
        values = substitute(
            json_args(tree.selector, _SELECTOR_SCHEMA, engine.tools.catalog.defs), engine.tokens
        )
        matches = find(compile_selector(values), context.screen(fresh=True))
        holds = bool(matches)
        condition = (
            f"selector matched {matches[0].describe()}" if holds else "selector matched nothing"
        )
    else:
        assert tree.condition_tool is not None
        with context.evaluating_condition():
            result = engine.dispatch(branch(tree.condition_tool), context, frame.depth + 1)
        frame.children.append(result)
        if result.status == "cancelled":
            raise Cancelled
        holds = result.status == "passed"
        if not holds and result.error_kind != "expected":
            rest = [branch(b) for b in (*tree.then, *tree.otherwise)]
            frame.children.extend(skipped(rest, "skipped", "the condition could not run"))
            fail(
                result.error_kind or "error",
                f"runIf.condition: '{result.tool}' could not run, so the condition is neither "
                f"true nor false: {result.error}",
            )
        condition = f"{result.tool} {'succeeded' if holds else 'failed as expected'}"
    taken, other = (tree.then, tree.otherwise) if holds else (tree.otherwise, tree.then)
    try:
        run_sequence(engine, [branch(b) for b in taken], frame)
    finally:
        frame.children.extend(skipped([branch(b) for b in other], "skipped", "branch not taken"))
    if not taken:
        return f"{condition}: condition false, no else branch"
    return f"{condition}: ran {'then' if holds else 'else'} ({len(taken)} call(s))"


def _tree(engine: Dispatcher, invocation: Invocation) -> RunIf:
    if invocation.tree is not None:
        return invocation.tree
    if invocation.call is None:
        # A composed tool's body (or a script) asked for one: replay runs runIf as a trail
        # records it, validated with the trail before it starts.
        raise ToolError(
            "runIf can only run as recorded in a trail, not inside a composed tool's body or "
            "from a scripted tool"
        )
    tree, findings = parse_runif(invocation.call, engine.trail)
    if tree is None:
        # Trails are validated before they start; this is a recording built in code.
        raise ToolError(findings[0].text if findings else "invalid runIf")
    return tree
