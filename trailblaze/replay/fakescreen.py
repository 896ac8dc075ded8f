"""A declarative Android device the fakes serve, and ``ModelDevice``, the in-memory ``Device``.

A spec (a dict, or a YAML file read with ruamel's safe loader) describes apps, their screens and
elements; ``FakeDevice`` is the running state machine: foreground app, per-app back stack,
focused field and its value, soft keyboard, clipboard (set by the Clipper broadcast), installed
packages, a path -> bytes file system, an event log, and fault knobs. It answers the adb shell
commands replay sends (``input``, ``am``, ``pm``, ``monkey``, ``uiautomator dump``, ``dumpsys``,
``wm``, ``getprop``) the way a device does, including the quirks that catch bad recordings:
``input text`` with no focused field is dropped, BACK closes the keyboard before it navigates.

``fakeadb.FakeAdbServer`` puts a ``FakeDevice`` behind a real adb socket; ``ModelDevice`` drives
one directly (no sockets) for fast engine tests.

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

Texts may use ``${name}`` for app vars and field values. ``tests/data/replay/sample_app.yaml``
is a worked example.
"""

from __future__ import annotations

import difflib
import shlex
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from string import Template
from typing import Any, NamedTuple
from xml.sax.saxutils import escape

from ruamel.yaml import YAML

from trailblaze.replay.device import (
    DeviceError,
    DeviceLostError,
    KeyCode,
    ShellDevice,
    ShellResult,
)
from trailblaze.replay.hierarchy import Bounds

LAUNCHER_PACKAGE = "com.android.launcher3"
BROWSER_PACKAGE = "com.android.chrome"
KEYBOARD_PACKAGE = "com.google.android.inputmethod.latin"
DEFAULT_FEATURES = ("shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir", "apex", "abb")
DEFAULT_DUMP_PATH = "/sdcard/window_dump.xml"
IDLE_ERROR_TEXT = "ERROR: could not get idle state.\n"

STDOUT, STDERR = 1, 2

_KEY_NAMES: dict[str, int] = {
    "HOME": 3,
    "BACK": 4,
    "DPAD_UP": 19,
    "DPAD_DOWN": 20,
    "DPAD_LEFT": 21,
    "DPAD_RIGHT": 22,
    "TAB": 61,
    "SPACE": 62,
    "ENTER": 66,
    "DEL": 67,
    "ESCAPE": 111,
    "FORWARD_DEL": 112,
    "MOVE_HOME": 122,
    "MOVE_END": 123,
    "APP_SWITCH": 187,
    **{str(d): 7 + d for d in range(10)},
    **{chr(ord("A") + i): 29 + i for i in range(26)},
}
_KEY_CHARS = {**{7 + d: str(d) for d in range(10)}, **{29 + i: chr(97 + i) for i in range(26)}}
_KEY_CHARS[KeyCode.SPACE] = " "


class ModelError(ValueError):
    """A fake-device spec is invalid; the message names the file and the key path."""


