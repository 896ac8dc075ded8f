"""A compiler diagnostic mapped back to the trail, step, tool and YAML line it is about."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence

from trailblaze.check.typegate.jobs import GateResult, Job
from trailblaze.check.typegate.proof import Diagnostic
from trailblaze.check.typegate.proof import abs_path as _abs
from trailblaze.finding import Finding
from trailblaze.generate.codegen import HEADER_LINES
from trailblaze.generate.linetable import KEY_CODES, GenLine, LineTable
from trailblaze.state.scratch import Layout


def map_diagnostics(
    jobs: list[Job],
    diagnostics: Sequence[Diagnostic],
    layout: Layout,
    result: GateResult,
) -> None:
    by_file = {_abs(job.file): job for job in jobs}
    by_trailmap: dict[str, list[Job]] = defaultdict(list)
    for job in jobs:
        by_trailmap[job.trailmap].append(job)
    findings: dict[str, list[Finding]] = {job.path: list(job.lints) for job in jobs}
    failed: dict[str, str] = {}
    surfaces_root = _abs(layout.surfaces_dir)
    surface_of = {_abs(layout.surface(trailmap)): trailmap for trailmap in by_trailmap}
    tables: dict[str, LineTable] = {}
    for diagnostic in diagnostics:
        owner = by_file.get(diagnostic.file)
        if owner is not None:
            job = owner
            table = tables.get(job.path)
            if table is None:
                table = tables[job.path] = LineTable(job.lines)
            gen = table.get(diagnostic.line)
            if gen is None:
                where = (
                    "the header" if diagnostic.line <= HEADER_LINES else f"line {diagnostic.line}"
                )
                failed.setdefault(
                    job.path,
                    f"unmapped diagnostic on {where} of the generated module: {show(diagnostic, layout)}",
                )
                continue
            line, column = gen.at(diagnostic.code)
            findings[job.path].append(
                Finding(
                    "type",
                    job.path,
                    line,
                    column,
                    _shown_message(diagnostic, gen),
                    key_path=gen.key_path,
                    code=diagnostic.code,
                    step=gen.step,
                    classifier=gen.classifier,
                    tool=gen.tool,
                    trailmap=job.trailmap,
                    position=gen.position,
                    property=gen.property,
                )
            )
            continue
        if diagnostic.file.parent == surfaces_root:
            trailmap = surface_of.get(diagnostic.file, "")
            for affected in by_trailmap.get(trailmap, []):
                failed.setdefault(
                    affected.path,
                    f"the surface of trailmap '{trailmap}' does not compile: {show(diagnostic, layout)}",
                )
            continue
        for affected in jobs:
            failed.setdefault(
                affected.path,
                f"a diagnostic outside the generated trails: {show(diagnostic, layout)}",
            )
    for job in jobs:
        if job.path in failed:
            result.fail([job], failed[job.path])
        else:
            result.findings[job.path] = findings[job.path]


_QUOTED_KEY = re.compile(r"""'("(?:[^"\\\n]|\\.)*")'""")


def _shown_message(diagnostic: Diagnostic, gen: GenLine) -> str:
    if diagnostic.code in KEY_CODES:
        return bare_key(diagnostic.message)
    if gen.property is None:
        return bare_name(diagnostic.message, gen.tool)
    return diagnostic.message


def bare_name(message: str, tool: str) -> str:
    """A message about a call with the tool's name as the user wrote it.

    A tool whose name is not an identifier (or one `Object` declares) is looked up by a string
    literal in the generated module, and tsc names that literal's type (`'"weird-tool.name"'`).
    """

    def shown(match: re.Match[str]) -> str:
        try:
            name = json.loads(match.group(1))
        except ValueError:
            return match.group(0)
        return f"'{tool}'" if name == tool else match.group(0)

    return _QUOTED_KEY.sub(shown, message) if "'\"" in message else message


def bare_key(message: str) -> str:
    """A message about a property's name with the name as the user wrote it.

    A key that is not an identifier is a string literal in the generated module, and tsc names
    it by its source text in quotes (`'"text-regex"'`); the user wrote `text-regex`.
    """
    match = _QUOTED_KEY.search(message)
    if match is None:
        return message
    try:
        name = json.loads(match.group(1))
    except ValueError:
        return message
    return f"{message[: match.start()]}'{name}'{message[match.end() :]}"


def show(diagnostic: Diagnostic, layout: Layout) -> str:
    try:
        where = diagnostic.file.relative_to(_abs(layout.scratch)).as_posix()
    except ValueError:
        where = diagnostic.file.as_posix()
    return (
        f"{where}({diagnostic.line},{diagnostic.column}): {diagnostic.code}: {diagnostic.message}"
    )
