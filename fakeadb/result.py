"""What a command on the fake device leaves behind: an exit code and ordered output chunks."""

from __future__ import annotations

from typing import NamedTuple

STDOUT, STDERR = 1, 2


class CommandResult(NamedTuple):
    """A command's exit code and its output chunks ((STDOUT|STDERR, bytes)) in order."""

    returncode: int
    chunks: tuple[tuple[int, bytes], ...] = ()

    @classmethod
    def of(cls, stdout: str = "", stderr: str = "", returncode: int = 0) -> CommandResult:
        chunks = []
        if stdout:
            chunks.append((STDOUT, stdout.encode()))
        if stderr:
            chunks.append((STDERR, stderr.encode()))
        return cls(returncode, tuple(chunks))

    def text(self, stream: int | None = None) -> str:
        return b"".join(d for s, d in self.chunks if stream in (None, s)).decode(errors="replace")
