"""Typing, keys, the keyboard, the clipboard and waiting (replay.md §2.1).

The clipboard has no portable adb read-back: ``mobile_setClipboard`` broadcasts to the Clipper
app *and* keeps the text in the execution context; ``mobile_pasteClipboard`` types that cached
text. So a paste works only after a set in the same context (the same step recording, unless
``TRAILBLAZE_DISABLE_BATCHED_TOOL_EXECUTION`` gives every tool its own).
"""

from __future__ import annotations

import time
from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.device import KeyCode
from trailblaze.replay.failure import ExpectedFailure, ToolError
from trailblaze.replay.hierarchy import Hierarchy, visible_nodes
from trailblaze.replay.tools.base import ToolImpl

KEYS = {
    "BACK": KeyCode.BACK,
    "ENTER": KeyCode.ENTER,
    "HOME": KeyCode.HOME,
    "BACKSPACE": KeyCode.DEL,
    "TAB": KeyCode.TAB,
    "ESCAPE": KeyCode.ESCAPE,
}
_NAVIGATING = frozenset({KeyCode.BACK, KeyCode.HOME, KeyCode.ENTER})


def hide_keyboard_if_shown(context: ExecutionContext) -> bool:
    # BACK only while the IME shows: a blind BACK navigates the screen away (replay.md §2.1).
    if context.device.is_keyboard_shown():
        context.device.keyevent(KeyCode.BACK)
        return True
    return False


def input_text(context: ExecutionContext, args: dict[str, Any]) -> str:
    text = args["text"]
    context.device.input_text(text)
    hid = args.get("hideKeyboardAfter", True) and hide_keyboard_if_shown(context)
    return f"typed {text!r}" + (" and hid the keyboard" if hid else "")


def _focused_length(context: ExecutionContext) -> int:
    screen = context.screen(fresh=True)
    focused = [n for n in visible_nodes(screen) if n.focused]
    if not focused:
        raise ToolError(
            "no field has the focus, so there is nothing to erase (tap the field first)"
        )
    node = focused[-1]
    if node.hint and node.text == node.hint:
        return 0  # some platforms show an empty field's hint as its text
    return len(node.text)


def _erase(context: ExecutionContext, count: int) -> str:
    if count < 0:
        raise ToolError(f"cannot erase a negative number of characters ({count})")
    if count == 0:
        return "nothing to erase"
    context.device.keyevent(KeyCode.MOVE_END)
    context.device.keyevent(*([KeyCode.DEL] * count))
    return f"erased {count} character(s)"


def erase_text(context: ExecutionContext, args: dict[str, Any]) -> str:
    count = args.get("charactersToErase")
    return _erase(context, _focused_length(context) if count is None else int(count))


def clear_text(context: ExecutionContext, args: dict[str, Any]) -> str:
    return _erase(context, _focused_length(context))


def hide_keyboard(context: ExecutionContext, args: dict[str, Any]) -> str:
    return "hid the keyboard" if hide_keyboard_if_shown(context) else "the keyboard was not showing"


def press_back(context: ExecutionContext, args: dict[str, Any]) -> str:
    context.device.keyevent(KeyCode.BACK)
    context.sleep(context.options.settle)
    return "pressed BACK"


def press_key(context: ExecutionContext, args: dict[str, Any]) -> str:
    name = str(args["keyCode"])
    code = KEYS[name]
    context.device.keyevent(code)
    if code in _NAVIGATING:
        context.sleep(context.options.settle)
    return f"pressed {name} (key code {int(code)})"


def set_clipboard(context: ExecutionContext, args: dict[str, Any]) -> str:
    text = args["text"]
    context.device.set_clipboard(text)
    context.clipboard = text
    return f"clipboard set to {text!r}"


def paste_clipboard(context: ExecutionContext, args: dict[str, Any]) -> str:
    if context.clipboard is None:
        why = (
            "batched execution is off (TRAILBLAZE_DISABLE_BATCHED_TOOL_EXECUTION), so every tool "
            "has its own context"
            if not context.batched
            else "the clipboard is kept per step recording"
        )
        raise ToolError(
            "device clipboard is empty: no mobile_setClipboard ran before it in this execution "
            f"context ({why})"
        )
    context.device.input_text(context.clipboard)
    return f"pasted {context.clipboard!r}"


def _signature(screen: Hierarchy) -> tuple[tuple[str, str, tuple[int, ...]], ...]:
    return tuple((n.text, n.resource_id, tuple(n.bounds)) for n in screen.iter_nodes())


def wait_for_change(context: ExecutionContext, args: dict[str, Any]) -> str:
    """Wait for the screen to change, then to stay still for the quiet window."""
    timeout = max(0, int(args.get("timeoutMs", 8000))) / 1000
    quiet = max(0, int(args.get("quietWindowMs", 300))) / 1000
    require = bool(args.get("requireChange", True))
    started = time.monotonic()
    deadline = started + timeout
    initial = _signature(context.screen(fresh=True))
    changed_at: float | None = None
    current = initial
    while True:
        now = time.monotonic()
        if changed_at is not None and now - changed_at >= quiet:
            return f"the screen changed and settled after {now - started:.2f}s"
        if now >= deadline:
            if changed_at is not None:
                return f"the screen changed but was still moving after {timeout:g}s"
            if require:
                raise ExpectedFailure(f"the screen did not change within {timeout:g}s")
            return f"the screen did not change within {timeout:g}s"
        context.sleep(min(context.options.poll_interval, max(0.0, deadline - now)))
        latest = _signature(context.screen(fresh=True))
        if latest != current:
            changed_at = time.monotonic()  # changed (again): the quiet window starts over
            current = latest


def wait(context: ExecutionContext, args: dict[str, Any]) -> str:
    """Wait for the screen to settle: two equal dumps in a row, at most the given seconds."""
    seconds = max(0, int(args.get("timeToWaitInSeconds") or 0))
    deadline = time.monotonic() + seconds
    previous = _signature(context.screen(fresh=True))
    while time.monotonic() < deadline:
        context.sleep(min(context.options.poll_interval, max(0.0, deadline - time.monotonic())))
        current = _signature(context.screen(fresh=True))
        if current == previous:
            return "the screen settled"
        previous = current
    return f"waited {seconds}s"


TOOLS = (
    ToolImpl("inputText", input_text),
    ToolImpl("eraseText", erase_text),
    ToolImpl("clearText", clear_text),
    ToolImpl("hideKeyboard", hide_keyboard),
    ToolImpl("pressBack", press_back),
    ToolImpl("pressKey", press_key),
    ToolImpl("mobile_setClipboard", set_clipboard),
    ToolImpl("mobile_pasteClipboard", paste_clipboard),
    ToolImpl("wait", wait, mutates=False),
    ToolImpl("waitForChange", wait_for_change, mutates=False),
)
