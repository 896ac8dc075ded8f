"""What ``--report`` takes from the device while a trail runs: the hook ``trailrun`` calls.

``Capture`` belongs to one run and its report directory; ``Capture.trail`` opens a
``TrailCapture`` for one trail on one device, which ``trailrun`` drives:

- ``start`` before the first step: with ``--logcat`` the device's log is cleared (so what is
  read at the end is this trail's slice); with ``--record-video`` ``screenrecord`` starts on the
  device, over its own adb shell (in a thread: the command runs until it is stopped);
- ``after_step`` after each step that ran: a screenshot (``screencap -p`` through our adb
  layer), ``at the failure`` for a failed step;
- ``finish`` always, also after a failure or a cancel: the recording is stopped (SIGINT, as
  ``screenrecord`` expects, so it finishes the file), pulled into the report directory and
  removed from the device; the logcat slice is read (``logcat -d``, the last 256 KiB kept).

Whatever the device does not give (no ``screencap``, a PNG too large, a lost device) is an
``Artifact`` with the reason ("no screenshot: ..."), never a failed trail. Everything is
bounded: a screenshot at 8 MiB, a logcat slice at 256 KiB, a recording at the pull's bound and
a 2 Mbit/s bit rate. Files are written atomically under ``DIR/trails/``, each name made once.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from trailblaze.fsutil import write_atomic
from trailblaze.redaction import Secrets
from trailblaze.replay.device import Device, DeviceError, ShellResult
from trailblaze.replay.report.text import shown
from trailblaze.replay.results import Artifact, ArtifactKind, StepResult

#: A screenshot larger than this is not kept (a real 1080x2400 screen is 1-3 MiB).
SCREENSHOT_LIMIT = 8 << 20
#: The end of the trail's logcat that is kept.
LOGCAT_LIMIT = 256 << 10
#: ``screenrecord`` stops by itself after this long (the longest its older versions allow).
VIDEO_TIME_LIMIT = 180
VIDEO_BIT_RATE = 2_000_000
#: How long a command of the capture may take (it is not the trail's, and must not hang it).
COMMAND_TIMEOUT = 30.0
#: How long ``screenrecord`` may take to show up, and to finish its file after SIGINT.
VIDEO_START_TIMEOUT = 5.0
VIDEO_STOP_TIMEOUT = 15.0

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name(text: str, limit: int = 60) -> str:
    """A file-name part for ``text`` (a trail path, a serial): safe characters only."""
    name = _UNSAFE.sub("-", text).strip("-.")[:limit]
    return name or "trail"


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """``--report DIR`` and what to capture into it."""

    directory: Path
    logcat: bool = False
    video: bool = False


class Capture:
    """The captures of one run into ``options.directory`` (thread-safe: one trail per device)."""

    def __init__(self, options: ReportOptions, secrets: Secrets | None = None) -> None:
        self.options = options
        self.secrets = secrets or Secrets()
        self._lock = threading.Lock()
        self._names: set[str] = set()
        self._serial = 0

    def trail(self, path: str, device: Device) -> TrailCapture:
        base = f"{file_name(path.removesuffix('.yaml'))}--{file_name(device.serial, 40)}"
        with self._lock:
            name, n = base, 1
            while name in self._names:
                n += 1
                name = f"{base}-{n}"
            self._names.add(name)
            self._serial += 1
            token = self._serial
        return TrailCapture(self, device, f"trails/{name}", token)

    def write(self, relative: str, data: bytes | str) -> None:
        write_atomic(self.options.directory / relative, data)


class TrailCapture:
    """One trail on one device: ``start``, ``after_step`` per step, ``finish`` always."""

    def __init__(self, capture: Capture, device: Device, folder: str, token: int) -> None:
        self._capture = capture
        self._device = device
        self._folder = folder
        self._options = capture.options
        self._device_video = f"/sdcard/trailblaze-report-{token}.mp4"
        self._recorder: threading.Thread | None = None
        self._recorded: list[ShellResult | BaseException] = []
        self._video_pid: str | None = None
        self._video_error: str | None = None
        self._logcat_error: str | None = None

    def _shown(self, text: str) -> str:
        return shown(text, self._capture.secrets)

    # -- start -------------------------------------------------------------------------------

    def start(self) -> None:
        if self._options.logcat:
            self._logcat_error = self._command_error(["logcat", "-c"], "clear the log")
        if self._options.video:
            self._start_video()

    def _command_error(self, argv: list[str], what: str) -> str | None:
        try:
            result = self._device.run_command(argv, timeout=COMMAND_TIMEOUT)
        except DeviceError as exc:
            return f"could not {what}: {exc}"
        if result.returncode != 0:
            why = (result.stderr or result.output).strip()[-300:] or "no message"
            return f"could not {what}: `{' '.join(argv)}` exited with {result.returncode}: {why}"
        return None

    def _start_video(self) -> None:
        argv = [
            "screenrecord",
            "--time-limit", str(VIDEO_TIME_LIMIT),
            "--bit-rate", str(VIDEO_BIT_RATE),
            self._device_video,
        ]  # fmt: skip

        def record() -> None:
            try:
                self._recorded.append(
                    self._device.run_command(argv, timeout=VIDEO_TIME_LIMIT + COMMAND_TIMEOUT)
                )
            except BaseException as exc:  # reported by finish(), on the trail's thread
                self._recorded.append(exc)

        try:
            # A screenrecord already running (someone else's) is not ours to stop.
            others = self._screenrecord_pids()
        except DeviceError as exc:
            self._video_error = f"could not look for screenrecord: {exc}"
            return
        self._recorder = threading.Thread(target=record, name="screenrecord", daemon=True)
        self._recorder.start()
        # Its pid, to stop this recording (and no other) with SIGINT; it shows up in a moment.
        deadline = time.monotonic() + VIDEO_START_TIMEOUT
        while time.monotonic() < deadline and self._recorder.is_alive():
            try:
                ours = self._screenrecord_pids() - others
            except DeviceError as exc:
                self._video_error = f"could not find screenrecord's pid: {exc}"
                return
            if len(ours) == 1:
                self._video_pid = ours.pop()
                return
            time.sleep(0.05)
        self._recorder.join(0.5)
        if self._recorded and isinstance(self._recorded[0], ShellResult):
            result = self._recorded[0]
            why = (result.stderr or result.output).strip()[-300:] or "no message"
            self._video_error = f"screenrecord exited with {result.returncode}: {why}"
        elif self._recorded:
            self._video_error = f"screenrecord did not start: {self._recorded[0]}"
        else:
            self._video_error = f"screenrecord did not start within {VIDEO_START_TIMEOUT:g} s"

    def _screenrecord_pids(self) -> set[str]:
        found = self._device.run_command(["pidof", "screenrecord"], timeout=COMMAND_TIMEOUT)
        words = found.stdout.split() if found.returncode == 0 else []
        return {word for word in words if word.isdigit()}

    # -- each step ----------------------------------------------------------------------------

    def after_step(self, step: StepResult) -> tuple[Artifact, ...]:
        label = "at the failure" if step.status == "failed" else f"after {step.label}"
        if step.status == "cancelled":
            label = "when it was cancelled"
        try:
            data = self._device.screenshot()
        except DeviceError as exc:
            return (
                Artifact(
                    "screenshot",
                    label,
                    error=f"no screenshot: {self._shown(str(exc))}",
                ),
            )
        if len(data) > SCREENSHOT_LIMIT:
            return (
                Artifact(
                    "screenshot",
                    label,
                    error=f"no screenshot: the PNG is {len(data)} bytes, over the "
                    f"{SCREENSHOT_LIMIT} a report keeps",
                ),
            )
        relative = f"{self._folder}/{file_name(step.label)}.png"
        return (self._written("screenshot", label, relative, data, "no screenshot"),)

    def _written(
        self, kind: ArtifactKind, label: str, relative: str, data: bytes | str, none: str
    ) -> Artifact:
        try:
            self._capture.write(relative, data)
        except OSError as exc:
            why = exc.strerror or str(exc)
            return Artifact(kind, label, error=f"{none}: cannot write {relative}: {why}")
        size = len(data.encode() if isinstance(data, str) else data)
        return Artifact(kind, label, file=relative, size=size)

    # -- the end ------------------------------------------------------------------------------

    def finish(self) -> tuple[Artifact, ...]:
        """Stop and keep what the trail recorded; called also when the trail failed."""
        artifacts: list[Artifact] = []
        if self._options.video:
            artifacts.append(self._finish_video())
        if self._options.logcat:
            artifacts.append(self._finish_logcat())
        return tuple(artifacts)

    def _finish_video(self) -> Artifact:
        label = "screen recording"
        if self._video_pid is not None:
            stop_error = self._command_error(["kill", "-2", self._video_pid], "stop screenrecord")
            if self._recorder is not None:
                self._recorder.join(VIDEO_STOP_TIMEOUT)
                if self._recorder.is_alive():
                    stop_error = stop_error or (
                        f"screenrecord did not stop within {VIDEO_STOP_TIMEOUT:g} s of SIGINT"
                    )
            if stop_error is not None:
                self._video_error = stop_error
        artifact: Artifact
        if self._video_error is not None and self._video_pid is None:
            artifact = Artifact(
                "video",
                label,
                error=f"no screen recording: {self._shown(self._video_error)}",
            )
        else:
            try:
                data = self._device.read_file(self._device_video)
            except DeviceError as exc:
                artifact = Artifact(
                    "video",
                    label,
                    error=f"no screen recording: {self._shown(str(exc))}",
                )
            else:
                artifact = self._written(
                    "video", label, f"{self._folder}/screen.mp4", data, "no screen recording"
                )
        # Never leave the file on the device, whatever happened to it.
        self._command_error(["rm", "-f", self._device_video], "remove the recording")
        return artifact

    def _finish_logcat(self) -> Artifact:
        label = "logcat"
        if self._logcat_error is not None:
            return Artifact(
                "logcat",
                label,
                error=f"no logcat: {self._shown(self._logcat_error)}",
            )
        try:
            result = self._device.run_command(
                ["logcat", "-d", "-v", "threadtime"], timeout=COMMAND_TIMEOUT
            )
        except DeviceError as exc:
            return Artifact("logcat", label, error=f"no logcat: {self._shown(str(exc))}")
        if result.returncode != 0:
            why = (result.stderr or result.output).strip()[-300:] or "no message"
            return Artifact(
                "logcat",
                label,
                error=f"no logcat: logcat exited with {result.returncode}: {self._shown(why)}",
            )
        text = self._shown(result.stdout)
        if len(text) > LOGCAT_LIMIT:
            cut = text.find("\n", len(text) - LOGCAT_LIMIT)
            text = f"[trailblaze: {cut + 1} earlier characters not kept]\n" + text[cut + 1 :]
        return self._written("logcat", label, f"{self._folder}/logcat.txt", text, "no logcat")
