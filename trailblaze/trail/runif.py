"""`runIf`, the one conditional allowed in recordings: its grammar and the one validator.

```yaml
- runIf:
    condition: { selector: { androidAccessibility: { textRegex: "Not now" } } }
    then: [ { tapOnElementBySelector: { ... } } ]
    else: [ ... ]   # optional
```

The condition is a selector that must match, or one tool call that must succeed, in any shape
upstream can record: `{tool: NAME}`, `{tool: NAME, args: {...}}` (the shape upstream's schema
shows: `condition: {selector} | {tool: string}`, a union that forbids no sibling key) or ours,
`{tool: {NAME: {...}}}`. A key beside the selector or the tool that runIf does not read is a
warning, not an error (upstream does not forbid it); a condition with neither, or both, is an
error, as is a non-empty `then` missing, another key beside `condition`/`then`/`else` (a
misspelled `else` would silently drop a branch) or a third level of `runIf`. The whole tree is
validated before anything runs, branches not taken included; `doit check` and `doit replay`
both call `parse_runif`, so they reject exactly the same trees with the same messages.

This is the grammar of our `runIf`. A trailmap that ships its own `runIf` tool replaces ours
(`toolmodel.resolution.ships_runif`): its calls are then ordinary calls, checked against its
input type, and nothing here applies to them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import msgspec

from trailblaze import codes
from trailblaze.finding import Finding, did_you_mean, join_key
from trailblaze.trail.model import BLANK_TOOL_NAME, ToolCall, Trail, is_blank_name
from trailblaze.yaml.node import YMap, YNode, YScalar, YSeq, kind_of

RUNIF = "runIf"
MAX_DEPTH = 2
KEYS = ("condition", "then", "else")
CONDITION_KEYS = ("selector", "tool")
TOOL_ARGS = "args"
"""Beside a tool given by name, its arguments (`{tool: NAME, args: {...}}`)."""


class Branch(msgspec.Struct, frozen=True):
    """A call inside a branch (or the condition tool), with its position in the tree."""

    call: ToolCall
    position: str
    """Where it sits, e.g. `runIf.then[1]` or `runIf.then[0] › runIf.else[0]`."""
    runif: RunIf | None = None
    """Set when the call is itself a (valid) nested runIf."""


class RunIf(msgspec.Struct, frozen=True):
    """A `runIf` call: its selector or condition tool, and its branches."""

    call: ToolCall
    selector: YMap | None
    condition_tool: Branch | None
    then: tuple[Branch, ...]
    otherwise: tuple[Branch, ...]

    def calls(self) -> Iterator[Branch]:
        """Every call of the tree (condition tool and both branches, nested ones too)."""
        if self.condition_tool is not None:
            yield self.condition_tool
        for branch in (*self.then, *self.otherwise):
            yield branch
            if branch.runif is not None:
                for inner in branch.runif.calls():
                    yield Branch(
                        call=inner.call,
                        position=f"{branch.position} › {inner.position}",
                        runif=inner.runif,
                    )


def signature(tree: RunIf) -> str:
    """The same branch recorded twice has the same signature, however it was written."""
    args = tree.call.args
    assert args is not None, "a RunIf is only built from a call with arguments"
    return json.dumps(args.to_python(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def parse_runif(call: ToolCall, path: str, *, depth: int = 1) -> tuple[RunIf | None, list[Finding]]:
    """Validate one `runIf` call: the tree when valid (warnings allowed), else None; and the
    located findings, warnings (`runif-ignored-key`) included."""
    v = _Validator(path)
    tree = v.runif(call, call.key_path, depth)
    return (None if any(f.fatal for f in v.findings) else tree), v.findings


class _Validator:
    def __init__(self, path: str) -> None:
        self.path = path
        self.findings: list[Finding] = []

    def error(
        self, node: YNode | YScalar | ToolCall, key_path: str, message: str, *, code: str
    ) -> None:
        self.findings.append(
            Finding(
                "runif",
                self.path,
                node.line,
                node.column,
                message,
                key_path=key_path,
                code=code,
                tool=RUNIF,
            )
        )

    def runif(self, call: ToolCall, key_path: str, depth: int) -> RunIf | None:
        here = join_key(key_path, RUNIF)
        if depth > MAX_DEPTH:
            self.error(
                call,
                here,
                f"runIf nested more than {MAX_DEPTH} levels deep",
                code=codes.RUNIF_DEPTH,
            )
            return None
        args = call.args
        if args is None:
            self.error(call, here, "runIf needs 'condition' and 'then'", code=codes.RUNIF_MISSING)
            return None
        for key, _ in args:
            if key.text not in KEYS:
                self.error(
                    key,
                    here,
                    f"unknown key '{key.text}'{did_you_mean(key.text, KEYS)}; "
                    f"runIf takes condition, then and else",
                    code=codes.RUNIF_UNKNOWN_KEY,
                )
        selector, tool = self.condition(args, here, call)
        then = self.branch(args, "then", here, call, depth, required=True)
        otherwise = self.branch(args, "else", here, call, depth, required=False)
        return RunIf(
            call=call, selector=selector, condition_tool=tool, then=then, otherwise=otherwise
        )

    def condition(self, args: YMap, here: str, call: ToolCall) -> tuple[YMap | None, Branch | None]:
        node = args.get("condition")
        key_path = join_key(here, "condition")
        if node is None:
            self.error(
                call,
                here,
                "missing 'condition' (a selector or a tool call)",
                code=codes.RUNIF_MISSING,
            )
            return None, None
        if not isinstance(node, YMap):
            self.error(
                node,
                key_path,
                f"expected a mapping with 'selector' or 'tool', found {kind_of(node)}",
                code=codes.RUNIF_CONDITION,
            )
            return None, None
        present = [k for k in CONDITION_KEYS if k in node]
        if len(present) == 2:
            self.error(
                node,
                key_path,
                "a condition has either 'selector' or 'tool', not both",
                code=codes.RUNIF_CONDITION,
            )
            return None, None
        if not present:
            # Nothing to decide with: every key is at fault (a misspelled `selector`, say).
            for key, _ in node:
                self.error(
                    key,
                    key_path,
                    f"unknown condition '{key.text}'{did_you_mean(key.text, CONDITION_KEYS)}; "
                    "a condition is either 'selector' or 'tool'",
                    code=codes.RUNIF_CONDITION,
                )
            if len(node) == 0:
                self.error(
                    node,
                    key_path,
                    "a condition needs 'selector' or 'tool'",
                    code=codes.RUNIF_CONDITION,
                )
            return None, None
        self.ignored(node, key_path, present[0])
        value = node.get(present[0])
        if present[0] == "selector":
            if not isinstance(value, YMap) or len(value) == 0:
                self.error(
                    value or node,
                    join_key(key_path, "selector"),
                    f"expected a selector mapping, found {kind_of(value)}",
                    code=codes.RUNIF_CONDITION,
                )
                return None, None
            return value, None
        tool_path = join_key(key_path, "tool")
        given = node.get(TOOL_ARGS)
        if isinstance(value, YScalar) and isinstance(value.value, str):
            inner = self.named(value, given, tool_path, join_key(key_path, TOOL_ARGS))
        elif isinstance(value, YMap) and len(value) == 1:
            if given is not None:
                self.error(
                    node.key_node(TOOL_ARGS) or node,
                    key_path,
                    f"'{TOOL_ARGS}' goes with a tool given by name ('tool: NAME'); here the "
                    f"arguments are under the tool's name already, so they would be given twice",
                    code=codes.RUNIF_CONDITION,
                )
                return None, None
            inner = self.call(value, tool_path)
        else:
            found = kind_of(value) if not isinstance(value, YMap) else f"{len(value)} keys"
            self.error(
                value or node,
                tool_path,
                f"expected a tool name or one tool call '{{<tool>: {{...}}}}', found {found}",
                code=codes.RUNIF_CONDITION,
            )
            return None, None
        if inner is None:
            return None, None
        if inner.name == RUNIF:
            where = value if isinstance(value, YScalar) else value.items[0][0]
            self.error(
                where, tool_path, "a condition tool cannot be runIf", code=codes.RUNIF_CONDITION
            )
            return None, None
        return None, Branch(call=inner, position="runIf.condition")

    def ignored(self, node: YMap, key_path: str, kind: str) -> None:
        """Keys beside the condition's selector or tool that runIf does not read: warnings.

        Upstream's schema (`condition: {selector} | {tool}`, a union with no closed shape)
        does not forbid a sibling key, so one is not fatal; but replay ignores it, and a
        misspelled `args` would drop the arguments, so it is said.
        """
        reads = (kind, TOOL_ARGS) if kind == "tool" else (kind,)
        for key, _ in node:
            if key.text in reads:
                continue
            known = (*CONDITION_KEYS, TOOL_ARGS)
            hint = (
                ""
                if key.text in known
                else did_you_mean(key.text, reads) or did_you_mean(key.text, known)
            )
            self.findings.append(
                Finding(
                    "warning",
                    self.path,
                    key.line,
                    key.column,
                    f"'{key.text}' is ignored{hint}: a condition with '{kind}' reads "
                    + ("'tool' and its 'args'" if kind == "tool" else "only its 'selector'"),
                    key_path=key_path,
                    code=codes.RUNIF_IGNORED_KEY,
                    tool=RUNIF,
                    fatal=False,
                )
            )

    def named(
        self, name: YScalar, given: YNode | None, tool_path: str, args_path: str
    ) -> ToolCall | None:
        """The condition's call when its tool is given by name, its arguments in `args`."""
        if is_blank_name(name):
            self.error(name, tool_path, BLANK_TOOL_NAME, code=codes.RUNIF_BRANCH)
            return None
        text = str(name.value)
        if given is None or (isinstance(given, YScalar) and given.is_null):
            args = None
        elif isinstance(given, YMap):
            args = given
        else:
            self.error(
                given,
                args_path,
                f"arguments of '{text}' must be a mapping, found {kind_of(given)}",
                code=codes.RUNIF_CONDITION,
            )
            return None
        return ToolCall(
            name=text, args=args, line=name.line, column=name.column, key_path=tool_path
        )

    def branch(
        self, args: YMap, name: str, here: str, call: ToolCall, depth: int, *, required: bool
    ) -> tuple[Branch, ...]:
        key_path = join_key(here, name)
        node = args.get(name)
        if node is None:
            if required:
                self.error(
                    call,
                    here,
                    f"missing '{name}' (the calls to run when the condition holds)",
                    code=codes.RUNIF_MISSING,
                )
            return ()
        if not isinstance(node, YSeq):
            self.error(
                node,
                key_path,
                f"expected a list of tool calls, found {kind_of(node)}",
                code=codes.RUNIF_BRANCH,
            )
            return ()
        if required and not node.items:
            self.error(node, key_path, "must not be empty", code=codes.RUNIF_BRANCH)
            return ()
        out: list[Branch] = []
        for i, item in enumerate(node.items):
            item_path = join_key(key_path, i)
            inner = self.call(item, item_path)
            if inner is None:
                continue
            position = f"runIf.{name}[{i}]"
            nested = None
            if inner.name == RUNIF:
                nested = self.runif(inner, item_path, depth + 1)
                if nested is None:
                    continue
            out.append(Branch(call=inner, position=position, runif=nested))
        return tuple(out)

    def call(self, node: YNode, key_path: str) -> ToolCall | None:
        if not isinstance(node, YMap) or len(node) != 1:
            found = kind_of(node) if not isinstance(node, YMap) else f"{len(node)} keys"
            self.error(
                node,
                key_path,
                f"expected one tool call '<tool>: {{...}}', found {found}",
                code=codes.RUNIF_BRANCH,
            )
            return None
        key, args = node.items[0]
        if is_blank_name(key):
            self.error(key, key_path, BLANK_TOOL_NAME, code=codes.RUNIF_BRANCH)
            return None
        if isinstance(args, YScalar) and args.is_null:
            return ToolCall(
                name=key.text, args=None, line=key.line, column=key.column, key_path=key_path
            )
        if not isinstance(args, YMap):
            self.error(
                args,
                join_key(key_path, key.text),
                f"arguments of '{key.text}' must be a mapping, found {kind_of(args)}",
                code=codes.RUNIF_BRANCH,
            )
            return None
        return ToolCall(
            name=key.text, args=args, line=key.line, column=key.column, key_path=key_path
        )


def runif_findings(
    trail: Trail, *, ours: bool = True
) -> tuple[list[Finding], tuple[tuple[str, int, int], ...]]:
    """Every runIf tree of a trail through the shared validator, and the valid ones' signatures.

    The one loop for the check (its parse workers), replay's refusal and the baseline. Not
    `ours`: the trail's trailmap ships its own runIf, to which none of this applies.
    """
    out: list[Finding] = []
    if not ours:
        return out, ()
    branches: list[tuple[str, int, int]] = []
    for _, _, call in trail.calls():
        if call.name == RUNIF:
            tree, problems = parse_runif(call, trail.path)
            out.extend(problems)
            if tree is not None:
                branches.append((signature(tree), call.line, call.column))
    return out, tuple(branches)
