"""The fake device's tests use the replay tests' fixtures: the model device, its server, and
the fence that keeps a real adb server out of reach."""

from __future__ import annotations

from tests.replay.conftest import _no_real_adb, device, device_factory, model, server

__all__ = ["_no_real_adb", "device", "device_factory", "model", "server"]
