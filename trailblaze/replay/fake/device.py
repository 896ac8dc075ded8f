"""The fake Android device: ``FakeDevice``, the state machine, and ``ModelDevice``, its ``Device``.

A spec (``spec``; read by ``loader``) describes apps, their screens and elements;
``FakeDevice`` is the running state machine: foreground app, per-app back stack, focused field
and its value, soft keyboard, clipboard (set by the Clipper broadcast), installed packages, a
path -> bytes file system, an event log, and fault knobs. Its programs (``commands``)
answer the adb shell commands replay sends the way a device does, including the quirks that
catch bad recordings: ``input text`` with no focused field is dropped, BACK closes the keyboard
before it navigates. ``view`` renders the screen and the uiautomator dump.

``server.FakeAdbServer`` puts a ``FakeDevice`` behind a real adb socket; ``ModelDevice`` drives
one directly (no sockets) for fast engine tests. ``tests/data/replay/sample_app.yaml`` and
``trailmaps/devices/`` are worked examples of the spec format.
"""

from __future__ import annotations

import shlex
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from string import Template
from typing import Any, NamedTuple

from trailblaze.replay.fake.commands import AndroidCommands
from trailblaze.replay.fake.gestures import Gestures
from trailblaze.replay.fake.loader import load_specs, parse_device_spec
from trailblaze.replay.fake.shell import STDERR, STDOUT, CommandResult
from trailblaze.replay.fake.spec import (
    BROWSER_PACKAGE,
    KEYBOARD_PACKAGE,
    LAUNCHER_PACKAGE,
    Action,
    AppSpec,
    CommandOverride,
    DeviceSpec,
    ElementSpec,
    Faults,
    ListSpec,
    ModelError,
    ScreenSpec,
)
from trailblaze.replay.fake.view import Renderer, View

__all__ = [
    "BROWSER_PACKAGE",
    "KEYBOARD_PACKAGE",
    "LAUNCHER_PACKAGE",
    "STDERR",
    "STDOUT",
    "Action",
    "Admission",
    "AppSpec",
    "AppState",
    "CommandOverride",
    "CommandResult",
    "DeviceSpec",
    "ElementSpec",
    "Event",
    "FakeDevice",
    "Faults",
    "ListSpec",
    "ModelError",
    "ScreenSpec",
    "View",
    "load_devices",
    "load_specs",
    "parse_device_spec",
]


class Event(NamedTuple):
    """One thing the device did, for tests and demos: ``kind`` plus a human ``detail``."""

    kind: str
    detail: str


class Admission(NamedTuple):
    """Whether a received command line runs: ``dropped`` means the transport dies now."""

    dropped: bool
    delay: float


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


