"""The run as one self-contained HTML page: ``index.html`` of ``--report DIR``.

One file, no network: the styles are inline, the screenshots are ``data:`` URIs (up to
``EMBED_LIMIT`` in all; past it a screenshot is a link to its file beside the page), and a
Content-Security-Policy forbids anything else (no script runs, nothing is fetched). Every text
comes from the run (trail names, a device's messages, logcat) and is escaped here, after
``text.shown``.

The page: the run's counts and devices, the table of where the time went, the failures (each
failing call with its ``file:line:col``, its message and its YAML), then one section per trail
and device: each step with its tools (status, location, duration, message) and the screenshot
taken after it, and the trail's logcat and screen recording.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Iterable
from pathlib import Path

from trailblaze.finding import Location
from trailblaze.replay.report.text import shown
from trailblaze.replay.results import (
    Artifact,
    RunResult,
    StepResult,
    ToolResult,
    TrailResult,
    device_label,
)
from trailblaze.replay.timing import PHASES

#: Screenshots embedded in the page, in bytes of PNG; the rest are links to their files.
EMBED_LIMIT = 24 << 20
#: Of a trail's logcat, the page shows the end; the whole slice is the file beside it.
LOGCAT_SHOWN = 64 << 10

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

Snippet = Callable[[Location], str]
"""The YAML of the call at a location ("" when its file cannot be read)."""

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:16px;color:#1d1d1f}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0}h3{font-size:15px;margin:12px 0 4px}
code,pre{font:12.5px/1.4 ui-monospace,monospace}pre{background:#f4f4f6;padding:8px;overflow:auto;
white-space:pre-wrap;word-break:break-word;margin:4px 0}
.badge{display:inline-block;border-radius:4px;padding:1px 7px;font-weight:600;color:#fff}
.passed>.head .badge,.badge.passed{background:#1a7f37}.failed>.head .badge,.badge.failed{background:#cf222e}
.refused>.head .badge,.badge.refused{background:#cf222e}.skipped>.head .badge,.badge.skipped{background:#9a6700}
.cancelled>.head .badge,.badge.cancelled{background:#8250df}
section.trail{border:1px solid #d0d7de;border-radius:6px;margin:14px 0;padding:10px 14px}
section.trail.failed,section.trail.refused{border-color:#cf222e;border-width:2px}
.dim{color:#656d76}table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:left;
vertical-align:top}ol.steps{padding-left:0;list-style:none}li.step{margin:8px 0;padding:6px 8px;
border-left:4px solid #d0d7de}li.step.passed{border-color:#1a7f37}li.step.failed{border-color:#cf222e;
background:#fff5f5}li.step.skipped{border-color:#9a6700}li.step.cancelled{border-color:#8250df}
ul.tools{margin:4px 0;padding-left:18px;overflow:hidden}li.tool.failed{background:#ffebe9;outline:2px solid #cf222e;
padding:4px}.status{font-weight:600}.tool.passed>.status{color:#1a7f37}.tool.failed>.status{color:#cf222e}
.tool.skipped>.status,.tool.cancelled>.status{color:#9a6700}
li.step{overflow:auto}li.step>figure{float:right;margin:0 0 6px 12px}
figure img{max-width:180px;max-height:400px;border:1px solid #d0d7de;display:block}
figcaption{font-size:12px;color:#656d76}.failure{border:2px solid #cf222e;border-radius:6px;
padding:8px 12px;margin:8px 0;background:#fff5f5}summary{cursor:pointer;color:#656d76}
table.index .badge{font-size:12px}.bar{background:#0969da;height:10px;display:inline-block}
"""


def esc(text: str) -> str:
    return html.escape(shown(text), quote=True)


class _Images:
    """Embeds screenshots while the budget lasts; links the rest."""

    def __init__(self, directory: Path, limit: int) -> None:
        self.directory = directory
        self.left = limit

    def figure(self, artifact: Artifact) -> str:
        caption = f"<figcaption>{esc(artifact.label)}</figcaption>"
        if artifact.file is None:
            why = esc(artifact.error or "no screenshot")
            return f'<figure class="noshot"><div class="dim">{why}</div>{caption}</figure>'
        try:
            data = (self.directory / artifact.file).read_bytes()
        except OSError as exc:
            why = esc(f"no screenshot: cannot read {artifact.file}: {exc.strerror or exc}")
            return f'<figure class="noshot"><div class="dim">{why}</div>{caption}</figure>'
        if len(data) > self.left or not data.startswith(b"\x89PNG\r\n\x1a\n"):
            link = f'<a href="{esc(artifact.file)}">{esc(artifact.file)}</a>'
            return f'<figure class="linked"><div>{link}</div>{caption}</figure>'
        self.left -= len(data)
        uri = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
        alt = esc(f"screenshot {artifact.label}")
        return f'<figure class="shot"><img src="{uri}" alt="{alt}">{caption}</figure>'


