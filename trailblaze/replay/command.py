"""``trailblaze replay`` / ``doit replay``: run a replay with the console, Ctrl-C and exit codes.

Exit codes: 0 every replayed step passed; 1 a trail failed, was refused, or the run was
cancelled; 2 a usage error (no device, several without ``--device``, a bad ``--arg``, no
workspace), reported as one message, never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

from rich.console import Console

from trailblaze.replay.context import ReplayOptions
from trailblaze.replay.render import escape, render_summary, render_trail, run_interruptible
from trailblaze.replay.results import RunResult
from trailblaze.replay.run import ReplayRequest, ReplayUsageError, replay
from trailblaze.report.console import make_console

EXIT_USAGE = 2


def run_command(
    request: ReplayRequest,
    *,
    prog: str = "trailblaze replay",
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    color: bool | None = None,
    options: ReplayOptions | None = None,
) -> int:
    """Replay, render as it goes, and return the exit code."""
    console = make_console(out or sys.stdout, color=color)
    many = request.all_devices or len(request.serials) > 1

    def interrupted() -> None:
        console.print("[bold magenta]Ctrl-C[/]: stopping after the current tool (again to abort)")

    try:
        run: RunResult = run_interruptible(
            lambda cancel: replay(
                request,
                options=options,
                cancel=cancel,
                on_trail=lambda trail: render_trail(console, trail, show_device=many),
            ),
            interrupted,
        )
    except ReplayUsageError as exc:
        print(f"{prog}: {exc}", file=err or sys.stderr)
        return EXIT_USAGE
    render_summary(console, run)
    _written(console, request)
    return run.exit_code


def _written(console: Console, request: ReplayRequest) -> None:
    for path in (request.json_path, request.junit_path):
        if path is not None:
            console.print(f"  wrote {escape(_shown(path))}")
    if request.report_dir is not None:
        for name in ("index.html", "summary.md"):
            console.print(f"  wrote {escape(_shown(request.report_dir / name))}")


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
