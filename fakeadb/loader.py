"""Reading fake-device spec files: YAML or mappings -> validated ``spec`` records.

Files are read through ``trailblaze.yaml.node`` (size and depth limits, no duplicate keys, YAML
1.2 core scalars), so every error names the file, the line and column, and the key path, with
a "did you mean" for unknown keys: ``pixel.yaml:12:9: apps[0].screens.home: ...``. A mapping
(tests build specs in code) has no lines: its errors name ``<spec>`` and the key path. The
format is described in ``spec``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from fakeadb.reader import Reader, is_null
from fakeadb.spec import (
    DEFAULT_FEATURES,
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
from trailblaze.yaml.node import YamlError, YMap, YScalar, YSeq, load, read_text

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
_APP_KEYS = (
    "package", "label", "activity", "launcher", "screens", "vars", "clear_task_on_launch",
)  # fmt: skip
_FAULT_KEYS = ("disconnect_after", "delay", "delays", "idle_errors", "malformed_dumps", "overrides")
_OVERRIDE_KEYS = ("match", "returncode", "stdout", "stderr", "times")
_DEVICE_KEYS = (
    "serial", "state", "size", "sdk", "model", "properties", "features", "hint_attribute",
    "hint_as_text", "apps", "packages", "clipboard", "files", "faults",
)  # fmt: skip


def _parse_action(r: Reader, raw: Any, where: str) -> Action:
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


def _parse_element(r: Reader, raw: Any, where: str, package: str) -> ElementSpec:
    data = r.mapping(raw, where, _ELEMENT_KEYS)
    resource_id = r.str_(data.get("id", ""), f"{where}.id")
    if resource_id and ":" not in resource_id:
        resource_id = f"{package}:id/{resource_id}"
    text = r.str_(data.get("text", ""), f"{where}.text")
    editable = r.bool_(data.get("editable", False), f"{where}.editable")
    key = r.str_(data.get("key", resource_id.rsplit("/", 1)[-1] or text), f"{where}.key")
    if editable and not key:
        raise r.fail(where, "an editable element needs an 'id' or a 'key'", raw)
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
    """A ``generate`` template for row ``n``: ``{n}`` in every text replaced, places kept."""
    if isinstance(value, YScalar):
        if not isinstance(value.value, str):
            return value
        number = str(n)
        text = value.text.replace("{n}", number)
        return YScalar(
            value.value.replace("{n}", number), text, value.style, value.line, value.column
        )
    if isinstance(value, YMap):
        return {key.text: _expand(item, n) for key, item in value}
    if isinstance(value, YSeq):
        return [_expand(item, n) for item in value.items]
    if isinstance(value, str):
        return value.replace("{n}", str(n))
    if isinstance(value, Mapping):
        return {k: _expand(v, n) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_expand(v, n) for v in value]
    return value


def _parse_list(r: Reader, raw: Any, where: str, package: str) -> ListSpec:
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


def _parse_app(r: Reader, raw: Any, where: str) -> AppSpec:
    data = r.mapping(raw, where, _APP_KEYS)
    if "package" not in data:
        raise r.fail(where, "missing 'package'", raw)
    package = r.str_(data["package"], f"{where}.package")
    activity = r.str_(data.get("activity", ".MainActivity"), f"{where}.activity")
    raw_screens = r.table(data.get("screens", {}), f"{where}.screens")
    screens: dict[str, ScreenSpec] = {}
    for name, raw_screen in raw_screens.items():
        sw = f"{where}.screens.{name}"
        raw = r.mapping({} if is_null(raw_screen) else raw_screen, sw, _SCREEN_KEYS)
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
        raise r.fail(where, "an app needs at least one screen", raw)
    launcher = r.str_(data.get("launcher", next(iter(screens))), f"{where}.launcher")
    for name, screen in screens.items():
        for element, action in _walk_actions(screen.all_elements):
            for target in (action.go, action.replace):
                if target is not None and target not in screens:
                    close = difflib.get_close_matches(target, list(screens), n=1)
                    hint = f" (did you mean '{close[0]}'?)" if close else ""
                    raise r.fail(
                        f"{where}.screens.{name}",
                        f"element '{element.key}' goes to unknown screen '{target}'{hint}",
                        raw_screens.get(name),
                    )
    if launcher not in screens:
        raise r.fail(f"{where}.launcher", f"unknown screen '{launcher}'", data.get("launcher"))
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
        clear_task_on_launch=r.bool_(
            data.get("clear_task_on_launch", False), f"{where}.clear_task_on_launch"
        ),
    )


def _parse_faults(r: Reader, raw: Any, where: str) -> Faults:
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
        if is_null(disconnect)
        else r.int_(disconnect, f"{where}.disconnect_after"),
        delay=r.float_(data.get("delay", 0.0), f"{where}.delay"),
        delays={
            str(k): r.float_(v, f"{where}.delays.{k}")
            for k, v in r.table(delays, f"{where}.delays").items()
        },
        idle_errors=r.int_(data.get("idle_errors", 0), f"{where}.idle_errors"),
        malformed_dumps=list(r.names(data.get("malformed_dumps", ()), f"{where}.malformed_dumps")),
        overrides=overrides,
    )


def parse_device_spec(raw: Any, source: str = "<spec>", where: str = "") -> DeviceSpec:
    """Validate one device's spec mapping (see the module docstring)."""
    r = Reader(source)
    data = r.mapping(raw, where, _DEVICE_KEYS)
    prefix = f"{where}." if where else ""
    size = r.list_(data.get("size", [1080, 2400]), f"{prefix}size")
    if len(size) != 2:
        raise r.fail(f"{prefix}size", "expected [width, height]", data.get("size"))
    apps: dict[str, AppSpec] = {}
    for i, raw_app in enumerate(r.list_(data.get("apps", ()), f"{prefix}apps")):
        app = _parse_app(r, raw_app, f"{prefix}apps[{i}]")
        apps[app.package] = app
    state = r.str_(data.get("state", "device"), f"{prefix}state")
    if state not in ("device", "offline", "unauthorized"):
        raise r.fail(
            f"{prefix}state",
            f"expected device, offline or unauthorized, not {state!r}",
            data.get("state"),
        )
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
    data: Any
    if isinstance(source, Mapping):
        data, name = source, "<spec>"
    else:
        path = Path(source)
        name = str(path)
        try:
            text = read_text(path)
        except YamlError as exc:
            raise ModelError(f"{name}: {exc.message}") from None
        try:
            data = load(text, merge_keys=True)
        except YamlError as exc:
            raise ModelError(f"{name}:{exc.line}:{exc.column}: {exc.message}") from None
    r = Reader(name)
    if isinstance(data, YMap | Mapping) and "devices" in data:
        top = r.table(data, "")
        if set(top) != {"devices"}:
            raise r.fail("", "a 'devices' file has no other top-level keys", data)
        raw = r.list_(top["devices"], "devices")
        specs = [parse_device_spec(d, name, f"devices[{i}]") for i, d in enumerate(raw)]
    else:
        specs = [parse_device_spec({} if is_null(data) else data, name)]
    serials = [s.serial for s in specs]
    duplicates = sorted({s for s in serials if serials.count(s) > 1})
    if duplicates:
        raise ModelError(f"{name}: duplicate serial(s): {', '.join(duplicates)}")
    return specs
