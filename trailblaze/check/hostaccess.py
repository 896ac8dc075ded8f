"""Recordings are data: the check's findings on the calls that reach the host.

A recorded call that reaches a host tool (`trail.hostcalls`: `exec`, `runCommand`, `script`,
`runTrail`, directly, in a `runIf`, through composed or `class:` tools) that the workspace does
not allow (`trail.hostpolicy`: `[tool.trailblaze] allow-host-programs`) is a fatal finding at
the call, `host-program` or `host-file`, whatever the trailmap's exemption and whether or not
the type gate ran: replay refuses the same calls before any device work.

Each trail's row names the calls it makes that are not plain framework tools (`tools`). Only a
trail whose names may reach the host in its target's tool model (its resolution; the framework
tools alone for a trail with no known target, as replay sees it) is read and parsed again, to
locate its calls and read their arguments; the others cost a look at their row. The tool model
is the run's, so an edited composed tool is seen at once, with no trail row made stale.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from trailblaze import codes
from trailblaze.check.context import CheckContext
from trailblaze.check.rows import TrailRecord
from trailblaze.finding import Finding
from trailblaze.state.keys import digest
from trailblaze.toolmodel.records import Resolution
from trailblaze.trail.hostcalls import Reach, call_args, recorded_calls
from trailblaze.trail.hostpolicy import HostPolicy
from trailblaze.trail.parse import parse_trail
from trailblaze.yaml.node import YamlError, decode


def host_findings(
    ctx: CheckContext,
    resolutions: Mapping[str, Resolution],
    records: Mapping[str, TrailRecord],
    real_paths: Mapping[str, str],
) -> list[Finding]:
    """Every call of the trails of `records` that reaches the host and is not allowed."""
    policy = HostPolicy.of(ctx.ws)
    reaches: dict[str | None, Reach] = {}
    risky: dict[tuple[str | None, str], bool] = {}
    out: list[Finding] = []
    for rel, record in records.items():
        if record.tools is None or record.status == "rejected":
            continue
        target = record.target if record.target in resolutions else None
        reach = reaches.get(target)
        if reach is None:
            resolution = resolutions[target] if target is not None else None
            reach = reaches[target] = Reach(resolution, ctx.catalog)
        known = risky.get((target, record.tools))
        if known is None:
            known = risky[(target, record.tools)] = _may_reach(reach, record.tools)
        if known:
            file = Path(real_paths.get(rel) or ctx.ws.root / rel)
            given = ctx.texts.get(str(file))  # an editor's buffer (`CheckContext.texts`)
            out.extend(_located(record, file, reach, policy, root=ctx.ws.root, given=given))
    return out


def _may_reach(reach: Reach, tools: str) -> bool:
    """Whether a call of one of the names a row keeps may lead to the host (a row whose names
    cannot be read may: its trail is read again)."""
    try:
        names = json.loads(tools)
    except ValueError:
        return True
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return True
    return any(reach.calls(name, None) for name in names)


def _located(
    record: TrailRecord,
    file: Path,
    reach: Reach,
    policy: HostPolicy,
    *,
    root: Path,
    given: bytes | None = None,
) -> list[Finding]:
    """The findings of one trail that may reach the host, each at its call."""
    rel = record.path
    try:
        data = given if given is not None else file.read_bytes()
        changed = digest(data) != record.content
        text = decode(data)
    except (OSError, YamlError):
        changed, text = True, ""
    if changed:
        # Changed (or gone) since its row was made: what it calls now is the next run's to
        # check; this run must not pass what it saw calling the host.
        return [
            Finding(
                "parse",
                rel,
                1,
                1,
                "the file changed while it was checked, and it called a tool that may reach "
                "the host: check again",
                code=codes.HOST_PROGRAM,
            )
        ]
    trail = parse_trail(rel, text, strict=record.strict).trail
    if trail is None:
        return []  # the row said parsed; another run's rejection is its own finding
    out: list[Finding] = []
    for recorded in recorded_calls(trail):
        call = recorded.call
        for host_call in reach.calls(call.name, call_args(call.args)):
            why = policy.refusal(host_call, cwd=root, trail_dir=file.parent)
            if why is None:
                continue
            out.append(
                Finding(
                    "parse",
                    rel,
                    call.line,
                    call.column,
                    why,
                    key_path=call.key_path,
                    code=host_call.tool.code,
                    step=recorded.step.number,
                    classifier=recorded.recording.classifier,
                    tool=call.name,
                    position=recorded.position,
                )
            )
    return out
