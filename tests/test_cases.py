"""The case corpus: every file of `tests/data/cases/` gives exactly the findings it says it gives.

One check, with the real compiler, over one workspace that holds every case (see
`tests/cases.py` for the grammar of a case and the layout). Each case is a test of its own,
named by its file; a failure shows what differs and the case's findings as `expect:` lines.
Adding a case needs no Python: write the file, run this module.

The corpus also documents the registry: every registered code has a case that expects it, or
its entry says why none can (`no_case`), and every code a case produced is registered.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from pathlib import Path

import msgspec
import pytest

from tests.cases import (
    CASES,
    TRAILS_DIR,
    Case,
    CaseError,
    build_workspace,
    covered_codes,
    differences,
    discover,
    failure_message,
    read_case,
    uncovered,
)
from tests.conftest import isolate_env, write_tree
from trailblaze import codes
from trailblaze.check.run import run_check
from trailblaze.finding import Finding, Kind
from trailblaze.options import CheckOptions
from trailblaze.report.record import Report, TrailStatus
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import find_workspace

ALL = discover()


@dataclasses.dataclass(frozen=True)
class Checked:
    report: Report
    findings: dict[str, list[Finding]]
    """Workspace path -> its findings."""
    statuses: dict[str, TrailStatus]


@pytest.fixture(scope="module")
def checked(tsc: Compiler, tmp_path_factory: pytest.TempPathFactory) -> Checked:
    ws = build_workspace(tmp_path_factory.mktemp("cases") / "ws", ALL)
    with pytest.MonkeyPatch.context() as mp:
        isolate_env(mp)
        report = run_check(find_workspace(ws, explicit=True), CheckOptions())
    findings: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.findings:
        findings[finding.path].append(finding)
    return Checked(report, dict(findings), {t.path: t for t in report.trails})


@pytest.mark.tsc
@pytest.mark.parametrize("case", ALL, ids=[c.name for c in ALL])
def test_case(checked: Checked, case: Case) -> None:
    findings = checked.findings.get(case.path, [])
    problems = differences(case, findings, checked.statuses.get(case.path))
    if case.xfail is not None:
        if problems:
            pytest.xfail(case.xfail)
        pytest.fail(f"{case.name} gives what it says now: remove its 'xfail: {case.xfail}'")
    if problems:
        pytest.fail(failure_message(case, problems, findings), pytrace=False)


@pytest.mark.tsc
def test_no_finding_outside_the_cases(checked: Checked) -> None:
    # The template is a clean workspace: a finding there is one no case can expect.
    paths = {case.path for case in ALL}
    stray = [f.text for path, found in checked.findings.items() if path not in paths for f in found]
    assert stray == []


@pytest.mark.tsc
def test_every_code_the_cases_gave_is_registered(checked: Checked) -> None:
    assert sorted({f.code for f in checked.report.findings if codes.lookup(f.code) is None}) == []


def test_every_registered_code_has_a_case_or_a_reason_it_has_none() -> None:
    assert uncovered(codes.REGISTRY, covered_codes(ALL)) == []


def test_every_area_has_cases_and_names_are_unique() -> None:
    assert len(ALL) >= 100
    assert len({c.path for c in ALL}) == len(ALL)
    areas = {c.name.split("/")[0] for c in ALL}
    assert {"parse", "legacy", "type", "runif", "args", "warnings", "clean"} <= areas


# -- the runner's own negative paths --------------------------------------------------------------


def _finding(line: int, column: int, code: str, message: str, kind: Kind = "type") -> Finding:
    return Finding(kind, f"{TRAILS_DIR}/type/x.trail.yaml", line, column, message, code=code)


def _case(tmp_path: Path, text: str, name: str = "x.trail.yaml") -> Case:
    source = write_tree(tmp_path, {name: text}) / name
    return read_case(source, f"{TRAILS_DIR}/type/{name}")


def test_a_case_fails_on_a_missing_and_an_unexpected_finding(tmp_path: Path) -> None:
    case = _case(tmp_path, "# expect: 3:7 type TS2322 Type 'number' is not assignable\n")
    got = [_finding(3, 9, "TS2322", "Type 'number' is not assignable to type 'string'.")]
    status = TrailStatus(case.path, "cases", "type-checked")
    problems = differences(case, got, status)
    assert problems == [
        "expected, not found:  3:7 type TS2322 Type 'number' is not assignable",
        "found, not expected:  3:9 type TS2322 Type 'number' is not assignable to type 'string'.",
    ]
    message = failure_message(
        dataclasses.replace(case, source=CASES / "type" / "x.trail.yaml"), problems, got
    )
    assert message.splitlines()[0] == f"type/x.trail.yaml ({case.path}) does not give what it says:"
    assert message.splitlines()[-1] == (
        "    # expect: 3:9 type TS2322 Type 'number' is not assignable to type 'string'."
    )
    assert (
        differences(case, [_finding(3, 7, "TS2322", "Type 'number' is not assignable")], status)
        == []
    )


@pytest.mark.parametrize(
    ("got", "why"),
    [
        ([_finding(3, 7, "TS2353", "Type 'number' is not assignable")], "another code"),
        ([_finding(3, 7, "TS2322", "Type 'number' is not assignable", "tool")], "another kind"),
        ([_finding(3, 7, "TS2322", "type 'number' is not assignable")], "the message's case"),
        (
            [_finding(3, 7, "TS2322", "Type 'number' is not assignable").with_(fatal=False)],
            "non-fatal",
        ),
        ([], "nothing found"),
    ],
)
def test_a_case_fails_on_any_difference(tmp_path: Path, got: list[Finding], why: str) -> None:
    case = _case(tmp_path, "# expect: 3:7 type TS2322 Type 'number' is not assignable\n")
    assert differences(case, got, TrailStatus(case.path, "cases", "type-checked")), why


def test_a_clean_case_must_have_been_type_checked(tmp_path: Path) -> None:
    case = _case(tmp_path, "# expect: nothing\n")
    parsed = TrailStatus(case.path, None, "parsed", "no target")
    assert differences(case, [], parsed) == [
        "status: expected type-checked, got parsed (no target)"
    ]
    said = _case(tmp_path, "# expect: nothing\n# status: parsed (no target)\n", "y.trail.yaml")
    assert differences(said, [], msgspec.structs.replace(parsed, path=said.path)) == []


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("config: {}\n", "no 'expect:' line"),
        ("# expect: nothing\n# expect: 1:1 parse yaml x\n", "'expect: nothing' and expected"),
        ("# expect: 3 type TS2322 m\n", "expected '<line>:<column>"),
        ("# expect: 3:7 typo TS2322 m\n", "unknown kind 'typo'"),
        ("# expect: 3:7 parse made-up m\n", "'made-up' is not a registered code"),
        ("# expect: 3:7 parse yaml\n", "expected '<line>:<column>"),
        ("# expects: nothing\n", "not a directive"),
        ("# expect: nothing\n# status: checked\n", "a status is one of"),
        ("# expect: nothing\n# xfail:\n", "one xfail, with its reason"),
    ],
)
def test_a_case_that_does_not_follow_the_grammar_is_an_error(
    tmp_path: Path, text: str, error: str
) -> None:
    with pytest.raises(CaseError, match=error):
        _case(tmp_path, text)


def test_a_code_with_neither_a_case_nor_a_reason_is_found() -> None:
    planted = codes.Code(
        id="made-up", kinds=("parse",), description="A planted code.", help="A planted code."
    )
    registry = {**codes.REGISTRY, "made-up": planted}
    assert uncovered(registry, covered_codes(ALL)) == [
        "made-up: no case expects it, and its entry gives no reason (no_case)"
    ]
    reasoned = codes.REGISTRY[codes.EMPTY]._replace(no_case="planted")
    assert uncovered({**codes.REGISTRY, codes.EMPTY: reasoned}, covered_codes(ALL)) == [
        "empty: a case expects it; drop its no_case reason ('planted')"
    ]
