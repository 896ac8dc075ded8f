"""The fake device's spec: the declarative records a model file parses into (``loader``).

``device.FakeDevice`` runs a spec as a state machine; ``server.FakeAdbServer`` serves it
over a real adb socket and ``modeldevice.ModelDevice`` drives it without sockets.

Spec format (every key optional unless noted; unknown keys are errors with a "did you mean")::

    serial: emulator-5554         state: device|offline|unauthorized     size: [1080, 2400]
    sdk: 34   model: ...   properties: {ro.x: y}   features: [shell_v2, ...]
    hint_attribute: true          # dumps carry hint="" (newer platforms)
    hint_as_text: false           # an empty field shows its hint as text (some platforms)
    packages: [com.x]             # installed, no UI      clipboard: ""   files: {/path: text}
    faults: {disconnect_after: N, delay: s, delays: {"input tap": s}, idle_errors: k,
             malformed_dumps: [text], overrides: [{match: "pm clear", returncode: 1,
             stdout: "", stderr: "", times: 1}]}
    apps:
      - package: com.example      # required
        label: Example            # launcher icon text
        activity: .MainActivity   launcher: <first screen>   vars: {count: "0"}
        clear_task_on_launch: false   # true: a launcher start always shows the launcher screen
        screens:
          <name>:
            activity: .Other
            elements: [<element>, ...]
            list: {id: list, bounds: [l, t, r, b], item_height: 150,
                   items: [<element>, ...], generate: {count: 50, <element keys with {n}>}}
    # or, for several devices:  devices: [<device spec>, ...]

    <element>: {text, id (short names get "<package>:id/"), key (names its value/state),
      class, bounds: [l, t, r, b] (default: the parent's; relative to the row in lists),
      content_desc, hint, value, clickable, long_clickable, editable, checkable, checked,
      enabled, selected, password, persist (value/checked survive force-stop, not pm clear),
      when: flag, unless: flag, children: [<element>], on_tap / on_long_press / on_enter:
      <screen> | {go: screen, replace: screen, back: true, home: true, launch: package,
      set: [flag], unset: [flag], toggle: [flag], clear: [field key], increment: [var],
      vars: {name: text}}}

Texts (and action ``vars`` values, when the action runs) may use ``${name}`` for app vars and
field values. ``tests/data/replay/sample_app.yaml`` and ``trailmaps/devices/`` are worked
examples.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from trailblaze.errors import TrailblazeError
from trailblaze.replay.hierarchy import Bounds

LAUNCHER_PACKAGE = "com.android.launcher3"
BROWSER_PACKAGE = "com.android.chrome"
KEYBOARD_PACKAGE = "com.google.android.inputmethod.latin"
DEFAULT_FEATURES = ("shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir", "apex", "abb")


class ModelError(TrailblazeError, ValueError):
    """A fake-device spec is invalid; the message names the file and the key path."""


@dataclass(frozen=True)
class Action:
    """What a tap, long press or ENTER does: state changes first, then one navigation."""

    go: str | None = None
    replace: str | None = None
    back: bool = False
    home: bool = False
    launch: str | None = None
    set_flags: tuple[str, ...] = ()
    unset_flags: tuple[str, ...] = ()
    toggle_flags: tuple[str, ...] = ()
    clear: tuple[str, ...] = ()
    increment: tuple[str, ...] = ()
    variables: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ElementSpec:
    """One view. ``key`` names its value (editable) or checked state (checkable)."""

    key: str
    bounds: Bounds | None
    text: str = ""
    resource_id: str = ""
    class_name: str = "android.widget.TextView"
    content_desc: str = ""
    hint: str = ""
    value: str = ""
    clickable: bool = False
    long_clickable: bool = False
    editable: bool = False
    checkable: bool = False
    checked: bool = False
    enabled: bool = True
    selected: bool = False
    password: bool = False
    persist: bool = False
    when: str | None = None
    unless: str | None = None
    on_tap: Action | None = None
    on_long_press: Action | None = None
    on_enter: Action | None = None
    children: tuple[ElementSpec, ...] = ()


@dataclass(frozen=True)
class ListSpec:
    """A vertical scrollable list: items stacked from the viewport top, scrolled by swipes."""

    resource_id: str
    bounds: Bounds
    item_height: int
    items: tuple[ElementSpec, ...]


@dataclass(frozen=True)
class ScreenSpec:
    name: str
    activity: str
    elements: tuple[ElementSpec, ...] = ()
    scroll_list: ListSpec | None = None

    @property
    def all_elements(self) -> tuple[ElementSpec, ...]:
        """The top-level elements, then the list's items (children not included)."""
        return self.elements + (self.scroll_list.items if self.scroll_list else ())


@dataclass(frozen=True)
class AppSpec:
    package: str
    label: str
    activity: str
    launcher: str
    screens: Mapping[str, ScreenSpec]
    variables: Mapping[str, str] = field(default_factory=dict)
    clear_task_on_launch: bool = False
    """Android's ``clearTaskOnLaunch``: a launcher start always shows the launcher screen."""


@dataclass
class CommandOverride:
    """Answer commands starting with ``match`` with this result (``times``: None = always)."""

    match: str
    returncode: int = 1
    stdout: str = ""
    stderr: str = ""
    times: int | None = None


@dataclass
class Faults:
    """Fault knobs; tests may change them while a server runs.

    - ``disconnect_after``: serve this many shell commands, then drop the connection in the middle
      of the next one; the device is gone afterwards.
    - ``disconnect_mode``: how the connection drops: ``reset`` (after OKAY, a TCP reset) or
      ``close`` (closed before any answer: the client's read comes back empty).
    - ``delay`` / ``delays``: seconds to sleep before answering every command / commands that
      start with a key.
    - ``idle_errors``: the next k dumps fail with "could not get idle state".
    - ``malformed_dumps``: each dump writes the next of these texts instead of the screen.
    - ``overrides``: per-command exit code and output.
    """

    disconnect_after: int | None = None
    disconnect_mode: str = "reset"
    delay: float = 0.0
    delays: dict[str, float] = field(default_factory=dict)
    idle_errors: int = 0
    malformed_dumps: list[str] = field(default_factory=list)
    overrides: list[CommandOverride] = field(default_factory=list)


@dataclass(frozen=True)
class DeviceSpec:
    serial: str
    state: str
    width: int
    height: int
    sdk: int
    model: str
    properties: Mapping[str, str]
    features: tuple[str, ...]
    hint_attribute: bool
    hint_as_text: bool
    apps: Mapping[str, AppSpec]
    packages: tuple[str, ...]
    clipboard: str
    files: Mapping[str, bytes]
    faults: Faults
