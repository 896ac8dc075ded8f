"""``mobile_maestro``: raw Maestro commands, replayed as the framework tools that do the same.

Each command (one ``{name: value}`` map, as written in a Maestro flow) becomes one framework
call; the calls then run nested in the ``mobile_maestro`` call (same context, one log each,
``mobile_maestro.commands[i]`` in the report). ``extendedWaitUntil`` waits for its ``visible``
element (or for its ``notVisible`` one to go) up to ``timeout`` ms, 17 s without one as in
Maestro. Every command is translated before the first
one runs, so a command Android replay does not know fails the tool with nothing sent.

Maestro's own semantics are kept where they differ from the framework tools': element text is
a whole-value, case-insensitive regex (the ``androidMaestro`` selector dialect), ``inputText``
leaves the keyboard open, and ``launchApp`` without ``clearState`` stops the app first
(``stopApp: true`` is Maestro's default).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import ToolError
from trailblaze.replay.tools.base import ToolImpl

Call = tuple[str, dict[str, Any]]

_PIXELS = re.compile(r"\s*(\d+)\s*,\s*(\d+)\s*")
_PERCENT = re.compile(r"\s*(\d+(?:\.\d+)?)%\s*,\s*(\d+(?:\.\d+)?)%\s*")
_KEYS = {
    "enter": "ENTER",
    "back": "BACK",
    "home": "HOME",
    "backspace": "BACKSPACE",
    "tab": "TAB",
    "escape": "ESCAPE",
}
_DIRECTIONS = ("UP", "DOWN", "LEFT", "RIGHT")


def _text(value: Any, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ToolError(f"{what}: expected a text, got {value!r}")
    return str(value)


def _map(value: Any, what: str, shorthand: str | None = None) -> dict[str, Any]:
    """The command's options; a scalar is the ``shorthand`` option (``tapOn: Login``)."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    if shorthand is not None:
        return {shorthand: value}
    raise ToolError(f"{what}: expected a map of options, got {value!r}")


def _selector(options: Mapping[str, Any], what: str) -> dict[str, Any]:
    match: dict[str, Any] = {}
    if "text" in options:
        match["textRegex"] = _text(options["text"], f"{what}.text")
    if "id" in options:
        rid = _text(options["id"], f"{what}.id")
        # Maestro matches an id with or without its package (`name_field` finds
        # `com.example:id/name_field`); the dump always has the full one.
        match["resourceIdRegex"] = rid if ":id/" in rid else f"(?:.+:id/)?(?:{rid})"
    for flag in ("enabled", "selected", "checked", "focused"):
        if flag in options:
            match[flag] = bool(options[flag])
    if not match:
        raise ToolError(f"{what}: needs 'text' or 'id' to find the element")
    selector: dict[str, Any] = {"androidMaestro": match}
    if "index" in options:
        selector["index"] = int(options["index"])
    return selector


def _tap(context: ExecutionContext, value: Any, what: str, *, long_press: bool) -> Call:
    options = _map(value, what, "text")
    point = options.get("point")
    if point is not None:
        text = _text(point, f"{what}.point")
        if found := _PIXELS.fullmatch(text):
            x, y = (int(v) for v in found.groups())
        elif found := _PERCENT.fullmatch(text):
            width, height = context.device.window_size()
            x, y = round(width * float(found[1]) / 100), round(height * float(found[2]) / 100)
        else:
            raise ToolError(f"{what}.point must be 'x,y' or 'x%,y%', got {text!r}")
        return "tapOnPoint", {"x": x, "y": y, "longPress": long_press}
    return "tapOnElementBySelector", {
        "nodeSelector": _selector(options, what),
        "longPress": long_press,
    }


def _app_id(value: Any, what: str) -> str:
    options = _map(value, what, "appId")
    if "appId" not in options:
        raise ToolError(f"{what}: needs the appId (a flow's own appId is not known here)")
    return _text(options["appId"], f"{what}.appId")


def _launch(context: ExecutionContext, value: Any, what: str) -> Call:
    options = _map(value, what, "appId")
    package = _app_id(options, what)
    if options.get("clearState"):
        mode = "REINSTALL"
    elif options.get("stopApp", True):
        mode = "FORCE_RESTART"
    else:
        mode = "RESUME"
    return "launchApp", {"appId": package, "launchMode": mode}


