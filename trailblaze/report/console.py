"""All terminal output: the rich console, the check summary, findings with a code frame.

The library never prints; it returns records, and this module renders them. Colour follows
rich's rules plus `NO_COLOR` and `TERM=dumb`.

rich is imported only for a terminal: a check whose output goes to a file or a CI log (and
every `doit check` that only repeats the recorded report) writes plain text without paying
for the import.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from trailblaze.finding import Finding, is_workspace_path, position_in_range
from trailblaze.report.escaping import printable
from trailblaze.report.record import Report, ReportView

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

_KIND_STYLE = {
    "parse": "bold red",
    "manifest": "bold red",
    "type": "bold red",
    "runif": "bold red",
    "infra": "bold magenta",
    "warning": "yellow",
}


class Output(Protocol):
    """What the check's renderers need of a console: rich's `Console` or `PlainConsole`."""

    @property
    def file(self) -> IO[str]: ...

    @property
    def no_color(self) -> bool: ...

    @property
    def is_terminal(self) -> bool: ...

    def print(self, *objects: Any) -> None: ...


class PlainConsole:
    """Plain text to a file: the check's output when colour is off or nobody is watching."""

    no_color = True
    is_terminal = False

    def __init__(self, file: IO[str] | None = None) -> None:
        self.file = file if file is not None else sys.stdout

    def print(self, *objects: Any) -> None:
        self.file.write(" ".join(str(o) for o in objects) + "\n")


def _colorless(color: bool | None) -> bool:
    return color is False or "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb"


def report_console(file: IO[str] | None = None, *, color: bool | None = None) -> Output:
    """The console for a check report: rich for a terminal (or `color=True`), else plain."""
    target = file if file is not None else sys.stdout
    if color is not True and (_colorless(color) or not _isatty(target)):
        return PlainConsole(target)
    return make_console(target, color=color)


def _isatty(file: IO[str]) -> bool:
    try:
        return file.isatty() or bool(os.environ.get("FORCE_COLOR"))
    except (AttributeError, ValueError):
        return False


def make_console(file: IO[str] | None = None, *, color: bool | None = None) -> Console:
    from rich.console import Console  # noqa: PLC0415 - see the module docstring

    no_color = _colorless(color)
    return Console(
        file=file,
        no_color=no_color,
        force_terminal=True if color else None,
        highlight=False,
        soft_wrap=True,
        emoji=False,
    )


def frame_key(finding: Finding) -> str:
    return f"{finding.path}:{finding.line}"


