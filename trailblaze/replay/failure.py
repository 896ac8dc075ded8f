"""How a replayed tool fails, as the engine sees it: three kinds, never a boolean.

- ``ExpectedFailure``: the screen is not what the recording expects (an assertion not met, an
  element not found in time). A ``runIf`` condition tool that fails this way means "false".
- ``ToolError``: the tool cannot run (unknown or unsupported tool, arguments that do not parse,
  an unresolved token, a selector field the dump cannot answer, a device command that failed).
  It fails the step, and a ``runIf`` condition never reads it as "false".
- ``FatalToolError``: the device is gone ("device lost": the connection closed, reset or timed
  out, or a read came back empty). It is attributed to the tool in flight; the trail stops, and
  so does the device's share of the run (with one device, the run).

``Cancelled`` is raised by waits inside a tool when the run's cancellation event is set.
``classify`` maps the device layer's errors onto these kinds in one place.
"""

from __future__ import annotations

from typing import Literal

from trailblaze.replay.device import DeviceError, DeviceLostError
from trailblaze.replay.hierarchy import Hierarchy, visible_nodes
from trailblaze.replay.javaregex import JavaRegexError
from trailblaze.replay.matches import NoMatchError
from trailblaze.replay.selector import SelectorError

FailureKind = Literal["expected", "error", "fatal"]


class ToolFailure(Exception):
    """A tool did not succeed; ``kind`` says how (see the module docstring)."""

    kind: FailureKind = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ExpectedFailure(ToolFailure):
    kind: FailureKind = "expected"


class ToolError(ToolFailure):
    kind: FailureKind = "error"


class FatalToolError(ToolFailure):
    kind: FailureKind = "fatal"


class Cancelled(Exception):
    """The run was cancelled while a tool was waiting."""


def classify(exc: Exception) -> ToolFailure | None:
    """The tool failure an exception from the device layer stands for; None for anything else.

    Anything else is a bug in replay and keeps its traceback.
    """
    if isinstance(exc, ToolFailure):
        return exc
    if isinstance(exc, DeviceLostError):
        text = str(exc)
        return FatalToolError(text if "device lost" in text else f"device lost: {text}")
    if isinstance(exc, DeviceError | SelectorError | JavaRegexError):
        return ToolError(str(exc))
    if isinstance(exc, NoMatchError):
        return ExpectedFailure(str(exc))
    return None


def screen_summary(screen: Hierarchy, limit: int = 12) -> str:
    """The texts on screen, for "not found" messages: what the device showed instead."""
    texts: list[str] = []
    for node in visible_nodes(screen):
        text = node.resolved_text
        if text and text not in texts:
            texts.append(text)
    if not texts:
        return "the screen shows no text"
    shown = ", ".join(repr(t) for t in texts[:limit])
    more = f" and {len(texts) - limit} more" if len(texts) > limit else ""
    return f"the screen shows {shown}{more}"
