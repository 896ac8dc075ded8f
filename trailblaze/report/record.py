"""The outcome of a check as data: trail statuses, findings, counts, and the exit code.

`Report.to_json()` is the stable JSON contract other tools read (DESIGN §7): `version`,
`exit_code`, `trails` (path, trailmap, status, reason) and `findings` (kind, path, line,
column, step, classifier, tool, code, message, fatal, plus key_path and trailmap). Paths are
relative to `path_base` (the workspace root unless the command was told otherwise, see
`pathbase.py`).
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

import msgspec

from trailblaze import codes
from trailblaze.finding import Finding

Status = Literal["rejected", "parsed", "type-checked"]
STATUSES = frozenset({"rejected", "parsed", "type-checked"})
REPORT_VERSION = 1

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INFRA = 3

REASON_NO_TARGET = "no target"
REASON_UNKNOWN_TARGET = "unknown target"
REASON_NO_CALLS = "no recorded calls"
REASON_INVALID_RUNIF = "only invalid runIf calls"
"""Every recorded call is a runIf that failed validation: nothing of it is generated."""
REASON_DISABLED = "type gate disabled"
REASON_NO_SURFACE = "no surface"
REASON_INFRA = "type check could not run"

INCOMPLETE_CODE = codes.SURFACE_UNWRITABLE
"""A generated file that could not be written (`check.surfaces.in_the_way`): the next run writes it."""


def fatal_findings(findings: Iterable[Finding]) -> list[Finding]:
    """The findings that fail a check: fatal ones, not infra problems or warnings."""
    return [f for f in findings if f.fatal and f.kind not in ("infra", "warning")]


class TrailStatus(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """One trail's line in the report: its trailmap, whether it was type-checked, and why not.
    (`array_like`: msgspec, used only for the narrow run's record, writes it as the array of
    its fields.)"""

    path: str
    trailmap: str | None
    status: Status
    reason: str | None = None
    target: str | None = None
    calls: int = 0

    def to_json(self) -> dict[str, Any]:
        """Its fields by name, in their order (path, trailmap, status, reason, target, calls):
        only strings, integers and None (`formats.render` relies on it)."""
        return msgspec.structs.asdict(self)

    @classmethod
    def checked(cls, raw: Any) -> TrailStatus:
        """A status from JSON that came from outside (a remote entry, a shard's report), every
        field checked; ValueError when it is not one `to_json` writes."""
        if not isinstance(raw, dict):
            raise ValueError("a trail status that is not an object")
        path, trailmap, status = raw.get("path"), raw.get("trailmap"), raw.get("status")
        reason, target, calls = raw.get("reason"), raw.get("target"), raw.get("calls")
        if (
            not isinstance(path, str)
            or not isinstance(status, str)
            or status not in STATUSES
            # Spelled out, not all(...) over a generator: a warm clone checks every trail's.
            or not (trailmap is None or isinstance(trailmap, str))
            or not (reason is None or isinstance(reason, str))
            or not (target is None or isinstance(target, str))
            or type(calls) is not int
            or calls < 0
            or (status == "parsed") != (reason is not None)  # only "parsed" says why not checked
        ):
            raise ValueError(f"a malformed trail status ({str(path)[:200]!r})")
        return cls(path, trailmap, cast(Status, status), reason, target, calls)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrailStatus:
        return cls(
            path=str(data["path"]),
            trailmap=data.get("trailmap"),
            status=data["status"],
            reason=data.get("reason"),
            target=data.get("target"),
            calls=int(data.get("calls") or 0),
        )


TEST_STATUSES = frozenset({"passed", "failed", "skipped", "todo"})
INCOMPLETE_TEST_CODES = frozenset({codes.TEST_ERROR, codes.TEST_TIMEOUT})
"""A test file that did not run to its end: the run is not repeated without running it."""


class UnitTest(msgspec.Struct, frozen=True, gc=False):
    """One unit test of a trailmap's tools, as the test stage ran it (or found it cached)."""

    __test__ = False  # not a pytest class

    path: str
    """The test file."""
    trailmap: str
    name: str
    """Its describe blocks and its own name, joined by ` > `."""
    line: int
    status: str
    """`passed`, `failed`, `skipped` or `todo`."""
    duration: float
    """Seconds, as bun measured it (when it ran)."""
    cached: bool
    """Its file's passing result came from the cache: not run this time."""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "trailmap": self.trailmap,
            "name": self.name,
            "line": self.line,
            "status": self.status,
            "duration": self.duration,
            "cached": self.cached,
        }

    @classmethod
    def checked(cls, raw: Any) -> UnitTest:
        """A test from JSON that came from outside (a shard's report, a remote run entry),
        every field checked; ValueError when it is not one `to_json` writes."""
        if not isinstance(raw, dict) or set(raw) != {
            "path",
            "trailmap",
            "name",
            "line",
            "status",
            "duration",
            "cached",
        }:
            raise ValueError("a unit test that is not an object of its fields")
        if (
            not all(isinstance(raw[k], str) for k in ("path", "trailmap", "name", "status"))
            or raw["status"] not in TEST_STATUSES
            or type(raw["line"]) is not int
            or raw["line"] < 1
            or not isinstance(raw["duration"], int | float)
            or isinstance(raw["duration"], bool)
            or not isinstance(raw["cached"], bool)
        ):
            raise ValueError(f"a malformed unit test ({str(raw.get('path'))[:200]!r})")
        return cls.from_json(raw)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UnitTest:
        return cls(
            path=str(data["path"]),
            trailmap=str(data["trailmap"]),
            name=str(data["name"]),
            line=int(data["line"]),
            status=str(data["status"]),
            duration=float(data["duration"]),
            cached=bool(data["cached"]),
        )


