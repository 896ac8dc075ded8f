"""The fake Android device that tests and demos replay against: not part of the product.

Everything a test needs is imported from here::

    from trailblaze.replay.fake import FakeAdbServer, FakeDevice, ModelDevice, load_devices

- ``spec`` / ``loader``: the declarative device model (apps, screens, elements, faults) and
  reading it from YAML or a mapping;
- ``device``: ``FakeDevice``, the device state machine, with ``view`` (what the screen shows,
  the uiautomator dump), ``gestures`` (taps, swipes, keys, typing) and ``commands`` (the
  Android programs: ``input``, ``am``, ``pm``, ...);
- ``shell``: the small ``sh`` the device's command lines run in;
- ``modeldevice``: ``ModelDevice``, the product's ``Device`` protocol straight on a
  ``FakeDevice`` (no sockets, for fast engine tests);
- ``server`` / ``sync``: ``FakeAdbServer``, a fake adb server on 127.0.0.1 that the real
  adbutils client talks to over a real socket.

``python -m trailblaze.replay.fake MODEL.yaml [--port N]`` serves a model until Ctrl-C. The
product (``trailblaze.replay`` and everything else) never imports this package.
"""

from __future__ import annotations

from trailblaze.replay.fake.commands import KEY_NAMES
from trailblaze.replay.fake.device import FakeDevice, load_devices
from trailblaze.replay.fake.loader import load_specs, parse_device_spec
from trailblaze.replay.fake.modeldevice import ModelDevice
from trailblaze.replay.fake.server import FakeAdbServer
from trailblaze.replay.fake.shell import CommandResult, Shell
from trailblaze.replay.fake.spec import CommandOverride, DeviceSpec, Faults, ModelError
from trailblaze.replay.fake.view import View

__all__ = [
    "KEY_NAMES",
    "CommandOverride",
    "CommandResult",
    "DeviceSpec",
    "FakeAdbServer",
    "FakeDevice",
    "Faults",
    "ModelDevice",
    "ModelError",
    "Shell",
    "View",
    "load_devices",
    "load_specs",
    "parse_device_spec",
]
