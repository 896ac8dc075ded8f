"""Replay hygiene: the parse gate runs before any device is looked for, an adb server started
for the run is stopped when it ends (and one already running is left alone), and a missing adb
program is named as such.

The adb program here is a small script that does what ``adb start-server`` does: it starts a
server (the fake one, in its own process and session) and returns once it listens.
"""

from __future__ import annotations

import os
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fakeadb import FakeAdbServer
from trailblaze.cli.main import main

from .support import SAMPLE_APP, trail_text

LIST_APPS = "- mobile_listInstalledApps: {}"
BROKEN = "trail:\n  - step: go\n    recordng:\n      android: []\n"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture
def fake_adb(tmp_path: Path) -> Path:
    """An executable ``adb`` that serves the sample app on ``-P PORT`` for ``start-server``."""
    script = tmp_path / "bin" / "adb"
    script.parent.mkdir()
    script.write_text(
        f"#!{sys.executable}\n"
        + textwrap.dedent(
            f"""
            import socket, subprocess, sys, time
            args = sys.argv[1:]
            port = int(args[args.index("-P") + 1]) if "-P" in args else 5037
            if args[-1:] != ["start-server"]:
                sys.exit(f"fake adb: unsupported: {{args}}")
            with open({str(tmp_path / "adb.log")!r}, "a") as log:
                subprocess.Popen(
                    [sys.executable, "-m", "fakeadb", {str(SAMPLE_APP)!r},
                     "--port", str(port), "--quiet"],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                )
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    print("* daemon started successfully")
                    sys.exit(0)
                except OSError:
                    time.sleep(0.05)
            sys.exit("fake adb: the server did not start")
            """
        )
    )
    script.chmod(0o755)
    return script


def test_an_adb_server_started_for_the_run_is_stopped_when_it_ends(
    fake_adb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = _free_port()
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(fake_adb))
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(sys.path))
    trail = tmp_path / "t.trail.yaml"
    trail.write_text(trail_text(LIST_APPS))

    assert main(["replay", str(trail)]) == 0

    deadline = time.monotonic() + 5
    while _listening(port) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _listening(port), "the adb server we started is still running"


def test_an_adb_server_that_was_running_is_left_running(
    server: FakeAdbServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
    trail = tmp_path / "t.trail.yaml"
    trail.write_text(trail_text(LIST_APPS))

    assert main(["replay", str(trail)]) == 0

    assert not server.killed.is_set()
    assert _listening(server.port)


def test_a_missing_adb_program_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = _free_port()
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(tmp_path / "platform-tools" / "adb"))
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
    trail = tmp_path / "t.trail.yaml"
    trail.write_text(trail_text(LIST_APPS))

    assert main(["replay", str(trail)]) == 2

    assert capsys.readouterr().err == (
        f"trailblaze replay: no adb server at 127.0.0.1:{port} and ADBUTILS_ADB_PATH is "
        f"'{tmp_path / 'platform-tools' / 'adb'}', which is not an executable file: no adb "
        "program to start the adb server with\n"
    )


def test_a_broken_trail_is_reported_before_a_device_is_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = _free_port()
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "broken.trail.yaml").write_text(BROKEN)
    (tmp_path / "good.trail.yaml").write_text(trail_text(LIST_APPS))

    assert main(["replay", str(tmp_path)]) == 2

    captured = capsys.readouterr()
    assert "REFUSED" in captured.out
    assert (
        "broken.trail.yaml:3:5: trail[0]: unknown key 'recordng' (did you mean 'recording'?)"
        in captured.out
    )
    assert captured.err.startswith(f"trailblaze replay: no adb server at 127.0.0.1:{port}")


def test_only_broken_trails_need_no_device_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(_free_port()))
    (tmp_path / "broken.trail.yaml").write_text(BROKEN)

    assert main(["replay", str(tmp_path)]) == 1

    captured = capsys.readouterr()
    assert "unknown key 'recordng'" in captured.out
    assert captured.err == ""
