"""The case corpus (`tests/data/cases/`): files that say in comments which findings they give.

`tests/test_cases.py` copies every case into one workspace, runs one check over all of them
with the real compiler, and compares each file's findings with what it says. The grammar of
the comments (a line of its own, after `#` or, in TypeScript, `//`):

    # expect: <line>:<column> [fatal |non-fatal ]<kind> <code> <message>
    # expect: nothing
    # status: type-checked | rejected | parsed (<reason>)
    # xfail: <why the checker is wrong here>

- `expect` lines list every finding of the file, in any order: the finding must be at that
  line and column, of that kind and code, and its message must contain `<message>` (the rest
  of the line, exact text, case-sensitive). A finding of the file that no line expects fails
  the case as much as an expected one that is missing. `expect: nothing` says the file has no
  finding at all, and stands alone.
- A finding of kind parse, manifest, type, tool or runif is fatal unless the line says
  `non-fatal`; a warning or infra finding is non-fatal unless it says `fatal`.
- `status` (trail files only) is the trail's status in the report, with the reason it was not
  type-checked. Without it, a trail whose findings are all non-fatal (or none) must be
  type-checked: a clean case the compiler never saw would prove nothing.
- `xfail` marks a case that shows what the checker should do and does not (a bug, named in
  the reason): it must fail, and once the checker is fixed it fails until the line goes.
- Any other comment is free text; a case adapted from an upstream trail names it in one.

The layout: `tests/data/cases/workspace/` is the workspace every case is copied into (the
`cases` target with a composed, a scripted and a library tool, the exempt target `exempt`,
and a `pyproject.toml` that allows two host programs). `<area>/<name>.trail.yaml` is a trail case, copied to
`trailmaps/cases/trails/<area>/`; `<area>/<name>/` is a trailmap case, copied to
`trailmaps/<name>/`, and each of its files is a case file.
"""

from __future__ import annotations

import re
import shutil
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import DATA, ROOT
from trailblaze import codes
from trailblaze.finding import Finding, Kind
from trailblaze.report.record import TrailStatus

CASES = DATA / "cases"
TEMPLATE = CASES / "workspace"
TRAILS_DIR = "trailmaps/cases/trails"
"""Where the trail cases go in the workspace, each under its area."""
KINDS: tuple[str, ...] = typing.get_args(Kind)
NON_FATAL_KINDS = ("warning", "infra")

_DIRECTIVE = re.compile(r"^\s*(?:#|//)\s*(expect|status|xfail)\s*:\s*(.*?)\s*$")
_NEAR_DIRECTIVE = re.compile(r"^\s*(?:#|//)\s*(expect\w*|expected|status\w*|x-?fail\w*)\s*:")
_EXPECT = re.compile(
    r"(?P<line>\d+):(?P<column>\d+)\s+(?:(?P<fatality>fatal|non-fatal)\s+)?"
    r"(?P<kind>[a-z]+)\s+(?P<code>\S+)\s+(?P<message>\S.*)"
)
_STATUS = re.compile(r"(?P<status>type-checked|rejected|parsed)(?:\s+\((?P<reason>[^)]+)\))?")
NOTHING = "nothing"


class CaseError(Exception):
    """A case file that does not follow the grammar: `path:line: what is wrong`."""


@dataclass(frozen=True, slots=True)
class Expected:
    """One finding a case file expects."""

    line: int
    column: int
    kind: str
    code: str
    fatal: bool
    message: str

    @property
    def text(self) -> str:
        fatality = ""
        if self.fatal != (self.kind not in NON_FATAL_KINDS):
            fatality = "fatal " if self.fatal else "non-fatal "
        return f"{self.line}:{self.column} {fatality}{self.kind} {self.code} {self.message}"

    def matches(self, finding: Finding) -> bool:
        return (
            (finding.line, finding.column, finding.kind, finding.code, finding.fatal)
            == (self.line, self.column, self.kind, self.code, self.fatal)
            and self.message in finding.message
        )  # fmt: skip

    @classmethod
    def of(cls, finding: Finding) -> Expected:
        """What a case would write to expect `finding` (its whole message)."""
        return cls(
            finding.line, finding.column, finding.kind, finding.code, finding.fatal, finding.message
        )


@dataclass(frozen=True, slots=True)
class Case:
    """One case file: where it is, where it goes in the workspace, and what it says."""

    source: Path
    """The file under tests/data/cases/."""
    path: str
    """Its path in the workspace, as findings name it."""
    expected: tuple[Expected, ...]
    status: str | None
    """`type-checked`, `rejected` or `parsed (<reason>)` as written; None when not said."""
    xfail: str | None

    @property
    def name(self) -> str:
        return self.source.relative_to(CASES).as_posix()

    @property
    def is_trail(self) -> bool:
        return self.source.name.endswith(".trail.yaml")


