"""What the steps of both formats share: their text (`step:` or `verify:`), `recordable` and
`maxRetries`, read before the format's own recording."""

from __future__ import annotations

import msgspec

from trailblaze import codes
from trailblaze.finding import join_key
from trailblaze.trail.grammar import Block
from trailblaze.trail.model import Recording, Step, StepKind
from trailblaze.trail.parse.reader import Reader, Reject
from trailblaze.yaml.node import YMap, YNode, YScalar


class StepHead(msgspec.Struct, frozen=True, kw_only=True):
    """A step mapping and what it says besides its recording."""

    mapping: YMap
    kind: StepKind
    text: str | None
    recordable: bool
    max_retries: int | None

    def step(self, *, number: int, recordings: tuple[Recording, ...], key_path: str) -> Step:
        return Step(
            number=number,
            kind=self.kind,
            text=self.text,
            recordable=self.recordable,
            recordings=recordings,
            has_recording="recording" in self.mapping,
            max_retries=self.max_retries,
            line=self.mapping.line,
            column=self.mapping.column,
            key_path=key_path,
        )


def read_head(
    reader: Reader, node: YNode, key_path: str, block: Block, *, strict_both: bool
) -> StepHead | None:
    """A step's mapping checked against `block`, its text and options; None if not a mapping."""
    try:
        step = reader.expect_map(node, key_path)
    except Reject:
        return None
    reader.unknown_keys(step, key_path, block)
    kind, text = read_text(reader, step, key_path, strict_both=strict_both)
    recordable, max_retries = read_options(reader, step, key_path)
    return StepHead(
        mapping=step, kind=kind, text=text, recordable=recordable, max_retries=max_retries
    )


def read_text(
    reader: Reader, step: YMap, key_path: str, *, strict_both: bool
) -> tuple[StepKind, str | None]:
    """Which of `step:` / `verify:` the step is, and its text.

    Both set is an error in strict mode, or always when `strict_both` (the unified format).
    """
    kind: StepKind = "step"
    node = step.get("step")
    if node is None:
        kind, node = "verify", step.get("verify")
    elif "verify" in step:
        if strict_both or reader.strict:
            reader.error(
                step.key_node("verify") or step,
                key_path,
                "'step' and 'verify' cannot both be set; keep one",
                code=codes.INVALID_VALUE,
            )
        else:
            reader.warn(
                step.key_node("verify") or step,
                key_path,
                "'step' and 'verify' both set; 'verify' ignored (lenient mode)",
                code=codes.INVALID_VALUE,
            )
    if node is None:
        reader.error(step, key_path, "a step needs 'step' or 'verify' text", code=codes.MISSING_KEY)
        return "step", None
    text = reader.text(node, join_key(key_path, kind))
    if isinstance(node, YScalar) and not (text or "").strip():
        reader.error(node, join_key(key_path, kind), "must not be empty", code=codes.EMPTY)
    return kind, text


def read_options(reader: Reader, step: YMap, key_path: str) -> tuple[bool, int | None]:
    """A step's `recordable` flag and `maxRetries`, read alike in both formats."""
    recordable = True
    if (flag := step.get("recordable")) is not None:
        # An invalid flag was reported; it does not also count as `false`.
        value = reader.boolean(flag, join_key(key_path, "recordable"))
        recordable = True if value is None else value
    return recordable, reader.max_retries(step, key_path)
