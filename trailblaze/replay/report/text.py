"""The one function every text of the report passes through before it is shown or written.

A device's, a script's or a trail's text may hold control characters (terminal escapes, a
carriage return that overwrites a line) and, with ``--secret``, values that must never be
shown. ``shown`` is where both are taken out: the HTML escapes what it returns for HTML, the
markdown for markdown, and the logcat written beside the report is the same text.
"""

from __future__ import annotations

import textwrap

from trailblaze.redaction import Secrets
from trailblaze.report.escaping import printable


def shown(text: str, secrets: Secrets | None = None) -> str:
    """``text`` as the report may show it: no ``--secret`` value, printable, line feeds kept.

    The run's results are redacted where they are made (``trailrun``); ``secrets`` is given
    for what the report reads itself: logcat, a trail file's YAML.
    """
    visible = secrets.redact(text) if secrets else text
    return printable(visible, newlines=True).replace("\r", "\\x0d")


def yaml_snippet(text: str, line: int, column: int, *, limit: int = 16) -> str:
    """The YAML of the call that starts at ``line``:``column`` (1-based): its first line and
    every line below it indented deeper than the call (blank lines kept), at most ``limit``."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    out = [lines[line - 1]]
    for following in lines[line:]:
        if len(out) >= limit:
            out.append("...")
            break
        stripped = following.lstrip(" ")
        if stripped and len(following) - len(stripped) < column:
            break
        out.append(following)
    while out and not out[-1].strip():
        out.pop()
    return textwrap.dedent("\n".join(out))
