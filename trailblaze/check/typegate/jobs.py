"""One trail to compile, what compiling a batch of them gives back, and what the type gate
stage gives back (`GateOutcome`, the record the report stage reads)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from trailblaze.check.rows import TrailRecord
from trailblaze.check.typegate.settings import infra_finding
from trailblaze.finding import Finding
from trailblaze.generate.linetable import Lines


class Job(msgspec.Struct, frozen=True):
    """One trail to compile: its generated module, line table and cache key."""

    path: str
    trailmap: str
    file: Path
    lines: Lines
    """Its line table, packed (`linetable.unpack_lines`), or still encoded."""
    key: str
    lints: tuple[Finding, ...] = ()
    """Findings of the generator, reported with the compiler's."""


class GateResult(msgspec.Struct):
    """What one or more compiler runs decided for their jobs."""

    findings: dict[str, list[Finding]] = msgspec.field(default_factory=dict)
    """Type findings per trail path, for every job that was really checked."""
    infra: list[Finding] = msgspec.field(default_factory=list)
    failed: set[str] = msgspec.field(default_factory=set)
    """Trail paths whose check could not complete."""
    compiler_runs: int = 0
    files_compiled: list[str] = msgspec.field(default_factory=list)
    listed: set[str] = msgspec.field(default_factory=set)
    """Every file its compiler runs read (`--listFiles`): the result keys must cover them."""
    unlisted: bool = False
    """Its compiler does not list what it read (a warm one): no verdict of it is cached."""

    def fail(self, jobs: Iterable[Job], message: str) -> None:
        """The jobs could not be checked: each is failed, with one infra finding."""
        for job in jobs:
            self.failed.add(job.path)
            self.infra.append(
                infra_finding(job.path, f"type check could not run: {message}", job.trailmap)
            )


class GateOutcome(msgspec.Struct, frozen=True):
    """What the type gate stage gives back."""

    records: dict[str, TrailRecord]
    """The new record of every offered trail whose result changed (the others are as given)."""
    failed: frozenset[str]
    """Trails whose check could not complete (not type-checked, never cached)."""
    infra: tuple[Finding, ...]
    findings: tuple[Finding, ...]
    """Findings that are not about one trail (errors in scripted tool modules)."""
    stats: dict[str, Any]
    sdks: dict[str, str]
    """Trailmap -> the SDK its scripted tools were compiled against (for the report)."""
