"""``--report DIR``: the directory checked before any device work, the pages written after.

``prepare`` refuses a DIR that is a file (or cannot be made) as a usage error, before anything
is sent to a device. ``write_report`` writes ``index.html`` and ``summary.md`` atomically
(temporary file, then rename); the screenshots, logcat slices and recordings are already in
``DIR/trails/`` (``capture``). Nothing in DIR is deleted: files we did not write stay.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from trailblaze.finding import Location
from trailblaze.fsutil import write_atomic
from trailblaze.redaction import Secrets
from trailblaze.replay.report.html import render_html
from trailblaze.replay.report.markdown import render_markdown
from trailblaze.replay.report.text import yaml_snippet
from trailblaze.replay.request import ReplayUsageError
from trailblaze.replay.results import RunResult

#: A trail file larger than this is not read for a snippet.
SOURCE_LIMIT = 4 << 20


def prepare(directory: Path) -> None:
    """Make ``directory``; one that is a file or cannot be made is the request's usage error."""
    if directory.exists() and not directory.is_dir():
        raise ReplayUsageError(f"--report {directory}: not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReplayUsageError(
            f"--report {directory}: cannot create it: {exc.strerror or exc}"
        ) from None


class Sources:
    """The YAML of a failing call, read from the trail files of the run (each once)."""

    def __init__(self, files: Mapping[str, Path], secrets: Secrets) -> None:
        self._files = dict(files)
        self._secrets = secrets
        self._texts: dict[str, str | None] = {}

    def _text(self, path: str) -> str | None:
        if path not in self._texts:
            file = self._files.get(path)
            text = None
            if file is not None:
                try:
                    if file.stat().st_size <= SOURCE_LIMIT:
                        text = file.read_text("utf-8", errors="replace")
                except OSError:
                    text = None  # the snippet is a help, not a verdict: the location remains
            self._texts[path] = text
        return self._texts[path]

    def __call__(self, location: Location) -> str:
        text = self._text(location.path)
        if text is None:
            return ""
        return self._secrets.redact(yaml_snippet(text, location.line, location.column))


def write_report(
    run: RunResult, directory: Path, files: Mapping[str, Path], secrets: Secrets
) -> list[Path]:
    """Write ``index.html`` and ``summary.md`` into ``directory``; the paths written.

    Every text in them is redacted: the results already are, the snippets and logcat are read
    redacted, and each page as a whole goes through ``secrets`` once more."""
    snippet = Sources(files, secrets)
    pages = [
        (directory / "index.html", render_html(run, directory=directory, snippet=snippet)),
        (directory / "summary.md", render_markdown(run, snippet=snippet)),
    ]
    for path, text in pages:
        write_atomic(path, secrets.redact(text))
    return [path for path, _ in pages]
