"""``FakeDevice``: one fake Android device, its parts wired around one shared ``DeviceState``.

A spec (``spec``; read by ``loader``) describes apps, their screens and elements. The running
device is a ``DeviceState`` (``state``) that its parts share and nothing else: ``view`` renders
it (the screen, the uiautomator dump), ``gestures`` applies touches and keys, ``commands``
answers the Android programs (``input``, ``am``, ``pm``, ...), ``shell`` runs command lines
over ``files`` and those programs, and ``faults`` decides which lines get through. The quirks
that catch bad recordings live in those parts: ``input text`` with no focused field is dropped,
BACK closes the keyboard before it navigates.

``server.FakeAdbServer`` puts a ``FakeDevice`` behind a real adb socket; ``ModelDevice`` drives
one directly (no sockets) for fast engine tests. ``tests/data/replay/sample_app.yaml`` and
``trailmaps/devices/`` are worked examples of the spec format.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fakeadb.commands import AndroidCommands
from fakeadb.faults import Admission, FaultInjector
from fakeadb.gestures import Gestures
from fakeadb.loader import load_specs
from fakeadb.result import CommandResult
from fakeadb.shell import Shell
from fakeadb.spec import DeviceSpec, ElementSpec, Faults, ModelError
from fakeadb.state import AppState, DeviceState, Event
from fakeadb.view import Renderer, View


class FakeDevice:
    """One fake Android device. Thread-safe: the server calls it from one thread per connection.

    The attributes below are its state (``DeviceState``) as tests inspect and change it.
    """

    def __init__(self, spec: DeviceSpec) -> None:
        self.spec = spec
        self.serial = spec.serial
        self.runtime = DeviceState(spec)
        self.view = Renderer(self.runtime)
        self.gestures = Gestures(self.runtime, self.view)
        self._faults = FaultInjector(self.runtime)
        self.shell = Shell(
            self.runtime.files, override=self._faults.override, programs=self._program
        )
        self.programs = AndroidCommands(
            self.runtime, self.gestures, self.view, subcommand=self.shell.command
        )

    @classmethod
    def load(cls, source: Path | str | Mapping[str, Any]) -> FakeDevice:
        """A device from a spec file or mapping that describes exactly one device."""
        specs = load_specs(source)
        if len(specs) != 1:
            raise ModelError(f"expected one device, the spec has {len(specs)}; use load_devices")
        return cls(specs[0])

    def _program(self, argv: list[str]) -> CommandResult | None:
        return self.programs.run(argv)

    # -- the transport: what the server and ModelDevice call --

    @property
    def state(self) -> str:
        """The adb state: ``device``, ``offline``, ``unauthorized``, or ``gone`` (dropped)."""
        return self.runtime.status

    def admit(self, line: str) -> Admission:
        """Record a received shell line and decide (fault knobs) whether and when it runs."""
        return self._faults.admit(line)

    def run(self, line: str) -> CommandResult:
        """Run a shell command line, as adbd's ``sh -c`` would."""
        return self.shell.run(line)

    def command(self, argv: Sequence[str]) -> CommandResult:
        """Run one command given as words (no shell parsing), as ``exec`` would."""
        return self.shell.command(list(argv))

    def read_file(self, path: str) -> bytes | None:
        return self.runtime.files.read(path)

    # -- inspection for tests and demos --

    @property
    def lock(self) -> threading.RLock:
        return self.runtime.lock

    @property
    def faults(self) -> Faults:
        """The fault knobs; tests may change them while a server runs."""
        return self.runtime.faults

    @property
    def commands(self) -> list[str]:
        """Every shell line received, in order."""
        return self.runtime.commands

    @property
    def events(self) -> list[Event]:
        return self.runtime.events

    @property
    def files(self) -> dict[str, bytes]:
        return self.runtime.files.data

    @property
    def apps(self) -> dict[str, AppState]:
        return self.runtime.apps

    @property
    def installed(self) -> set[str]:
        return self.runtime.installed

    @property
    def clipboard(self) -> str:
        return self.runtime.clipboard

    @property
    def keyboard_shown(self) -> bool:
        return self.runtime.keyboard_shown

    @property
    def granted(self) -> set[tuple[str, str]]:
        return self.runtime.granted

    @property
    def app_ops(self) -> dict[tuple[str, str], str]:
        return self.runtime.app_ops

    @property
    def network(self) -> dict[str, bool]:
        return self.runtime.network

    @property
    def demo_mode(self) -> bool:
        return self.runtime.demo_mode

    @property
    def browser_url(self) -> str:
        return self.runtime.browser_url

    @property
    def current_screen(self) -> str | None:
        """``package/screen`` of the foreground screen, or None on the launcher."""
        with self.lock:
            foreground = self.runtime.foreground
            if foreground is None or foreground not in self.runtime.apps:
                return foreground
            stack = self.runtime.apps[foreground].stack
            return f"{foreground}/{stack[-1]}" if stack else None

    def field_value(self, package: str, key: str) -> str:
        with self.lock:
            return self.runtime.value(package, key)

    def element(self, package: str, key: str) -> ElementSpec | None:
        """The app's element with this key as the spec declares it (None: no such element)."""
        return self.runtime.element(package, key)

    def render(self) -> tuple[View, ...]:
        """The windows on screen, top-level first (the app or launcher, then the keyboard)."""
        return self.view.render()

    def dump_xml(self) -> str:
        """The uiautomator dump of the current screen, in the platform's attribute order."""
        return self.view.dump_xml()

    # -- input, as ``input tap|swipe|text|keyevent`` would give it --

    def tap(self, x: int, y: int) -> None:
        with self.lock:
            self.gestures.tap(x, y)

    def long_press(self, x: int, y: int) -> None:
        with self.lock:
            self.gestures.long_press(x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> None:
        with self.lock:
            self.gestures.swipe(x1, y1, x2, y2)

    def type_text(self, text: str) -> None:
        with self.lock:
            self.gestures.type_text(text)

    def press_key(self, code: int) -> None:
        with self.lock:
            self.gestures.press_key(code)


def load_devices(source: Path | str | Mapping[str, Any]) -> list[FakeDevice]:
    """Fake devices from a spec file or mapping (one, or ``devices: [...]``)."""
    return [FakeDevice(spec) for spec in load_specs(source)]
