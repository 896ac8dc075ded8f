"""The author tools that run commands for scripted tools: ``android_adbShell`` on the device,
through real adbutils over a real socket to the fake adb server, and ``exec`` on the host.

Each test replays a recording and checks what the trail's author sees: the result a script
would receive, or the failure with its location, its kind and a message that says why.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from fakeadb import CommandOverride, FakeAdbServer, FakeDevice
from trailblaze.replay.adb import connect
from trailblaze.replay.device import Device
from trailblaze.replay.invocation import RecordingOutcome
from trailblaze.trail.hostpolicy import HostPolicy

from .support import FAST, PACKAGE, calls, runner

#: The host programs these recordings run, allowed as a workspace's pyproject.toml would.
ALLOWED = HostPolicy(allowed=(sys.executable, "ls", "no-such-program-here"))
OPTIONS = replace(FAST, command_timeout=0.5, host=ALLOWED)
#: Where the recordings below put their one call: line 5, column 11 of the trail.
WHERE = "t.trail.yaml:5:11"


@pytest.fixture
def adb(server: FakeAdbServer) -> Device:
    return connect(None, port=server.port, timeout=5)


def replay(device: Device, recording: str) -> RecordingOutcome:
    return runner(device, options=OPTIONS).run_recording(calls(recording))


def failure_of(outcome: RecordingOutcome) -> tuple[str, str, str, str]:
    failure = outcome.failure
    assert failure is not None, outcome.tools
    return (failure.failed_tool, failure.location.text, failure.kind, failure.error)


# -- android_adbShell ---------------------------------------------------------------------------


def test_a_device_command_gives_what_it_printed(adb: Device, model: FakeDevice) -> None:
    outcome = replay(adb, "- android_adbShell: {command: [echo, 'a;b', $HOME]}")

    assert outcome.passed, outcome.failure
    assert outcome.tools[0].detail == "a;b $HOME\n"
    # One argv, each word quoted: nothing in it is shell syntax on the device.
    assert model.commands[-1] == "echo 'a;b' '$HOME'"


def test_a_failing_device_command_fails_the_tool_with_its_stderr(adb: Device) -> None:
    outcome = replay(adb, "- android_adbShell: {command: [sh, -c, 'echo one; cat /nope']}")

    assert failure_of(outcome) == (
        "android_adbShell",
        WHERE,
        "error",
        "android_adbShell: `sh -c 'echo one; cat /nope'` exited with 1 on emulator-5554: "
        "cat: /nope: No such file or directory",
    )


def test_a_device_command_past_its_timeout_fails_the_tool_not_the_device(
    adb: Device, model: FakeDevice
) -> None:
    outcome = replay(adb, "- android_adbShell: {command: [sleep, '2']}")

    assert failure_of(outcome) == (
        "android_adbShell",
        WHERE,
        "error",
        "android_adbShell: emulator-5554: `sleep 2` did not finish within 0.5 s and was "
        "abandoned (the device still answers)",
    )
    # The device was asked whether it still answers, and it does: the next trail can run.
    assert model.commands[-2:] == ["sleep 2", "echo alive"]
    assert replay(adb, "- android_adbShell: {command: [echo, next]}").passed


def test_device_output_with_odd_bytes_is_the_result_as_text(adb: Device, model: FakeDevice) -> None:
    model.runtime.files.write("/sdcard/odd.bin", b"ok \xff\xfe \x00 \x1b[31mred\r\nnext\n")
    outcome = replay(adb, "- android_adbShell: {command: [cat, /sdcard/odd.bin]}")

    assert outcome.passed, outcome.failure
    assert outcome.tools[0].detail == "ok \ufffd\ufffd \x00 \x1b[31mred\r\nnext\n"
    # A failure shows such output escaped, on one line.
    model.faults.overrides.append(
        CommandOverride("cat /sdcard/odd.bin", returncode=1, stderr="bad \x1b[31m\x00\nend\n")
    )
    failed = replay(adb, "- android_adbShell: {command: [cat, /sdcard/odd.bin]}")
    assert failure_of(failed)[3] == (
        "android_adbShell: `cat /sdcard/odd.bin` exited with 1 on emulator-5554: "
        "bad \\x1b[31m\\x00 | end"
    )


def test_run_as_runs_the_command_as_the_app_and_names_a_package_it_cannot(
    adb: Device, model: FakeDevice
) -> None:
    ran = replay(adb, f"- android_adbShell: {{command: [echo, hi], runAs: {PACKAGE}}}")
    assert ran.passed, ran.failure
    assert model.commands[-1] == f"run-as {PACKAGE} echo hi"

    release = replay(
        adb, "- android_adbShell: {command: [echo, hi], runAs: com.github.majido.clipper}"
    )
    assert failure_of(release)[3] == (
        "android_adbShell: `run-as com.github.majido.clipper echo hi` exited with 1 on "
        "emulator-5554: run-as: package not debuggable: com.github.majido.clipper"
    )
    bad = replay(adb, "- android_adbShell: {command: [echo], runAs: 'x; reboot'}")
    assert failure_of(bad)[3] == "android_adbShell: invalid Android package name 'x; reboot'"
    empty = replay(adb, "- android_adbShell: {command: []}")
    assert failure_of(empty)[3] == (
        "android_adbShell: 'command' is empty: its first element names the program to run"
    )


# -- exec -----------------------------------------------------------------------------------------


def python(code: str) -> str:
    """A YAML flow list running ``code`` with this interpreter."""
    return json.dumps([sys.executable, "-c", code])


def test_a_host_program_gives_its_output_interleaved_as_printed(adb: Device) -> None:
    code = "import sys; print('out', flush=True); print('err', file=sys.stderr, flush=True); print('end')"
    outcome = replay(adb, f"- exec: {{argv: {python(code)}}}")

    assert outcome.passed, outcome.failure
    assert outcome.tools[0].detail == "out\nerr\nend\n"


def test_a_failing_host_program_fails_the_tool_with_its_output(adb: Device) -> None:
    code = "import sys; print('checking'); sys.exit('no such simulator')"
    outcome = replay(adb, f"- exec: {{argv: {python(code)}}}")

    (tool, where, kind, error) = failure_of(outcome)
    assert (tool, where, kind) == ("exec", WHERE, "error")
    assert error.endswith(" exited with 1 (expected 0): checking | no such simulator")
    assert error.startswith(f"exec: `{sys.executable} -c ")
    # The exit code it expects passes.
    expected = replay(adb, f"- exec: {{argv: {python(code)}, expectedExitCode: 1}}")
    assert expected.passed, expected.failure


def test_a_host_program_past_its_timeout_is_stopped(adb: Device) -> None:
    code = "import time; print('started', flush=True); time.sleep(30)"
    outcome = replay(adb, f"- exec: {{argv: {python(code)}, timeoutSeconds: 1}}")

    (tool, where, kind, error) = failure_of(outcome)
    assert (tool, where, kind) == ("exec", WHERE, "error")
    assert error.endswith(" did not finish within 1 s and was stopped; its last output: started")
    assert outcome.tools[0].duration < 10


def test_cancelling_the_run_stops_a_host_program_at_once(adb: Device) -> None:
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    recording = f"- exec: {{argv: {python('import time; time.sleep(30)')}}}"
    outcome = runner(adb, options=OPTIONS, cancel=cancel).run_recording(calls(recording))

    assert outcome.cancelled
    assert (outcome.tools[0].status, outcome.tools[0].detail) == (
        "cancelled",
        "cancelled while it ran",
    )
    assert time.monotonic() - started < 5


def test_host_output_with_odd_bytes_is_the_result_as_text_and_escaped_in_messages(
    adb: Device,
) -> None:
    code = "import sys; sys.stdout.buffer.write(b'ok \\xff \\x00 \\x1b[31mred\\r\\n'); sys.exit(3)"
    outcome = replay(adb, f"- exec: {{argv: {python(code)}, expectedExitCode: 3}}")
    assert outcome.passed, outcome.failure
    assert outcome.tools[0].detail == "ok \ufffd \x00 \x1b[31mred\r\n"

    failed = replay(adb, f"- exec: {{argv: {python(code)}}}")
    assert failure_of(failed)[3].endswith(
        " exited with 3 (expected 0): ok \ufffd \\x00 \\x1b[31mred"
    )


def test_an_output_filter_keeps_the_lines_it_finds(adb: Device) -> None:
    code = "print('Booted: A'); print('Shutdown: B'); print('Booted: C')"
    outcome = replay(adb, f"- exec: {{argv: {python(code)}, outputFilterRegex: '^Booted'}}")
    assert outcome.passed, outcome.failure
    assert outcome.tools[0].detail == "Booted: A\nBooted: C\n"
    # A Java regex (the reference's tools are Kotlin): `\\Q...\\E` quotes.
    quoted = replay(adb, f"- exec: {{argv: {python(code)}, outputFilterRegex: '\\QB\\E$'}}")
    assert quoted.tools[0].detail == "Shutdown: B\n"
    bad = replay(adb, f"- exec: {{argv: {python(code)}, outputFilterRegex: '(unclosed'}}")
    assert failure_of(bad)[3] == (
        "exec: outputFilterRegex '(unclosed' is not a regex: missing ), unterminated subpattern "
        "at position 0"
    )


def test_a_host_program_that_cannot_start_says_why(adb: Device, tmp_path: Path) -> None:
    missing = replay(adb, "- exec: {argv: [no-such-program-here, --version]}")
    assert failure_of(missing)[3] == (
        "exec: `no-such-program-here --version` could not start: "
        "no-such-program-here not found on PATH"
    )
    nowhere = replay(adb, f"- exec: {{argv: [ls], workingDir: '{tmp_path / 'gone'}'}}")
    assert failure_of(nowhere)[3] == f"exec: workingDir '{tmp_path / 'gone'}' is not a directory"
    empty = replay(adb, "- exec: {argv: []}")
    assert failure_of(empty)[3] == (
        "exec: 'argv' is empty: its first element names the program to run"
    )


def test_a_host_program_runs_in_its_working_directory(adb: Device, tmp_path: Path) -> None:
    code = "import os; print(os.getcwd())"
    outcome = replay(adb, f"- exec: {{argv: {python(code)}, workingDir: '{tmp_path}'}}")
    assert outcome.passed, outcome.failure
    assert outcome.tools[0].detail == f"{tmp_path}\n"
