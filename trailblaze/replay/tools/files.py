"""The author tools that put files on the device for a scripted tool (not recordable; the SDK
declares them): ``android_writeBytesToFile``, ``android_writeFileToDownloads``,
``android_writeImageToMediaStore``.

All three push the bytes with adb's sync protocol (``Device.write_file``), which replaces a file
already there and creates the directories above it: no file body travels on a shell line.

- ``android_writeBytesToFile`` writes ``base64Content``, decoded, at ``devicePath`` (absolute).
- ``android_writeFileToDownloads`` writes ``content`` as UTF-8 to the public Downloads directory
  (``/storage/emulated/0/Download/<fileName>``, where the reference's host path pushes it).
- ``android_writeImageToMediaStore`` writes the decoded image to ``/sdcard/Pictures/<fileName>``
  and asks the media scanner to register it (a ``MEDIA_SCANNER_SCAN_FILE`` broadcast), so a
  gallery or photo picker finds it, as the reference's host path does.

A name with a ``/``, content that is not base64 or a relative path is refused before anything
reaches the device.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import ToolError
from trailblaze.replay.tools.base import ToolImpl

DOWNLOADS = "/storage/emulated/0/Download"
PICTURES = "/sdcard/Pictures"


def _decode(tool: str, text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ToolError(f"{tool}: base64Content is not base64 ({exc})") from None


def _file_name(tool: str, name: str) -> str:
    if not name or name in (".", "..") or "/" in name or "\x00" in name:
        raise ToolError(f"{tool}: fileName {name!r} must be a plain file name (no '/')")
    return name


def write_bytes_to_file(context: ExecutionContext, args: dict[str, Any]) -> str:
    tool = "android_writeBytesToFile"
    path = str(args["devicePath"])
    if not path.startswith("/") or path.endswith("/") or "\x00" in path:
        raise ToolError(f"{tool}: devicePath {path!r} must be an absolute path to a file")
    data = _decode(tool, str(args["base64Content"]))
    context.device.write_file(path, data)
    return f"wrote {len(data)} bytes to {path}"


def write_file_to_downloads(context: ExecutionContext, args: dict[str, Any]) -> str:
    name = _file_name("android_writeFileToDownloads", str(args["fileName"]))
    data = str(args["content"]).encode("utf-8")
    path = f"{DOWNLOADS}/{name}"
    context.device.write_file(path, data)
    return f"wrote {len(data)} bytes to {path}"


def write_image_to_media_store(context: ExecutionContext, args: dict[str, Any]) -> str:
    tool = "android_writeImageToMediaStore"
    name = _file_name(tool, str(args["fileName"]))
    mime = str(args.get("mimeType") or "image/png")
    if not mime.startswith("image/") or len(mime) == len("image/"):
        raise ToolError(f"{tool}: mimeType {mime!r} is not an image type (image/...)")
    data = _decode(tool, str(args["base64Content"]))
    path = f"{PICTURES}/{name}"
    context.device.write_file(path, data)
    context.device.scan_media(path)
    return f"wrote {len(data)} bytes to {path} ({mime}) and asked the media scanner to add it"


TOOLS = (
    ToolImpl("android_writeBytesToFile", write_bytes_to_file, mutates=False),
    ToolImpl("android_writeFileToDownloads", write_file_to_downloads, mutates=False),
    ToolImpl("android_writeImageToMediaStore", write_image_to_media_store, mutates=False),
)
