"""What one fake device is right now: the one state object its parts share.

``DeviceState`` holds everything that changes while a device runs (foreground app, per-app back
stacks and values, focused field, soft keyboard, clipboard, installed packages, settings, the
file system, the event log, the fault knobs) and the transitions more than one part needs
(launch, stop, back, home, an element's action). ``view`` reads it, ``gestures`` and
``commands`` change it, ``faults`` decides what reaches it; none of them knows ``FakeDevice``.
Callers hold ``lock``: the fake adb server serves each connection in its own thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from string import Template
from typing import NamedTuple

from fakeadb.files import Files
from fakeadb.media import Logcat
from fakeadb.spec import (
    BROWSER_PACKAGE,
    LAUNCHER_PACKAGE,
    Action,
    DeviceSpec,
    ElementSpec,
    ScreenSpec,
)


class Event(NamedTuple):
    """One thing the device did, for tests and demos: ``kind`` plus a human ``detail``."""

    kind: str
    detail: str


@dataclass
class AppState:
    """One app's runtime state; ``data`` survives force-stop, not ``pm clear``."""

    running: bool = False
    stack: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)
    checked: dict[str, bool] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    variables: dict[str, str] = field(default_factory=dict)
    scroll: dict[str, int] = field(default_factory=dict)
    data: dict[str, str | bool] = field(default_factory=dict)
    pid: int = 0


