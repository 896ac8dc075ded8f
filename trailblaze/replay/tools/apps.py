"""Starting, stopping and resetting apps; listing what is installed (replay.md §2.1).

``launchApp`` defaults to REINSTALL (force-stop, ``pm clear``, launch), as upstream does, so a
bare ``launchApp: {appId}`` starts from a clean state; RESUME only launches. It then waits for
the app's window to have the focus.
"""

from __future__ import annotations

import time
from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import ToolError
from trailblaze.replay.tools.base import ToolImpl


def launch_app(context: ExecutionContext, args: dict[str, Any]) -> str:
    package, mode = args["appId"], str(args["launchMode"])
    device = context.device
    if mode in ("REINSTALL", "FORCE_RESTART"):
        device.force_stop(package)
    if mode == "REINSTALL":
        device.clear_app_data(package)
    device.start_app(package)
    deadline = time.monotonic() + context.options.launch_timeout
    while True:
        focused = device.current_package()
        if focused == package:
            return f"launched {package} ({mode})"
        if time.monotonic() >= deadline:
            raise ToolError(
                f"{package} did not come to the foreground within "
                f"{context.options.launch_timeout:g}s (focused: {focused or 'nothing'})"
            )
        context.sleep(context.options.poll_interval)


def stop_app(context: ExecutionContext, args: dict[str, Any]) -> str:
    context.device.force_stop(args["appId"])
    return f"stopped {args['appId']}"


def clear_app_data(context: ExecutionContext, args: dict[str, Any]) -> str:
    context.device.clear_app_data(args["appId"])
    return f"cleared the data of {args['appId']}"


def list_installed_apps(context: ExecutionContext, args: dict[str, Any]) -> str:
    packages = context.device.list_packages()
    return f"{len(packages)} package(s): {', '.join(packages)}"


TOOLS = (
    ToolImpl("launchApp", launch_app),
    ToolImpl("stopApp", stop_app),
    ToolImpl("mobile_clearAppData", clear_app_data),
    ToolImpl("mobile_listInstalledApps", list_installed_apps, mutates=False),
)
