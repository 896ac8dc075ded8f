"""A YAML file's bytes to text, refusing what no YAML file should be, with a located error.

`yaml.node` composes the text; this module is the disk side of the boundary (size, directories,
NUL bytes, UTF-8) and the one error type every YAML problem is reported as.
"""

from __future__ import annotations

from pathlib import Path

from trailblaze.errors import TrailblazeError

MAX_FILE_BYTES = 5 * 1024 * 1024


class YamlError(TrailblazeError):
    """A document that cannot be read as YAML; carries the 1-based position of the problem."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def read_text(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Read a YAML file as UTF-8 text, refusing what no YAML file should be."""
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise YamlError("is a directory, not a file")
        if size > max_bytes:
            raise too_big(size, max_bytes)
        data = path.read_bytes()
    except YamlError:
        raise
    except OSError as exc:
        raise unreadable(exc) from None
    return decode(data, max_bytes=max_bytes)


def unreadable(exc: OSError) -> YamlError:
    """The error of a file the system would not let us read."""
    return YamlError(f"cannot read file: {exc.strerror or exc}")


def decode(data: bytes, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    if len(data) > max_bytes:
        raise too_big(len(data), max_bytes)
    nul = data.find(b"\x00")
    if nul >= 0:
        line, col = _position(data, nul)
        raise YamlError("binary file (contains a NUL byte)", line, col)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _position(data, exc.start)
        raise YamlError(
            f"not UTF-8: byte 0x{data[exc.start]:02x} cannot be decoded", line, col
        ) from None
    return text.removeprefix("\ufeff")


def too_big(size: int, max_bytes: int = MAX_FILE_BYTES) -> YamlError:
    """The error of a file over the size we read."""
    return YamlError(
        f"file is {size / 1024 / 1024:.1f} MiB; files over "
        f"{max_bytes // 1024 // 1024} MiB are not read"
    )


def _position(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1
