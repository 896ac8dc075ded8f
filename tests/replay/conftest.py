"""Fixtures for the replay device layer: fake devices, a fake adb server, real adbutils."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from fakeadb import FakeAdbServer, FakeDevice, ModelDevice
from trailblaze.replay.device import ShellDevice

# support imports adbutils (the [test] extra) and fails with a clear message if it is missing:
# a broken install must fail the adb half of these tests, not skip it.
from .support import SAMPLE_APP

#: Every socket read is bounded, so a wedged fake fails a test instead of hanging it.
TIMEOUT = 5.0

DeviceFactory = Callable[..., ShellDevice]


@pytest.fixture(autouse=True)
def _no_real_adb(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without this, a refused connection makes adbutils start the adb binary bundled in its
    # wheel as a real server on 5037 (replay.md §3.5.7).
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")
    for name in ("ANDROID_SERIAL", "ANDROID_ADB_SERVER_HOST", "ANDROID_ADB_SERVER_PORT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def model() -> FakeDevice:
    return FakeDevice.load(SAMPLE_APP)


@pytest.fixture
def server(model: FakeDevice) -> Iterator[FakeAdbServer]:
    with FakeAdbServer(model) as fake:
        yield fake


@pytest.fixture(params=["adb", "model"])
def device_factory(request: pytest.FixtureRequest, model: FakeDevice) -> Iterator[DeviceFactory]:
    """Builds the parametrized ``Device`` implementation on the shared ``model``."""
    if request.param == "model":

        def make_model(timeout: float = TIMEOUT) -> ShellDevice:
            return ModelDevice(model, timeout=timeout)

        yield make_model
        return
    from trailblaze.replay.adb import connect  # noqa: PLC0415 - only this leg needs adbutils

    with FakeAdbServer(model) as fake:

        def make_adb(timeout: float = TIMEOUT) -> ShellDevice:
            return connect(None, port=fake.port, timeout=timeout)

        yield make_adb


@pytest.fixture
def device(device_factory: DeviceFactory) -> ShellDevice:
    return device_factory()
