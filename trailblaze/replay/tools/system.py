"""The device as a whole: network, System UI demo mode, snapshots of the screen.

- ``networkConnection`` switches Wi-Fi and mobile data together (``svc wifi|data enable|disable``).
- ``android_systemUiDemoMode`` allows demo mode (``settings put global sysui_demo_allowed 1``),
  enters it and fixes the clock, battery and notifications through the System UI demo
  broadcast; ``enable: false`` leaves it.
- ``takeSnapshot`` captures the screen (``screencap -p``, pulled) and its hierarchy. With
  ``ReplayOptions.snapshot_dir`` set, both are saved there as ``<trail>/<n>-<screenName>.png``
  and ``.xml``; either way the capture must succeed for the tool to pass.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trailblaze.fsutil import write_atomic
from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.hierarchy import parse_hierarchy
from trailblaze.replay.tools.base import ToolImpl

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def network_connection(context: ExecutionContext, args: dict[str, Any]) -> str:
    connected = bool(args["connected"])
    context.device.set_network(connected)
    return "network on (Wi-Fi and mobile data)" if connected else "network off"


def system_ui_demo_mode(context: ExecutionContext, args: dict[str, Any]) -> str:
    enable = bool(args.get("enable", True))
    context.device.set_demo_mode(enable)
    return "System UI demo mode on" if enable else "System UI demo mode off"


def _safe(name: str) -> str:
    return _UNSAFE.sub("_", name).strip("._") or "snapshot"


def take_snapshot(context: ExecutionContext, args: dict[str, Any]) -> str:
    name = args["screenName"]
    with context.phase("capture"):
        png = context.device.screenshot()
        xml = context.device.dump_hierarchy()
        nodes = sum(1 for _ in parse_hierarchy(xml).iter_nodes())
    detail = f"captured '{name}' ({len(png)}-byte PNG, {nodes} nodes)"
    root = context.options.snapshot_dir
    if root is None:
        return detail
    trail = _safe(Path(context.trail_path or "trail").name.removesuffix(".yaml"))
    folder = root / trail
    number = len(list(folder.glob("*.png"))) + 1 if folder.is_dir() else 1
    stem = folder / f"{number:02d}-{_safe(name)}"
    write_atomic(stem.with_suffix(".png"), png)
    write_atomic(stem.with_suffix(".xml"), xml)
    return f"{detail}, saved as {stem.with_suffix('.png')}"


TOOLS = (
    ToolImpl("networkConnection", network_connection, mutates=False),
    ToolImpl("android_systemUiDemoMode", system_ui_demo_mode, mutates=False),
    ToolImpl("takeSnapshot", take_snapshot, mutates=False),
)
