"""Author tools a scripted tool calls to read the screen (not recordable, never fail on a miss).

``findMatches`` resolves a node selector against the screen and returns every match as the
SDK's ``MatchDescriptor`` (``indexPath``, ``bounds``, ``matchedText``, ``accessibilityId``,
``resourceId``), without acting on any. It is what the SDK's ``captureViewHierarchy`` (and so
``runConditionalActions``) builds its snapshot from. With ``timeoutMs`` it polls until something
matches or the budget is spent, and an empty list is an answer, not a failure.

``waitUntilNotVisible`` waits (``timeoutMs``, else the find timeout) for a selector to match
nothing and answers ``true``, or ``false`` when it still matches at the end.
"""

from __future__ import annotations

import json
import time
from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.hierarchy import UiNode
from trailblaze.replay.matches import find
from trailblaze.replay.selector import compile_selector
from trailblaze.replay.structured import Structured
from trailblaze.replay.tools.base import ToolImpl


def match_descriptor(node: UiNode) -> dict[str, Any]:
    """``node`` as the SDK's ``MatchDescriptor``."""
    b = node.bounds
    return {
        "indexPath": list(node.index_path),
        "bounds": {"left": b.left, "top": b.top, "right": b.right, "bottom": b.bottom},
        "matchedText": node.text or node.content_desc or None,
        "accessibilityId": node.content_desc or None,
        "resourceId": node.resource_id or None,
    }


def find_matches(context: ExecutionContext, args: dict[str, Any]) -> str:
    compiled = compile_selector(args["selector"])
    budget = args.get("timeoutMs")
    nodes = find(compiled, context.screen())
    if isinstance(budget, int) and budget > 0:
        deadline = time.monotonic() + budget / 1000
        while not nodes and time.monotonic() < deadline:
            context.sleep(context.options.poll_interval)
            nodes = find(compiled, context.screen(fresh=True))
    value = [match_descriptor(n) for n in nodes]
    return Structured(f"{len(value)} match(es): {json.dumps(value)}", value)


def wait_until_not_visible(context: ExecutionContext, args: dict[str, Any]) -> str:
    compiled = compile_selector(args["nodeSelector"])
    budget = args.get("timeoutMs")
    limit = budget / 1000 if isinstance(budget, int) and budget >= 0 else context.find_timeout
    deadline = time.monotonic() + limit
    nodes = find(compiled, context.screen())
    while nodes and time.monotonic() < deadline:
        context.sleep(context.options.poll_interval)
        nodes = find(compiled, context.screen(fresh=True))
    gone = not nodes
    return Structured("not visible" if gone else f"still visible: {nodes[0].describe()}", gone)


TOOLS = (
    ToolImpl("findMatches", find_matches, mutates=False),
    ToolImpl("waitUntilNotVisible", wait_until_not_visible, mutates=False),
)