def render_html(run: RunResult, *, directory: Path, snippet: Snippet) -> str:
    images = _Images(directory, EMBED_LIMIT)
    counts = run.counts()
    status = "failed" if run.exit_code else "passed"
    devices = ", ".join(device_label(s, run.model_of(s)) for s in run.devices) or "none"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>trailblaze replay: {status}</title><style>{_STYLE}</style></head>",
        f'<body class="run {status}"><header>',
        f'<h1>trailblaze replay <span class="badge {status}">{status}</span></h1>',
        f'<p class="dim">{_count(counts["trails"], "trail")}: {counts["trails_passed"]} passed, '
        f"{counts['trails_failed']} failed, {counts['trails_refused']} refused, "
        f"{counts['trails_skipped']} skipped, {counts['trails_cancelled']} cancelled; "
        f"{_count(counts['steps'], 'step')}; devices: {esc(devices)}; "
        f"{run.duration:.2f} s{'; cancelled' if run.cancelled else ''}</p></header>",
    ]
    parts.extend(_index(run))
    parts.extend(_phases(run))
    parts.extend(_failures(run, snippet))
    for index, trail in enumerate(run.trails):
        parts.extend(_trail(index, trail, images, snippet))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _index(run: RunResult) -> Iterable[str]:
    """A row per trail and device: its result, where it ran, how long, a link to its section."""
    yield '<table class="index"><tr><th>result</th><th>trail</th><th>device</th><th>time</th></tr>'
    for index, trail in enumerate(run.trails):
        word = _WORD[trail.status]
        yield (
            f'<tr class="{word}"><td><span class="badge {word}">{word}</span></td>'
            f'<td><a href="#trail-{index}">{esc(trail.path)}</a></td>'
            f"<td>{esc(trail.device_label or '')}</td><td>{trail.duration:.2f} s</td></tr>"
        )
    yield "</table>"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _phases(run: RunResult) -> Iterable[str]:
    phases = run.phases()
    total = sum(phases.values())
    if total <= 0:
        return
    yield '<h3>Where the time went</h3><table class="phases">'
    yield "<tr><th>phase</th><th>seconds</th><th>share</th><th></th></tr>"
    for name in PHASES:
        share = phases[name] / total * 100
        yield (
            f"<tr><td>{name}</td><td>{phases[name]:.2f}</td><td>{share:.1f}%</td>"
            f'<td><span class="bar" style="width:{share * 2:.0f}px"></span></td></tr>'
        )
    yield f"<tr><td>total</td><td>{total:.2f}</td><td></td><td></td></tr></table>"


def _failures(run: RunResult, snippet: Snippet) -> Iterable[str]:
    failed = [(i, t, s) for i, t in enumerate(run.trails) for s in t.steps if s.failure is not None]
    refused = [(i, t) for i, t in enumerate(run.trails) if t.status == "refused"]
    if not failed and not refused:
        return
    yield "<h3>Failures</h3>"
    for index, trail, step in failed:
        failure = step.failure
        assert failure is not None
        on = f" on {esc(trail.device_label or trail.device)}" if trail.device else ""
        yield (
            f'<div class="failure" role="alert"><a href="#trail-{index}">{esc(trail.path)}</a>'
            f"{on}, {esc(step.label)}: <b>{esc(failure.failed_tool)}</b> "
            f'<span class="status">failed</span> at <code class="where">'
            f'{esc(failure.location.text)}</code><pre class="error">{esc(failure.error)}</pre>'
        )
        yaml = snippet(failure.location)
        if yaml:
            yield f'<pre class="yaml">{esc(yaml)}</pre>'
        yield "</div>"
    for index, trail in refused:
        findings = "\n".join(trail.findings)
        yield (
            f'<div class="failure" role="alert"><a href="#trail-{index}">{esc(trail.path)}</a> '
            f'<span class="status">refused</span><pre class="error">{esc(findings)}</pre></div>'
        )


_WORD = {
    "passed": "passed",
    "failed": "failed",
    "refused": "refused",
    "skipped": "skipped",
    "cancelled": "cancelled",
}