def source_lines(root: Path, findings: Iterable[Finding]) -> dict[str, str]:
    """The YAML line every finding points at, keyed by `frame_key` (what a `ReportView`
    records); a line that cannot be read or is too long to show is left out.

    Only a file of the workspace at `root` is read: a finding may come from outside (a remote
    entry, a shard's report), and a path out of the workspace, by name (`/etc/...`, `../..`)
    or through a symlink, must not put a line of any other file into a CI log.

    Each file is read once, up to the last line asked of it, however many findings it has.
    """
    wanted: dict[str, set[int]] = defaultdict(set)
    for finding in findings:
        if is_workspace_path(finding.path) and position_in_range(finding.line, finding.column):
            wanted[finding.path].add(finding.line)
    frames: dict[str, str] = {}
    inside = os.path.join(os.path.realpath(root), "")
    for path, numbers in wanted.items():
        last = max(numbers)
        try:
            real = os.path.realpath(root / path)
            if not real.startswith(inside):
                continue  # a symlink out of the workspace
            if not stat.S_ISREG(os.stat(real).st_mode):
                continue  # a pipe (a finding may be about one) would block the read
            with Path(real).open("rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    if number in numbers:
                        line = raw.decode("utf-8", "replace").rstrip("\r\n")
                        if len(line) <= 200:
                            frames[f"{path}:{number}"] = line
                    if number >= last:
                        break
        except (OSError, ValueError):  # ValueError: a name no file can have (a NUL in it)
            pass
    return frames


def code_frame(finding: Finding, frames: Mapping[str, str]) -> list[str]:
    """The YAML line a finding points at (from `frames`), with a caret under its column."""
    line = frames.get(frame_key(finding))
    if line is None or not position_in_range(finding.line, finding.column):
        return []
    shown = line.expandtabs(1)
    gutter = f"{finding.line:>5} | "
    # Never past the end of the line shown: a column from outside may say anything.
    caret = " " * (len(gutter) - 2) + "| " + " " * min(finding.column - 1, len(shown)) + "^"
    return [gutter + shown, caret]


def finding_line(finding: Finding) -> str:
    text = finding.text
    if finding.code and finding.code.startswith("TS"):
        text += f" [{finding.code}]"
    return text


def render_findings(
    console: Output,
    findings: Iterable[Finding],
    frames: Mapping[str, str],
) -> None:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_file[finding.path].append(finding)
    plain = console.no_color or not console.is_terminal
    lines: list[str] = []
    for path in sorted(by_file):
        for finding in sorted(by_file[path], key=lambda f: (f.line, f.column, f.message)):
            label = (
                finding.kind if finding.fatal or finding.kind in ("warning", "infra") else "exempt"
            )
            text = printable(finding_line(finding) + _context(finding))
            frame = [printable(line) for line in code_frame(finding, frames)]
            if plain:
                lines.append(f"{label}: {text}")
                lines.extend(frame)
            else:
                from rich.markup import escape  # noqa: PLC0415

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
    if finding.property:
        parts.append(f"property {finding.property}")
    return f"  ({', '.join(parts)})" if parts and finding.kind in ("type", "runif") else ""


def summary_lines(view: ReportView) -> list[tuple[str, str, str]]:
    """The summary as (style, styled head, plain rest) lines."""
    counts = view.counts
    not_checked = counts["not_type_checked"]
    lines = [
        (
            "bold",
            "trailblaze check",
            f": {counts['trailmaps']} trailmaps, {counts['trails']} trails: "
            f"{counts['parsed']} parsed, {counts['rejected']} rejected, "
            f"{counts['type_checked']} type-checked ({counts['calls_type_checked']} calls)",
        )
    ]
    if not_checked:
        detail = ", ".join(f"{reason}: {n}" for reason, n in not_checked.items())
        lines.append(("", "", f"  not type-checked: {sum(not_checked.values())} ({detail})"))
    type_findings = [f for f in view.fatal_findings if f.kind == "type"]
    if type_findings:
        by_code = Counter(f.code for f in type_findings)
        codes = ", ".join(f"{code}={n}" for code, n in sorted(by_code.items()))
        trails = len({f.path for f in type_findings})
        lines.append(
            (
                "",
                "",
                f"  type findings: {len(type_findings)} across {trails} trail(s), by code: {codes}",
            )
        )
    if counts.get("tool_findings"):
        lines.append(
            (
                "",
                "",
                f"  scripted tool findings: {counts['tool_findings']} in "
                f"{counts.get('tool_files', 0)} tool file(s)",
            )
        )
    for label, trailmaps in (counts.get("sdk") or {}).items():
        lines.append(("", "", f"  @trailblaze/scripting: {label}: {', '.join(trailmaps)}"))
    tests = counts.get("tests")
    if isinstance(tests, dict):
        done = ", ".join(
            f"{tests.get(status, 0)} {status}"
            for status in ("passed", "failed", "skipped", "todo")
            if tests.get(status) or status == "passed"
        )
        lines.append(
            (
                "",
                "",
                f"  unit tests: {done} in {tests.get('files', 0)} file(s); "
                f"{tests.get('cached', 0)} from the cache",
            )
        )
    if counts["exempt_findings"]:
        lines.append(("", "", f"  exempt-target findings (not fatal): {counts['exempt_findings']}"))
    if counts["warnings"]:
        lines.append(("", "", f"  warnings: {counts['warnings']}"))
    if counts["infra"]:
        word = "FAILED" if view.require_typecheck else "warning"
        lines.append(
            (
                "bold magenta",
                f"  type check could not run completely ({word}): {counts['infra']} problem(s)",
                "",
            )
        )
    code = view.exit_code
    if code == 0 and counts["infra"]:
        lines.append(
            (
                "bold magenta",
                "passed, but not everything was type-checked",
                " (not required here: in CI, with --require-typecheck or "
                "TRAILBLAZE_REQUIRE_TYPECHECK=1 this fails with exit 3)",
            )
        )
    elif code == 0:
        lines.append(("bold green", "passed", ""))
    else:
        fatal = view.fatal_findings
        trails = len({f.path for f in fatal})
        lines.append(
            (
                "bold red",
                "FAILED",
                f": {len(fatal)} finding(s) in {trails} file(s) (exit {code})",
            )
        )
    return lines


def one_line_summary(view: ReportView) -> str:
    """The summary in one line: what `doit check` shows when nothing changed."""
    counts = view.counts
    text = (
        f"{counts['trailmaps']} trailmaps, {counts['trails']} trails: {counts['parsed']} parsed, "
        f"{counts['rejected']} rejected, {counts['type_checked']} type-checked "
        f"({counts['calls_type_checked']} calls)"
    )
    if counts["warnings"]:
        text += f", {counts['warnings']} warning(s)"
    code = view.exit_code
    if code == 0:
        return text + ("; passed, not everything type-checked" if counts["infra"] else "; passed")
    return text + f"; FAILED: {len(view.fatal_findings)} finding(s) (exit {code})"


def render_summary(console: Output, view: ReportView) -> None:
    lines = [(style, printable(head), printable(rest)) for style, head, rest in summary_lines(view)]
    if console.no_color or not console.is_terminal:
        console.file.write("".join(f"{head}{rest}\n" for _, head, rest in lines))
        console.file.flush()
        return
    from rich.markup import escape  # noqa: PLC0415

    for style, head, rest in lines:
        styled = f"[{style}]{escape(head)}[/]" if style and head else escape(head)
        console.print(styled + escape(rest))


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
        if not _isatty(sys.stderr):
            return None
        console = make_console(sys.stderr)
        return cls(console) if console.is_terminal else None

    def start(self, phase: str, total: int) -> None:
        if total < self.THRESHOLD:
            return
        from rich.progress import (  # noqa: PLC0415
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

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


def render_report(console: Output, report: Report | ReportView, root: Path) -> None:
    """Findings with their code frames, then the summary."""
    if isinstance(report, Report):
        view = report.view()
        frames: Mapping[str, str] = source_lines(root, view.findings)
    else:
        view = report
        frames = view.frames
    render_findings(console, view.findings, frames)
    render_summary(console, view)


class _ProgressLines(logging.Handler):
    """Writes the toolchain's progress records (`extra=PROGRESS`) as `trailblaze: ...` lines."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(logging.INFO)
        self.stream = stream

    def emit(self, record: logging.LogRecord) -> None:
        if not getattr(record, "progress", False):
            return
        try:
            self.stream.write(f"trailblaze: {record.getMessage()}\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr must not turn an install into a failure


@contextlib.contextmanager
def toolchain_progress(stream: IO[str] | None = None) -> Iterator[None]:
    """Show the compiler install's progress lines on `stream` (stderr) while inside."""
    logger = logging.getLogger("trailblaze.toolchain.compilers")
    handler = _ProgressLines(stream if stream is not None else sys.stderr)
    level = logger.level
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