def _erase(context: ExecutionContext, value: Any, what: str) -> Call:
    options = _map(value, what, "charactersToErase")
    count = options.get("charactersToErase")
    if count is None or (isinstance(count, str) and not count.strip()):
        return "eraseText", {}
    if isinstance(count, str) and count.strip().isdigit():
        count = int(count)
    if isinstance(count, bool) or not isinstance(count, int):
        raise ToolError(f"{what}.charactersToErase must be a whole number, got {count!r}")
    return "eraseText", {"charactersToErase": count}


def _press_key(context: ExecutionContext, value: Any, what: str) -> Call:
    name = _text(value, what).strip().lower()
    if name not in _KEYS:
        raise ToolError(
            f"{what}: key {value!r} is not one Android replay sends "
            f"(supported: {', '.join(k.title() for k in _KEYS)})"
        )
    return "pressKey", {"keyCode": _KEYS[name]}


def _direction(value: Any, what: str, default: str) -> str:
    direction = _text(value if value is not None else default, what).upper()
    if direction not in _DIRECTIONS:
        raise ToolError(f"{what}: direction must be one of {', '.join(_DIRECTIONS)}")
    return direction


def _swipe(context: ExecutionContext, value: Any, what: str) -> Call:
    options = _map(value, what)
    if "direction" in options:
        return "swipe", {"direction": _direction(options["direction"], f"{what}.direction", "UP")}
    if "start" not in options or "end" not in options:
        raise ToolError(f"{what}: needs 'direction', or 'start' and 'end'")
    start, end = (_text(options[k], f"{what}.{k}") for k in ("start", "end"))
    duration = int(options.get("duration", 400))
    if _PERCENT.fullmatch(start) and _PERCENT.fullmatch(end):
        return "swipeWithRelativeCoordinates", {
            "startRelative": start,
            "endRelative": end,
            "durationMs": duration,
        }
    first, last = _PIXELS.fullmatch(start), _PIXELS.fullmatch(end)
    if first is None or last is None:
        raise ToolError(f"{what}: start and end must both be 'x,y' or both 'x%,y%'")
    x1, y1 = (int(v) for v in first.groups())
    x2, y2 = (int(v) for v in last.groups())
    return "dragByPoints", {
        "startX": x1,
        "startY": y1,
        "endX": x2,
        "endY": y2,
        "durationMs": duration,
    }


def _scroll_until(context: ExecutionContext, value: Any, what: str) -> Call:
    options = _map(value, what)
    element = _map(options.get("element"), f"{what}.element", "text")
    args: dict[str, Any] = {
        "direction": _direction(options.get("direction"), f"{what}.direction", "DOWN")
    }
    if "text" in element:
        args["textRegex"] = _text(element["text"], f"{what}.element.text")
    if "id" in element:
        args["id"] = _text(element["id"], f"{what}.element.id")
    if len(args) == 1:
        raise ToolError(f"{what}.element: needs 'text' or 'id'")
    return "scrollUntilTextIsVisible", args


def _assert(tool: str) -> Callable[[ExecutionContext, Any, str], Call]:
    def translate(context: ExecutionContext, value: Any, what: str) -> Call:
        return tool, {"nodeSelector": _selector(_map(value, what, "text"), what)}

    return translate


def _wait(context: ExecutionContext, value: Any, what: str) -> Call:
    millis = _map(value, what).get("timeout", 5000)
    return "wait", {"timeToWaitInSeconds": max(1, math.ceil(float(millis) / 1000))}


#: Maestro's lookup timeout, what ``extendedWaitUntil`` waits without a ``timeout``.
EXTENDED_WAIT_DEFAULT_MS = 17_000


def _millis(value: Any, what: str) -> int:
    """A Maestro timeout: milliseconds as a number or its text (``"10000"``)."""
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.isdigit():
        return int(text)
    if isinstance(text, int | float) and not isinstance(text, bool) and text >= 0:
        return math.ceil(text)
    raise ToolError(f"{what}: expected milliseconds (a whole number >= 0), got {value!r}")


