"""``--report DIR`` end to end: a replay over real adbutils against the fake adb server, and what
it leaves in DIR (``index.html``, ``summary.md``, a screenshot per step, the logcat slice and the
screen recording), read as a user reads them."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fakeadb import CommandOverride, FakeAdbServer, FakeDevice
from trailblaze.cli.main import main
from trailblaze.replay.invocation import Hooks, ToolEvent
from trailblaze.replay.report.html import CSP
from trailblaze.replay.report.markdown import cell
from trailblaze.replay.run import ReplayRequest, replay

from ..support import FAST, OPEN_FORMS, child_env, trail_text

#: A step whose name and selector hold markup: it must reach the page as text.
NASTY = "<script>alert('step')</script>"
MISSING = """
- tapOnElementBySelector:
    nodeSelector:
      androidAccessibility:
        textRegex: Nowhere to be seen
"""
#: The same search, failed by the trail's own short wait: what the command line and doit run,
#: which take the replay's default find timeout (5 s) where the in-process tests take `FAST`'s.
MISSING_SOON = """
- assertVisibleBySelector:
    nodeSelector:
      androidAccessibility:
        textRegex: Nowhere to be seen
    timeoutMs: 200
"""


def write_failing_trail(tmp_path: Path, missing: str = MISSING) -> Path:
    text = trail_text(OPEN_FORMS, missing).replace("step: step 2", f'step: "{NASTY}"')
    path = tmp_path / "forms.trail.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def port(server: FakeAdbServer, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
    return server.port


def test_a_failed_run_leaves_a_page_and_a_summary_with_the_failing_call(
    port: int, model: FakeDevice, tmp_path: Path
) -> None:
    trail = write_failing_trail(tmp_path)
    out = tmp_path / "report"

    def app_logs(event: ToolEvent) -> None:
        # The app logs markup while the trail runs: whatever a device says is text on the page.
        model.runtime.logcat.add("Evil", "</pre><script>alert('logcat')</script>")

    request = ReplayRequest(trails=(trail,), report_dir=out, logcat=True)
    run = replay(request, options=FAST, hooks=Hooks(before=app_logs))

    assert run.exit_code == 1
    failing = cell(f"{run.trails[0].path}:16:11")
    summary = (out / "summary.md").read_text("utf-8")
    assert "## trailblaze replay: ❌ failed" in summary
    assert (
        f"| ❌ failed | {run.trails[0].duration:.2f} s | {failing}: tapOnElementBySelector: "
        in summary
    )
    assert "no element matches" in summary
    # Each row and the heading name the device as people know it: serial and model.
    shown = run.trails[0].device_label
    assert shown is not None
    assert run.trails[0].device_model
    assert f"({run.trails[0].device_model})" in shown
    assert f"| {cell(shown)} |" in summary
    assert "```yaml\n- tapOnElementBySelector:\n    nodeSelector:\n" in summary

    page = (out / "index.html").read_text("utf-8")
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in page
    # The only <script in the page is the escaped text of the step name and of logcat.
    assert "<script" not in page
    assert "&lt;script&gt;alert(&#x27;step&#x27;)&lt;/script&gt;" in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(&#x27;logcat&#x27;)&lt;/script&gt;" in page
    assert not re.search(r"""(src|href)=["']?(https?:|//)|url\(|@import""", page)
    # One screenshot per step that ran, embedded, and the files beside the page.
    shots = [a for s in run.trails[0].steps for a in s.artifacts]
    assert [(a.kind, a.label) for a in shots] == [
        ("screenshot", "after step 1"),
        ("screenshot", "at the failure"),
    ]
    for shot in shots:
        assert shot.file is not None
        assert shot.file.startswith("trails/")
        assert (out / shot.file).read_bytes().startswith(b"\x89PNG")
    assert page.count('<img src="data:image/png;base64,') == 2
    (logcat,) = run.trails[0].artifacts
    assert logcat.kind == "logcat"
    assert logcat.file is not None
    assert "I fakeadb: launch xyz.block.trailblaze.examples.sampleapp" in (
        out / logcat.file
    ).read_text("utf-8")
    # Written atomically: no temporary file is left behind.
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_a_device_without_screencap_gives_a_reason_not_a_failed_trail(
    port: int, model: FakeDevice, tmp_path: Path
) -> None:
    model.faults.overrides.append(
        CommandOverride("screencap", returncode=1, stderr="screencap: no display\n")
    )
    trail = tmp_path / "ok.trail.yaml"
    trail.write_text(trail_text(OPEN_FORMS), encoding="utf-8")
    out = tmp_path / "report"

    run = replay(ReplayRequest(trails=(trail,), report_dir=out), options=FAST)

    assert run.exit_code == 0
    (shot,) = run.trails[0].steps[0].artifacts
    assert shot.file is None
    assert shot.error is not None
    assert shot.error.startswith("no screenshot: emulator-5554: `screencap -p ")
    assert "screencap: no display" in shot.error
    assert "no screenshot: emulator-5554: `screencap -p" in (out / "index.html").read_text()


