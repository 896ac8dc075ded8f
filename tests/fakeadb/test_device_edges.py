"""The fake adb server and device model at their edges.

Device states by serial and by transport id, bad fault delays, which keys render the screen,
element defaults, the key tables and shell commands on the model device.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakeadb import (
    KEY_NAMES,
    FakeAdbServer,
    FakeDevice,
    ModelDevice,
    ModelError,
    View,
    load_devices,
    load_specs,
)
from fakeadb import server as fake_server
from trailblaze.replay.device import KeyCode


@pytest.fixture
def fleet() -> Iterator[FakeAdbServer]:
    devices = load_devices(
        {
            "devices": [
                {"serial": "emulator-5554"},
                {"serial": "emulator-5556", "state": "unauthorized"},
                {"serial": "emulator-5558", "state": "offline"},
            ]
        }
    )
    with FakeAdbServer(devices) as fake:
        yield fake


def _query(server: FakeAdbServer, request: str) -> tuple[str, str]:
    """One host request on a fresh connection: (status, payload)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn:
        conn.sendall(f"{len(request):04x}{request}".encode())
        reader = conn.makefile("rb")
        status = reader.read(4).decode()
        size = reader.read(4)
        payload = reader.read(int(size, 16)).decode() if size else ""
    return status, payload


@pytest.mark.parametrize(
    ("target", "state"),
    [
        ("host-serial:emulator-5554", "device"),
        ("host-transport-id:1", "device"),
        ("host-serial:emulator-5556", "unauthorized"),
        ("host-transport-id:2", "unauthorized"),
        ("host-serial:emulator-5558", "offline"),
        ("host-transport-id:3", "offline"),
    ],
)
def test_get_state_answers_for_any_known_device(
    fleet: FakeAdbServer, target: str, state: str
) -> None:
    assert _query(fleet, f"{target}:get-state") == ("OKAY", state)


@pytest.mark.parametrize(
    ("request_", "reply"),
    [
        ("host-serial:emulator-5558:features", ("FAIL", "device offline")),
        ("host-transport-id:3:features", ("FAIL", "device offline")),
        ("host-transport-id:9:get-state", ("FAIL", "no device with transport id '9'")),
        ("host-serial:emulator-1:get-state", ("FAIL", "device 'emulator-1' not found")),
        ("host:transport-id:3", ("FAIL", "device offline")),
        ("host:transport:emulator-5558", ("FAIL", "device offline")),
        ("host:transport-id:9", ("FAIL", "no device with transport id '9'")),
    ],
)
def test_unusable_devices_still_fail_other_requests(
    fleet: FakeAdbServer, request_: str, reply: tuple[str, str]
) -> None:
    assert _query(fleet, request_) == reply


def test_transport_requests_attach_by_serial_and_by_id(fleet: FakeAdbServer) -> None:
    for request in ("host:transport:emulator-5554", "host:transport-id:1"):
        with socket.create_connection(("127.0.0.1", fleet.port), timeout=5) as conn:
            conn.sendall(f"{len(request):04x}{request}".encode())
            reader = conn.makefile("rb")
            assert reader.read(4) == b"OKAY"
            conn.sendall(b"000dshell:echo hi")
            assert reader.read(4) == b"OKAY"
            assert reader.read().strip() == b"hi"


@pytest.mark.parametrize(
    ("faults", "message"),
    [
        ({"delay": "abc"}, "<spec>: faults.delay: expected a number of seconds, got 'abc'"),
        ({"delay": [1]}, "<spec>: faults.delay: expected a number of seconds, got [1]"),
        ({"delay": True}, "<spec>: faults.delay: expected a number of seconds, got True"),
        (
            {"delays": {"input tap": {"s": 1}}},
            "<spec>: faults.delays.input tap: expected a number of seconds, got {'s': 1}",
        ),
        (
            {"delays": {"input tap": float("inf")}},
            "<spec>: faults.delays.input tap: expected a number of seconds, got inf",
        ),
    ],
)
def test_bad_delays_are_model_errors(faults: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError) as caught:
        load_specs({"faults": faults})
    assert str(caught.value) == message


