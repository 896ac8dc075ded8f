"""One contract for every ``Device``: adbutils over the fake adb server, and ``ModelDevice``.

Each test drives the sample app model (tests/data/replay/sample_app.yaml) through the
``Device`` API only and checks what a user would see: the screen, the field values, the
commands that reached the device, and the errors.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest

from fakeadb import (
    CommandOverride,
    FakeAdbServer,
    FakeDevice,
    ModelDevice,
    load_devices,
)
from trailblaze.replay.device import (
    DUMP_PATH,
    AmbiguousDeviceError,
    CommandTimeout,
    Device,
    DeviceError,
    DeviceLostError,
    KeyCode,
    NoDeviceError,
    ShellDevice,
    UnsupportedInputError,
)
from trailblaze.replay.hierarchy import Hierarchy, parse_hierarchy
from trailblaze.replay.matches import center, find, find_by_text, pick_for_tap

PACKAGE = "xyz.block.trailblaze.examples.sampleapp"
DeviceFactory = Callable[..., ShellDevice]


def screen(device: Device) -> Hierarchy:
    return parse_hierarchy(device.dump_hierarchy())


def texts(device: Device) -> set[str]:
    return {node.text for node in screen(device).iter_nodes() if node.text}


def tap_selector(device: Device, selector: dict[str, Any]) -> None:
    device.tap(*center(pick_for_tap(find(selector, screen(device)))))


def tap_text(device: Device, text: str) -> None:
    device.tap(*center(pick_for_tap(find_by_text(screen(device), text, contains=False))))


def child_text(text: str) -> dict[str, Any]:
    return {"containsChild": {"androidAccessibility": {"textRegex": text}}}


def open_forms(device: Device) -> None:
    device.start_app(PACKAGE)
    tap_selector(device, child_text("Forms"))


def test_implements_the_protocol(device: ShellDevice, model: FakeDevice) -> None:
    assert isinstance(device, Device)
    assert device.serial == model.serial == "emulator-5554"


def test_dump_and_tap_navigate_between_screens(device: ShellDevice, model: FakeDevice) -> None:
    device.start_app(PACKAGE)
    assert "Tap Me" in texts(device)

    tap_selector(device, child_text("Forms"))

    assert model.current_screen == f"{PACKAGE}/forms"
    assert {"Submit", "Clear All", "Accept Terms"} <= texts(device)
    assert "input tap 324 2300" in model.commands


def test_dump_reads_the_file_uiautomator_wrote(device: ShellDevice, model: FakeDevice) -> None:
    device.start_app(PACKAGE)
    xml = device.dump_hierarchy()
    assert xml.startswith("<?xml")
    assert model.files[DUMP_PATH].decode() == xml
    assert f"uiautomator dump {DUMP_PATH}" in model.commands


def test_text_entry_types_spaces_as_percent_s(device: ShellDevice, model: FakeDevice) -> None:
    open_forms(device)
    tap_selector(device, {"androidAccessibility": {"hintTextRegex": "Name"}})
    device.input_text("Jane Doe")

    assert model.commands[-1] == "input text Jane%sDoe"
    assert model.field_value(PACKAGE, "name") == "Jane Doe"
    assert find({"androidAccessibility": {"textRegex": "Jane Doe"}}, screen(device))


def test_submit_shows_what_was_typed(device: ShellDevice) -> None:
    open_forms(device)
    tap_selector(device, {"androidAccessibility": {"hintTextRegex": "Name"}})
    device.input_text("Jane Doe")
    tap_selector(device, {"androidAccessibility": {"hintTextRegex": "Email"}})
    device.input_text("jane@example.com")
    tap_selector(device, child_text("Submit"))

    recorded = "\\QName: Jane Doe\nEmail: jane@example.com\\E"
    assert find({"androidAccessibility": {"textRegex": recorded}}, screen(device))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "Zoë",
            "cannot type 'Zoë': `adb shell input text` only types printable ASCII, not 'ë' "
            "(use key events for Enter/Tab, the clipboard for other text)",
        ),
        (
            "100%s",
            "cannot type '100%s': `adb shell input text` reads '%s' as a space, "
            "so a literal '%s' cannot be typed",
        ),
    ],
)
def test_text_the_device_cannot_type_is_refused_before_sending(
    device: ShellDevice, model: FakeDevice, text: str, message: str
) -> None:
    before = list(model.commands)
    with pytest.raises(UnsupportedInputError) as caught:
        device.input_text(text)
    assert str(caught.value) == message
    assert model.commands == before


def test_text_with_no_focused_field_is_dropped(device: ShellDevice, model: FakeDevice) -> None:
    open_forms(device)
    device.input_text("lost")
    assert model.events[-1].kind == "text-dropped"
    assert model.field_value(PACKAGE, "name") == ""


def test_keyevents_go_in_one_command(device: ShellDevice, model: FakeDevice) -> None:
    open_forms(device)
    tap_selector(device, {"androidAccessibility": {"hintTextRegex": "Name"}})
    device.input_text("Janet")

    device.keyevent("KEYCODE_DEL", 67, "DEL")

    assert model.commands[-1] == "input keyevent KEYCODE_DEL 67 KEYCODE_DEL"
    assert model.field_value(PACKAGE, "name") == "Ja"
    device.keyevent(KeyCode.MOVE_HOME)
    device.input_text("X")
    assert model.field_value(PACKAGE, "name") == "XJa"


@pytest.mark.parametrize("bad", [-1, "KEYCODE_tab", "4 5", True])
def test_bad_key_codes_are_refused(device: ShellDevice, bad: Any) -> None:
    with pytest.raises(UnsupportedInputError, match="invalid key code"):
        device.keyevent(bad)


def test_back_closes_the_keyboard_before_it_navigates(
    device: ShellDevice, model: FakeDevice
) -> None:
    open_forms(device)
    assert device.is_keyboard_shown() is False
    tap_selector(device, {"androidAccessibility": {"hintTextRegex": "Name"}})
    assert device.is_keyboard_shown() is True
    assert find({"androidAccessibility": {"textRegex": "Submit"}}, screen(device))

    device.keyevent(KeyCode.BACK)
    assert device.is_keyboard_shown() is False
    assert model.current_screen == f"{PACKAGE}/forms"

    tap_selector(device, child_text("Lists"))
    tap_text(device, "Item 1")
    assert model.current_screen == f"{PACKAGE}/detail"
    device.keyevent(KeyCode.BACK)
    assert model.current_screen == f"{PACKAGE}/lists"


def test_swipe_scrolls_a_list_until_the_item_shows(device: ShellDevice, model: FakeDevice) -> None:
    device.start_app(PACKAGE)
    tap_selector(device, child_text("Lists"))
    target = {"androidAccessibility": {"textRegex": "Item 25"}}
    assert find(target, screen(device)) == []

    swipes = 0
    while not find(target, screen(device)):
        device.swipe(540, 1800, 540, 400, 400)
        swipes += 1
        assert swipes < 10, "Item 25 never scrolled into view"
    tap_selector(device, target)

    assert find({"androidAccessibility": {"textRegex": "Detail for Item 25"}}, screen(device))
    assert "input swipe 540 1800 540 400 400" in model.commands


def test_swipe_at_the_end_of_a_list_does_not_move(device: ShellDevice, model: FakeDevice) -> None:
    device.start_app(PACKAGE)
    tap_selector(device, child_text("Lists"))
    for _ in range(8):
        device.swipe(540, 2000, 540, 200)
    last = texts(device)
    device.swipe(540, 2000, 540, 200)
    assert texts(device) == last
    assert "Item 50" in last
    assert model.events[-2].kind == "scroll-end"


def test_long_press_opens_what_a_tap_does_not(device: ShellDevice) -> None:
    device.start_app(PACKAGE)
    button = pick_for_tap(find(child_text("Long Press Me"), screen(device)))
    device.tap(*center(button))
    assert "Copy" not in texts(device)
    device.long_press(*center(button), 600)
    assert "Copy" in texts(device)


def test_app_start_stop_and_clear(device: ShellDevice, model: FakeDevice) -> None:
    assert PACKAGE in device.list_packages()
    assert device.list_packages() == sorted(device.list_packages())

    device.start_app(PACKAGE)
    assert device.current_package() == PACKAGE
    tap_selector(device, child_text("Settings"))
    tap_selector(device, child_text("Enable Notifications"))
    toggled = {"androidAccessibility": {"isChecked": True}, **child_text("Enable Notifications")}
    assert find(toggled, screen(device))

    device.force_stop(PACKAGE)
    assert device.current_package() == "com.android.launcher3"
    device.start_app(PACKAGE)
    assert model.current_screen == f"{PACKAGE}/taps"  # a fresh process starts at the launcher
    tap_selector(device, child_text("Settings"))
    assert find(toggled, screen(device)), "persisted settings survive force-stop"

    device.clear_app_data(PACKAGE)
    assert device.current_package() == "com.android.launcher3"
    device.start_app(PACKAGE)
    tap_selector(device, child_text("Settings"))
    assert find(toggled, screen(device)) == [], "pm clear wipes persisted settings"


def test_starting_an_app_resumes_it_where_it_was(device: ShellDevice, model: FakeDevice) -> None:
    open_forms(device)
    device.keyevent(KeyCode.HOME)
    assert device.current_package() == "com.android.launcher3"
    device.start_app(PACKAGE)
    assert model.current_screen == f"{PACKAGE}/forms"


def test_starting_an_unknown_app_fails(device: ShellDevice) -> None:
    with pytest.raises(DeviceError, match=r"cannot launch com\.example\.missing: .*monkey aborted"):
        device.start_app("com.example.missing")


def test_bad_package_names_are_refused(device: ShellDevice, model: FakeDevice) -> None:
    with pytest.raises(UnsupportedInputError, match="invalid Android package name"):
        device.force_stop("com.example; reboot")
    assert model.commands == []


def test_clipboard_is_set_through_clipper(device: ShellDevice, model: FakeDevice) -> None:
    device.set_clipboard("HELLO world & more")
    assert model.clipboard == "HELLO world & more"
    assert model.commands[-1] == "am broadcast -a clipper.set --es text 'HELLO world & more'"


def test_open_url_shows_the_browser(device: ShellDevice, model: FakeDevice) -> None:
    device.open_url("https://example.com/?a=1&b=2")
    assert device.current_package() == "com.android.chrome"
    assert "https://example.com/?a=1&b=2" in texts(device)


def test_window_size(device: ShellDevice) -> None:
    assert device.window_size() == (1080, 2400)


def test_disconnect_mid_command_is_fatal(device: ShellDevice, model: FakeDevice) -> None:
    device.start_app(PACKAGE)
    model.faults.disconnect_after = len(model.commands)

    with pytest.raises(DeviceLostError, match="emulator-5554"):
        device.tap(540, 390)
    with pytest.raises(DeviceLostError):
        device.window_size()
    assert model.events[-1].kind == "disconnect"


def test_a_connection_closed_before_any_answer_is_a_lost_device(
    device: ShellDevice, model: FakeDevice
) -> None:
    # The empty read: the server closes the connection without a status (adbutils reports
    # "Unknown data: b''", which used to read as an ordinary command failure).
    device.start_app(PACKAGE)
    model.faults.disconnect_mode = "close"
    model.faults.disconnect_after = len(model.commands)

    with pytest.raises(DeviceLostError) as lost:
        device.tap(540, 390)
    expected = (
        "emulator-5554: connection to the device was lost"
        if isinstance(device, ModelDevice)
        else "emulator-5554: device lost during `input tap 540 390`: the connection closed "
        "before the device answered (empty read)"
    )
    assert str(lost.value) == expected


def test_a_slow_command_times_out_as_lost(device_factory: DeviceFactory, model: FakeDevice) -> None:
    device = device_factory(timeout=0.3)
    model.faults.delays["input tap"] = 30.0
    with pytest.raises(DeviceLostError, match="emulator-5554"):
        device.tap(10, 10)


def test_a_malformed_dump_is_a_device_error(device: ShellDevice, model: FakeDevice) -> None:
    model.faults.malformed_dumps = ["this is not xml", "<?xml version='1.0'?><hierarchy><node"]
    with pytest.raises(DeviceError) as not_xml:
        device.dump_hierarchy()
    assert not isinstance(not_xml.value, DeviceLostError)
    assert str(not_xml.value) == (
        "emulator-5554: uiautomator dump is not XML (it starts with 'this is not xml')"
    )
    truncated = device.dump_hierarchy()
    with pytest.raises(DeviceError, match="malformed XML"):
        parse_hierarchy(truncated)


def test_idle_state_errors_are_retried(device: ShellDevice, model: FakeDevice) -> None:
    device.start_app(PACKAGE)
    model.faults.idle_errors = 2
    assert "Tap Me" in texts(device)
    dumps = [c for c in model.commands if c.startswith("uiautomator dump")]
    assert len(dumps) == 3


def test_a_screen_that_never_settles_fails_the_dump(device: ShellDevice, model: FakeDevice) -> None:
    model.faults.idle_errors = 100
    with pytest.raises(DeviceError) as caught:
        device.dump_hierarchy()
    assert str(caught.value) == (
        "emulator-5554: uiautomator dump failed 4 times: the screen never became idle "
        "(ERROR: could not get idle state.)"
    )


def test_a_failing_command_is_a_device_error(device: ShellDevice, model: FakeDevice) -> None:
    model.faults.overrides.append(CommandOverride("pm clear", returncode=1, stdout="Failed\n"))
    with pytest.raises(DeviceError) as caught:
        device.clear_app_data(PACKAGE)
    assert not isinstance(caught.value, DeviceLostError)
    assert str(caught.value) == f"emulator-5554: cannot clear the data of {PACKAGE}: Failed"

    model.faults.overrides.append(CommandOverride("input tap", returncode=137, stderr="Killed"))
    with pytest.raises(DeviceError) as tap:
        device.tap(1, 2)
    assert str(tap.value) == "emulator-5554: `input tap 1 2` failed with exit code 137: Killed"


# --- a caller's command (``run_command``: what ``android_adbShell`` runs) --------------------


def test_a_command_gives_its_exit_code_and_output_as_printed(
    device: ShellDevice, model: FakeDevice
) -> None:
    ok = device.run_command(["echo", "a;b", "$HOME"], timeout=2)
    # Each word is quoted: `;` and `$` reach echo, the shell reads neither.
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "a;b $HOME\n", "")
    assert model.commands[-1] == "echo 'a;b' '$HOME'"
    failed = device.run_command(["sh", "-c", "echo one; cat /nope"], timeout=2)
    assert failed.returncode == 1
    assert failed.output == "one\ncat: /nope: No such file or directory\n"
    assert failed.stdout == "one\n"
    assert failed.stderr == "cat: /nope: No such file or directory\n"


def test_output_with_odd_bytes_arrives_as_text(device: ShellDevice, model: FakeDevice) -> None:
    model.runtime.files.write("/sdcard/odd.bin", b"ok \xff\xfe \x00 \x1b[31mred\r\nnext\n")
    result = device.run_command(["cat", "/sdcard/odd.bin"], timeout=2)
    # Bytes that are not UTF-8 become U+FFFD; everything else arrives as it was.
    assert result.stdout == "ok \ufffd\ufffd \x00 \x1b[31mred\r\nnext\n"


def test_a_command_past_its_timeout_is_abandoned_and_the_device_goes_on(
    device: ShellDevice, model: FakeDevice
) -> None:
    with pytest.raises(CommandTimeout) as caught:
        device.run_command(["sleep", "1"], timeout=0.3)
    assert not isinstance(caught.value, DeviceLostError)
    assert str(caught.value) == (
        "emulator-5554: `sleep 1` did not finish within 0.3 s and was abandoned "
        "(the device still answers)"
    )
    device.start_app(PACKAGE)  # not a lost device: the next command works
    assert "Tap Me" in texts(device)


def test_a_command_on_a_device_that_stopped_answering_is_a_lost_device(
    device_factory: DeviceFactory, model: FakeDevice
) -> None:
    device = device_factory(timeout=0.3)
    model.faults.delay = 30.0  # every line, the liveness probe after the timeout too
    with pytest.raises(DeviceLostError, match="emulator-5554"):
        device.run_command(["echo", "hi"], timeout=0.3)


def test_run_as_runs_the_command_as_a_debuggable_app(
    device: ShellDevice, model: FakeDevice
) -> None:
    ran = device.run_command(["echo", "inside"], timeout=2, run_as=PACKAGE)
    assert (ran.returncode, ran.stdout) == (0, "inside\n")
    assert model.commands[-1] == f"run-as {PACKAGE} echo inside"
    unknown = device.run_command(["echo"], timeout=2, run_as="com.example.nope")
    assert (unknown.returncode, unknown.stderr) == (
        1,
        "run-as: unknown package: com.example.nope\n",
    )
    release = device.run_command(["echo"], timeout=2, run_as="com.github.majido.clipper")
    assert (release.returncode, release.stderr) == (
        1,
        "run-as: package not debuggable: com.github.majido.clipper\n",
    )
    with pytest.raises(UnsupportedInputError, match="invalid Android package name"):
        device.run_command(["echo"], timeout=2, run_as="a b; reboot")
    with pytest.raises(UnsupportedInputError, match="no command"):
        device.run_command([], timeout=2)


def test_a_written_file_replaces_what_was_there(device: ShellDevice, model: FakeDevice) -> None:
    model.runtime.files.write("/sdcard/a.bin", b"older and longer")
    device.write_file("/sdcard/a.bin", b"\x00\xffnew")
    assert model.files["/sdcard/a.bin"] == b"\x00\xffnew"
    assert device.run_command(["cat", "/sdcard/a.bin"], timeout=2).stdout == "\x00\ufffdnew"
    for bad in ("/sdcard/", "relative.bin"):
        with pytest.raises(UnsupportedInputError, match="not an absolute file"):
            device.write_file(bad, b"x")


def test_a_broadcast_names_its_receiver_and_quotes_its_extras(
    device: ShellDevice, model: FakeDevice
) -> None:
    output = device.send_broadcast("a.B", f"{PACKAGE}/.R", [("--es", "k", "x y;z")])
    assert output.endswith("Broadcast completed: result=0")
    assert model.commands[-1] == f"am broadcast -a a.B -n {PACKAGE}/.R --es k 'x y;z'"
    with pytest.raises(UnsupportedInputError, match="invalid broadcast extra flag"):
        device.send_broadcast("a.B", f"{PACKAGE}/.R", [("--eia", "k", "1")])


# --- device selection (adb only: selection is what ``connect`` does) ------------------------


def _fleet(*serials_states: tuple[str, str]) -> list[FakeDevice]:
    return load_devices({"devices": [{"serial": s, "state": st} for s, st in serials_states]})


@pytest.fixture
def connect_to() -> Any:
    pytest.importorskip("adbutils")
    from trailblaze.replay.adb import connect  # noqa: PLC0415 - only adb tests need adbutils

    return connect


def test_the_only_ready_device_is_chosen(connect_to: Any) -> None:
    with FakeAdbServer(_fleet(("emulator-5554", "device"), ("emulator-5556", "offline"))) as srv:
        assert connect_to(None, port=srv.port).serial == "emulator-5554"


def test_a_named_device_is_chosen(connect_to: Any) -> None:
    with FakeAdbServer(_fleet(("emulator-5554", "device"), ("127.0.0.1:5555", "device"))) as srv:
        chosen = connect_to("127.0.0.1:5555", port=srv.port)
        chosen.set_clipboard("x")
        assert srv.commands["127.0.0.1:5555"] == ["am broadcast -a clipper.set --es text x"]
        assert srv.commands["emulator-5554"] == []


def test_an_unknown_serial_lists_the_ready_ones(connect_to: Any) -> None:
    with FakeAdbServer(_fleet(("emulator-5554", "device"), ("emulator-5556", "offline"))) as srv:
        port = srv.port
        with pytest.raises(NoDeviceError) as caught:
            connect_to("emulator-9999", port=port)
    assert str(caught.value) == (
        f"no device 'emulator-9999' on the adb server at 127.0.0.1:{port} "
        "(ready devices: emulator-5554; not ready: emulator-5556 (offline))"
    )
    assert caught.value.available == ("emulator-5554",)


def test_a_named_device_that_is_not_ready_is_refused(connect_to: Any) -> None:
    fake = FakeAdbServer(_fleet(("emulator-5556", "unauthorized")))
    with fake, pytest.raises(NoDeviceError) as caught:
        connect_to("emulator-5556", port=fake.port)
    assert str(caught.value) == (
        "device 'emulator-5556' is unauthorized, not ready (ready devices: none)"
    )


def test_no_device_at_all(connect_to: Any) -> None:
    with FakeAdbServer([]) as srv:
        port = srv.port
        with pytest.raises(NoDeviceError) as caught:
            connect_to(None, port=port)
    assert str(caught.value) == f"no Android device on the adb server at 127.0.0.1:{port}"


def test_several_devices_need_a_serial(connect_to: Any) -> None:
    fake = FakeAdbServer(_fleet(("emulator-5556", "device"), ("emulator-5554", "device")))
    with fake, pytest.raises(AmbiguousDeviceError) as caught:
        connect_to(None, port=fake.port)
    assert str(caught.value) == (
        "2 devices are connected (emulator-5554, emulator-5556); choose one by serial "
        "(--device, repeatable) or use them all (--all-devices)"
    )
    assert caught.value.available == ("emulator-5554", "emulator-5556")


# adbutils does not close the socket of a refused connect (adbutils/_adb.py _create_socket).
@pytest.mark.filterwarnings("ignore:unclosed <socket:ResourceWarning")
def test_no_adb_server_is_a_lost_device(connect_to: Any) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DeviceLostError, match=f"adb server at 127.0.0.1:{port}"):
        connect_to(None, port=port, timeout=1.0)


def test_the_server_port_comes_from_the_environment(
    connect_to: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAdbServer(_fleet(("emulator-5554", "device"))) as srv:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(srv.port))
        assert connect_to(None).serial == "emulator-5554"