def test_the_recording_is_stopped_pulled_and_removed_when_the_trail_fails(
    port: int, server: FakeAdbServer, model: FakeDevice, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    request = ReplayRequest(
        trails=(write_failing_trail(tmp_path),), report_dir=out, record_video=True
    )

    run = replay(request, options=FAST)

    assert run.trails[0].status == "failed"
    (video,) = run.trails[0].artifacts
    assert video.kind == "video"
    assert video.file is not None
    assert (out / video.file).read_bytes()[4:8] == b"ftyp"
    sent = server.commands["emulator-5554"]
    start = next(c for c in sent if c.startswith("screenrecord "))
    device_file = start.split()[-1]
    kill = next(c for c in sent if c.startswith("kill -2 "))
    assert sent.index(kill) > sent.index(start)
    assert f"rm -f {device_file}" in sent
    assert model.read_file(device_file) is None
    assert model.programs.recorder.pids() == []
    assert f'<a href="{video.file}">' in (out / "index.html").read_text("utf-8")


def test_the_recording_is_stopped_and_pulled_when_the_run_is_cancelled(
    port: int, model: FakeDevice, tmp_path: Path
) -> None:
    cancel = threading.Event()

    def stop_at_the_tap(event: ToolEvent) -> None:
        if event.tool == "tapOnElementBySelector":
            cancel.set()

    trail = tmp_path / "ok.trail.yaml"
    trail.write_text(trail_text(OPEN_FORMS, OPEN_FORMS), encoding="utf-8")
    out = tmp_path / "report"
    request = ReplayRequest(trails=(trail,), report_dir=out, record_video=True)

    run = replay(request, options=FAST, cancel=cancel, hooks=Hooks(after=stop_at_the_tap))

    assert run.cancelled
    assert run.trails[0].status == "cancelled"
    (video,) = run.trails[0].artifacts
    assert video.file is not None
    assert (out / video.file).is_file()
    assert model.programs.recorder.pids() == []


def test_a_report_dir_that_is_a_file_is_a_usage_error_before_any_device_work(
    port: int, server: FakeAdbServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine\n", encoding="utf-8")

    code = main(["replay", str(write_failing_trail(tmp_path)), "--report", str(taken)])

    assert code == 2
    assert capsys.readouterr().err == f"trailblaze replay: --report {taken}: not a directory\n"
    assert taken.read_text(encoding="utf-8") == "mine\n"
    assert server.commands["emulator-5554"] == []


def test_logcat_and_video_need_a_report_dir(
    port: int, server: FakeAdbServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["replay", str(write_failing_trail(tmp_path)), "--logcat", "--record-video"])

    assert code == 2
    assert capsys.readouterr().err == (
        "trailblaze replay: --logcat and --record-video need --report DIR to write into\n"
    )
    assert server.commands["emulator-5554"] == []


def test_files_in_the_report_dir_that_are_not_ours_stay(
    port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    (out / "trails").mkdir(parents=True)
    (out / "notes.txt").write_text("keep me\n", encoding="utf-8")
    (out / "trails" / "old.png").write_bytes(b"old")

    code = main(["replay", str(write_failing_trail(tmp_path, MISSING_SOON)), "--report", str(out)])

    assert code == 1
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me\n"
    assert (out / "trails" / "old.png").read_bytes() == b"old"
    stdout = capsys.readouterr().out
    assert f"wrote {out / 'index.html'}" in stdout
    assert f"wrote {out / 'summary.md'}" in stdout


def test_doit_replay_writes_the_report_with_logcat_and_video(
    server: FakeAdbServer, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / "trailmaps" / "forms").mkdir(parents=True)
    (ws / "dodo.py").write_text(
        "from trailblaze.doit_tasks import DOIT_CONFIG, task_replay\n", encoding="utf-8"
    )
    write_failing_trail(ws / "trailmaps" / "forms", MISSING_SOON)
    out = tmp_path / "report"

    done = subprocess.run(
        [
            sys.executable, "-m", "doit", "--db-file", str(tmp_path / "doit.sqlite3"),
            "replay", "--report", str(out), "--logcat", "--record-video",
        ],
        check=False, cwd=ws, env=child_env(server.port), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"wrote {out / 'index.html'}" in done.stdout
    summary = (out / "summary.md").read_text("utf-8")
    assert (
        "| trailmaps/forms/forms.trail.yaml | emulator-5554 (sdk\\_gphone64\\_x86\\_64) | ❌ failed |"
        in summary
    ), summary
    assert "| trailmaps/forms/forms.trail.yaml:16:11: assertVisibleBySelector: " in summary
    folder = out / "trails" / "trailmaps-forms-forms.trail--emulator-5554"
    assert sorted(p.name for p in folder.iterdir()) == [
        "logcat.txt",
        "screen.mp4",
        "step-1.png",
        "step-2.png",
    ]