def _trail(index: int, trail: TrailResult, images: _Images, snippet: Snippet) -> Iterable[str]:
    word = _WORD[trail.status]
    title = f' <span class="dim">({esc(trail.title)})</span>' if trail.title else ""
    device = (
        f' on <b class="device">{esc(trail.device_label or trail.device)}</b>'
        if trail.device
        else ""
    )
    if trail.driver:
        device += f' <span class="dim driver">({esc(trail.driver)})</span>'
    yield f'<section class="trail {word}" id="trail-{index}" aria-label="{esc(trail.path)}: {word}">'
    yield (
        f'<div class="head"><h2><span class="badge">{word}</span> {esc(trail.path)}{title}{device}'
        f' <span class="dim">{trail.duration:.2f} s</span></h2></div>'
    )
    if trail.reason and trail.status != "passed":
        yield f'<p class="dim">{esc(trail.reason)}</p>'
    if trail.findings:
        yield f'<pre class="error">{esc(chr(10).join(trail.findings))}</pre>'
    if not trail.steps and not trail.artifacts:
        yield "</section>"
        return
    # A passed trail's steps are one click away; what went wrong is open.
    shown_open = " open" if trail.status != "passed" else ""
    count = _count(len(trail.steps), "step")
    yield f'<details class="body"{shown_open}><summary>{count}</summary>'
    if trail.steps:
        yield '<ol class="steps">'
        for step in trail.steps:
            yield from _step(step, images, snippet)
        yield "</ol>"
    for artifact in trail.artifacts:
        yield from _media(artifact, images.directory, shown_open)
    yield "</details></section>"


def _step(step: StepResult, images: _Images, snippet: Snippet) -> Iterable[str]:
    text = f" {esc(step.text)}" if step.text else ""
    marks = f'aria-label="{esc(step.label)}: {step.status}"'
    yield f'<li class="step {step.status}" {marks}>'
    for artifact in step.artifacts:
        yield images.figure(artifact)
    classifier = f' <span class="dim">[{esc(step.classifier)}]</span>' if step.classifier else ""
    yield (
        f'<div><span class="status">{step.status}</span> <b>{esc(step.label)}</b>{text}'
        f'{classifier} <span class="dim">{step.duration:.2f} s · '
        f"{esc(step.location.text)}</span></div>"
    )
    if step.reason and step.status != "passed":
        yield f'<div class="dim">{esc(step.reason)}</div>'
    if step.tools:
        yield '<ul class="tools">'
        for tool in step.tools:
            yield from _tool(tool, snippet)
        yield "</ul>"
    if step.failure is not None:
        ran = ", ".join(step.failure.successful) or "nothing"
        yield f'<div class="dim">ran before {esc(step.failure.failed_tool)}: {esc(ran)}</div>'
    yield "</li>"


def _tool(tool: ToolResult, snippet: Snippet) -> Iterable[str]:
    phases = " · ".join(
        f"{name} {tool.phases.get(name, 0.0):.2f}" for name in PHASES if tool.phases.get(name)
    )
    marks = f'aria-label="{esc(tool.label)}: {tool.status}"'
    yield f'<li class="tool {tool.status}" {marks}>'
    yield (
        f'<span class="status">{tool.status}</span> <b>{esc(tool.label)}</b> '
        f'<code class="where">{esc(tool.location.text)}</code> '
        f'<span class="dim">{tool.duration:.2f} s{" (" + phases + ")" if phases else ""}</span>'
    )
    if tool.error:
        yield f'<pre class="error">{esc(tool.error)}</pre>'
    elif tool.detail and tool.status != "passed":
        yield f'<div class="dim">{esc(tool.detail)}</div>'
    elif tool.detail:
        yield f'<span class="dim"> {esc(tool.detail)}</span>'
    if tool.status == "failed":
        yaml = snippet(tool.location)
        if yaml:
            yield f'<pre class="yaml">{esc(yaml)}</pre>'
        if tool.logs:
            yield f'<pre class="logs">{esc(chr(10).join(tool.logs[-20:]))}</pre>'
    for error in tool.hook_errors:
        yield f'<div class="dim">hook error: {esc(error)}</div>'
    if tool.children:
        yield '<ul class="tools">'
        for child in tool.children:
            yield from _tool(child, snippet)
        yield "</ul>"
    yield "</li>"


def _media(artifact: Artifact, directory: Path, shown_open: str) -> Iterable[str]:
    name = {"logcat": "Logcat", "video": "Screen recording", "screenshot": "Screenshot"}
    yield f"<h3>{name[artifact.kind]}</h3>"
    if artifact.file is None:
        yield f'<p class="dim {artifact.kind}">{esc(artifact.error or "none")}</p>'
        return
    link = f'<a href="{esc(artifact.file)}">{esc(artifact.file)}</a>'
    if artifact.kind != "logcat":
        yield f'<p class="{artifact.kind}">{link} <span class="dim">({artifact.size} bytes)</span></p>'
        return
    try:
        text = (directory / artifact.file).read_text("utf-8", errors="replace")
    except OSError as exc:
        yield f'<p class="dim">cannot read {link}: {esc(exc.strerror or str(exc))}</p>'
        return
    if len(text) > LOGCAT_SHOWN:
        cut = text.find("\n", len(text) - LOGCAT_SHOWN) + 1
        yield f'<p class="dim">the last {len(text) - cut} characters; all of it: {link}</p>'
        text = text[cut:]
    else:
        yield f'<p class="dim">{link}</p>'
    yield (
        f'<details{shown_open}><summary>logcat</summary><pre class="logcat">{esc(text)}</pre>'
        "</details>"
    )
