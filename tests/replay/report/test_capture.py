"""What ``--report`` takes from a device that gives too much, or nothing: bounded, or a reason,
never a failed trail."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from fakeadb import CommandOverride, FakeAdbServer, FakeDevice
from trailblaze.replay.invocation import Hooks, ToolEvent
from trailblaze.replay.report import capture, html
from trailblaze.replay.run import ReplayRequest, replay

from ..support import FAST, OPEN_FORMS, trail_text


@pytest.fixture
def trail(server: FakeAdbServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
    path = tmp_path / "ok.trail.yaml"
    path.write_text(trail_text(OPEN_FORMS), encoding="utf-8")
    return path


def test_a_screenshot_over_the_bound_is_not_kept(
    trail: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(capture, "SCREENSHOT_LIMIT", 1000)

    run = replay(ReplayRequest(trails=(trail,), report_dir=tmp_path / "r"), options=FAST)

    assert run.exit_code == 0
    (shot,) = run.trails[0].steps[0].artifacts
    assert shot.file is None
    assert shot.error is not None
    assert shot.error.startswith("no screenshot: the PNG is ")
    assert shot.error.endswith(" bytes, over the 1000 a report keeps")
    assert not list((tmp_path / "r").rglob("*.png"))


def test_screenshots_past_the_page_s_budget_are_linked_not_embedded(
    trail: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(html, "EMBED_LIMIT", 10)
    out = tmp_path / "r"

    run = replay(ReplayRequest(trails=(trail,), report_dir=out), options=FAST)

    (shot,) = run.trails[0].steps[0].artifacts
    page = (out / "index.html").read_text("utf-8")
    assert "data:image/png" not in page
    assert f'<a href="{shot.file}">{shot.file}</a>' in page


def test_a_flood_of_logcat_keeps_its_end(trail: Path, model: FakeDevice, tmp_path: Path) -> None:
    def flood(event: ToolEvent) -> None:
        for i in range(4000):
            model.runtime.logcat.add("Flood", f"line {i:05d} " + "x" * 100)

    out = tmp_path / "r"
    request = ReplayRequest(trails=(trail,), report_dir=out, logcat=True)
    run = replay(request, options=FAST, hooks=Hooks(before=flood))

    (logcat,) = run.trails[0].artifacts
    assert logcat.file is not None
    text = (out / logcat.file).read_text("utf-8")
    assert text.startswith("[trailblaze: ")
    assert " earlier characters not kept]\n" in text
    assert len(text) <= capture.LOGCAT_LIMIT + 100
    assert "I fakeadb: screencap" in text.splitlines()[-1]
    page = (out / "index.html").read_text("utf-8")
    assert f'all of it: <a href="{logcat.file}">' in page


def test_a_device_without_screenrecord_gives_a_reason_and_the_trail_passes(
    trail: Path, server: FakeAdbServer, model: FakeDevice, tmp_path: Path
) -> None:
    model.faults.overrides.append(
        CommandOverride(
            "screenrecord", returncode=127, stderr="/system/bin/sh: screenrecord: not found\n"
        )
    )
    out = tmp_path / "r"

    run = replay(ReplayRequest(trails=(trail,), report_dir=out, record_video=True), options=FAST)

    assert run.exit_code == 0
    (video,) = run.trails[0].artifacts
    assert video.file is None
    assert video.error == (
        "no screen recording: screenrecord exited with 127: /system/bin/sh: screenrecord: not found"
    )
    assert not [c for c in server.commands["emulator-5554"] if c.startswith("kill")]
    assert "no screen recording: screenrecord exited with 127" in (out / "index.html").read_text()


def test_someone_else_s_screenrecord_is_left_running(
    trail: Path, server: FakeAdbServer, model: FakeDevice, tmp_path: Path
) -> None:
    theirs = threading.Thread(target=model.programs.screenrecord, args=(["/sdcard/theirs.mp4"],))
    theirs.start()
    try:
        deadline = time.monotonic() + 5
        while not model.programs.recorder.pids() and time.monotonic() < deadline:
            time.sleep(0.01)
        (their_pid,) = model.programs.recorder.pids()
        request = ReplayRequest(trails=(trail,), report_dir=tmp_path / "r", record_video=True)

        run = replay(request, options=FAST)

        (video,) = run.trails[0].artifacts
        assert video.file is not None
        kills = [c for c in server.commands["emulator-5554"] if c.startswith("kill")]
        assert len(kills) == 1
        assert kills != [f"kill -2 {their_pid}"]
        assert model.programs.recorder.pids() == [their_pid]
    finally:
        model.programs.recorder.stop_all()
        theirs.join(5)