def read_case(source: Path, path: str) -> Case:
    """The case file `source`, read by the grammar above (`CaseError` when it does not follow it)."""
    expected: list[Expected] = []
    nothing = False
    status = xfail = None
    where = source.relative_to(ROOT).as_posix() if source.is_relative_to(ROOT) else str(source)
    # Bytes, leniently: a case may hold what is not UTF-8 on purpose; its comments are ASCII.
    text = source.read_bytes().decode("utf-8", "replace")
    for number, raw in enumerate(text.splitlines(), 1):
        found = _DIRECTIVE.match(raw)
        if found is None:
            if _NEAR_DIRECTIVE.match(raw):
                raise CaseError(f"{where}:{number}: not a directive: {raw.strip()!r}")
            continue
        word, value = found.groups()
        if word == "expect" and value == NOTHING:
            nothing = True
        elif word == "expect":
            expected.append(_expectation(value, f"{where}:{number}"))
        elif word == "status":
            if status is not None or not _STATUS.fullmatch(value):
                raise CaseError(f"{where}:{number}: a status is one of: type-checked, "
                                f"rejected, parsed (<reason>); once: {value!r}")  # fmt: skip
            status = value
        else:
            if xfail is not None or not value:
                raise CaseError(f"{where}:{number}: one xfail, with its reason")
            xfail = value
    if nothing and expected:
        raise CaseError(f"{where}: 'expect: nothing' and expected findings")
    if not nothing and not expected:
        raise CaseError(f"{where}: no 'expect:' line (write 'expect: nothing' for a clean case)")
    if status is not None and not source.name.endswith(".trail.yaml"):
        raise CaseError(f"{where}: a status is said of trails only")
    return Case(source, path, tuple(expected), status, xfail)


def _expectation(value: str, where: str) -> Expected:
    found = _EXPECT.fullmatch(value)
    if found is None:
        raise CaseError(
            f"{where}: expected '<line>:<column> [fatal |non-fatal ]<kind> <code> <message>' "
            f"or 'nothing', got {value!r}"
        )
    kind, code = found["kind"], found["code"]
    if kind not in KINDS:
        raise CaseError(f"{where}: unknown kind {kind!r}; one of {', '.join(KINDS)}")
    if codes.lookup(code) is None:
        raise CaseError(f"{where}: {code!r} is not a registered code (trailblaze/codes.py)")
    fatality = found["fatality"]
    fatal = kind not in NON_FATAL_KINDS if fatality is None else fatality == "fatal"
    return Expected(
        int(found["line"]), int(found["column"]), kind, code, fatal, found["message"].rstrip()
    )


def discover(root: Path = CASES) -> list[Case]:
    """Every case under `root` (the template aside), with its path in the workspace."""
    cases: list[Case] = []
    for area in sorted(p for p in root.iterdir() if p.is_dir() and p.name != TEMPLATE.name):
        for entry in sorted(area.iterdir()):
            if entry.is_dir():
                for source in sorted(p for p in entry.rglob("*") if p.is_file()):
                    path = f"trailmaps/{entry.name}/{source.relative_to(entry).as_posix()}"
                    cases.append(read_case(source, path))
            elif entry.name.endswith(".trail.yaml"):
                cases.append(read_case(entry, f"{TRAILS_DIR}/{area.name}/{entry.name}"))
            else:
                raise CaseError(f"{entry}: a case is a *.trail.yaml file or a trailmap directory")
    return cases


def build_workspace(root: Path, cases: Sequence[Case]) -> Path:
    """The template with every case copied to its place, at `root`."""
    shutil.copytree(TEMPLATE, root)
    for case in cases:
        target = root / case.path
        if target.exists():
            raise CaseError(f"{case.name}: {case.path} is taken (by the template or a case)")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(case.source, target)
    return root


def differences(case: Case, findings: Iterable[Finding], status: TrailStatus | None) -> list[str]:
    """What differs between the case's findings (and status) and what it says; [] when none."""
    missing = list(case.expected)
    unexpected: list[Finding] = []
    for finding in findings:
        match = next((e for e in missing if e.matches(finding)), None)
        if match is None:
            unexpected.append(finding)
        else:
            missing.remove(match)
    out = [f"expected, not found:  {e.text}" for e in missing]
    out += [f"found, not expected:  {Expected.of(f).text}" for f in unexpected]
    wanted = _expected_status(case)
    if wanted is not None and (shown := _status_text(status)) != wanted:
        out.append(f"status: expected {wanted}, got {shown}")
    return out


def _expected_status(case: Case) -> str | None:
    """The status a trail case must have; None when any will do (or it is no trail)."""
    if not case.is_trail or case.status is not None:
        return case.status
    if all(not e.fatal for e in case.expected):
        return "type-checked"
    return None


def _status_text(status: TrailStatus | None) -> str:
    if status is None:
        return "(not in the report)"
    if status.reason:
        return f"{status.status} ({status.reason})"
    return status.status


def failure_message(case: Case, problems: Sequence[str], findings: Sequence[Finding]) -> str:
    """What a failing case shows: the file, what differs, and its findings as expect lines."""
    lines = [f"{case.name} ({case.path}) does not give what it says:"]
    lines += [f"  {p}" for p in problems]
    lines.append("  its findings, as the case would write them:")
    lines += [f"    # expect: {Expected.of(f).text}" for f in findings] or ["    # expect: nothing"]
    return "\n".join(lines)


def covered_codes(cases: Iterable[Case]) -> set[str]:
    """The registry ids the cases expect (the TypeScript family for any TS code); xfail
    cases prove nothing and do not count."""
    out: set[str] = set()
    for case in cases:
        if case.xfail is None:
            for e in case.expected:
                entry = codes.lookup(e.code)
                if entry is not None:
                    out.add(entry.id)
    return out


def uncovered(registry: Mapping[str, codes.Code], covered: set[str]) -> list[str]:
    """What is wrong with the corpus as documentation of every code: a registered code with
    neither a case nor a reason it has none, or with both."""
    out = []
    for code, entry in registry.items():
        if code not in covered and not entry.no_case:
            out.append(f"{code}: no case expects it, and its entry gives no reason (no_case)")
        elif code in covered and entry.no_case:
            out.append(f"{code}: a case expects it; drop its no_case reason ({entry.no_case!r})")
    if codes.TYPESCRIPT.id not in covered:
        out.append(f"{codes.TYPESCRIPT.id}: no case expects a TypeScript diagnostic")
    return out
