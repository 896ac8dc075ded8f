"""`docs/codes.md`: the registry of finding codes (`codes.py`) as a page a user reads.

Rendered from the entries and nothing else, so the page cannot say what the code does not:
`tests/report/test_codedocs.py` fails when the file differs from what this renders.
"""

from __future__ import annotations

from trailblaze import codes

DOC_PATH = "docs/codes.md"
REGENERATE = "TRAILBLAZE_UPDATE_GOLDEN=1 .venv/bin/pytest tests/report/test_codedocs.py"


def _kinds(entry: codes.Code) -> str:
    return ", ".join(entry.kinds)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    """The whole page, in the registry's order, the TypeScript family last."""
    entries = [*codes.REGISTRY.values(), codes.TYPESCRIPT]
    out = [
        f"<!-- Generated from trailblaze/codes.py; do not edit. Regenerate: {REGENERATE} -->",
        "",
        "# Finding codes",
        "",
        "Every finding of `trailblaze check` carries a code: `code` in the JSON report, the "
        "rule id in SARIF, the title of a GitHub annotation, and for the compiler's "
        "diagnostics the `[TS2322]` after the message in the text report. Codes never change "
        "once released, so they are safe to grep for and to filter on. Each finding also has "
        "a kind, the first word of its line in the text report; a code may come with more "
        "than one kind (`unknown-key` in a trail is a parse finding, in a trailmap.yaml a "
        "manifest finding).",
        "",
        "## Kinds",
        "",
        *(f"- **{kind}**: {line}" for kind, line in codes.KINDS.items()),
        "",
        "## Codes",
        "",
        "| code | kinds | what it says |",
        "|---|---|---|",
        *(f"| `{e.id}` | {_kinds(e)} | {_cell(e.description)} |" for e in entries),
        "",
    ]
    for entry in entries:
        out += [
            f"### `{entry.id}`",
            "",
            f"Kinds: {_kinds(entry)}. {entry.description}",
            "",
            entry.help,
            "",
        ]
    return "\n".join(out)
