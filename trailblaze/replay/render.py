"""Replay results for people: one block per trail as it finishes, then the summary.

Only renders ``results`` records on a console made by ``trailblaze.report.console.make_console``;
``run_interruptible`` is the Ctrl-C policy the CLI and doit share: the first Ctrl-C asks the
run to stop at the next tool boundary, a second one stops at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from rich.console import Console
from rich.markup import escape as _markup

from trailblaze.replay.results import (
    RunResult,
    StepResult,
    ToolResult,
    TrailResult,
    device_label,
)
from trailblaze.replay.timing import PHASES
from trailblaze.report.escaping import printable

T = TypeVar("T")


def escape(text: str) -> str:
    """`text` for the console: no markup, and no control character (a device's or a script's
    output may hold terminal escapes) reaches the terminal raw. A line feed stays one (a
    message may have several lines); a carriage return, which would overwrite a line, does not."""
    return _markup(printable(text, newlines=True).replace("\r", "\\x0d"))


_TRAIL_STYLE = {
    "passed": ("bold green", "PASS"),
    "failed": ("bold red", "FAIL"),
    "refused": ("bold red", "REFUSED"),
    "skipped": ("yellow", "SKIP"),
    "cancelled": ("bold magenta", "CANCELLED"),
}
_MARK = {
    "passed": "[green]ok[/]",
    "failed": "[bold red]FAILED[/]",
    "skipped": "[yellow]skipped[/]",
    "cancelled": "[magenta]cancelled[/]",
}


def render_trail(console: Console, trail: TrailResult, *, show_device: bool = False) -> None:
    style, word = _TRAIL_STYLE[trail.status]
    head = f"[{style}]{word}[/] {escape(trail.path)}"
    if trail.title:
        head += f" [dim]({escape(trail.title)})[/]"
    if show_device and trail.device_label:
        head += f" [dim]on {escape(trail.device_label)}[/]"
    if trail.status in ("passed", "failed", "cancelled"):
        head += f" [dim]{trail.duration:.1f}s[/]"
    if trail.status == "skipped" and trail.reason:
        head += f": {escape(trail.reason)}"
    console.print(head)
    for finding in trail.findings:
        console.print(f"  [red]{escape(finding)}[/]")
    if trail.status == "skipped":
        return
    for step in trail.steps:
        _render_step(console, step)


#: The last lines a failed scripted tool logged, shown under it.
_LOG_TAIL = 5


def _render_step(console: Console, step: StepResult) -> None:
    label = escape(step.label)
    text = f" {escape(step.text)}" if step.text else ""
    line = f"  {_MARK[step.status]} {label}{text}"
    if step.classifier:
        line += f" [dim]{escape(f'[{step.classifier}]')}[/]"
    if step.reason and step.status != "passed":
        line += f" [dim]- {escape(step.reason)}[/]"
    console.print(line)
    if step.status in ("failed", "cancelled") or any(t.hook_errors for t in step.tools):
        for tool in step.tools:
            _render_tool(console, tool, 2)
    if step.failure is not None:
        failure = step.failure
        ran = ", ".join(failure.successful) or "nothing"
        console.print(f"      [dim]ran before {escape(failure.failed_tool)}: {escape(ran)}[/]")


def _render_tool(console: Console, tool: ToolResult, depth: int) -> None:
    pad = "  " * depth
    line = f"{pad}{_MARK[tool.status]} {escape(tool.label)} [dim]{escape(tool.location.text)}[/]"
    if tool.error:
        line += f": {escape(tool.error)}"
    elif tool.detail and tool.status != "passed":
        line += f" [dim]- {escape(tool.detail)}[/]"
    console.print(line)
    for error in tool.hook_errors:
        console.print(f"{pad}  [magenta]hook error[/]: {escape(error)}")
    if tool.status == "failed":
        for log in tool.logs[-_LOG_TAIL:]:
            console.print(f"{pad}  [dim]log: {escape(log)}[/]")
    for child in tool.children:
        _render_tool(console, child, depth + 1)


def _skip_reasons(c: dict[str, Any]) -> str:
    """`` (2 no Android recording: web 1, ios 1; 1 needs the AI runner)``, or nothing."""
    parts = []
    if c["trails_no_android"]:
        each = ", ".join(f"{p} {n}" for p, n in c["no_android_platforms"].items())
        parts.append(f"{c['trails_no_android']} no Android recording: {each}")
    if c["trails_needing_ai"]:
        parts.append(
            f"{c['trails_needing_ai']} {'need' if c['trails_needing_ai'] > 1 else 'needs'} the AI runner"
        )
    return f" ({escape('; '.join(parts))})" if parts else ""


def render_summary(console: Console, run: RunResult) -> None:
    c = run.counts()
    labels = [device_label(serial, run.model_of(serial)) for serial in run.devices]
    device, noun = (f" on {escape(labels[0])}" if labels else ""), "trail"
    several = len(run.devices) > 1
    if several:
        how = "spread over them" if run.spread else "every trail on each"
        device = f" on {len(run.devices)} devices ({escape(', '.join(labels))}), {how}"
        noun = "trail" if run.spread else "trail run"
    console.print(
        f"[bold]trailblaze replay[/]{device}: {_count(c['trails'], noun)}: "
        f"{c['trails_passed']} passed, "
        f"{c['trails_failed']} failed, {c['trails_refused']} refused, "
        f"{c['trails_skipped']} skipped{_skip_reasons(c)}"
        + (f", {c['trails_cancelled']} cancelled" if c["trails_cancelled"] else "")
        + (f"; {c['trails_left_out']} left out by --tags" if c["trails_left_out"] else "")
    )
    if several:
        for label, counts in zip(labels, run.device_counts().values(), strict=True):
            ran = sum(counts.values())
            console.print(
                f"  {escape(label)}: {_count(ran, 'trail')}: {counts['passed']} passed, "
                f"{counts['failed']} failed, {counts['skipped']} not run"
                + (f", {counts['cancelled']} cancelled" if counts["cancelled"] else "")
            )
    console.print(
        f"  steps: {c['steps_passed']} passed, {c['steps_failed']} failed, "
        f"{c['steps_skipped']} skipped ({c['steps_needing_ai']} need the AI runner)"
        + (f", {c['steps_cancelled']} cancelled" if c["steps_cancelled"] else "")
    )
    render_phases(console, run)
    if run.cancelled:
        console.print("[bold magenta]cancelled[/]: stopped at a tool boundary (exit 1)")
    elif run.exit_code == 0:
        console.print("[bold green]passed[/]")
    else:
        console.print(f"[bold red]FAILED[/] (exit {run.exit_code})")


def render_phases(console: Console, run: RunResult) -> None:
    """The short table of where the tools' time went (nothing when no tool ran)."""
    phases = run.phases()
    total = sum(phases.values())
    calls = sum(
        1
        for t in run.trails
        for s in t.steps
        for tool in s.tools
        if tool.status in ("passed", "failed") or tool.duration > 0
    )
    if not calls:
        return
    console.print(
        f"  where the time went: {total:.2f}s in {_count(calls, 'tool call')}"
        f" ({run.duration:.2f}s wall)"
    )
    for name in PHASES:
        seconds = phases[name]
        share = seconds / total * 100 if total > 0 else 0.0
        bar = "#" * round(share / 5)
        console.print(f"    {name:<8} {seconds:8.2f}s {share:5.1f}%  {bar}", highlight=False)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def run_interruptible(
    work: Callable[[threading.Event], T],
    on_interrupt: Callable[[], None] | None = None,
) -> T:
    """Run ``work(cancel)`` in a worker thread; Ctrl-C sets ``cancel`` and waits for it to stop.

    A second Ctrl-C is not caught: the run stops at once.
    """
    cancel = threading.Event()
    finished = threading.Event()
    outcome: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(work(cancel))
        except BaseException as exc:  # handed to the calling thread, which re-raises it
            errors.append(exc)
        finally:
            finished.set()

    worker = threading.Thread(target=target, name="trailblaze-replay", daemon=True)
    worker.start()
    interrupted = False
    # Sleep-and-look rather than Thread.join: a KeyboardInterrupt inside join() can leave the
    # thread looking finished while it still runs (CPython < 3.13).
    while not finished.is_set():
        try:
            time.sleep(0.05)
        except KeyboardInterrupt:
            if interrupted:
                raise
            interrupted = True
            cancel.set()
            if on_interrupt is not None:
                on_interrupt()
    worker.join()
    if errors:
        raise errors[0]
    return outcome[0]
