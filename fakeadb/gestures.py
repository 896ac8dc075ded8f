"""Touches and keys on the fake device: what ``input tap|swipe|text|keyevent`` do to its state.

A tap goes to the deepest interactive view under it (or the keyboard window); typing needs a
focused field that is on screen (real Android drops key events otherwise); BACK closes the
keyboard before it navigates. ``Gestures`` is given the device's state and its ``Renderer``
(hit tests need what is on screen).
"""

from __future__ import annotations

from collections.abc import Iterator

from fakeadb.spec import KEYBOARD_PACKAGE, LAUNCHER_PACKAGE
from fakeadb.state import DeviceState
from fakeadb.view import Renderer, View, deepest_interactive, flag, label
from trailblaze.replay.device import KeyCode

#: Key names ``input keyevent`` takes (KEYCODE_ prefix stripped): replay's ``KeyCode`` plus the
#: other keys a recording may send, the digits and the letters.
KEY_NAMES: dict[str, int] = {
    **{key.name: int(key) for key in KeyCode},
    "DPAD_UP": 19,
    "DPAD_DOWN": 20,
    "DPAD_LEFT": 21,
    "DPAD_RIGHT": 22,
    "APP_SWITCH": 187,
    **{str(d): 7 + d for d in range(10)},
    **{chr(ord("A") + i): 29 + i for i in range(26)},
}
#: Keys that type a character: the digits, the letters (lower case, as without shift) and space.
_KEY_CHARS = {code: name.lower() for name, code in KEY_NAMES.items() if len(name) == 1}
_KEY_CHARS[KeyCode.SPACE] = " "
#: Keys that act on the focused field; without one on screen they are just logged.
_FIELD_KEYS = frozenset(
    {
        KeyCode.ENTER,
        KeyCode.DEL,
        KeyCode.FORWARD_DEL,
        KeyCode.MOVE_HOME,
        KeyCode.MOVE_END,
        KeyCode.TAB,
    }
)