@dataclass(frozen=True, slots=True)
class Report:
    """The result of one check: every trail's status and finding, which the exit code follows."""

    workspace: str
    trailmaps: tuple[str, ...]
    trails: tuple[TrailStatus, ...]
    findings: tuple[Finding, ...]
    require_typecheck: bool = False
    stats: dict[str, Any] = field(default_factory=dict)
    shard: dict[str, Any] | None = None
    """A shard's report only: what `trailblaze report merge` needs (`shard.py`)."""
    sdks: dict[str, str] = field(default_factory=dict)
    """Trailmap -> the `@trailblaze/scripting` its scripted tools were compiled against."""
    path_base: str = ""
    """The directory the paths are relative to; empty: the workspace root."""
    duration: float | None = None
    """Wall time of the run in seconds, when known (else the sum of the timed phases)."""
    tests: tuple[UnitTest, ...] = ()
    """Every unit test of the trailmaps' tools (`check.unittests`), run or cached."""

    @property
    def seconds(self) -> float:
        if self.duration is not None:
            return self.duration
        phases = self.stats.get("seconds") or {}
        return float(sum(v for v in phases.values() if isinstance(v, int | float)))

    @property
    def fatal_findings(self) -> list[Finding]:
        return fatal_findings(self.findings)

    def with_paths(self, rebase: Callable[[str], str], base: str) -> Report:
        """The same report with every path passed through `rebase`, relative to `base`."""
        # A path that stays as it is keeps its record: reports are mostly shown relative to the
        # workspace itself, and `replace` on ten thousand trails took 30-75 ms.
        shard = self.shard
        if shard is not None:
            # Where the workspace is, as its paths now show it: `report merge` takes the
            # shards' paths back to the workspace with it.
            shard = {**shard, "root": posixpath.normpath(rebase("."))}
        return replace(
            self,
            shard=shard,
            trails=tuple(
                t if (path := rebase(t.path)) == t.path else msgspec.structs.replace(t, path=path)
                for t in self.trails
            ),
            findings=tuple(
                f if (path := rebase(f.path)) == f.path else f.with_(path=path)
                for f in self.findings
            ),
            tests=tuple(
                t if (path := rebase(t.path)) == t.path else msgspec.structs.replace(t, path=path)
                for t in self.tests
            ),
            path_base=base,
        )

    def with_base(self, base: str) -> Report:
        """`with_paths` with a `rebase` that changes no path (`pathbase.unmoved`)."""
        shard = self.shard
        if shard is not None:
            shard = {**shard, "root": "."}
        return replace(self, shard=shard, path_base=base)

    def only(
        self, keep_trail: Callable[[TrailStatus], bool], keep: Callable[[Finding], bool]
    ) -> Report:
        """The report limited to some trails and findings (a scoped run)."""
        return replace(
            self,
            trails=tuple(t for t in self.trails if keep_trail(t)),
            findings=tuple(f for f in self.findings if keep(f)),
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        """A report written by `to_json` (what `doit check` records), for the other formats."""
        if data.get("version") != REPORT_VERSION:
            raise ValueError(f"report version {data.get('version')!r}, expected {REPORT_VERSION}")
        return cls(
            workspace=str(data["workspace"]),
            trailmaps=tuple(data["trailmaps"]),
            trails=tuple(TrailStatus.from_json(t) for t in data["trails"]),
            findings=tuple(Finding.from_json(f) for f in data["findings"]),
            require_typecheck=bool(data.get("require_typecheck", False)),
            path_base=str(data.get("path_base") or ""),
            duration=float(data.get("seconds") or 0.0),
            shard=data.get("shard"),
            tests=tuple(UnitTest.from_json(u) for u in data.get("tests") or ()),
        )

    @property
    def infra_findings(self) -> list[Finding]:
        return [f for f in self.findings if f.kind == "infra"]

    @property
    def complete(self) -> bool:
        """The run did everything a check does: no type check that could not run, no generated
        file that could not be written. Only a complete run is repeated without checking (the
        command line's no-op, doit's up-to-date check) or shared (the remote cache)."""
        return not any(
            f.kind == "infra" or f.code == INCOMPLETE_CODE or f.code in INCOMPLETE_TEST_CODES
            for f in self.findings
        )

    @property
    def exit_code(self) -> int:
        if self.require_typecheck and self.infra_findings:
            return EXIT_INFRA
        if self.fatal_findings:
            return EXIT_FINDINGS
        return EXIT_OK

    def counts(self) -> dict[str, Any]:
        by_status = Counter(t.status for t in self.trails)
        reasons = Counter(t.reason for t in self.trails if t.status == "parsed" and t.reason)
        return {
            "trailmaps": len(self.trailmaps),
            "trails": len(self.trails),
            "rejected": by_status["rejected"],
            "parsed": by_status["parsed"] + by_status["type-checked"],
            "type_checked": by_status["type-checked"],
            "not_type_checked": dict(sorted(reasons.items())),
            "calls_type_checked": sum(t.calls for t in self.trails if t.status == "type-checked"),
            # Trail (and manifest) findings and scripted tools' own, counted apart.
            "findings": sum(1 for f in self.fatal_findings if f.kind != "tool"),
            "tool_findings": sum(1 for f in self.fatal_findings if f.kind == "tool"),
            "tool_files": len({f.path for f in self.fatal_findings if f.kind == "tool"}),
            "unchecked_calls": sum(1 for f in self.findings if f.code == codes.UNRESOLVED_INPUT),
            "sdk": _by_sdk(self.sdks),
            "exempt_findings": sum(1 for f in self.findings if f.kind == "type" and not f.fatal),
            "warnings": sum(1 for f in self.findings if f.kind == "warning"),
            "infra": len(self.infra_findings),
            **self._test_counts(),
        }

    def _test_counts(self) -> dict[str, Any]:
        """The unit tests' counts, when there are unit tests (else nothing: the summary of a
        workspace without them is as it was)."""
        if not self.tests:
            return {}
        by_status = Counter(t.status for t in self.tests)
        return {
            "tests": {
                "total": len(self.tests),
                **{status: by_status[status] for status in sorted(TEST_STATUSES)},
                "cached": sum(1 for t in self.tests if t.cached),
                "files": len({t.path for t in self.tests}),
            }
        }

    def view(
        self, frames: dict[str, str] | None = None, stamps: dict[str, str] | None = None
    ) -> ReportView:
        """What the text output shows: findings and counts, without the trail list."""
        return ReportView(
            findings=self.findings,
            counts=self.counts(),
            exit_code=self.exit_code,
            require_typecheck=self.require_typecheck,
            frames=frames or {},
            stamps=stamps or {},
        )

    def to_json(self, *, seconds: bool = False) -> dict[str, Any]:
        """The stable report; `seconds`: with the run's wall time (what `doit check` records
        for the JUnit it may render later), left out by default so equal runs are equal."""
        data = {
            "version": REPORT_VERSION,
            "exit_code": self.exit_code,
            "require_typecheck": self.require_typecheck,
            "workspace": self.workspace,
            "trailmaps": list(self.trailmaps),
            "summary": self.counts(),
            "trails": [t.to_json() for t in self.trails],
            "findings": [_finding_json(f) for f in self.findings],
        }
        if self.path_base:
            data["path_base"] = self.path_base  # else: relative to the workspace
        if self.shard is not None:
            data["shard"] = self.shard
        if self.tests:
            data["tests"] = [u.to_json() for u in self.tests]
        if seconds:
            data["seconds"] = round(self.seconds, 3)
        return data


@dataclass(frozen=True, slots=True)
class ReportView:
    """A report as the text output shows it: findings, counts, exit code.

    `doit check` records it next to the full report so that repeating the report of an
    unchanged workspace reads a few findings, not ten thousand trail statuses. `frames` holds
    the YAML line of each finding (`path:line` -> text), read once when the report was made.
    """

    findings: tuple[Finding, ...]
    counts: dict[str, Any]
    exit_code: int
    require_typecheck: bool
    frames: dict[str, str] = field(default_factory=dict)
    stamps: dict[str, str] = field(default_factory=dict)
    """The stamp (size, mtime, inode) of each file when its lines were read into `frames`: the
    next view reuses the lines of a file whose stamp did not change."""

    @property
    def fatal_findings(self) -> list[Finding]:
        return fatal_findings(self.findings)

    def with_paths(self, rebase: Callable[[str], str]) -> ReportView:
        """The same view with every path passed through `rebase` (its frames follow)."""
        frames = {}
        for key, line in self.frames.items():
            path, _, number = key.rpartition(":")
            frames[f"{rebase(path)}:{number}"] = line
        return replace(
            self,
            findings=tuple(f.with_(path=rebase(f.path)) for f in self.findings),
            frames=frames,
            stamps={},
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "version": REPORT_VERSION,
            "exit_code": self.exit_code,
            "require_typecheck": self.require_typecheck,
            "summary": self.counts,
            "findings": [_finding_json(f) for f in self.findings],
            "frames": self.frames,
            "frame_stamps": self.stamps,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReportView:
        if data.get("version") != REPORT_VERSION:
            raise ValueError(f"report version {data.get('version')!r}, expected {REPORT_VERSION}")
        frames = data.get("frames") or {}
        stamps = data.get("frame_stamps") or {}
        if not all(isinstance(x, dict) for x in (frames, stamps, data["summary"])):
            raise ValueError("malformed report view")
        return cls(
            findings=tuple(Finding.from_json(f) for f in data["findings"]),
            counts=data["summary"],
            exit_code=int(data["exit_code"]),
            require_typecheck=bool(data.get("require_typecheck", False)),
            frames={str(k): str(v) for k, v in frames.items()},
            stamps={str(k): str(v) for k, v in stamps.items()},
        )


def _by_sdk(sdks: dict[str, str]) -> dict[str, list[str]]:
    """SDK label -> the trailmaps compiled against it."""
    out: dict[str, list[str]] = {}
    for trailmap, label in sorted(sdks.items()):
        out.setdefault(label, []).append(trailmap)
    return out


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "kind": finding.kind,
        "path": finding.path,
        "line": finding.line,
        "column": finding.column,
        "step": finding.step,
        "classifier": finding.classifier,
        "tool": finding.tool,
        "code": finding.code,
        "message": finding.message,
        "fatal": finding.fatal,
        "key_path": finding.key_path,
        "trailmap": finding.trailmap,
        "position": finding.position,
        "property": finding.property,
    }
