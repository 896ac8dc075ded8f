"""What the steps of both formats share: their text (`step:` or `verify:`), `recordable` and
`maxRetries`."""

from __future__ import annotations

from trailblaze.finding import join_key
from trailblaze.parse.reader import Reader
from trailblaze.trail import StepKind
from trailblaze.yamlnode import YMap, YScalar


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
                "invalid-value",
            )
        else:
            reader.warn(
                step.key_node("verify") or step,
                key_path,
                "'step' and 'verify' both set; 'verify' ignored (lenient mode)",
                "invalid-value",
            )
    if node is None:
        reader.error(step, key_path, "a step needs 'step' or 'verify' text", "missing-key")
        return "step", None
    text = reader.text(node, join_key(key_path, kind))
    if isinstance(node, YScalar) and not (text or "").strip():
        reader.error(node, join_key(key_path, kind), "must not be empty", "empty")
    return kind, text


def read_options(reader: Reader, step: YMap, key_path: str) -> tuple[bool, int | None]:
    """A step's `recordable` flag and `maxRetries`, read alike in both formats."""
    recordable = True
    if (flag := step.get("recordable")) is not None:
        # An invalid flag was reported; it does not also count as `false`.
        value = reader.boolean(flag, join_key(key_path, "recordable"))
        recordable = True if value is None else value
    return recordable, reader.max_retries(step, key_path)