def _extended_wait(context: ExecutionContext, value: Any, what: str) -> Call:
    """``extendedWaitUntil: {visible | notVisible: <selector>, timeout: ms}``: wait until the
    element shows (or is gone), failing after the timeout."""
    options = _map(value, what)
    unknown = sorted(set(options) - {"visible", "notVisible", "timeout", "label"})
    if unknown:
        raise ToolError(
            f"{what}: option '{unknown[0]}' is not supported by Android replay "
            "(extendedWaitUntil takes visible or notVisible, timeout, label)"
        )
    given = [key for key in ("visible", "notVisible") if key in options]
    if len(given) != 1:
        raise ToolError(
            f"{what}: needs one of 'visible' or 'notVisible'"
            + (" (for both, write two extendedWaitUntil commands)" if given else "")
        )
    timeout = (
        _millis(options["timeout"], f"{what}.timeout")
        if options.get("timeout") is not None
        else EXTENDED_WAIT_DEFAULT_MS
    )
    (key,) = given
    tool = "assertVisibleBySelector" if key == "visible" else "assertNotVisibleBySelector"
    selector = _selector(_map(options[key], f"{what}.{key}", "text"), f"{what}.{key}")
    return tool, {"nodeSelector": selector, "timeoutMs": timeout}


def _fixed(tool: str) -> Callable[[ExecutionContext, Any, str], Call]:
    return lambda context, value, what: (tool, {})


def _with(tool: str, key: str, shorthand: str) -> Callable[[ExecutionContext, Any, str], Call]:
    def translate(context: ExecutionContext, value: Any, what: str) -> Call:
        options = _map(value, what, shorthand)
        if shorthand not in options:
            raise ToolError(f"{what}: needs '{shorthand}'")
        return tool, {key: _text(options[shorthand], f"{what}.{shorthand}")}

    return translate


COMMANDS: dict[str, Callable[[ExecutionContext, Any, str], Call]] = {
    "launchApp": _launch,
    "tapOn": lambda c, v, w: _tap(c, v, w, long_press=False),
    "longPressOn": lambda c, v, w: _tap(c, v, w, long_press=True),
    "inputText": lambda c, v, w: (
        "inputText",
        {"text": _text(v, w), "hideKeyboardAfter": False},
    ),
    "eraseText": _erase,
    "back": _fixed("pressBack"),
    "pressKey": _press_key,
    "hideKeyboard": _fixed("hideKeyboard"),
    "scroll": lambda c, v, w: ("swipe", {"direction": "UP"}),
    "swipe": _swipe,
    "scrollUntilVisible": _scroll_until,
    "assertVisible": _assert("assertVisibleBySelector"),
    "assertNotVisible": _assert("assertNotVisibleBySelector"),
    "openLink": _with("openUrl", "url", "link"),
    "stopApp": lambda c, v, w: ("stopApp", {"appId": _app_id(v, w)}),
    "killApp": lambda c, v, w: ("stopApp", {"appId": _app_id(v, w)}),
    "clearState": lambda c, v, w: ("mobile_clearAppData", {"appId": _app_id(v, w)}),
    "waitForAnimationToEnd": _wait,
    "pasteText": _fixed("mobile_pasteClipboard"),
    "takeScreenshot": _with("takeSnapshot", "screenName", "path"),
    "extendedWaitUntil": _extended_wait,
}


def translate(context: ExecutionContext, commands: list[Any]) -> list[Call]:
    """Every command as a framework call, or ``ToolError`` for the first one that is not."""
    calls: list[Call] = []
    for i, command in enumerate(commands):
        what = f"commands[{i}]"
        if not isinstance(command, Mapping) or len(command) != 1:
            raise ToolError(f"{what}: a Maestro command is one {{name: options}} map")
        ((name, value),) = command.items()
        handler = COMMANDS.get(name)
        if handler is None:
            raise ToolError(
                f"{what}: Maestro command '{name}' is not supported by Android replay "
                f"(supported: {', '.join(sorted(COMMANDS))})"
            )
        calls.append(handler(context, value, f"{what}.{name}"))
    return calls


def mobile_maestro(context: ExecutionContext, args: dict[str, Any]) -> str:
    commands = args["commands"]
    if not commands:
        return "no Maestro commands"
    calls = translate(context, commands)
    context.run_tools(calls, "mobile_maestro.commands")
    return f"ran {len(calls)} Maestro command(s): {', '.join(name for name, _ in calls)}"


TOOLS = (ToolImpl("mobile_maestro", mobile_maestro),)
