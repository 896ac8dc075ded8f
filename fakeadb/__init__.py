"""The fake Android device that tests and demos replay against: not part of the product.

Everything a test needs is imported from here::

    from fakeadb import FakeAdbServer, FakeDevice, ModelDevice, load_devices

- ``spec`` / ``loader`` / ``reader``: the declarative device model (apps, screens, elements,
  faults) and reading it from YAML (through ``trailblaze.yaml.node``, merge keys allowed) or a
  mapping, every error located;
- ``device``: ``FakeDevice``, which wires the parts below around one ``state.DeviceState``;
  the parts share that state object and never see ``FakeDevice``:
  ``view`` (what the screen shows, the uiautomator dump), ``gestures`` (taps, swipes, keys,
  typing), ``commands`` (the Android programs: ``input``, ``am``, ``pm``, ...), ``files`` (the
  file system), ``shell`` (the small ``sh`` command lines run in, given ``files`` and the
  programs), ``faults`` (dropped connections, delays, per-command answers), ``result``;
- ``modeldevice``: ``ModelDevice``, the product's ``Device`` protocol straight on a
  ``FakeDevice`` (no sockets, for fast engine tests);
- ``server`` / ``sync``: ``FakeAdbServer``, a fake adb server on 127.0.0.1 that the real
  adbutils client talks to over a real socket (``sync`` is given ``files`` only).

Imports point one way, so there are no cycles (``tests/test_imports.py``):
``spec`` <- ``reader`` <- ``loader``; ``files`` <- ``state`` <- ``view`` <- ``gestures`` <- ``commands``;
``result`` <- ``shell``, ``faults``, ``commands``; all of them <- ``device`` <- ``modeldevice``,
``server``. Outside the package the fake imports only ``replay.device`` (``KeyCode``, the
``ShellDevice`` base), ``replay.hierarchy`` (``Bounds``) and ``trailblaze.yaml.node``.

``python -m fakeadb MODEL.yaml [--port N]`` serves a model until Ctrl-C. The
product (``trailblaze.replay`` and everything else) never imports this package.
"""

from __future__ import annotations

from fakeadb.device import FakeDevice, load_devices
from fakeadb.gestures import KEY_NAMES
from fakeadb.loader import load_specs, parse_device_spec
from fakeadb.modeldevice import ModelDevice
from fakeadb.result import CommandResult
from fakeadb.server import FakeAdbServer
from fakeadb.spec import CommandOverride, DeviceSpec, Faults, ModelError
from fakeadb.view import View

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
    "View",
    "load_devices",
    "load_specs",
    "parse_device_spec",
]
