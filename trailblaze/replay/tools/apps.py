"""Apps and what the system grants them: start, stop, reset, list, permissions, URLs.

``launchApp`` defaults to REINSTALL (force-stop, ``pm clear``, launch), as upstream does, so a
bare ``launchApp: {appId}`` starts from a clean state; RESUME only launches. It then waits for
the app's window to have the focus; all of that is ``launch`` time.

Permissions: ``android_grantPermissions`` is ``pm grant`` per permission,
``android_grantAppOpsPermission`` is ``appops set <pkg> <op> allow``. ``openUrl`` is a VIEW intent
(``am start -a android.intent.action.VIEW -d <url>``), as upstream's scripted tool does through
Maestro's ``openLink``. ``android_sendBroadcast`` (an SDK author tool) sends an explicit broadcast
to an app's receiver, each extra with the ``am`` flag of its ``type`` (string when omitted), and
answers what ``am`` printed.
"""

from __future__ import annotations

import json
import time
from typing import Any

from trailblaze.redaction import redacted_url
from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import ToolError
from trailblaze.replay.structured import Structured
from trailblaze.replay.tools.base import ToolImpl


def launch_app(context: ExecutionContext, args: dict[str, Any]) -> str:
    with context.phase("launch"):
        return _launch(context, args)


def _launch(context: ExecutionContext, args: dict[str, Any]) -> str:
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
    # A scripted caller receives the SDK's ListInstalledAppsResult.
    return Structured(f"{len(packages)} package(s): {', '.join(packages)}", {"appIds": packages})


def list_installed_apps_detailed(context: ExecutionContext, args: dict[str, Any]) -> str:
    system = bool(args.get("includeSystemApps", True))
    pairs = context.device.list_packages_detailed(include_system=system)
    apps = [{"appId": package, "apkPath": path} for package, path in pairs]
    which = "" if system else " (third-party)"
    return f"{len(apps)} app(s){which}: {json.dumps(apps, separators=(',', ':'))}"


def grant_permissions(context: ExecutionContext, args: dict[str, Any]) -> str:
    package, permissions = args["appId"], args["permissions"]
    if not permissions:
        raise ToolError("'permissions' is empty: name at least one permission to grant")
    for permission in permissions:
        context.device.grant_permission(package, permission)
    return f"granted {', '.join(permissions)} to {package}"


def grant_app_ops_permission(context: ExecutionContext, args: dict[str, Any]) -> str:
    package, operation = args["appId"], args["permission"]
    context.device.set_app_op(package, operation, "allow")
    return f"allowed the AppOps operation {operation} for {package}"


def open_url(context: ExecutionContext, args: dict[str, Any]) -> str:
    url = args["url"].strip()
    if not url:
        raise ToolError("'url' is empty")
    with context.phase("launch"):
        context.device.open_url(url)
    return f"opened {redacted_url(url)}"  # a link may carry a token (`{{args.x}}`)


#: ``android_sendBroadcast`` extra types and their ``am broadcast`` flags.
EXTRA_TYPES = {
    "string": "--es",
    "boolean": "--ez",
    "int": "--ei",
    "integer": "--ei",
    "long": "--el",
    "float": "--ef",
    "double": "--ed",
    "uri": "--eu",
}


def send_broadcast(context: ExecutionContext, args: dict[str, Any]) -> str:
    extras: list[tuple[str, str, str]] = []
    for i, extra in enumerate(args.get("extras") or ()):
        kind = str(extra.get("type") or "string")
        flag = EXTRA_TYPES.get(kind.lower())
        if flag is None:
            raise ToolError(
                f"android_sendBroadcast: extras[{i}] ({extra['key']}): type {kind!r} is not one "
                f"of {', '.join(EXTRA_TYPES)}"
            )
        extras.append((flag, str(extra["key"]), str(extra["value"])))
    component = f"{args['componentPackage']}/{args['componentClass']}"
    return context.device.send_broadcast(str(args["action"]), component, extras)


TOOLS = (
    ToolImpl("launchApp", launch_app),
    ToolImpl("stopApp", stop_app),
    ToolImpl("mobile_clearAppData", clear_app_data),
    ToolImpl("mobile_listInstalledApps", list_installed_apps, mutates=False),
    ToolImpl("mobile_listInstalledAppsDetailed", list_installed_apps_detailed, mutates=False),
    ToolImpl("android_grantPermissions", grant_permissions, mutates=False),
    ToolImpl("android_grantAppOpsPermission", grant_app_ops_permission, mutates=False),
    ToolImpl("openUrl", open_url),
    ToolImpl("android_sendBroadcast", send_broadcast),
)