# --- the spec -------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class AppSpec:
    package: str
    label: str
    activity: str
    launcher: str
    screens: Mapping[str, ScreenSpec]
    variables: Mapping[str, str] = field(default_factory=dict)


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
    - ``delay`` / ``delays``: seconds to sleep before answering every command / commands that
      start with a key.
    - ``idle_errors``: the next k dumps fail with "could not get idle state".
    - ``malformed_dumps``: each dump writes the next of these texts instead of the screen.
    - ``overrides``: per-command exit code and output.
    """

    disconnect_after: int | None = None
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


class _Reader:
    """Walks raw spec data with a key path, so every error says where it is."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, message: str) -> ModelError:
        return ModelError(
            f"{self.source}: {where}: {message}" if where else f"{self.source}: {message}"
        )

    def mapping(self, value: Any, where: str, allowed: Sequence[str]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(where, f"expected a mapping, got {type(value).__name__}")
        for key in value:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise self.fail(where, f"unknown key '{key}'{hint}")
        return value

    def table(self, value: Any, where: str) -> Mapping[str, Any]:
        """A mapping whose keys are the user's own names (screens, vars, properties)."""
        if not isinstance(value, Mapping):
            raise self.fail(where, f"expected a mapping, got {type(value).__name__}")
        return value

    def str_(self, value: Any, where: str) -> str:
        # `text: 42` in a spec means the text "42"; booleans and mappings are mistakes.
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.fail(where, f"expected text, got {type(value).__name__}")
        return str(value)

    def int_(self, value: Any, where: str, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(where, f"expected a whole number >= {minimum}, got {value!r}")
        return value

    def bool_(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"expected true or false, got {value!r}")
        return value

    def list_(self, value: Any, where: str) -> Sequence[Any]:
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise self.fail(where, f"expected a list, got {type(value).__name__}")
        return value

    def names(self, value: Any, where: str) -> tuple[str, ...]:
        if isinstance(value, str):
            return (value,)
        return tuple(self.str_(v, f"{where}[{i}]") for i, v in enumerate(self.list_(value, where)))

    def bounds(self, value: Any, where: str) -> Bounds:
        if isinstance(value, str):
            parts = value.replace("][", ",").strip("[]").split(",")
        else:
            parts = list(self.list_(value, where))
        try:
            left, top, right, bottom = (int(p) for p in parts)
        except (TypeError, ValueError):
            raise self.fail(where, f"expected [left, top, right, bottom], got {value!r}") from None
        if right < left or bottom < top:
            raise self.fail(where, f"right/bottom must not be less than left/top in {value!r}")
        return Bounds(left, top, right, bottom)


_ACTION_KEYS = (
    "go", "replace", "back", "home", "launch", "set", "unset", "toggle", "clear", "increment",
    "vars",
)  # fmt: skip
_ELEMENT_KEYS = (
    "key", "id", "text", "class", "bounds", "content_desc", "hint", "value", "clickable",
    "long_clickable", "editable", "checkable", "checked", "enabled", "selected", "password",
    "persist", "when", "unless", "on_tap", "on_long_press", "on_enter", "children",
)  # fmt: skip
_LIST_KEYS = ("id", "bounds", "item_height", "items", "generate")
_SCREEN_KEYS = ("activity", "elements", "list")
_APP_KEYS = ("package", "label", "activity", "launcher", "screens", "vars")
_FAULT_KEYS = ("disconnect_after", "delay", "delays", "idle_errors", "malformed_dumps", "overrides")
_OVERRIDE_KEYS = ("match", "returncode", "stdout", "stderr", "times")
_DEVICE_KEYS = (
    "serial", "state", "size", "sdk", "model", "properties", "features", "hint_attribute",
    "hint_as_text", "apps", "packages", "clipboard", "files", "faults",
)  # fmt: skip


def _parse_action(r: _Reader, raw: Any, where: str) -> Action:
    if isinstance(raw, str):
        return Action(go=raw)
    data = r.mapping(raw, where, _ACTION_KEYS)
    variables = r.table(data.get("vars", {}), f"{where}.vars")
    return Action(
        go=r.str_(data["go"], f"{where}.go") if "go" in data else None,
        replace=r.str_(data["replace"], f"{where}.replace") if "replace" in data else None,
        back=r.bool_(data.get("back", False), f"{where}.back"),
        home=r.bool_(data.get("home", False), f"{where}.home"),
        launch=r.str_(data["launch"], f"{where}.launch") if "launch" in data else None,
        set_flags=r.names(data.get("set", ()), f"{where}.set"),
        unset_flags=r.names(data.get("unset", ()), f"{where}.unset"),
        toggle_flags=r.names(data.get("toggle", ()), f"{where}.toggle"),
        clear=r.names(data.get("clear", ()), f"{where}.clear"),
        increment=r.names(data.get("increment", ()), f"{where}.increment"),
        variables=tuple(
            (str(k), r.str_(v, f"{where}.vars.{k}")) for k, v in sorted(variables.items())
        ),
    )


def _parse_element(r: _Reader, raw: Any, where: str, package: str) -> ElementSpec:
    data = r.mapping(raw, where, _ELEMENT_KEYS)
    resource_id = r.str_(data.get("id", ""), f"{where}.id")
    if resource_id and ":" not in resource_id:
        resource_id = f"{package}:id/{resource_id}"
    text = r.str_(data.get("text", ""), f"{where}.text")
    editable = r.bool_(data.get("editable", False), f"{where}.editable")
    key = r.str_(data.get("key", resource_id.rsplit("/", 1)[-1] or text), f"{where}.key")
    if editable and not key:
        raise r.fail(where, "an editable element needs an 'id' or a 'key'")
    actions = {
        name: _parse_action(r, data[name], f"{where}.{name}") if name in data else None
        for name in ("on_tap", "on_long_press", "on_enter")
    }
    default_class = "android.widget.EditText" if editable else "android.widget.TextView"
    return ElementSpec(
        key=key,
        bounds=r.bounds(data["bounds"], f"{where}.bounds") if "bounds" in data else None,
        text=text,
        resource_id=resource_id,
        class_name=r.str_(data.get("class", default_class), f"{where}.class"),
        content_desc=r.str_(data.get("content_desc", ""), f"{where}.content_desc"),
        hint=r.str_(data.get("hint", ""), f"{where}.hint"),
        value=r.str_(data.get("value", ""), f"{where}.value"),
        clickable=r.bool_(
            data.get("clickable", actions["on_tap"] is not None or editable), f"{where}.clickable"
        ),
        long_clickable=r.bool_(
            data.get("long_clickable", actions["on_long_press"] is not None),
            f"{where}.long_clickable",
        ),
        editable=editable,
        checkable=r.bool_(data.get("checkable", False), f"{where}.checkable"),
        checked=r.bool_(data.get("checked", False), f"{where}.checked"),
        enabled=r.bool_(data.get("enabled", True), f"{where}.enabled"),
        selected=r.bool_(data.get("selected", False), f"{where}.selected"),
        password=r.bool_(data.get("password", False), f"{where}.password"),
        persist=r.bool_(data.get("persist", False), f"{where}.persist"),
        when=r.str_(data["when"], f"{where}.when") if "when" in data else None,
        unless=r.str_(data["unless"], f"{where}.unless") if "unless" in data else None,
        on_tap=actions["on_tap"],
        on_long_press=actions["on_long_press"],
        on_enter=actions["on_enter"],
        children=tuple(
            _parse_element(r, c, f"{where}.children[{i}]", package)
            for i, c in enumerate(r.list_(data.get("children", ()), f"{where}.children"))
        ),
    )


def _expand(value: Any, n: int) -> Any:
    if isinstance(value, str):
        return value.replace("{n}", str(n))
    if isinstance(value, Mapping):
        return {k: _expand(v, n) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_expand(v, n) for v in value]
    return value


def _parse_list(r: _Reader, raw: Any, where: str, package: str) -> ListSpec:
    data = r.mapping(raw, where, _LIST_KEYS)
    raw_items = list(r.list_(data.get("items", ()), f"{where}.items"))
    if "generate" in data:
        gen = r.mapping(data["generate"], f"{where}.generate", (*_ELEMENT_KEYS, "count"))
        count = r.int_(gen.get("count"), f"{where}.generate.count", minimum=1)
        template = {k: v for k, v in gen.items() if k != "count"}
        raw_items += [_expand(template, n) for n in range(1, count + 1)]
    resource_id = r.str_(data.get("id", "list"), f"{where}.id")
    if ":" not in resource_id:
        resource_id = f"{package}:id/{resource_id}"
    return ListSpec(
        resource_id=resource_id,
        bounds=r.bounds(data.get("bounds"), f"{where}.bounds"),
        item_height=r.int_(data.get("item_height", 150), f"{where}.item_height", minimum=1),
        items=tuple(
            _parse_element(r, item, f"{where}.items[{i}]", package)
            for i, item in enumerate(raw_items)
        ),
    )


def _walk_actions(elements: Sequence[ElementSpec]) -> Iterator[tuple[ElementSpec, Action]]:
    for element in elements:
        for action in (element.on_tap, element.on_long_press, element.on_enter):
            if action is not None:
                yield element, action
        yield from _walk_actions(element.children)


def _parse_app(r: _Reader, raw: Any, where: str) -> AppSpec:
    data = r.mapping(raw, where, _APP_KEYS)
    if "package" not in data:
        raise r.fail(where, "missing 'package'")
    package = r.str_(data["package"], f"{where}.package")
    activity = r.str_(data.get("activity", ".MainActivity"), f"{where}.activity")
    raw_screens = r.table(data.get("screens", {}), f"{where}.screens")
    screens: dict[str, ScreenSpec] = {}
    for name, raw_screen in raw_screens.items():
        sw = f"{where}.screens.{name}"
        raw = r.mapping(raw_screen or {}, sw, _SCREEN_KEYS)
        screens[str(name)] = ScreenSpec(
            name=str(name),
            activity=r.str_(raw.get("activity", activity), f"{sw}.activity"),
            elements=tuple(
                _parse_element(r, e, f"{sw}.elements[{i}]", package)
                for i, e in enumerate(r.list_(raw.get("elements", ()), f"{sw}.elements"))
            ),
            scroll_list=_parse_list(r, raw["list"], f"{sw}.list", package)
            if "list" in raw
            else None,
        )
    if not screens:
        raise r.fail(where, "an app needs at least one screen")
    launcher = r.str_(data.get("launcher", next(iter(screens))), f"{where}.launcher")
    for name, screen in screens.items():
        elements = screen.elements + (screen.scroll_list.items if screen.scroll_list else ())
        for element, action in _walk_actions(elements):
            for target in (action.go, action.replace):
                if target is not None and target not in screens:
                    close = difflib.get_close_matches(target, list(screens), n=1)
                    hint = f" (did you mean '{close[0]}'?)" if close else ""
                    raise r.fail(
                        f"{where}.screens.{name}",
                        f"element '{element.key}' goes to unknown screen '{target}'{hint}",
                    )
    if launcher not in screens:
        raise r.fail(f"{where}.launcher", f"unknown screen '{launcher}'")
    return AppSpec(
        package=package,
        label=r.str_(data.get("label", package.rsplit(".", 1)[-1]), f"{where}.label"),
        activity=activity,
        launcher=launcher,
        screens=screens,
        variables={
            str(k): r.str_(v, f"{where}.vars.{k}")
            for k, v in r.table(data.get("vars", {}), f"{where}.vars").items()
        },
    )


def _parse_faults(r: _Reader, raw: Any, where: str) -> Faults:
    data = r.mapping(raw, where, _FAULT_KEYS)
    delays = data.get("delays", {})
    overrides = []
    for i, item in enumerate(r.list_(data.get("overrides", ()), f"{where}.overrides")):
        ow = f"{where}.overrides[{i}]"
        o = r.mapping(item, ow, _OVERRIDE_KEYS)
        overrides.append(
            CommandOverride(
                match=r.str_(o.get("match", ""), f"{ow}.match"),
                returncode=r.int_(o.get("returncode", 1), f"{ow}.returncode"),
                stdout=r.str_(o.get("stdout", ""), f"{ow}.stdout"),
                stderr=r.str_(o.get("stderr", ""), f"{ow}.stderr"),
                times=r.int_(o["times"], f"{ow}.times") if "times" in o else None,
            )
        )
    disconnect = data.get("disconnect_after")
    return Faults(
        disconnect_after=None
        if disconnect is None
        else r.int_(disconnect, f"{where}.disconnect_after"),
        delay=float(data.get("delay", 0.0)),
        delays={str(k): float(v) for k, v in r.table(delays, f"{where}.delays").items()},
        idle_errors=r.int_(data.get("idle_errors", 0), f"{where}.idle_errors"),
        malformed_dumps=list(r.names(data.get("malformed_dumps", ()), f"{where}.malformed_dumps")),
        overrides=overrides,
    )


def parse_device_spec(raw: Any, source: str = "<spec>", where: str = "") -> DeviceSpec:
    """Validate one device's spec mapping (see the module docstring)."""
    r = _Reader(source)
    data = r.mapping(raw, where, _DEVICE_KEYS)
    prefix = f"{where}." if where else ""
    size = r.list_(data.get("size", [1080, 2400]), f"{prefix}size")
    if len(size) != 2:
        raise r.fail(f"{prefix}size", "expected [width, height]")
    apps: dict[str, AppSpec] = {}
    for i, raw_app in enumerate(r.list_(data.get("apps", ()), f"{prefix}apps")):
        app = _parse_app(r, raw_app, f"{prefix}apps[{i}]")
        apps[app.package] = app
    state = r.str_(data.get("state", "device"), f"{prefix}state")
    if state not in ("device", "offline", "unauthorized"):
        raise r.fail(f"{prefix}state", f"expected device, offline or unauthorized, not {state!r}")
    properties = r.table(data.get("properties", {}), f"{prefix}properties")
    files = r.table(data.get("files", {}), f"{prefix}files")
    return DeviceSpec(
        serial=r.str_(data.get("serial", "emulator-5554"), f"{prefix}serial"),
        state=state,
        width=r.int_(size[0], f"{prefix}size[0]", minimum=1),
        height=r.int_(size[1], f"{prefix}size[1]", minimum=1),
        sdk=r.int_(data.get("sdk", 34), f"{prefix}sdk"),
        model=r.str_(data.get("model", "sdk_gphone64_x86_64"), f"{prefix}model"),
        properties={str(k): r.str_(v, f"{prefix}properties.{k}") for k, v in properties.items()},
        features=r.names(data.get("features", DEFAULT_FEATURES), f"{prefix}features"),
        hint_attribute=r.bool_(data.get("hint_attribute", True), f"{prefix}hint_attribute"),
        hint_as_text=r.bool_(data.get("hint_as_text", False), f"{prefix}hint_as_text"),
        apps=apps,
        packages=r.names(data.get("packages", ()), f"{prefix}packages"),
        clipboard=r.str_(data.get("clipboard", ""), f"{prefix}clipboard"),
        files={str(k): r.str_(v, f"{prefix}files.{k}").encode() for k, v in files.items()},
        faults=_parse_faults(r, data.get("faults", {}), f"{prefix}faults"),
    )


def load_specs(source: Path | str | Mapping[str, Any]) -> list[DeviceSpec]:
    """Device specs from a YAML file or a mapping; ``devices: [...]`` holds several."""
    if isinstance(source, Mapping):
        data: Any = source
        name = "<spec>"
    else:
        path = Path(source)
        name = str(path)
        try:
            data = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ModelError(f"{name}: cannot read: {exc.strerror or exc}") from exc
        except Exception as exc:  # ruamel's YAMLError and its scanner/parser errors
            raise ModelError(f"{name}: not valid YAML: {exc}") from exc
    if isinstance(data, Mapping) and "devices" in data:
        if set(data) != {"devices"}:
            raise ModelError(f"{name}: a 'devices' file has no other top-level keys")
        raw = _Reader(name).list_(data["devices"], "devices")
        specs = [parse_device_spec(d, name, f"devices[{i}]") for i, d in enumerate(raw)]
    else:
        specs = [parse_device_spec(data if data is not None else {}, name)]
    serials = [s.serial for s in specs]
    duplicates = sorted({s for s in serials if serials.count(s) > 1})
    if duplicates:
        raise ModelError(f"{name}: duplicate serial(s): {', '.join(duplicates)}")
    return specs


# --- runtime state --------------------------------------------------------------------------


class Event(NamedTuple):
    """One thing the device did, for tests and demos: ``kind`` plus a human ``detail``."""

    kind: str
    detail: str


class CommandResult(NamedTuple):
    """A command's exit code and its output chunks ((STDOUT|STDERR, bytes)) in order."""

    returncode: int
    chunks: tuple[tuple[int, bytes], ...] = ()

    @classmethod
    def of(cls, stdout: str = "", stderr: str = "", returncode: int = 0) -> CommandResult:
        chunks = []
        if stdout:
            chunks.append((STDOUT, stdout.encode()))
        if stderr:
            chunks.append((STDERR, stderr.encode()))
        return cls(returncode, tuple(chunks))

    def text(self, stream: int | None = None) -> str:
        return b"".join(d for s, d in self.chunks if stream in (None, s)).decode(errors="replace")


class Admission(NamedTuple):
    """Whether a received command line runs: ``dropped`` means the transport dies now."""

    dropped: bool
    delay: float


@dataclass
class AppState:
    running: bool = False
    stack: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)
    checked: dict[str, bool] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    variables: dict[str, str] = field(default_factory=dict)
    scroll: dict[str, int] = field(default_factory=dict)
    data: dict[str, str | bool] = field(default_factory=dict)  # survives force-stop, not pm clear
    pid: int = 0


@dataclass(frozen=True)
class View:
    """A rendered node: what the dump shows and what a tap hits."""

    class_name: str
    package: str
    bounds: Bounds
    text: str = ""
    resource_id: str = ""
    content_desc: str = ""
    hint: str = ""
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    element: ElementSpec | None = None
    children: tuple[View, ...] = ()

    def walk(self) -> Iterator[View]:
        yield self
        for child in self.children:
            yield from child.walk()


def _attr(value: str) -> str:
    return escape(value, {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def _flag(value: bool) -> str:
    return "true" if value else "false"


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
        self._served = 0
        self._next_pid = 4000
        self._commands: dict[str, Callable[[list[str]], CommandResult]] = {
            "input": self._input,
            "uiautomator": self._uiautomator,
            "am": self._am,
            "pm": self._pm,
            "monkey": self._monkey,
            "dumpsys": self._dumpsys,
            "wm": self._wm,
            "getprop": self._getprop,
            "pidof": self._pidof,
            "settings": lambda argv: CommandResult.of("null\n"),
        }

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
        handler = self._commands.get(argv[0])
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
        for screen in self.spec.apps[package].screens.values():
            items = screen.scroll_list.items if screen.scroll_list else ()
            for element in _all_elements(screen.elements + items):
                if element.key == key:
                    return element
        return None

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
        if not app.running:
            app.running = True
            app.stack = [self.spec.apps[package].launcher]
            self._next_pid += 1
            app.pid = self._next_pid
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

    def _go_home(self, why: str) -> None:
        self._leave_screen()
        self.foreground = None
        self._log("home", why)

    def _apply(self, package: str, action: Action) -> None:
        app = self.apps[package]
        app.flags |= set(action.set_flags)
        app.flags -= set(action.unset_flags)
        app.flags ^= set(action.toggle_flags)
        app.variables.update(dict(action.variables))
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

    # -- rendering --

    def render(self) -> tuple[View, ...]:
        """The windows on screen, top-level first (the app or launcher, then the keyboard)."""
        with self.lock:
            width, height = self.spec.width, self.spec.height
            screen_bounds = Bounds(0, 0, width, height)
            windows = [self._render_foreground(screen_bounds)]
            if self.keyboard_shown:
                windows.append(self._render_keyboard())
            return tuple(windows)

    def _render_foreground(self, full: Bounds) -> View:
        package = self.foreground
        if package is None:
            icons = []
            for i, app in enumerate(self.spec.apps.values()):
                left = 40 + (i % 4) * 260
                top = 300 + (i // 4) * 300
                icons.append(
                    View(
                        "android.widget.TextView",
                        LAUNCHER_PACKAGE,
                        Bounds(left, top, left + 220, top + 260),
                        text=app.label,
                        content_desc=app.label,
                        clickable=True,
                        focusable=True,
                        element=ElementSpec(
                            key=f"launcher:{app.package}",
                            bounds=None,
                            on_tap=Action(launch=app.package),
                        ),
                    )
                )
            return View("android.widget.FrameLayout", LAUNCHER_PACKAGE, full, children=tuple(icons))
        if package == BROWSER_PACKAGE and package not in self.apps:
            bar = View(
                "android.widget.EditText",
                package,
                Bounds(0, 80, full.right, 200),
                text=self.browser_url,
                resource_id=f"{package}:id/url_bar",
                clickable=True,
                focusable=True,
            )
            return View("android.widget.FrameLayout", package, full, children=(bar,))
        screen = self._screen()
        children: list[View] = []
        if screen is not None:
            children = [v for e in screen.elements if (v := self._render_element(package, e, None))]
            if screen.scroll_list is not None:
                children.append(self._render_list(package, screen))
        return View("android.widget.FrameLayout", package, full, children=tuple(children))

    def _visible(self, package: str, element: ElementSpec) -> bool:
        flags = self.apps[package].flags
        if element.when is not None and element.when not in flags:
            return False
        return element.unless is None or element.unless not in flags

    def _render_element(
        self,
        package: str,
        element: ElementSpec,
        parent: Bounds | None,
        origin: tuple[int, int] | None = None,
        clip: Bounds | None = None,
    ) -> View | None:
        if not self._visible(package, element):
            return None
        bounds = element.bounds or parent or Bounds(0, 0, 0, 0)
        if origin is not None and element.bounds is not None:
            dx, dy = origin
            bounds = Bounds(
                bounds.left + dx, bounds.top + dy, bounds.right + dx, bounds.bottom + dy
            )
        if clip is not None:
            bounds = _clip(bounds, clip)
        app = self.apps[package]
        text = element.text
        if "$" in text:
            defaults = self.spec.apps[package].variables
            text = Template(text).safe_substitute({**defaults, **app.values, **app.variables})
        hint = element.hint
        focused = False
        if element.editable:
            value = self._value(package, element.key)
            text = "•" * len(value) if element.password else value
            focused = self.focused == element.key
            if not text and self.spec.hint_as_text:
                text = hint
        children = tuple(
            v
            for c in element.children
            if (v := self._render_element(package, c, bounds, origin, clip)) is not None
        )
        return View(
            class_name=element.class_name,
            package=package,
            bounds=bounds,
            text=text,
            resource_id=element.resource_id,
            content_desc=element.content_desc,
            hint=hint,
            checkable=element.checkable,
            checked=self._checked(package, element) if element.checkable else False,
            clickable=element.clickable,
            enabled=element.enabled,
            focusable=element.clickable or element.editable,
            focused=focused,
            long_clickable=element.long_clickable,
            password=element.password,
            selected=element.selected,
            element=element,
            children=children,
        )

    def _render_list(self, package: str, screen: ScreenSpec) -> View:
        spec = screen.scroll_list
        assert spec is not None  # callers check; keeps mypy honest about the Optional
        offset = self.apps[package].scroll.get(screen.name, 0)
        items: list[View] = []
        visible_items = [item for item in spec.items if self._visible(package, item)]
        for i, item in enumerate(visible_items):
            top = spec.bounds.top + i * spec.item_height - offset
            full = Bounds(spec.bounds.left, top, spec.bounds.right, top + spec.item_height)
            # RecyclerView only has views for rows that intersect the viewport, clipped to it.
            if not full.intersects(spec.bounds):
                continue
            view = self._render_element(
                package,
                replace(item, bounds=None),
                full,
                origin=(full.left, full.top),
                clip=spec.bounds,
            )
            if view is not None:
                view = replace(view, bounds=_clip(full, spec.bounds))
                items.append(view)
        return View(
            "androidx.recyclerview.widget.RecyclerView",
            package,
            spec.bounds,
            resource_id=spec.resource_id,
            scrollable=True,
            focusable=True,
            children=tuple(items),
        )

    def _keyboard_bounds(self) -> Bounds:
        top = self.spec.height * 62 // 100
        return Bounds(0, top, self.spec.width, self.spec.height)

    def _render_keyboard(self) -> View:
        area = self._keyboard_bounds()
        keys = []
        key_width = area.width // 10
        for i, letter in enumerate("qwertyuiop"):
            left = area.left + i * key_width
            keys.append(
                View(
                    "android.widget.FrameLayout",
                    KEYBOARD_PACKAGE,
                    Bounds(left, area.top + 20, left + key_width, area.top + 160),
                    content_desc=letter,
                    resource_id=f"{KEYBOARD_PACKAGE}:id/key_pos_0_{i}",
                    clickable=True,
                )
            )
        return View("android.widget.FrameLayout", KEYBOARD_PACKAGE, area, children=tuple(keys))

    def dump_xml(self) -> str:
        """The uiautomator dump of the current screen, in the platform's attribute order."""
        parts = [
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>",
            '<hierarchy rotation="0">',
        ]
        for i, window in enumerate(self.render()):
            self._xml(window, i, parts)
        parts.append("</hierarchy>")
        return "".join(parts)

    def _xml(self, view: View, index: int, out: list[str]) -> None:
        b = view.bounds
        attrs = [
            ("index", str(index)),
            ("text", view.text),
            ("resource-id", view.resource_id),
            ("class", view.class_name),
            ("package", view.package),
            ("content-desc", view.content_desc),
            ("checkable", _flag(view.checkable)),
            ("checked", _flag(view.checked)),
            ("clickable", _flag(view.clickable)),
            ("enabled", _flag(view.enabled)),
            ("focusable", _flag(view.focusable)),
            ("focused", _flag(view.focused)),
            ("scrollable", _flag(view.scrollable)),
            ("long-clickable", _flag(view.long_clickable)),
            ("password", _flag(view.password)),
            ("selected", _flag(view.selected)),
            ("bounds", f"[{b.left},{b.top}][{b.right},{b.bottom}]"),
        ]
        if self.spec.hint_attribute:
            attrs.insert(6, ("hint", view.hint))
        out.append("<node " + " ".join(f'{k}="{_attr(v)}"' for k, v in attrs))
        if not view.children:
            out.append(" />")
            return
        out.append(">")
        for i, child in enumerate(view.children):
            self._xml(child, i, out)
        out.append("</node>")

    # -- input --

    def _hit(self, x: int, y: int) -> View | None:
        windows = self.render()
        for window in reversed(windows):
            if not window.bounds.contains_point(x, y):
                continue
            if window.package == KEYBOARD_PACKAGE:
                return window
            return _deepest_interactive(window, x, y)
        return None

    def tap(self, x: int, y: int) -> None:
        view = self._hit(x, y)
        if view is None:
            self._log("tap-missed", f"{x},{y}")
            return
        if view.package == KEYBOARD_PACKAGE:
            self._log("tap-keyboard", f"{x},{y}")
            return
        element = view.element
        label = _label(view)
        if element is None:
            self._log("tap", f"{label} @ {x},{y}")
            return
        if not view.enabled:
            self._log("tap-disabled", label)
            return
        self._log("tap", f"{label} @ {x},{y}")
        package = view.package
        if package == LAUNCHER_PACKAGE:
            if element.on_tap and element.on_tap.launch:
                self._launch(element.on_tap.launch)
            return
        if element.editable:
            self.focused = element.key
            self.cursor = len(self._value(package, element.key))
            if not self.keyboard_shown:
                self.keyboard_shown = True
                self._log("keyboard-shown", element.key)
        if element.checkable:
            app = self.apps[package]
            app.checked[element.key] = not self._checked(package, element)
            if element.persist:
                app.data[f"checked:{element.key}"] = app.checked[element.key]
            self._log("toggle", f"{element.key}={_flag(app.checked[element.key])}")
        if element.on_tap is not None:
            self._apply(package, element.on_tap)

    def long_press(self, x: int, y: int) -> None:
        view = self._hit(x, y)
        if view is None or view.element is None or view.package == KEYBOARD_PACKAGE:
            self._log("long-press-missed", f"{x},{y}")
            return
        self._log("long-press", _label(view))
        if view.element.on_long_press is not None and view.enabled:
            self._apply(view.package, view.element.on_long_press)

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> None:
        screen = self._screen()
        spec = screen.scroll_list if screen else None
        if screen is None or spec is None or not spec.bounds.contains_point(x1, y1):
            self._log("swipe", f"{x1},{y1} -> {x2},{y2}")
            return
        assert self.foreground is not None  # a screen implies a foreground app
        app = self.apps[self.foreground]
        count = sum(1 for item in spec.items if self._visible(self.foreground, item))
        limit = max(0, count * spec.item_height - spec.bounds.height)
        before = app.scroll.get(screen.name, 0)
        after = min(limit, max(0, before + (y1 - y2)))
        app.scroll[screen.name] = after
        self._log("scroll" if after != before else "scroll-end", f"{screen.name} offset={after}")

    def _focused_field(self) -> tuple[str, str] | None:
        """(package, key) of the focused field if it is on screen now."""
        if self.focused is None or self.foreground is None or self.foreground not in self.apps:
            return None
        for window in self.render():
            for view in window.walk():
                if (
                    view.element is not None
                    and view.element.key == self.focused
                    and view.element.editable
                ):
                    return self.foreground, self.focused
        return None

    def type_text(self, text: str) -> None:
        target = self._focused_field()
        if target is None:
            # Real Android drops key events when nothing has input focus; a recording that forgot
            # to tap its field fails later instead of typing somewhere else.
            self._log("text-dropped", text)
            return
        package, key = target
        value = self._value(package, key)
        cursor = min(self.cursor, len(value))
        self._set_value(package, key, value[:cursor] + text + value[cursor:])
        self.cursor = cursor + len(text)
        self._log("text", f"{key}={self._value(package, key)}")

    def press_key(self, code: int) -> None:
        target = self._focused_field()
        if code == KeyCode.BACK:
            self._back()
        elif code == KeyCode.HOME:
            self._go_home("home key")
        elif code == KeyCode.ESCAPE:
            if self.keyboard_shown:
                self.keyboard_shown = False
                self._log("keyboard-hidden", "escape")
        elif code == KeyCode.ENTER and target is not None:
            element = self._element_default(*target)
            self._log("key", "ENTER")
            if element is not None and element.on_enter is not None:
                self._apply(target[0], element.on_enter)
        elif code in (KeyCode.DEL, KeyCode.FORWARD_DEL) and target is not None:
            value = self._value(*target)
            cursor = min(self.cursor, len(value))
            if code == KeyCode.DEL and cursor > 0:
                self._set_value(*target, value[: cursor - 1] + value[cursor:])
                self.cursor = cursor - 1
            elif code == KeyCode.FORWARD_DEL:
                self._set_value(*target, value[:cursor] + value[cursor + 1 :])
            self._log("key", f"{KeyCode(code).name} {target[1]}={self._value(*target)}")
        elif code in (KeyCode.MOVE_HOME, KeyCode.MOVE_END) and target is not None:
            self.cursor = 0 if code == KeyCode.MOVE_HOME else len(self._value(*target))
            self._log("key", KeyCode(code).name)
        elif code == KeyCode.TAB and target is not None:
            self._focus_next(*target)
        elif code in _KEY_CHARS:
            self.type_text(_KEY_CHARS[code])
        else:
            self._log("key", str(code))

    def _focus_next(self, package: str, key: str) -> None:
        fields = [
            view.element.key
            for window in self.render()
            for view in window.walk()
            if view.element is not None and view.element.editable
        ]
        if key in fields and len(fields) > 1:
            self.focused = fields[(fields.index(key) + 1) % len(fields)]
            self.cursor = len(self._value(package, self.focused))
        self._log("key", f"TAB focus={self.focused}")

    # -- commands --

    def _input(self, args: list[str]) -> CommandResult:
        usage = CommandResult.of(
            stderr="Error: Unknown command\nUsage: input [<source>] <command> [<arg>...]\n",
            returncode=1,
        )
        if not args:
            return usage
        command, rest = args[0], args[1:]
        try:
            if command == "tap" and len(rest) == 2:
                self.tap(*(int(float(v)) for v in rest))
            elif command == "swipe" and len(rest) in (4, 5):
                x1, y1, x2, y2 = (int(float(v)) for v in rest[:4])
                duration = int(rest[4]) if len(rest) == 5 else 300
                if abs(x2 - x1) <= 10 and abs(y2 - y1) <= 10:
                    if duration >= 400:
                        self.long_press(x1, y1)
                    else:
                        self.tap(x1, y1)
                else:
                    self.swipe(x1, y1, x2, y2)
            elif command == "text" and len(rest) == 1:
                self.type_text(rest[0].replace("%s", " "))
            elif command == "keyevent" and rest:
                codes = [_key_code(v) for v in rest if v != "--longpress"]
                for code in codes:
                    self.press_key(code)
            else:
                return usage
        except ValueError as exc:
            return CommandResult.of(stderr=f"Error: {exc}\n", returncode=1)
        return CommandResult(0)

    def _uiautomator(self, args: list[str]) -> CommandResult:
        if not args or args[0] != "dump":
            return CommandResult.of(
                stderr="Usage: uiautomator <subcommand> [options]\n", returncode=1
            )
        paths = [a for a in args[1:] if not a.startswith("--")]
        path = paths[0] if paths else DEFAULT_DUMP_PATH
        if self.faults.idle_errors > 0:
            self.faults.idle_errors -= 1
            self._log("dump-not-idle", path)
            return CommandResult.of(IDLE_ERROR_TEXT)
        xml = self.faults.malformed_dumps.pop(0) if self.faults.malformed_dumps else self.dump_xml()
        self._log("dump", path)
        done = f"UI hierchary dumped to: {path}\n"  # sic: the platform's own spelling
        if path == "/dev/tty":
            return CommandResult.of(xml + done)
        self.files[path] = xml.encode()
        return CommandResult.of(done)

    def _am(self, args: list[str]) -> CommandResult:
        if args[:1] == ["force-stop"] and len(args) == 2:
            self._stop(args[1])
            return CommandResult(0)
        if args[:1] == ["broadcast"]:
            return self._broadcast(args[1:])
        if args[:1] == ["start"]:
            opts = _options(args[1:])
            if "-n" in opts:
                package = opts["-n"].split("/", 1)[0]
                if package not in self.apps:
                    return CommandResult.of(
                        f"Starting: Intent {{ cmp={opts['-n']} }}\n",
                        f"Error: Activity class {{{opts['-n']}}} does not exist.\n",
                        1,
                    )
                self._launch(package)
                return CommandResult.of(f"Starting: Intent {{ cmp={opts['-n']} }}\n")
            if opts.get("-a") == "android.intent.action.VIEW" and "-d" in opts:
                self.browser_url = opts["-d"]
                self._launch(BROWSER_PACKAGE)
                self._log("open-url", opts["-d"])
                return CommandResult.of(
                    f"Starting: Intent {{ act=android.intent.action.VIEW dat={opts['-d']} }}\n"
                )
        return CommandResult.of(
            stderr=f"Error: unsupported am command: {shlex.join(args)}\n", returncode=1
        )

    def _broadcast(self, args: list[str]) -> CommandResult:
        opts = _options(args)
        action = opts.get("-a", "")
        head = f"Broadcasting: Intent {{ act={action} flg=0x400000 (has extras) }}\n"
        if action == "clipper.set":
            self.clipboard = opts.get("--es text", "")
            self._log("clipboard", self.clipboard)
            return CommandResult.of(
                head + 'Broadcast completed: result=-1, data="Text is copied into clipboard."\n'
            )
        if action == "clipper.get":
            return CommandResult.of(
                head + f'Broadcast completed: result=-1, data="{self.clipboard}"\n'
            )
        return CommandResult.of(head + "Broadcast completed: result=0\n")

    def _pm(self, args: list[str]) -> CommandResult:
        if args[:2] == ["list", "packages"]:
            names = sorted(self.installed)
            if "-3" in args:
                names = [n for n in names if n in self.apps or n in self.spec.packages]
            return CommandResult.of("".join(f"package:{n}\n" for n in names))
        if args[:1] == ["clear"] and len(args) == 2:
            package = args[1]
            if package not in self.installed:
                return CommandResult.of("Failed\n", returncode=1)
            self._stop(package)
            if package in self.apps:
                self.apps[package] = AppState()
            self._log("clear", package)
            return CommandResult.of("Success\n")
        if args[:1] == ["path"] and len(args) == 2:
            if args[1] not in self.installed:
                return CommandResult(1)
            return CommandResult.of(f"package:/data/app/{args[1]}/base.apk\n")
        if args[:1] in (["grant"], ["revoke"]):
            return CommandResult(0)
        return CommandResult.of(
            stderr=f"Error: unsupported pm command: {shlex.join(args)}\n", returncode=1
        )

    def _monkey(self, args: list[str]) -> CommandResult:
        opts = _options(args)
        package = opts.get("-p", "")
        if package not in self.apps:
            return CommandResult.of(
                "  bash arg: -p\n", "** No activities found to run, monkey aborted.\n", 252
            )
        self._launch(package)
        return CommandResult.of(f"  bash arg: -p\n  bash arg: {package}\nEvents injected: 1\n")

    def _dumpsys(self, args: list[str]) -> CommandResult:
        what = args[0] if args else ""
        if what == "input_method":
            shown = _flag(self.keyboard_shown)
            return CommandResult.of(f"  mInputShown={shown}\n  mShowRequested={shown}\n")
        if what == "window":
            package, activity = self._focus()
            token = f"{abs(hash(package)) % 0xFFFFFFF:07x}"
            return CommandResult.of(
                f"  mCurrentFocus=Window{{{token} u0 {package}/{activity}}}\n"
                f"  mFocusedApp=ActivityRecord{{{token} u0 {package}/{activity} t7}}\n"
            )
        if what == "activity":
            package, activity = self._focus()
            pid = self.apps[package].pid if package in self.apps else 1200
            return CommandResult.of(
                f"  mResumedActivity: ActivityRecord{{1a2b u0 {package}/{activity} t7}}\n"
                f"  ACTIVITY {package}/{activity} 5c3d pid={pid}\n"
            )
        if what == "display":
            return CommandResult.of("  mCurrentOrientation=0\n  orientation=0\n")
        if what == "package" and len(args) == 2:
            app = self.apps.get(args[1])
            stopped = app is None or not app.running
            return CommandResult.of(
                f"Packages:\n  Package [{args[1]}]:\n    stopped={_flag(stopped)}\n"
            )
        return CommandResult(0)

    def _focus(self) -> tuple[str, str]:
        if self.foreground is None:
            return LAUNCHER_PACKAGE, "com.android.launcher3.uioverrides.QuickstepLauncher"
        screen = self._screen()
        if screen is None:
            return self.foreground, ".BrowserActivity"
        return self.foreground, screen.activity

    def _wm(self, args: list[str]) -> CommandResult:
        if args[:1] == ["size"]:
            return CommandResult.of(f"Physical size: {self.spec.width}x{self.spec.height}\n")
        if args[:1] == ["density"]:
            return CommandResult.of("Physical density: 420\n")
        return CommandResult.of(stderr="Error: unsupported wm command\n", returncode=1)

    def properties(self) -> dict[str, str]:
        return {
            "ro.build.version.sdk": str(self.spec.sdk),
            "ro.build.version.release": str(max(1, self.spec.sdk - 20)),
            "ro.product.model": self.spec.model,
            "ro.product.name": self.spec.model,
            "ro.product.device": self.spec.model,
            "ro.serialno": self.serial,
            **self.spec.properties,
        }

    def _getprop(self, args: list[str]) -> CommandResult:
        props = self.properties()
        if args:
            return CommandResult.of(props.get(args[0], "") + "\n")
        return CommandResult.of("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))

    def _pidof(self, args: list[str]) -> CommandResult:
        app = self.apps.get(args[0]) if args else None
        if app is None or not app.running:
            return CommandResult(1)
        return CommandResult.of(f"{app.pid}\n")


def _label(view: View) -> str:
    """How the event log names a view: its own text, else its content's, else its id."""
    for node in view.walk():
        if node.text or node.content_desc:
            return node.text or node.content_desc
    return view.resource_id or view.class_name


def _all_elements(elements: Sequence[ElementSpec]) -> Iterator[ElementSpec]:
    for element in elements:
        yield element
        yield from _all_elements(element.children)


def _clip(bounds: Bounds, clip: Bounds) -> Bounds:
    left, top = max(bounds.left, clip.left), max(bounds.top, clip.top)
    return Bounds(
        left,
        top,
        max(left, min(bounds.right, clip.right)),
        max(top, min(bounds.bottom, clip.bottom)),
    )


def _deepest_interactive(view: View, x: int, y: int) -> View | None:
    """The view that handles a touch: the last-drawn, deepest interactive view under it."""
    for child in reversed(view.children):
        if child.bounds.contains_point(x, y):
            hit = _deepest_interactive(child, x, y)
            if hit is not None:
                return hit
    element = view.element
    if element is not None and (
        element.clickable or element.editable or element.checkable or element.long_clickable
    ):
        return view
    return None


def _key_code(value: str) -> int:
    if value.isdigit():
        return int(value)
    name = value.removeprefix("KEYCODE_")
    if name not in _KEY_NAMES:
        raise ValueError(f"unknown keycode {value}")
    return _KEY_NAMES[name]


def _options(args: Sequence[str]) -> dict[str, str]:
    """``-a X -d Y --es key value`` -> {"-a": X, "-d": Y, "--es key": value}."""
    opts: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("--es", "--ei", "--ez") and i + 2 < len(args):
            opts[f"{arg} {args[i + 1]}"] = args[i + 2]
            i += 3
        elif arg.startswith("-") and i + 1 < len(args):
            opts[arg] = args[i + 1]
            i += 2
        else:
            i += 1
    return opts


def load_devices(source: Path | str | Mapping[str, Any]) -> list[FakeDevice]:
    """Fake devices from a spec file or mapping (one, or ``devices: [...]``)."""
    return [FakeDevice(spec) for spec in load_specs(source)]


class ModelDevice(ShellDevice):
    """``Device`` straight on a ``FakeDevice``: the same command lines, no sockets.

    Faults behave as over adb: a dropped command or one slower than ``timeout`` raises
    ``DeviceLostError``; the command log (``model.commands``) holds the same lines.
    """

    def __init__(
        self,
        model: FakeDevice,
        *,
        timeout: float = 10.0,
        idle_retry_delays: Sequence[float] | None = None,
    ) -> None:
        if idle_retry_delays is None:
            super().__init__()
        else:
            super().__init__(idle_retry_delays=idle_retry_delays)
        self.model = model
        self._timeout = timeout

    @property
    def serial(self) -> str:
        return self.model.serial

    def _run(self, argv: Sequence[str]) -> ShellResult:
        if self.model.state != "device":
            raise DeviceLostError(f"{self.serial}: device is {self.model.state}")
        admission = self.model.admit(shlex.join(argv))
        if admission.dropped:
            raise DeviceLostError(f"{self.serial}: connection to the device was lost")
        if admission.delay:
            time.sleep(min(admission.delay, self._timeout))
            if admission.delay >= self._timeout:
                raise DeviceLostError(
                    f"{self.serial}: no answer within {self._timeout:g}s to `{shlex.join(argv)}`"
                )
        result = self.model.override(argv) or self.model.execute(argv)
        if result is None:
            result = CommandResult.of(
                stderr=f"/system/bin/sh: {argv[0]}: inaccessible or not found\n", returncode=127
            )
        return ShellResult(
            result.returncode,
            result.text(),
            result.text(STDOUT),
            result.text(STDERR),
        )

    def _read_file(self, path: str) -> bytes:
        with self.model.lock:
            data = self.model.files.get(path)
        if data is None:
            raise DeviceError(f"{self.serial}: no such file on the device: {path}")
        return data
