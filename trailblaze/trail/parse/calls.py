"""Recorded tool calls: `- toolName: {arguments}`, as both trail formats write them.

Only the shape is judged here (one key, a non-empty name, a mapping of arguments or nothing);
which tools exist and what they accept is the type gate's business.
"""

from __future__ import annotations

from trailblaze import codes
from trailblaze.finding import join_key
from trailblaze.trail.model import BLANK_TOOL_NAME, ToolCall, is_blank_name
from trailblaze.trail.parse.reader import Reader
from trailblaze.yaml.node import YMap, YNode, YScalar, YSeq, kind_of


def read_calls(reader: Reader, items: YSeq, key_path: str) -> tuple[ToolCall, ...]:
    """The calls of a list; an item that is not a call is reported and left out."""
    out: list[ToolCall] = []
    for i, item in enumerate(items.items):
        call = read_call(reader, item, join_key(key_path, i))
        if call is not None:
            out.append(call)
    return tuple(out)


def read_call(reader: Reader, node: YNode, key_path: str) -> ToolCall | None:
    if isinstance(node, YScalar) and isinstance(node.value, str) and node.value:
        reader.error(
            node,
            key_path,
            f"a tool call is a mapping '{node.value}: {{...}}', found the bare name "
            f"'{node.value}'; write '{node.value}: {{}}'",
            code=codes.WRONG_TYPE,
        )
        return None
    if not isinstance(node, YMap) or len(node) == 0:
        reader.error(
            node,
            key_path,
            f"expected a tool call '<tool>: {{...}}', found {kind_of(node)}",
            code=codes.WRONG_TYPE,
        )
        return None
    (name_key, args), *extra = node.items
    name = name_key.text
    if extra:
        others = ", ".join(f"'{k.text}'" for k, _ in extra)
        reader.error(
            extra[0][0],
            key_path,
            f"a tool call has exactly one key, the tool name '{name}'; also found {others} "
            f"(should it be indented under '{name}'?)",
            code=codes.UNKNOWN_KEY,
        )
    if is_blank_name(name_key):
        reader.error(name_key, key_path, BLANK_TOOL_NAME, code=codes.INVALID_VALUE)
        return None
    call_path = join_key(key_path, name)
    if isinstance(args, YScalar) and args.is_null:
        arg_map: YMap | None = None
    elif isinstance(args, YMap):
        arg_map = args
    else:
        reader.error(
            args,
            call_path,
            f"arguments of '{name}' must be a mapping, found {kind_of(args)}",
            code=codes.WRONG_TYPE,
        )
        return None
    return ToolCall(
        name=name, args=arg_map, line=name_key.line, column=name_key.column, key_path=key_path
    )
