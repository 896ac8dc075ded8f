"""A report as its reader gets it: paths rebased, rendered in a format, written out.

Both entry points end here: `trailblaze check` (and `report merge`) with the report it just
made, `doit check` with the one `check:run` recorded (`show_recorded`). Text goes to a terminal
in colour; any format goes to `--output FILE` (written atomically) or stdout. A file that
cannot be written is a `UsageError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from trailblaze.errors import UsageError
from trailblaze.fsutil import write_named
from trailblaze.report.console import render_report, report_console, source_lines
from trailblaze.report.formats import render
from trailblaze.report.pathbase import default_base, rebaser, unmoved
from trailblaze.report.record import Report, ReportView


def as_shown(
    parts: Sequence[tuple[Report, Path, dict[str, str] | None]], base: Path, fmt: str
) -> tuple[Report, dict[str, str]]:
    """One report with every path relative to `base`, and the code frames of its findings.

    Each part is a report with paths relative to its directory (a workspace), and the paths
    to show instead of some (`Scoped.renamed`); several parts (trail files of several
    workspaces) make one report. The frames are read before the paths change.
    """
    reports: list[Report] = []
    frames: dict[str, str] = {}
    for report, root, renamed in parts:
        rebase = rebaser(root, base, renamed)
        if fmt == "text":
            frames.update(
                report.view(source_lines(root, report.findings)).with_paths(rebase).frames
            )
        if unmoved(root, base, renamed):
            # Paths as they are: not ten thousand calls of `rebase` that change none.
            reports.append(report.with_base(str(base)))
        else:
            reports.append(report.with_paths(rebase, str(base)))
    first = reports[0]
    if len(reports) == 1:
        return first, frames
    merged = dataclasses.replace(
        first,
        trailmaps=tuple(sorted({t for r in reports for t in r.trailmaps})),
        trails=tuple(t for r in reports for t in r.trails),
        sdks={k: v for r in reports for k, v in r.sdks.items()},
        findings=tuple(
            sorted(
                (f for r in reports for f in r.findings),
                key=lambda f: (f.path, f.line, f.column, f.kind, f.message),
            )
        ),
    )
    return merged, frames


def rendered(report: Report, frames: dict[str, str], fmt: str) -> str:
    """A report whose paths are as shown (`as_shown`), in `fmt`, as plain text."""
    if fmt != "text":
        return render(report, fmt)
    return _plain(report.view(frames))


def _plain(view: ReportView) -> str:
    buffer = io.StringIO()
    render_report(report_console(buffer, color=False), view, Path.cwd())
    return buffer.getvalue()


def emit(
    report: Report,
    frames: dict[str, str],
    *,
    fmt: str,
    output: Path | None,
    color: bool | None = None,
) -> None:
    """The report in `fmt`, to `output` or stdout (text on a terminal: in colour)."""
    if fmt != "text" or output:
        deliver(rendered(report, frames, fmt), output)
        return
    with _stdout():
        render_report(report_console(color=color), report.view(frames), Path.cwd())
        sys.stdout.flush()


def deliver(text: str | bytes, output: Path | None) -> None:
    """Rendered output to `output` (atomically), or to stdout."""
    if output:
        write_output(output, text)
        return
    with _stdout():
        if isinstance(text, bytes):
            sys.stdout.buffer.write(text)
        else:
            sys.stdout.write(text)
        sys.stdout.flush()


@contextlib.contextmanager
def _stdout() -> Iterator[None]:
    """Writing the report to stdout: a full disk or a dead terminal is the user's error, not a
    traceback (and not exit 0); a reader that went away is `cli.main`'s quiet exit."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise UsageError(
            f"cannot write the report to standard output: {exc.strerror or exc}"
        ) from None


def write_output(path: Path, text: str | bytes) -> None:
    try:
        write_named(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def show_recorded(
    root: Path,
    view: ReportView,
    full: Report | None,
    *,
    fmt: str,
    output: Path | None,
    path_base: Path | None,
) -> None:
    """What `doit check` shows of the recorded report of the workspace at `root`.

    The text (from `view`) goes to stdout unless another format goes there instead. `full` is
    the whole report, read when `fmt` is not text: it is written in `fmt` to `output` or
    stdout; with text and an `output`, the plain text is written there too.
    """
    if path_base is not None and not path_base.is_dir():
        raise UsageError(f"--path-base {path_base}: not a directory")
    text_view = view.with_paths(rebaser(root, path_base or default_base("text", root)))
    if full is None or output:
        render_report(report_console(sys.stdout), text_view, root)
    if full is not None:
        base = (path_base or default_base(fmt, root)).absolute()
        deliver(render(full.with_paths(rebaser(root, base), str(base)), fmt), output)
    elif output:
        deliver(_plain(text_view), output)
