"""``ModelDevice``: the ``Device`` protocol straight on a ``FakeDevice``, without sockets."""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence

from fakeadb.device import FakeDevice
from fakeadb.result import STDERR, STDOUT
from trailblaze.replay.device import (
    IDLE_RETRY_DELAYS,
    CommandTimeout,
    DeviceError,
    DeviceLostError,
    ShellDevice,
    ShellResult,
)


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
        idle_retry_delays: Sequence[float] = IDLE_RETRY_DELAYS,
    ) -> None:
        super().__init__(idle_retry_delays=idle_retry_delays)
        self.model = model
        self._timeout = timeout

    @property
    def serial(self) -> str:
        return self.model.serial

    def _run(self, argv: Sequence[str], timeout: float | None = None) -> ShellResult:
        if self.model.state != "device":
            raise DeviceLostError(f"{self.serial}: device is {self.model.state}")
        line = shlex.join(argv)
        admission = self.model.admit(line)
        if admission.dropped:
            raise DeviceLostError(f"{self.serial}: connection to the device was lost")
        limit = timeout or self._timeout
        if admission.delay:
            time.sleep(min(admission.delay, limit))
            if admission.delay >= limit:
                self._timed_out(line, timeout)
        started = time.monotonic()
        result = self.model.command(argv)
        # A caller's command runs here, in this thread: one that took too long is only seen to
        # have done so once it ended (over adb, the client stops waiting at the limit).
        if timeout is not None and time.monotonic() - started >= timeout:
            self._timed_out(line, timeout)
        return ShellResult(
            returncode=result.returncode,
            output=result.text(),
            stdout=result.text(STDOUT),
            stderr=result.text(STDERR),
        )

    def _timed_out(self, line: str, timeout: float | None) -> None:
        if timeout is not None and self._answers():
            raise CommandTimeout(
                f"{self.serial}: `{line}` did not finish within {timeout:g} s "
                "and was abandoned (the device still answers)"
            )
        limit = self._timeout if timeout is None else timeout
        raise DeviceLostError(f"{self.serial}: no answer within {limit:g}s to `{line}`")

    def _answers(self) -> bool:
        """Whether a quick command still gets through (the probe ``AdbDevice`` sends too)."""
        if self.model.state != "device":
            return False
        admission = self.model.admit("echo alive")
        if admission.delay:
            time.sleep(min(admission.delay, self._timeout))
        return not admission.dropped and admission.delay < self._timeout

    def _write_file(self, path: str, data: bytes) -> None:
        if self.model.state != "device":
            raise DeviceLostError(f"{self.serial}: device is {self.model.state}")
        self.model.runtime.files.write(path, data)

    def _read_file(self, path: str) -> bytes:
        data = self.model.read_file(path)
        if data is None:
            raise DeviceError(f"{self.serial}: no such file on the device: {path}")
        return data
