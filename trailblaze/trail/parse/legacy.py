"""The legacy trail format: a list of `- config:`, `- trailhead:`, `- prompts:` (steps, each
recording `tools:`) and `- tools:` blocks, one device's calls without classifiers."""

from __future__ import annotations

import contextlib

from trailblaze import codes
from trailblaze.finding import did_you_mean, join_key
from trailblaze.trail.grammar import (
    LEGACY_CONFIG,
    LEGACY_ITEM,
    LEGACY_RECORDING,
    LEGACY_STEP,
    LEGACY_TRAILHEAD,
)
from trailblaze.trail.model import Recording, Step, ToolCall, Trail, TrailConfig
from trailblaze.trail.parse.calls import read_calls
from trailblaze.trail.parse.config import read_config
from trailblaze.trail.parse.reader import Reader, Reject
from trailblaze.trail.parse.step import read_head
from trailblaze.yaml.node import YMap, YNode, YScalar, YSeq, kind_of


def read_legacy(reader: Reader, root: YSeq) -> Trail:
    config = TrailConfig()
    trailhead: Step | None = None
    steps: list[Step] = []
    number = 0
    seen_config = seen_body = False
    for i, item in enumerate(root.items):
        item_path = f"[{i}]"
        if not isinstance(item, YMap) or len(item) != 1:
            found = kind_of(item) if not isinstance(item, YMap) else f"{len(item)} keys"
            reader.error(
                item,
                item_path,
                f"each item of a legacy trail is one of '- config:', '- prompts:', "
                f"'- tools:', '- trailhead:'; found {found}",
                code=codes.WRONG_TYPE,
            )
            continue
        key, value = item.items[0]
        name = key.text
        if name not in LEGACY_ITEM.names:
            reader.error(
                key,
                item_path,
                f"unknown item '{name}'{did_you_mean(name, LEGACY_ITEM.names)}",
                code=codes.UNKNOWN_KEY,
            )
            continue
        path = join_key(item_path, name)
        if name == "config":
            if seen_config or i != 0:
                reader.error(
                    key,
                    item_path,
                    "'- config:' must be the first item and appear once",
                    code=codes.INVALID_VALUE,
                )
            seen_config = True
            config = read_config(reader, value, path, LEGACY_CONFIG)
        elif name == "trailhead":
            if trailhead is not None or seen_body:
                reader.error(
                    key,
                    item_path,
                    "'- trailhead:' appears once, before any prompts or tools",
                    code=codes.INVALID_VALUE,
                )
            trailhead = _trailhead(reader, value, path)
        elif name == "prompts":
            seen_body = True
            try:
                prompts = reader.expect_list(value, path)
            except Reject:
                continue
            for j, prompt in enumerate(prompts.items):
                number += 1
                step = _prompt(reader, prompt, number, join_key(path, j))
                if step is not None:
                    steps.append(step)
        else:
            seen_body = True
            try:
                tools = reader.expect_list(value, path)
            except Reject:
                continue
            recording = Recording(
                classifier=None,
                calls=read_calls(reader, tools, path),
                line=key.line,
                column=key.column,
            )
            steps.append(
                Step(
                    number=0,
                    kind="tools",
                    text=None,
                    recordable=True,
                    recordings=(recording,),
                    has_recording=True,
                    max_retries=None,
                    line=key.line,
                    column=key.column,
                    key_path=path,
                )
            )
    return Trail(
        path=reader.path, format="legacy", config=config, trailhead=trailhead, steps=tuple(steps)
    )


def _prompt(reader: Reader, node: YNode, number: int, key_path: str) -> Step | None:
    head = read_head(reader, node, key_path, LEGACY_STEP, strict_both=False)
    if head is None:
        return None
    step = head.mapping
    recordings: tuple[Recording, ...] = ()
    if (rec_node := step.get("recording")) is not None:
        rec_path = join_key(key_path, "recording")
        try:
            rec = reader.expect_map(rec_node, rec_path)
            reader.unknown_keys(rec, rec_path, LEGACY_RECORDING)
            if (tools_node := rec.get("tools")) is None:
                reader.error(
                    rec,
                    rec_path,
                    "missing 'tools' (use 'tools: []' for a deliberate no-op)",
                    code=codes.MISSING_KEY,
                )
            else:
                tools_path = join_key(rec_path, "tools")
                tools = reader.expect_list(tools_node, tools_path)
                recordings = (
                    Recording(
                        classifier=None,
                        calls=read_calls(reader, tools, tools_path),
                        line=rec.line,
                        column=rec.column,
                    ),
                )
        except Reject:
            pass
    return head.step(number=number, recordings=recordings, key_path=key_path)


def _trailhead(reader: Reader, node: YNode, key_path: str) -> Step | None:
    if isinstance(node, YScalar) and isinstance(node.value, str) and node.value:
        # The bare-string shorthand: one tool with no arguments.
        call = ToolCall(
            name=node.value, args=None, line=node.line, column=node.column, key_path=key_path
        )
        return Step(
            number=0,
            kind="trailhead",
            text=None,
            recordable=True,
            recordings=(
                Recording(classifier=None, calls=(call,), line=node.line, column=node.column),
            ),
            has_recording=True,
            max_retries=None,
            line=node.line,
            column=node.column,
            key_path=key_path,
        )
    try:
        head = reader.expect_map(node, key_path)
    except Reject:
        return None
    reader.unknown_keys(head, key_path, LEGACY_TRAILHEAD)
    text = None
    if (step_node := head.get("step")) is not None:
        text = reader.text(step_node, join_key(key_path, "step"))
    calls: tuple[ToolCall, ...] = ()
    if (tools_node := head.get("tools")) is not None:
        tools_path = join_key(key_path, "tools")
        with contextlib.suppress(Reject):
            calls = read_calls(reader, reader.expect_list(tools_node, tools_path), tools_path)
    if not text and not calls:
        reader.error(
            head,
            key_path,
            "a trailhead needs 'step' or a non-empty 'tools' list",
            code=codes.MISSING_KEY,
        )
    max_retries = reader.max_retries(head, key_path)
    recordings = (
        (Recording(classifier=None, calls=calls, line=head.line, column=head.column),)
        if "tools" in head
        else ()
    )
    return Step(
        number=0,
        kind="trailhead",
        text=text,
        recordable=True,
        recordings=recordings,
        has_recording="tools" in head,
        max_retries=max_retries,
        line=head.line,
        column=head.column,
        key_path=key_path,
    )
