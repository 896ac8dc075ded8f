"""Parse, don't cast: a call's arguments as its tool's JSON Schema accepts them, or a failure.

At dispatch, arguments go through three steps, in this order:

1. the same quote- and schema-aware conversion the type gate used (``argvalues.json_args``), so
   replay sees exactly the values ``tsc`` checked;
2. token substitution: ``{{args.x}}`` / ``${args.x}`` (the trail's arguments as bound before
   the run, ``trail.argbind``; tokens inside a value resolve too; ``{{args.x.field}}`` reads a
   field of an object argument's JSON value) and
   ``{{memory.x}}`` (``config.memory``); an unresolved token fails the tool; then the reference
   runtime's leniency for what the tokens made (``argvalues.runtime_values``): enum values in any
   case, a canonical number in a string where only a number fits;
3. validation against the tool's JSON Schema (``yaml.schema``, so the messages are the
   check's), then the schema's top-level defaults.

Composed YAML tools (``*.tool.yaml`` with ``tools:``) expand their body with ``expand_body``:
``{{params.x}}`` becomes the parameter's value (typed when it is the whole string), and a key
whose parameter was left out is dropped.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trailblaze.generate.argvalues import json_args, runtime_values
from trailblaze.replay.failure import ToolError
from trailblaze.trail.argtokens import (
    TOKEN,
    is_args_body,
    malformed_message,
    parse_token,
    token_body,
)
from trailblaze.yaml.node import PLAIN, YMap, YNode, YScalar, YSeq
from trailblaze.yaml.schema import check

_PARAM = re.compile(r"\{\{\s*params\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(frozen=True, slots=True)
class Tokens:
    """The values tokens of one trail resolve to."""

    args: Mapping[str, str] = field(default_factory=dict)
    """Argument values as bound (``argbind``): ``--arg`` over ``--args-file`` over the
    ``config.args`` default, each as the text its tokens become."""
    declared: frozenset[str] = frozenset()
    """Every argument ``config.args`` declares, with or without a value."""
    memory: Mapping[str, str] = field(default_factory=dict)
    sensitive: frozenset[str] = frozenset()
    """The memory names that hold secrets (``--secret``): tokens read them, scripts do not."""


def substitute(value: Any, tokens: Tokens) -> Any:
    """``value`` with every token in its strings replaced; ``ToolError`` names an unresolved one."""
    if isinstance(value, str):
        return _substitute_text(value, tokens) if "{" in value else value
    if isinstance(value, dict):
        return {key: substitute(item, tokens) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, tokens) for item in value]
    return value


def _substitute_text(text: str, tokens: Tokens, within: tuple[str, ...] = ()) -> str:
    """``text`` with its tokens replaced; ``within``: the arguments whose values hold it.

    An argument's value may hold tokens itself (a default of ``'{{memory.email}}'``, a sibling
    ``{{args.x}}``): Trailblaze resolves them when it seeds the arguments, so they resolve here,
    and an argument that comes back to itself is refused.
    """

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        body = token_body(match)
        if is_args_body(body):
            parsed = parse_token(body)
            if parsed is None:
                raise ToolError(malformed_message(token))
            name, path = parsed
            if name in tokens.args:
                value = tokens.args[name]
                if path or "{" not in value:
                    return _field(token, name, value, path)
                if name in within:
                    cycle = " -> ".join((*within[within.index(name) :], name))
                    raise ToolError(
                        f"unresolved token '{token}': arguments refer to each other in a "
                        f"cycle ({cycle})"
                    )
                return _substitute_text(value, tokens, (*within, name))
            if name in tokens.declared:
                raise ToolError(
                    f"unresolved token '{token}': argument '{name}' has no value and no default "
                    f"in config.args; pass --arg {name}=VALUE"
                )
            raise ToolError(
                f"unresolved token '{token}': argument '{name}' is not declared in config.args"
            )
        head, _, name = body.partition(".")
        if head == "memory":
            if name in tokens.memory:
                return tokens.memory[name]
            known = ", ".join(sorted(tokens.memory)) or "nothing"
            raise ToolError(
                f"unresolved token '{token}': memory value '{name}' is not set "
                f"(config.memory sets {known})"
            )
        # `{{x}}` is the runtime's memory too; text that merely looks like a token stays as is.
        return tokens.memory.get(body, token)

    return TOKEN.sub(replace, text)


def _field(token: str, name: str, value: str, path: tuple[str, ...]) -> str:
    """The field ``path`` of argument ``name`` (``value``: JSON text for an object argument)."""
    if not path:
        return value
    try:
        found: Any = json.loads(value)
    except (ValueError, RecursionError):
        found = value
    where = name
    for key in path:
        if not isinstance(found, dict):
            raise ToolError(
                f"unresolved token '{token}': argument '{where}' is not an object, "
                f"so it has no field '{key}'"
            )
        if key not in found:
            known = ", ".join(sorted(found)) or "none"
            raise ToolError(
                f"unresolved token '{token}': argument '{where}' has no field '{key}' "
                f"(fields: {known})"
            )
        found = found[key]
        where = f"{where}.{key}"
    return found if isinstance(found, str) else json.dumps(found)


def parse_arguments(
    tool: str,
    schema: Mapping[str, Any],
    *,
    node: YMap | None = None,
    raw: Any = None,
    tokens: Tokens,
    path: str,
    line: int,
    column: int,
) -> dict[str, Any]:
    """The arguments of one call, parsed with ``schema`` (self-contained, ``$defs`` attached).

    ``node`` is a call recorded in a trail (located); ``raw`` a call of a composed tool's body.
    """
    defs = schema.get("$defs", {})
    if node is not None:
        values = json_args(node, schema, defs)
    else:
        values = copy.deepcopy(raw) if raw is not None else {}
    values = runtime_values(substitute(values, tokens), schema, defs)
    issues = check(rebuild(node, values, line, column), schema, key_path=tool, at=(line, column))
    if issues:
        shown = "; ".join(
            f"{path}:{issue.line}:{issue.column}: {_relative(issue.key_path, tool)}{issue.message}"
            for issue in issues
        )
        raise ToolError(f"invalid arguments for '{tool}': {shown}")
    assert isinstance(values, dict)  # the schema of every tool input is an object
    for name, prop in schema.get("properties", {}).items():
        if name not in values and isinstance(prop, Mapping) and "default" in prop:
            values[name] = copy.deepcopy(prop["default"])
    return values


def _relative(key_path: str, tool: str) -> str:
    if key_path == tool:
        return ""
    return key_path.removeprefix(f"{tool}.") + ": "


def rebuild(node: YNode | None, value: Any, line: int, column: int) -> YNode:
    """A located node holding ``value``: positions and quote styles from ``node`` where it has them.

    ``yaml.schema`` validates nodes; this lets it validate the values replay will use (converted
    and substituted) while its messages still point into the trail.
    """
    if isinstance(value, dict):
        items: list[tuple[YScalar, YNode]] = []
        for key, item in value.items():
            key_node = node.key_node(str(key)) if isinstance(node, YMap) else None
            item_node = node.get(str(key)) if isinstance(node, YMap) else None
            key_node = key_node or YScalar(str(key), str(key), PLAIN, line, column)
            where = item_node or key_node
            items.append((key_node, rebuild(item_node, item, where.line, where.column)))
        return YMap(tuple(items), line, column)
    if isinstance(value, list):
        originals: Sequence[YNode | None] = node.items if isinstance(node, YSeq) else ()
        rebuilt = []
        for i, item in enumerate(value):
            original = originals[i] if i < len(originals) else None
            at = original or node
            rebuilt.append(
                rebuild(original, item, at.line if at else line, at.column if at else column)
            )
        return YSeq(tuple(rebuilt), line, column)
    if isinstance(node, YScalar):
        text = node.text if node.value == value else _text(value)
        return YScalar(value, text, node.style, node.line, node.column)
    return YScalar(value, _text(value), PLAIN, line, column)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


_ABSENT: Any = object()


def expand_body(
    body: Sequence[tuple[str, Any]], params: Mapping[str, Any]
) -> list[tuple[str, Any]]:
    """A composed tool's calls with its parameters filled in."""
    calls: list[tuple[str, Any]] = []
    for name, raw in body:
        filled = _fill(raw, params)
        calls.append((name, {} if filled is _ABSENT or filled is None else filled))
    return calls


def _fill(value: Any, params: Mapping[str, Any]) -> Any:
    if isinstance(value, str):
        whole = _PARAM.fullmatch(value.strip())
        if whole is not None:
            return params.get(whole.group(1), _ABSENT)

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in params:
                raise ToolError(f"parameter '{name}' used in '{value}' has no value")
            found = params[name]
            return found if isinstance(found, str) else json.dumps(found)

        return _PARAM.sub(replace, value)
    if isinstance(value, dict):
        filled = {key: _fill(item, params) for key, item in value.items()}
        return {key: item for key, item in filled.items() if item is not _ABSENT}
    if isinstance(value, list):
        return [item for item in (_fill(v, params) for v in value) if item is not _ABSENT]
    return value
