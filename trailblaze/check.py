"""The check pipeline: discover, validate manifests, parse every trail, classify, report.

`run_check` is what `trailblaze check` and the doit `check` task call. It returns a `Report`
(data); rendering and the exit code are the caller's business.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from trailblaze.finding import Finding
from trailblaze.manifest import Trailmap, load_manifest
from trailblaze.parse import ParseOutcome, file_error, parse_trail
from trailblaze.report import (
    REASON_DISABLED,
    REASON_NO_CALLS,
    REASON_NO_TARGET,
    REASON_UNKNOWN_TARGET,
    Report,
    TrailStatus,
)
from trailblaze.trail import Trail
from trailblaze.workspace import Scan, Workspace, scan
from trailblaze.yamlnode import YamlError, read_text

DISABLE_ENV = "TRAILBLAZE_DISABLE_TRAIL_RECORDING_VALIDATION"
REQUIRE_ENV = "TRAILBLAZE_REQUIRE_TYPECHECK"


def env_flag(name: str, env: dict[str, str] | os._Environ[str] | None = None) -> bool:
    value = (env if env is not None else os.environ).get(name, "")
    return value.strip().lower() in ("1", "true")


@dataclass(frozen=True, slots=True)
class CheckOptions:
    strict: bool = True
    typecheck: bool = True
    require_typecheck: bool = False

    @classmethod
    def from_env(cls, *, strict: bool = True, require_typecheck: bool = False) -> CheckOptions:
        return cls(
            strict=strict,
            typecheck=not env_flag(DISABLE_ENV),
            require_typecheck=require_typecheck or env_flag(REQUIRE_ENV),
        )


@dataclass(frozen=True, slots=True)
class Manifests:
    """Every workspace trailmap that loaded, keyed by directory name, and the findings."""

    trailmaps: dict[str, Trailmap]
    known_targets: frozenset[str]
    findings: tuple[Finding, ...]


def load_manifests(ws: Workspace, found: Scan) -> Manifests:
    trailmaps: dict[str, Trailmap] = {}
    findings: list[Finding] = []
    for entry in found.trailmaps:
        outcome = load_manifest(entry.manifest, ws.rel(entry.manifest), entry.dir_name)
        findings.extend(outcome.findings)
        if outcome.trailmap is not None:
            trailmaps[entry.dir_name] = outcome.trailmap
    known = frozenset(entry.dir_name for entry in found.trailmaps)
    return Manifests(trailmaps, known, tuple(findings))


def parse_file(ws: Workspace, path: Path, *, strict: bool) -> ParseOutcome:
    rel = ws.rel(path)
    try:
        text = read_text(path)
    except YamlError as exc:
        return file_error(rel, exc)
    return parse_trail(rel, text, strict=strict)


def classify(trail: Trail, trailmaps: dict[str, Trailmap], typecheck: bool) -> TrailStatus:
    """Whether a parsed trail goes to the type gate, and if not, why."""
    target = trail.config.target
    calls = trail.call_count
    if target is None:
        return TrailStatus(trail.path, None, "parsed", REASON_NO_TARGET, target, calls)
    if target not in trailmaps:
        return TrailStatus(trail.path, None, "parsed", REASON_UNKNOWN_TARGET, target, calls)
    if calls == 0:
        return TrailStatus(trail.path, target, "parsed", REASON_NO_CALLS, target, calls)
    if not typecheck:
        return TrailStatus(trail.path, target, "parsed", REASON_DISABLED, target, calls)
    # The type gate is not part of the pipeline yet (issue 4); say so instead of claiming it ran.
    return TrailStatus(trail.path, target, "parsed", "type gate not implemented yet", target, calls)


def run_check(
    ws: Workspace,
    options: CheckOptions,
) -> Report:
    found = scan(ws)
    manifests = load_manifests(ws, found)
    findings: list[Finding] = [*found.findings, *manifests.findings]
    statuses: list[TrailStatus] = []
    for path in found.trails:
        outcome = parse_file(ws, path, strict=options.strict)
        findings.extend(outcome.findings)
        if outcome.trail is None:
            statuses.append(TrailStatus(ws.rel(path), None, "rejected"))
            continue
        statuses.append(classify(outcome.trail, manifests.trailmaps, options.typecheck))
    return Report(
        workspace=str(ws.root),
        trailmaps=tuple(sorted(manifests.trailmaps)),
        trails=tuple(statuses),
        findings=tuple(_sorted(findings)),
        require_typecheck=options.require_typecheck,
    )


def _sorted(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.path, f.line, f.column, f.kind, f.message))
