"""All terminal output: the rich console, the check summary, findings with a code frame.

The library never prints; it returns records, and this module renders them. Colour follows
rich's rules plus `NO_COLOR` and `TERM=dumb`.
"""

from __future__ import annotations

import os
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from trailblaze.finding import Finding
from trailblaze.report import Report

_KIND_STYLE = {
    "parse": "bold red",
    "manifest": "bold red",
    "type": "bold red",
    "runif": "bold red",
    "infra": "bold magenta",
    "warning": "yellow",
}


def make_console(file: IO[str] | None = None, *, color: bool | None = None) -> Console:
    no_color = color is False or "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb"
    return Console(
        file=file,
        no_color=no_color,
        force_terminal=True if color else None,
        highlight=False,
        soft_wrap=True,
        emoji=False,
    )


def code_frame(root: Path, finding: Finding) -> list[str]:
    """The YAML line a finding points at, with a caret under its column."""
    try:
        with (root / finding.path).open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if number == finding.line:
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    break
            else:
                return []
    except OSError:
        return []
    if len(line) > 200:
        return []
    gutter = f"{finding.line:>5} | "
    caret = " " * (len(gutter) - 2) + "| " + " " * max(finding.column - 1, 0) + "^"
    return [gutter + line.expandtabs(1), caret]


def finding_line(finding: Finding) -> str:
    text = finding.text
    if finding.code and finding.code.startswith("TS"):
        text += f" [{finding.code}]"
    return text


def render_findings(console: Console, report: Report, root: Path) -> None:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.findings:
        by_file[finding.path].append(finding)
    plain = console.no_color or not console.is_terminal
    lines: list[str] = []
    for path in sorted(by_file):
        for finding in sorted(by_file[path], key=lambda f: (f.line, f.column, f.message)):
            label = (
                finding.kind if finding.fatal or finding.kind in ("warning", "infra") else "exempt"
            )
            text = finding_line(finding) + _context(finding)
            frame = code_frame(root, finding)
            if plain:
                lines.append(f"{label}: {text}")
                lines.extend(frame)
            else:
                style = _KIND_STYLE.get(finding.kind, "")
                lines.append(f"[{style}]{label}[/]: {escape(text)}")
                lines.extend(f"[dim]{escape(line)}[/]" for line in frame)
    if not lines:
        return
    if plain:
        # Hundreds of findings: one write, not one rich render per line (10x faster).
        console.file.write("\n".join(lines) + "\n")
        console.file.flush()
    else:
        console.print("\n".join(lines))


def _context(finding: Finding) -> str:
    parts = []
    if finding.step is not None:
        parts.append(
            f"step {finding.step}" + (f" › {finding.position}" if finding.position else "")
        )
    if finding.classifier:
        parts.append(finding.classifier)
    if finding.tool:
        parts.append(f"tool {finding.tool}")
    return f"  ({', '.join(parts)})" if parts and finding.kind in ("type", "runif") else ""


def render_summary(console: Console, report: Report) -> None:
    counts = report.counts()
    not_checked = counts["not_type_checked"]
    console.print(
        f"[bold]trailblaze check[/]: {counts['trailmaps']} trailmaps, {counts['trails']} trails: "
        f"{counts['parsed']} parsed, {counts['rejected']} rejected, "
        f"{counts['type_checked']} type-checked ({counts['calls_type_checked']} calls)"
    )
    if not_checked:
        detail = ", ".join(f"{reason}: {n}" for reason, n in not_checked.items())
        console.print(f"  not type-checked: {sum(not_checked.values())} ({detail})")
    type_findings = [f for f in report.fatal_findings if f.kind == "type"]
    if type_findings:
        by_code = Counter(f.code for f in type_findings)
        codes = ", ".join(f"{code}={n}" for code, n in sorted(by_code.items()))
        trails = len({f.path for f in type_findings})
        console.print(
            f"  type findings: {len(type_findings)} across {trails} trail(s), by code: {codes}"
        )
    if counts["exempt_findings"]:
        console.print(f"  exempt-target findings (not fatal): {counts['exempt_findings']}")
    if counts["warnings"]:
        console.print(f"  warnings: {counts['warnings']}")
    if counts["infra"]:
        word = "FAILED" if report.require_typecheck else "warning"
        console.print(
            f"[bold magenta]  type check could not run completely ({word}): "
            f"{counts['infra']} problem(s)[/]"
        )
    code = report.exit_code
    if code == 0:
        console.print("[bold green]passed[/]")
    else:
        trails = len({f.path for f in report.fatal_findings})
        console.print(
            f"[bold red]FAILED[/]: {len(report.fatal_findings)} finding(s) in {trails} file(s) "
            f"(exit {code})"
        )


class RichProgress:
    """A progress bar on stderr for the long phases of big runs (more than a few hundred trails)."""

    THRESHOLD = 300

    def __init__(self, console: Console) -> None:
        self.console = console
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    @classmethod
    def for_terminal(cls) -> RichProgress | None:
        """A progress reporter when stderr is an interactive terminal, else None."""
        console = make_console(sys.stderr)
        return cls(console) if console.is_terminal else None

    def start(self, phase: str, total: int) -> None:
        if total < self.THRESHOLD:
            return
        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=self.console, transient=True,
        )  # fmt: skip
        self._progress.start()
        self._task = self._progress.add_task(f"{phase} trails", total=total)

    def advance(self, done: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, done)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
        self._progress = None
        self._task = None


def render_report(console: Console, report: Report, root: Path) -> None:
    render_findings(console, report, root)
    render_summary(console, report)