class FakeDevice:
    """One fake Android device's state machine. Thread-safe: the server calls it per connection."""

    def __init__(self, spec: DeviceSpec) -> None:
        self.spec = spec
        self.serial = spec.serial
        self.state = spec.state
        self.faults = replace(
            spec.faults,
            delays=dict(spec.faults.delays),
            malformed_dumps=list(spec.faults.malformed_dumps),
            overrides=[replace(o) for o in spec.faults.overrides],
        )
        self.lock = threading.RLock()
        self.commands: list[str] = []
        self.events: list[Event] = []
        self.files: dict[str, bytes] = dict(spec.files)
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
        self._served = 0
        self._next_pid = 4000
        self._android = AndroidCommands(self)
        self._programs = self._android.table
        self._renderer = Renderer(self)
        self._gestures = Gestures(self)
        # Each app's elements by key, over all its screens (the first with a key wins).
        self._elements: dict[str, dict[str, ElementSpec]] = {}
        for package, app_spec in spec.apps.items():
            by_key = self._elements[package] = {}
            for screen in app_spec.screens.values():
                for element in _all_elements(screen.all_elements):
                    by_key.setdefault(element.key, element)

    @classmethod
    def load(cls, source: Path | str | Mapping[str, Any]) -> FakeDevice:
        """A device from a spec file or mapping that describes exactly one device."""
        specs = load_specs(source)
        if len(specs) != 1:
            raise ModelError(f"expected one device, the spec has {len(specs)}; use load_devices")
        return cls(specs[0])

    # -- inspection helpers for tests and demos --

    @property
    def current_screen(self) -> str | None:
        """``package/screen`` of the foreground screen, or None on the launcher."""
        with self.lock:
            if self.foreground is None or self.foreground not in self.apps:
                return None if self.foreground is None else self.foreground
            stack = self.apps[self.foreground].stack
            return f"{self.foreground}/{stack[-1]}" if stack else None

    def field_value(self, package: str, key: str) -> str:
        with self.lock:
            return self._value(package, key)

    # -- command admission (faults) and dispatch --

    def admit(self, line: str) -> Admission:
        """Record a received shell line and decide (fault knobs) whether and when it runs."""
        with self.lock:
            self.commands.append(line)
            limit = self.faults.disconnect_after
            if limit is not None and self._served >= limit:
                self.state = "gone"
                self.events.append(Event("disconnect", line))
                return Admission(True, 0.0)
            self._served += 1
            delay = self.faults.delay + sum(
                seconds for prefix, seconds in self.faults.delays.items() if line.startswith(prefix)
            )
            return Admission(False, delay)

    def override(self, argv: Sequence[str]) -> CommandResult | None:
        """The fault override answering this command, if any (consumes one use)."""
        line = shlex.join(argv)
        with self.lock:
            for rule in self.faults.overrides:
                if line.startswith(rule.match) and rule.times != 0:
                    if rule.times is not None:
                        rule.times -= 1
                    return CommandResult.of(rule.stdout, rule.stderr, rule.returncode)
        return None

    def execute(self, argv: Sequence[str]) -> CommandResult | None:
        """Run one Android command; None when this model does not know the program.

        Fault overrides are not consulted here: callers check ``override`` first, so shell
        builtins (echo, cat, ...) can be overridden too.
        """
        if not argv:
            return CommandResult(0)
        handler = self._programs.get(argv[0])
        if handler is None:
            return None
        with self.lock:
            return handler(list(argv[1:]))

    # -- state helpers --

    def _log(self, kind: str, detail: str = "") -> None:
        self.events.append(Event(kind, detail))

    def _app(self) -> AppState | None:
        return self.apps.get(self.foreground) if self.foreground else None

    def _screen(self) -> ScreenSpec | None:
        app = self._app()
        if app is None or not app.stack or self.foreground is None:
            return None
        return self.spec.apps[self.foreground].screens[app.stack[-1]]

    def _element_default(self, package: str, key: str) -> ElementSpec | None:
        return self._elements[package].get(key)

    def _value(self, package: str, key: str) -> str:
        app = self.apps[package]
        if key in app.values:
            return app.values[key]
        stored = app.data.get(f"value:{key}")
        if isinstance(stored, str):
            return stored
        element = self._element_default(package, key)
        return element.value if element else ""

    def _set_value(self, package: str, key: str, value: str) -> None:
        self.apps[package].values[key] = value
        element = self._element_default(package, key)
        if element is not None and element.persist:
            self.apps[package].data[f"value:{key}"] = value

    def _checked(self, package: str, element: ElementSpec) -> bool:
        app = self.apps[package]
        if element.key in app.checked:
            return app.checked[element.key]
        stored = app.data.get(f"checked:{element.key}")
        return stored if isinstance(stored, bool) else element.checked

    def _leave_screen(self) -> None:
        self.focused = None
        if self.keyboard_shown:
            self.keyboard_shown = False
            self._log("keyboard-hidden", "navigation")

    def _launch(self, package: str) -> bool:
        if package == BROWSER_PACKAGE and package not in self.apps:
            self._leave_screen()
            self.foreground = BROWSER_PACKAGE
            self._log("launch", package)
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
            self._leave_screen()
        if self.foreground != package:
            self._leave_screen()
        self.foreground = package
        self._log("launch", f"{package}/{app.stack[-1]}")
        return True

    def _stop(self, package: str) -> None:
        app = self.apps.get(package)
        if app is not None:
            data = app.data
            self.apps[package] = AppState(data=data)
        if self.foreground == package:
            self._leave_screen()
            self.foreground = None
        self._log("stop", package)

    def _clear_data(self, package: str) -> None:
        """``pm clear``: stop the app and forget everything it stored."""
        self._stop(package)
        if package in self.apps:
            self.apps[package] = AppState()

    def _go_home(self, why: str) -> None:
        self._leave_screen()
        self.foreground = None
        self._log("home", why)

    def _apply(self, package: str, action: Action) -> None:
        app = self.apps[package]
        app.flags |= set(action.set_flags)
        app.flags -= set(action.unset_flags)
        app.flags ^= set(action.toggle_flags)
        if action.variables:
            # Values are templates evaluated now (`saved: "${title}"` copies a field's value).
            values = {**self.spec.apps[package].variables, **app.values, **app.variables}
            app.variables.update(
                {name: Template(text).safe_substitute(values) for name, text in action.variables}
            )
        for name in action.increment:
            current = app.variables.get(name, self.spec.apps[package].variables.get(name, "0"))
            app.variables[name] = str(int(current) + 1 if current.lstrip("-").isdigit() else 1)
        for key in action.clear:
            self._set_value(package, key, "")
        if action.go is not None:
            self._leave_screen()
            app.stack.append(action.go)
            self._log("navigate", f"{package}/{action.go}")
        elif action.replace is not None:
            self._leave_screen()
            app.stack[-1] = action.replace
            self._log("navigate", f"{package}/{action.replace}")
        elif action.back:
            self._back()
        elif action.home:
            self._go_home("action")
        elif action.launch is not None:
            self._launch(action.launch)

    def _back(self) -> None:
        if self.keyboard_shown:
            self.keyboard_shown = False
            self._log("keyboard-hidden", "back")
            return
        app = self._app()
        if self.foreground is None:
            self._log("back", "launcher")
            return
        if app is not None and len(app.stack) > 1:
            self._leave_screen()
            app.stack.pop()
            self._log("back", f"{self.foreground}/{app.stack[-1]}")
            return
        # Back on a task's root moves it to the background; the process keeps running.
        self._go_home("back")

    # -- rendering (``view``) --

    def is_shown(self, package: str, element: ElementSpec) -> bool:
        """Whether the element's ``when`` / ``unless`` flags let it show now."""
        flags = self.apps[package].flags
        if element.when is not None and element.when not in flags:
            return False
        return element.unless is None or element.unless not in flags

    def render(self) -> tuple[View, ...]:
        """The windows on screen, top-level first (the app or launcher, then the keyboard)."""
        with self.lock:
            return self._renderer.render()

    def dump_xml(self) -> str:
        """The uiautomator dump of the current screen, in the platform's attribute order."""
        with self.lock:
            return self._renderer.dump_xml()

    # -- input (``gestures``) --

    def tap(self, x: int, y: int) -> None:
        self._gestures.tap(x, y)

    def long_press(self, x: int, y: int) -> None:
        self._gestures.long_press(x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> None:
        self._gestures.swipe(x1, y1, x2, y2)

    def type_text(self, text: str) -> None:
        self._gestures.type_text(text)

    def press_key(self, code: int) -> None:
        self._gestures.press_key(code)


def _all_elements(elements: Sequence[ElementSpec]) -> Iterator[ElementSpec]:
    for element in elements:
        yield element
        yield from _all_elements(element.children)


def load_devices(source: Path | str | Mapping[str, Any]) -> list[FakeDevice]:
    """Fake devices from a spec file or mapping (one, or ``devices: [...]``)."""
    return [FakeDevice(spec) for spec in load_specs(source)]