def test_delays_still_take_numbers_and_numeric_text() -> None:
    (spec,) = load_specs({"faults": {"delay": "0.5", "delays": {"input tap": 2}}})
    assert spec.faults.delay == 0.5
    assert spec.faults.delays == {"input tap": 2.0}


def test_fake_server_main_reports_a_bad_delay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("faults: {delay: abc}\n", encoding="utf-8")
    assert fake_server.main([str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}:1:17: faults.delay: expected a number of seconds, got 'abc'\n"
    )


# --- gestures: render only when a key needs the focused field ----------------------------

PACKAGE = "com.example.form"
FORM = {
    "apps": [
        {
            "package": PACKAGE,
            "screens": {
                "form": {
                    "elements": [
                        {"key": "name", "editable": True, "bounds": [0, 100, 1080, 200]},
                        {"key": "email", "editable": True, "bounds": [0, 300, 1080, 400]},
                    ]
                },
                "other": {"elements": [{"key": "name", "editable": True, "value": "second"}]},
            },
        }
    ]
}


@pytest.fixture
def form() -> tuple[FakeDevice, list[int]]:
    model = FakeDevice.load(FORM)
    assert model.run(f"monkey -p {PACKAGE} 1").returncode == 0
    renders: list[int] = []
    real = model.view.render

    def counting() -> tuple[View, ...]:
        renders.append(1)
        return real()

    model.view.render = counting  # type: ignore[method-assign]
    return model, renders


def test_back_home_and_escape_do_not_render(form: tuple[FakeDevice, list[int]]) -> None:
    model, renders = form
    model.tap(500, 150)
    renders.clear()
    for code in (KeyCode.ESCAPE, KeyCode.BACK, KeyCode.HOME):
        model.press_key(code)
    assert renders == []


def test_a_letter_renders_once_and_types(form: tuple[FakeDevice, list[int]]) -> None:
    model, renders = form
    model.tap(500, 150)
    renders.clear()
    model.press_key(29)  # KEYCODE_A
    assert len(renders) == 1
    assert model.events[-1] == ("text", "name=a")


def test_editing_keys_without_a_focused_field_are_logged(
    form: tuple[FakeDevice, list[int]],
) -> None:
    model, _ = form
    for code in (KeyCode.ENTER, KeyCode.DEL, KeyCode.TAB, KeyCode.MOVE_END):
        model.press_key(code)
        assert model.events[-1] == ("key", str(int(code)))


def test_tab_moves_focus_and_del_edits(form: tuple[FakeDevice, list[int]]) -> None:
    model, _ = form
    model.tap(500, 150)
    model.type_text("ab")
    model.press_key(KeyCode.DEL)
    assert model.events[-1] == ("key", "DEL name=a")
    model.press_key(KeyCode.TAB)
    assert model.events[-1] == ("key", "TAB focus=email")
    model.press_key(KeyCode.TAB)
    assert model.events[-1] == ("key", "TAB focus=name")


def test_element_defaults_come_from_the_first_screen_with_the_key() -> None:
    model = FakeDevice.load(FORM)
    with model.lock:
        element = model.element(PACKAGE, "name")
        assert element is not None
        assert element.value == ""
        assert model.element(PACKAGE, "missing") is None


def test_key_tables_match_keycode() -> None:
    for key in KeyCode:
        assert KEY_NAMES[key.name] == key
    assert (KEY_NAMES["A"], KEY_NAMES["9"], KEY_NAMES["APP_SWITCH"]) == (29, 16, 187)


# --- ModelDevice runs commands like the shell over adb ------------------------------------


def test_model_device_runs_commands_through_the_shell() -> None:
    model = FakeDevice.load(FORM)
    device = ModelDevice(model)
    missing = device._run(["nosuch", "x"])
    assert missing.returncode == 127
    assert missing.stderr == "/system/bin/sh: nosuch: inaccessible or not found\n"
    assert device._run(["echo", "hi"]).stdout == "hi\n"
