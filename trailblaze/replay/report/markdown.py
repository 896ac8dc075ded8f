"""The run as a markdown summary: ``summary.md`` of ``--report DIR``, for a CI job summary.

A line of counts, a table with a row per trail and device (result, duration, the failing call
with its ``file:line:col`` and message), the table of where the time went, then each failing
call's YAML. Text from the run is escaped for markdown (no markup, no HTML, no table break)
after ``text.shown``.
"""

from __future__ import annotations

import html
import re

from trailblaze.replay.report.html import Snippet
from trailblaze.replay.report.text import shown
from trailblaze.replay.results import RunResult, TrailResult, device_label
from trailblaze.replay.timing import PHASES

_MARKUP = re.compile(r"([\\`*_{}\[\]|~])")
#: What makes a line a list item or a heading when a text starts it.
_LINE_START = re.compile(r"^(\d+)([.)])|^([-+#>])")
_MARK = {
    "passed": "✅ passed",
    "failed": "❌ failed",
    "refused": "⛔ refused",
    "skipped": "⏭️ skipped",
    "cancelled": "⏹️ cancelled",
}


def cell(text: str) -> str:
    """``text`` as plain markdown inline text: one line, no markup, no HTML, no ``|``."""
    one_line = " ".join(shown(text).split())
    escaped = _MARKUP.sub(r"\\\1", html.escape(one_line, quote=False))
    return _LINE_START.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", escaped)


def _failing_call(trail: TrailResult) -> str:
    for step in trail.steps:
        if step.failure is not None:
            failure = step.failure
            return (
                f"{cell(failure.location.text)}: {cell(failure.failed_tool)}: {cell(failure.error)}"
            )
    if trail.status == "refused" and trail.findings:
        return cell(trail.findings[0])
    if trail.status != "passed" and trail.reason:
        return cell(trail.reason)
    return ""


def render_markdown(run: RunResult, *, snippet: Snippet) -> str:
    c = run.counts()
    verdict = "❌ failed" if run.exit_code else "✅ passed"
    devices = ", ".join(device_label(s, run.model_of(s)) for s in run.devices)
    lines = [
        f"## trailblaze replay: {verdict}",
        "",
        f"{c['trails']} trail{'' if c['trails'] == 1 else 's'}: {c['trails_passed']} passed, {c['trails_failed']} failed, "
        f"{c['trails_refused']} refused, {c['trails_skipped']} skipped, "
        f"{c['trails_cancelled']} cancelled"
        + (f" on {cell(devices)}" if devices else "")
        + f" in {run.duration:.1f} s.",
        "",
        "| trail | device | result | duration | failing call |",
        "|---|---|---|---|---|",
    ]
    for trail in run.trails:
        lines.append(
            f"| {cell(trail.path)} | {cell(trail.device_label or '')} | {_MARK[trail.status]} "
            f"| {trail.duration:.2f} s | {_failing_call(trail)} |"
        )
    phases = run.phases()
    total = sum(phases.values())
    if total > 0:
        lines += ["", "| phase | seconds | share |", "|---|---:|---:|"]
        lines += [
            f"| {name} | {phases[name]:.2f} | {phases[name] / total * 100:.1f}% |"
            for name in PHASES
        ]
    for trail in run.trails:
        for step in trail.steps:
            failure = step.failure
            if failure is None:
                continue
            on = f" on {cell(trail.device_label or trail.device)}" if trail.device else ""
            lines += [
                "",
                f"### {cell(trail.path)}{on}: {cell(step.label)} failed",
                "",
                f"{cell(failure.location.text)}: {cell(failure.failed_tool)}: "
                f"{cell(failure.error)}",
            ]
            yaml = snippet(failure.location)
            if yaml:
                fence = "`" * max(3, _longest_run(yaml, "`") + 1)
                lines += ["", f"{fence}yaml", shown(yaml), fence]
    return "\n".join(lines) + "\n"


def _longest_run(text: str, char: str) -> int:
    runs = re.findall(f"{re.escape(char)}+", text)
    return max((len(r) for r in runs), default=0)
