"""``ModelDevice``: the ``Device`` protocol straight on a ``FakeDevice``, without sockets."""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence

from trailblaze.replay.device import (
    IDLE_RETRY_DELAYS,
    DeviceError,
    DeviceLostError,
    ShellDevice,
    ShellResult,
)
from trailblaze.replay.fake.device import FakeDevice
from trailblaze.replay.fake.result import STDERR, STDOUT


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
        result = self.model.command(argv)
        return ShellResult(
            returncode=result.returncode,
            output=result.text(),
            stdout=result.text(STDOUT),
            stderr=result.text(STDERR),
        )

    def _read_file(self, path: str) -> bytes:
        data = self.model.read_file(path)
        if data is None:
            raise DeviceError(f"{self.serial}: no such file on the device: {path}")
        return data