class Gestures:
    """Input handling for one device (callers hold ``state.lock``)."""

    def __init__(self, state: DeviceState, view: Renderer) -> None:
        self.state = state
        self.view = view

    def _hit(self, x: int, y: int) -> View | None:
        windows = self.view.render()
        for window in reversed(windows):
            if not window.bounds.contains_point(x, y):
                continue
            if window.package == KEYBOARD_PACKAGE:
                return window
            return deepest_interactive(window, x, y)
        return None

    def tap(self, x: int, y: int) -> None:
        view = self._hit(x, y)
        if view is None:
            self.state.log("tap-missed", f"{x},{y}")
            return
        if view.package == KEYBOARD_PACKAGE:
            self.state.log("tap-keyboard", f"{x},{y}")
            return
        element = view.element
        name = label(view)
        if element is None:
            self.state.log("tap", f"{name} @ {x},{y}")
            return
        if not view.enabled:
            self.state.log("tap-disabled", name)
            return
        self.state.log("tap", f"{name} @ {x},{y}")
        package = view.package
        if package == LAUNCHER_PACKAGE:
            if element.on_tap and element.on_tap.launch:
                self.state.launch(element.on_tap.launch)
            return
        if element.editable:
            self.state.focused = element.key
            self.state.cursor = len(self.state.value(package, element.key))
            if not self.state.keyboard_shown:
                self.state.keyboard_shown = True
                self.state.log("keyboard-shown", element.key)
        if element.checkable:
            app = self.state.apps[package]
            app.checked[element.key] = not self.state.checked(package, element)
            if element.persist:
                app.data[f"checked:{element.key}"] = app.checked[element.key]
            self.state.log("toggle", f"{element.key}={flag(app.checked[element.key])}")
        if element.on_tap is not None:
            self.state.apply(package, element.on_tap)

    def long_press(self, x: int, y: int) -> None:
        view = self._hit(x, y)
        if view is None or view.element is None or view.package == KEYBOARD_PACKAGE:
            self.state.log("long-press-missed", f"{x},{y}")
            return
        self.state.log("long-press", label(view))
        if view.element.on_long_press is not None and view.enabled:
            self.state.apply(view.package, view.element.on_long_press)

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> None:
        screen = self.state.screen()
        spec = screen.scroll_list if screen else None
        if screen is None or spec is None or not spec.bounds.contains_point(x1, y1):
            self.state.log("swipe", f"{x1},{y1} -> {x2},{y2}")
            return
        assert self.state.foreground is not None  # a screen implies a foreground app
        app = self.state.apps[self.state.foreground]
        count = sum(1 for item in spec.items if self.state.is_shown(self.state.foreground, item))
        limit = max(0, count * spec.item_height - spec.bounds.height)
        before = app.scroll.get(screen.name, 0)
        after = min(limit, max(0, before + (y1 - y2)))
        app.scroll[screen.name] = after
        self.state.log(
            "scroll" if after != before else "scroll-end", f"{screen.name} offset={after}"
        )

    def _editable_keys(self) -> Iterator[str]:
        """Keys of the editable fields on screen now, in window and tree order."""
        for window in self.view.render():
            for view in window.walk():
                if view.element is not None and view.element.editable:
                    yield view.element.key

    def _focused_field(self) -> tuple[str, str] | None:
        """(package, key) of the focused field if it is on screen now."""
        focused, foreground = self.state.focused, self.state.foreground
        if focused is None or foreground is None or foreground not in self.state.apps:
            return None
        if any(key == focused for key in self._editable_keys()):
            return foreground, focused
        return None

    def type_text(self, text: str) -> None:
        target = self._focused_field()
        if target is None:
            # Real Android drops key events when nothing has input focus; a recording that forgot
            # to tap its field fails later instead of typing somewhere else.
            self.state.log("text-dropped", text)
            return
        package, key = target
        value = self.state.value(package, key)
        cursor = min(self.state.cursor, len(value))
        self.state.set_value(package, key, value[:cursor] + text + value[cursor:])
        self.state.cursor = cursor + len(text)
        self.state.log("text", f"{key}={self.state.value(package, key)}")

    def press_key(self, code: int) -> None:
        # Only the editing keys need the focused field (and so a render of the screen).
        if code == KeyCode.BACK:
            self.state.back()
        elif code == KeyCode.HOME:
            self.state.go_home("home key")
        elif code == KeyCode.ESCAPE:
            self.state.hide_keyboard("escape")
        elif code in _FIELD_KEYS and (target := self._focused_field()) is not None:
            self._field_key(code, *target)
        elif code in _KEY_CHARS:
            self.type_text(_KEY_CHARS[code])
        else:
            self.state.log("key", str(code))

    def _field_key(self, code: int, package: str, key: str) -> None:
        """An editing key (``_FIELD_KEYS``) for the focused field ``key``."""
        if code == KeyCode.ENTER:
            element = self.state.element(package, key)
            self.state.log("key", "ENTER")
            if element is not None and element.on_enter is not None:
                self.state.apply(package, element.on_enter)
        elif code in (KeyCode.DEL, KeyCode.FORWARD_DEL):
            value = self.state.value(package, key)
            cursor = min(self.state.cursor, len(value))
            if code == KeyCode.DEL and cursor > 0:
                self.state.set_value(package, key, value[: cursor - 1] + value[cursor:])
                self.state.cursor = cursor - 1
            elif code == KeyCode.FORWARD_DEL:
                self.state.set_value(package, key, value[:cursor] + value[cursor + 1 :])
            self.state.log("key", f"{KeyCode(code).name} {key}={self.state.value(package, key)}")
        elif code in (KeyCode.MOVE_HOME, KeyCode.MOVE_END):
            self.state.cursor = (
                0 if code == KeyCode.MOVE_HOME else len(self.state.value(package, key))
            )
            self.state.log("key", KeyCode(code).name)
        else:  # TAB
            self._focus_next(package, key)

    def _focus_next(self, package: str, key: str) -> None:
        fields = list(self._editable_keys())
        if key in fields and len(fields) > 1:
            self.state.focused = fields[(fields.index(key) + 1) % len(fields)]
            self.state.cursor = len(self.state.value(package, self.state.focused))
        self.state.log("key", f"TAB focus={self.state.focused}")