class DeviceState:
    """One fake device's mutable state and its shared transitions (callers hold ``lock``)."""

    def __init__(self, spec: DeviceSpec) -> None:
        self.spec = spec
        self.lock = threading.RLock()
        self.status = spec.state
        """The adb state: ``device``, ``offline``, ``unauthorized``, or ``gone`` (dropped)."""
        self.faults = replace(
            spec.faults,
            delays=dict(spec.faults.delays),
            malformed_dumps=list(spec.faults.malformed_dumps),
            overrides=[replace(o) for o in spec.faults.overrides],
        )
        self.commands: list[str] = []
        """Every shell line received, in order (dropped ones too)."""
        self.events: list[Event] = []
        self.logcat = Logcat()
        """The log buffer ``logcat`` prints: every event the device records, as a line."""
        self.files = Files(spec.files, self.lock)
        self.clipboard = spec.clipboard
        self.keyboard_shown = False
        self.foreground: str | None = None
        self.focused: str | None = None
        self.cursor = 0
        self.apps = {p: AppState() for p in spec.apps}
        self.installed = set(spec.packages) | set(spec.apps) | {LAUNCHER_PACKAGE, BROWSER_PACKAGE}
        self.browser_url = ""
        self.granted: set[tuple[str, str]] = set()
        """(package, permission) pairs granted with ``pm grant``."""
        self.app_ops: dict[tuple[str, str], str] = {}
        """(package, operation) -> mode, as ``appops set`` left it."""
        self.network = {"wifi": True, "data": True}
        self.demo_mode = False
        self.settings: dict[tuple[str, str], str] = {}
        self._next_pid = 4000
        # Each app's elements by key, over all its screens (the first with a key wins).
        self._elements: dict[str, dict[str, ElementSpec]] = {}
        for package, app_spec in spec.apps.items():
            by_key = self._elements[package] = {}
            for screen in app_spec.screens.values():
                for element in _all_elements(screen.all_elements):
                    by_key.setdefault(element.key, element)

    # -- reading --

    def log(self, kind: str, detail: str = "") -> None:
        self.events.append(Event(kind=kind, detail=detail))
        self.logcat.add("fakeadb", f"{kind} {detail}".rstrip())

    def app(self) -> AppState | None:
        """The foreground app's state (None on the launcher or the browser)."""
        return self.apps.get(self.foreground) if self.foreground else None

    def screen(self) -> ScreenSpec | None:
        """The foreground app's top screen."""
        app = self.app()
        if app is None or not app.stack or self.foreground is None:
            return None
        return self.spec.apps[self.foreground].screens[app.stack[-1]]

    def element(self, package: str, key: str) -> ElementSpec | None:
        """The app's element with this key (on any of its screens), as the spec declares it."""
        return self._elements[package].get(key)

    def value(self, package: str, key: str) -> str:
        """A field's value: typed now, else kept from before a force-stop, else the spec's."""
        app = self.apps[package]
        if key in app.values:
            return app.values[key]
        stored = app.data.get(f"value:{key}")
        if isinstance(stored, str):
            return stored
        element = self.element(package, key)
        return element.value if element else ""

    def set_value(self, package: str, key: str, value: str) -> None:
        self.apps[package].values[key] = value
        element = self.element(package, key)
        if element is not None and element.persist:
            self.apps[package].data[f"value:{key}"] = value

    def checked(self, package: str, element: ElementSpec) -> bool:
        app = self.apps[package]
        if element.key in app.checked:
            return app.checked[element.key]
        stored = app.data.get(f"checked:{element.key}")
        return stored if isinstance(stored, bool) else element.checked

    def is_shown(self, package: str, element: ElementSpec) -> bool:
        """Whether the element's ``when`` / ``unless`` flags let it show now."""
        flags = self.apps[package].flags
        if element.when is not None and element.when not in flags:
            return False
        return element.unless is None or element.unless not in flags

    # -- transitions --

    def hide_keyboard(self, why: str) -> None:
        if self.keyboard_shown:
            self.keyboard_shown = False
            self.log("keyboard-hidden", why)

    def leave_screen(self) -> None:
        self.focused = None
        self.hide_keyboard("navigation")

    def launch(self, package: str) -> bool:
        """Bring an app to the foreground (starting it if needed); False if it has no UI."""
        if package == BROWSER_PACKAGE and package not in self.apps:
            self.leave_screen()
            self.foreground = BROWSER_PACKAGE
            self.log("launch", package)
            return True
        if package not in self.apps:
            return False
        app = self.apps[package]
        spec = self.spec.apps[package]
        if not app.running:
            app.running = True
            app.stack = [spec.launcher]
            self._next_pid += 1
            app.pid = self._next_pid
        elif spec.clear_task_on_launch and app.stack != [spec.launcher]:
            # The activities above the root are finished; the new root starts unscrolled.
            app.stack = [spec.launcher]
            app.scroll.clear()
            self.leave_screen()
        if self.foreground != package:
            self.leave_screen()
        self.foreground = package
        self.log("launch", f"{package}/{app.stack[-1]}")
        return True

    def stop(self, package: str) -> None:
        """``am force-stop``: the process ends; what it persisted stays."""
        app = self.apps.get(package)
        if app is not None:
            self.apps[package] = AppState(data=app.data)
        if self.foreground == package:
            self.leave_screen()
            self.foreground = None
        self.log("stop", package)

    def clear_data(self, package: str) -> None:
        """``pm clear``: stop the app and forget everything it stored."""
        self.stop(package)
        if package in self.apps:
            self.apps[package] = AppState()

    def go_home(self, why: str) -> None:
        self.leave_screen()
        self.foreground = None
        self.log("home", why)

    def back(self) -> None:
        """BACK: closes the keyboard first, then pops the back stack, then leaves the app."""
        if self.keyboard_shown:
            self.hide_keyboard("back")
            return
        app = self.app()
        if self.foreground is None:
            self.log("back", "launcher")
            return
        if app is not None and len(app.stack) > 1:
            self.leave_screen()
            app.stack.pop()
            self.log("back", f"{self.foreground}/{app.stack[-1]}")
            return
        # Back on a task's root moves it to the background; the process keeps running.
        self.go_home("back")

    def apply(self, package: str, action: Action) -> None:
        """What a tap, long press or ENTER does: state changes first, then one navigation."""
        app = self.apps[package]
        app.flags |= set(action.set_flags)
        app.flags -= set(action.unset_flags)
        app.flags ^= set(action.toggle_flags)
        defaults = self.spec.apps[package].variables
        if action.variables:
            # Values are templates evaluated now (`saved: "${title}"` copies a field's value).
            values = {**defaults, **app.values, **app.variables}
            app.variables.update(
                {name: Template(text).safe_substitute(values) for name, text in action.variables}
            )
        for name in action.increment:
            current = app.variables.get(name, defaults.get(name, "0"))
            app.variables[name] = str(int(current) + 1 if current.lstrip("-").isdigit() else 1)
        for key in action.clear:
            self.set_value(package, key, "")
        if action.go is not None:
            self.leave_screen()
            app.stack.append(action.go)
            self.log("navigate", f"{package}/{action.go}")
        elif action.replace is not None:
            self.leave_screen()
            app.stack[-1] = action.replace
            self.log("navigate", f"{package}/{action.replace}")
        elif action.back:
            self.back()
        elif action.home:
            self.go_home("action")
        elif action.launch is not None:
            self.launch(action.launch)


def _all_elements(elements: Sequence[ElementSpec]) -> Iterator[ElementSpec]:
    for element in elements:
        yield element
        yield from _all_elements(element.children)
