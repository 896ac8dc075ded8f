"""The report stage: every trail's status and every finding of the run, as one `Report`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from trailblaze.check.context import CheckContext
from trailblaze.check.crosstrail import no_surface_finding, repeated_branches
from trailblaze.check.discover import Discovery
from trailblaze.check.hostaccess import host_findings
from trailblaze.check.resolve import Targets
from trailblaze.check.rows import TrailRecord
from trailblaze.check.typegate.jobs import GateOutcome
from trailblaze.check.unittests.phase import TestOutcome
from trailblaze.finding import Finding
from trailblaze.report.record import (
    REASON_DISABLED,
    REASON_INFRA,
    REASON_INVALID_RUNIF,
    REASON_NO_CALLS,
    REASON_NO_SURFACE,
    REASON_NO_TARGET,
    REASON_UNKNOWN_TARGET,
    Report,
    TrailStatus,
)


class Checked(msgspec.Struct, frozen=True):
    """What the stages before the report found, as the report stage reads it."""

    discovery: Discovery
    targets: Targets
    artifacts: tuple[Finding, ...]
    """What writing the surfaces found."""
    records: Mapping[str, TrailRecord]
    """Every trail's record, in scan order, with the type gate's results."""
    gate: GateOutcome
    stats: dict[str, Any]
    tests: TestOutcome = msgspec.field(default_factory=TestOutcome)
    real_paths: Mapping[str, str] = msgspec.field(default_factory=dict)
    """The file of each trail whose report path is not its file name (`parse.Trails`)."""


def report(ctx: CheckContext, checked: Checked) -> Report:
    """The report stage."""
    with ctx.timer.phase("report"):
        return _report(ctx, checked)


def _report(ctx: CheckContext, checked: Checked) -> Report:
    options = ctx.options
    targets = checked.targets
    resolutions = targets.resolutions
    exempt = targets.exempt
    records = checked.records
    gate = checked.gate
    findings: list[Finding] = [
        *checked.discovery.findings,
        *targets.resolved.findings,
        *checked.artifacts,
    ]
    for record in records.values():
        # Most trails have no finding: no list made for them (ten thousand on every run).
        if record.parse:
            findings.extend(record.parse_findings())
        if record.runif and record.status != "rejected":
            findings.extend(record.runif_findings())
    findings.extend(gate.findings)
    # Fatal whatever the exemption, with or without the type gate: replay refuses them too.
    findings.extend(host_findings(ctx, resolutions, records, checked.real_paths))
    statuses: list[TrailStatus] = []
    for rel, record in records.items():
        status = _status(
            record,
            resolutions=resolutions,
            known=targets.known,
            typecheck=options.typecheck,
            failed=rel in gate.failed,
        )
        statuses.append(status)
        if status.status == "type-checked" and record.types:
            fatal = record.target not in exempt
            findings.extend(
                f.with_(fatal=fatal) if f.kind == "type" else f for f in record.type_findings()
            )
    findings.extend(surfaceless(ctx, checked.discovery, targets, statuses))
    findings.extend(gate.infra)
    findings.extend(checked.tests.findings)
    if options.shard is None:
        findings.extend(repeated_branches({p: r.branches for p, r in records.items()}))
    return Report(
        workspace=str(ctx.ws.root),
        trailmaps=tuple(sorted(checked.discovery.manifests.trailmaps)),
        trails=tuple(statuses),
        findings=tuple(_sorted(findings)),
        require_typecheck=options.require_typecheck,
        stats=checked.stats,
        shard=_shard_json(options.shard, checked.discovery, records),
        sdks=gate.sdks,
        tests=checked.tests.tests,
    )


def surfaceless(
    ctx: CheckContext, discovery: Discovery, targets: Targets, statuses: Iterable[TrailStatus]
) -> list[Finding]:
    """One finding per target that has a manifest but no surface, with the number of its
    trails (not for an exempt target): a finding about all of the trails at once."""
    missing: dict[str, int] = {}
    for status in statuses:
        if status.reason == REASON_NO_SURFACE and status.target is not None:
            missing[status.target] = missing.get(status.target, 0) + 1
    dirs = discovery.manifests.dirs
    found = []
    for target, count in sorted(missing.items()):
        if target in targets.exempt:
            continue
        manifest = ctx.ws.rel(dirs[target] / "trailmap.yaml") if target in dirs else target
        found.append(no_surface_finding(manifest, target, count))
    return found


def sorted_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in the order of a report."""
    return _sorted(findings)


def _shard_json(
    shard: tuple[int, int] | None, discovery: Discovery, records: Mapping[str, TrailRecord]
) -> dict[str, Any] | None:
    """What a shard's report carries for `report merge` (`shard.py`)."""
    if shard is None:
        return None
    return {
        "index": shard[0],
        "count": shard[1],
        "total": len(discovery.whole.trail_paths),
        "positions": list(discovery.positions),
        "branches": [
            [sig, path, line, column]
            for path, record in records.items()
            for sig, line, column in record.branches
        ],
    }


def _status(
    record: TrailRecord,
    *,
    resolutions: Mapping[str, Any],
    known: frozenset[str],
    typecheck: bool,
    failed: bool,
) -> TrailStatus:
    path, target, calls = record.path, record.target, record.calls
    if record.status == "rejected":
        return TrailStatus(path=path, trailmap=None, status="rejected")
    if target is None:
        reason = REASON_NO_TARGET
    elif target not in resolutions:
        reason = REASON_NO_SURFACE if target in known else REASON_UNKNOWN_TARGET
        return TrailStatus(
            path=path, trailmap=None, status="parsed", reason=reason, target=target, calls=calls
        )
    elif calls == 0:
        # No call generated: none recorded, or only runIf trees that failed validation (a
        # recorded call of any other kind, or a valid tree, is generated).
        reason = REASON_INVALID_RUNIF if record.runif else REASON_NO_CALLS
    elif not typecheck:
        reason = REASON_DISABLED
    elif failed or record.key is None:
        reason = REASON_INFRA
    else:
        return TrailStatus(
            path=path, trailmap=target, status="type-checked", target=target, calls=calls
        )
    return TrailStatus(
        path=path, trailmap=target, status="parsed", reason=reason, target=target, calls=calls
    )


def _sorted(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.path, f.line, f.column, f.kind, f.message))
