"""The unified trail format: a mapping of `config:`, `trailhead:` and `trail:` (the steps),
each step recording its calls per device classifier (`recording: {android: [...]}`)."""

from __future__ import annotations

from collections.abc import Iterator

from trailblaze import codes
from trailblaze.finding import join_key
from trailblaze.trail.grammar import CONFIG, STEP, TRAILHEAD, UNIFIED
from trailblaze.trail.model import Recording, Step, ToolCall, Trail, TrailConfig, is_blank_name
from trailblaze.trail.parse.calls import read_call, read_calls
from trailblaze.trail.parse.config import read_config
from trailblaze.trail.parse.reader import Reader, Reject
from trailblaze.trail.parse.step import read_head
from trailblaze.yaml.node import YMap, YNode, YScalar, YSeq


def read_unified(reader: Reader, root: YMap) -> Trail:
    reader.unknown_keys(root, "", UNIFIED)
    config = TrailConfig()
    if (node := root.get("config")) is not None:
        config = read_config(reader, node, "config", CONFIG)
    trailhead = None
    if (node := root.get("trailhead")) is not None:
        trailhead = _trailhead(reader, node)
    steps: list[Step] = []
    trail_node = root.get("trail")
    if trail_node is None:
        if "trail" in root:
            reader.error(
                root.key_node("trail") or root, "trail", "must not be empty", code=codes.EMPTY
            )
        elif "trailhead" in root or "config" not in root:
            reader.error(root, "", "missing 'trail' (the list of steps)", code=codes.MISSING_KEY)
    else:
        try:
            items = reader.expect_list(trail_node, "trail")
            # A stepless document (`config:` and `trail: []`) is a trail, as the reference
            # accepts it; without a config, or after a trailhead, an empty list is a mistake.
            if not items.items and ("config" not in root or "trailhead" in root):
                reader.error(items, "trail", "must not be empty", code=codes.EMPTY)
            for i, item in enumerate(items.items):
                step = _step(reader, item, i + 1, join_key("trail", i))
                if step is not None:
                    steps.append(step)
        except Reject:
            pass
    return Trail(
        path=reader.path,
        format="unified",
        config=config,
        trailhead=trailhead,
        steps=tuple(steps),
    )


def _recording_slots(
    reader: Reader, owner: YMap, key_path: str
) -> Iterator[tuple[YScalar, str, str, YNode]]:
    """The slots of a `recording:` mapping: key, classifier, slot key path, value."""
    rec_path = join_key(key_path, "recording")
    node = owner.get("recording")
    if node is None:
        return
    try:
        rec_map = reader.expect_map(node, rec_path)
    except Reject:
        return
    for cls_key, value in rec_map:
        if is_blank_name(cls_key):
            reader.error(
                cls_key,
                rec_path,
                "a device classifier must be a non-empty name",
                code=codes.INVALID_VALUE,
            )
        classifier = cls_key.text
        yield cls_key, classifier, join_key(rec_path, classifier), value


def _step(reader: Reader, node: YNode, number: int, key_path: str) -> Step | None:
    head = read_head(reader, node, key_path, STEP, strict_both=True)
    if head is None:
        return None
    recordings: list[Recording] = []
    for cls_key, classifier, slot_path, value in _recording_slots(reader, head.mapping, key_path):
        try:
            calls = reader.expect_list(value, slot_path)
        except Reject:
            continue
        recordings.append(
            Recording(
                classifier=classifier,
                calls=read_calls(reader, calls, slot_path),
                line=cls_key.line,
                column=cls_key.column,
            )
        )
    if not head.recordable and any(r.calls for r in recordings):
        reader.error(
            head.mapping.key_node("recordable") or head.mapping,
            key_path,
            "'recordable: false' with a non-empty recording; remove one of them",
            code=codes.INVALID_VALUE,
        )
    return head.step(number=number, recordings=tuple(recordings), key_path=key_path)


def _trailhead(reader: Reader, node: YNode) -> Step | None:
    key_path = "trailhead"
    try:
        head = reader.expect_map(node, key_path)
    except Reject:
        return None
    reader.unknown_keys(head, key_path, TRAILHEAD)
    text = None
    if (step_node := head.get("step")) is not None:
        text = reader.text(step_node, join_key(key_path, "step"))
    max_retries = reader.max_retries(head, key_path)
    recordings: list[Recording] = []
    if "recording" in head:
        for cls_key, classifier, slot_path, value in _recording_slots(reader, head, key_path):
            if isinstance(value, YSeq):
                reader.error(
                    value,
                    slot_path,
                    "a trailhead records one tool call per classifier, not a list",
                    code=codes.WRONG_TYPE,
                )
                continue
            if isinstance(value, YMap) and len(value) == 0:
                calls: tuple[ToolCall, ...] = ()
            else:
                call = read_call(reader, value, slot_path)
                calls = (call,) if call is not None else ()
            recordings.append(
                Recording(
                    classifier=classifier, calls=calls, line=cls_key.line, column=cls_key.column
                )
            )
    elif text is None:
        reader.error(
            head, key_path, "a trailhead needs 'step' or 'recording'", code=codes.MISSING_KEY
        )
    return Step(
        number=0,
        kind="trailhead",
        text=text,
        recordable=True,
        recordings=tuple(recordings),
        has_recording="recording" in head,
        max_retries=max_retries,
        line=head.line,
        column=head.column,
        key_path=key_path,
    )
