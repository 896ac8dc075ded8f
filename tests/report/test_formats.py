from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.conftest import write_tree
from trailblaze import codes
from trailblaze.cli.main import main
from trailblaze.finding import Finding
from trailblaze.report.formats import github, junit, render, sarif
from trailblaze.report.record import Report, TrailStatus

REPORT = Report(
    workspace="/ws",
    trailmaps=("shop",),
    trails=(
        TrailStatus("trailmaps/shop/a.trail.yaml", "shop", "type-checked", calls=3),
        TrailStatus("trailmaps/shop/b.trail.yaml", None, "parsed", "no target"),
        TrailStatus("trailmaps/shop/c.trail.yaml", None, "rejected"),
    ),
    findings=(
        Finding(
            "type",
            "trailmaps/shop/a.trail.yaml",
            12,
            9,
            "Type 'number' is not assignable to type 'string'.",
            key_path="trail[2].recording.android[0].inputText.text",
            code="TS2322",
            step=3,
            classifier="android",
            tool="inputText",
            trailmap="shop",
            property="text",
        ),
        Finding(
            "parse",
            "trailmaps/shop/c.trail.yaml",
            2,
            3,
            "unknown key 'stpe' (did you mean 'step'?)",
            key_path="trail[0]",
            code="unknown-key",
        ),
        Finding(
            "warning",
            "trailmaps/shop/trailmap.yaml",
            4,
            1,
            "a, b: 100% odd\nnew line",
            code="tool-source-missing",
            fatal=False,
        ),
    ),
)


def test_github_annotations_escape_what_the_runner_would_misread() -> None:
    assert github(REPORT).splitlines() == [
        "::error file=trailmaps/shop/a.trail.yaml,line=12,col=9,title=trailblaze type TS2322::"
        "trail[2].recording.android[0].inputText.text: Type 'number' is not assignable to type "
        "'string'.",
        "::error file=trailmaps/shop/c.trail.yaml,line=2,col=3,title=trailblaze parse unknown-key::"
        "trail[0]: unknown key 'stpe' (did you mean 'step'?)",
        "::warning file=trailmaps/shop/trailmap.yaml,line=4,col=1,title=trailblaze warning "
        "tool-source-missing::a, b: 100%25 odd%0Anew line",
    ]


def test_github_annotations_of_a_hostile_file_name_escape_it_as_the_runner_reads_it(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub's own escaping: `%`, CR, LF in data, `:` and `,` too in a property. A newline in
    the file name was `\\x0a`, which the runner does not read back: no annotation on the file."""
    name = "a\nb,c:d%e\rf.trail.yaml"
    write_tree(compact_ws, {f"trailmaps/app/trails/{name}": "trail:\n  - step: a\n    stpe: b\n"})
    monkeypatch.chdir(compact_ws)
    assert main(["check", "--format", "github"]) == 1
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines() == [
        "::error file=trailmaps/app/trails/a%0Ab%2Cc%3Ad%25e%0Df.trail.yaml,line=3,col=5,"
        "title=trailblaze parse unknown-key::trail[0]: unknown key 'stpe' (did you mean 'step'?)"
    ]


def test_github_annotation_data_keeps_colons_and_commas_and_escapes_line_breaks() -> None:
    finding = Finding("parse", "x,y:z.trail.yaml", 1, 1, "a:b, c\r\nd 5% \x1b[31m", code="c,d")
    assert github(dataclasses.replace(REPORT, findings=(finding,))) == (
        "::error file=x%2Cy%3Az.trail.yaml,line=1,col=1,title=trailblaze parse c%2Cd::"
        "a:b, c%0D%0Ad 5%25 \\x1b[31m\n"
    )


def test_sarif_has_one_result_per_finding_with_its_location() -> None:
    document = json.loads(sarif(REPORT))
    assert document["version"] == "2.1.0"
    [run] = document["runs"]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [
        "TS2322",
        "tool-source-missing",
        "unknown-key",
    ]
    first = run["results"][0]
    assert first["ruleId"] == "TS2322"
    assert first["level"] == "error"
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "trailmaps/shop/a.trail.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 12, "startColumn": 9},
    }
    assert first["properties"] == {
        "kind": "type",
        "step": 3,
        "classifier": "android",
        "tool": "inputText",
        "trailmap": "shop",
        "property": "text",
    }
    assert [r["level"] for r in run["results"]] == ["error", "error", "warning"]


def test_sarif_says_what_code_scanning_needs() -> None:
    document = json.loads(sarif(dataclasses.replace(REPORT, path_base="/repo root")))
    assert document["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    [run] = document["runs"]
    driver = run["tool"]["driver"]
    assert driver["informationUri"] == "https://github.com/block/trailblaze"
    for rule in driver["rules"]:
        assert rule["fullDescription"]["text"].endswith(f"Code: {rule['id']}.")
        assert rule["help"]["text"]
        assert rule["help"]["markdown"]
    assert [r["ruleIndex"] for r in run["results"]] == [0, 2, 1]
    # Relative: the base is named, never where it was on the machine that ran the check.
    assert run["originalUriBaseIds"] == {
        "%SRCROOT%": {
            "description": {
                "text": "The root of the repository (or the --path-base directory) the paths "
                "are relative to."
            }
        }
    }
    assert "repo root" not in json.dumps(document)
    assert "file:" not in json.dumps(document)


def test_sarif_makes_a_path_outside_the_base_relative_too() -> None:
    outside = REPORT.findings[0].with_(path="/ci/runner/toolchain/lib.d.ts", line=3, column=1)
    report = dataclasses.replace(REPORT, path_base="/ci/runner/work/repo", findings=(outside,))
    [run] = json.loads(sarif(report))["runs"]
    [result] = run["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "../../toolchain/lib.d.ts",
        "uriBaseId": "%SRCROOT%",
    }
    assert "/ci/runner" not in sarif(report)


def test_sarif_rules_say_what_the_registry_says() -> None:
    rules = json.loads(sarif(REPORT))["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["TS2322", "tool-source-missing", "unknown-key"]
    for rule in rules:
        entry = codes.lookup(rule["id"])
        assert entry is not None
        assert rule["shortDescription"]["text"] == entry.description
        assert rule["fullDescription"]["text"] == f"{entry.help} Code: {rule['id']}."
        assert rule["help"]["markdown"].endswith(f"\n\n{entry.help}")
    assert rules[0]["shortDescription"]["text"] == codes.TYPESCRIPT.description


def test_a_sarif_rule_of_a_code_without_an_entry_says_what_its_kind_is() -> None:
    # A report of another version (`report merge`) may carry a code this one does not know.
    finding = Finding("manifest", "t/trailmap.yaml", 1, 1, "m", code="from-elsewhere")
    document = json.loads(sarif(dataclasses.replace(REPORT, findings=(finding,))))
    [rule] = document["runs"][0]["tool"]["driver"]["rules"]
    assert rule["shortDescription"]["text"] == codes.KINDS["manifest"]
    assert rule["fullDescription"]["text"] == f"{codes.KINDS['manifest']} Code: from-elsewhere."


def test_junit_has_testsuites_and_times() -> None:
    root = ElementTree.fromstring(
        junit(dataclasses.replace(REPORT, duration=1.5)).split("\n", 1)[1]
    )
    assert root.tag == "testsuites"
    [suite] = root
    assert (root.get("tests"), root.get("failures"), root.get("time")) == ("3", "2", "1.500")
    assert suite.get("time") == "1.500"
    assert {case.get("time") for case in suite} == {"0"}


def test_junit_has_a_case_per_trail_failing_on_fatal_findings() -> None:
    [suite] = ElementTree.fromstring(junit(REPORT).split("\n", 1)[1])
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "2", "1")
    cases = {case.get("name"): case for case in suite}
    assert cases["trailmaps/shop/a.trail.yaml"].find("failure") is not None
    skipped = cases["trailmaps/shop/b.trail.yaml"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "no target"
    failure = cases["trailmaps/shop/c.trail.yaml"].find("failure")
    assert failure is not None
    assert (
        failure.text
        == "trailmaps/shop/c.trail.yaml:2:3: trail[0]: unknown key 'stpe' (did you mean 'step'?)"
    )


def test_json_is_the_stable_report() -> None:
    assert json.loads(render(REPORT, "json")) == REPORT.to_json()
    assert json.loads(render(REPORT, "json")) == {
        "version": 1,
        "exit_code": 1,
        "require_typecheck": False,
        "workspace": "/ws",
        "trailmaps": ["shop"],
        "summary": {
            "trailmaps": 1,
            "trails": 3,
            "rejected": 1,
            "parsed": 2,
            "type_checked": 1,
            "not_type_checked": {"no target": 1},
            "calls_type_checked": 3,
            "findings": 2,
            "tool_findings": 0,
            "tool_files": 0,
            "unchecked_calls": 0,
            "sdk": {},
            "exempt_findings": 0,
            "warnings": 1,
            "infra": 0,
        },
        "trails": [
            {
                "path": "trailmaps/shop/a.trail.yaml",
                "trailmap": "shop",
                "status": "type-checked",
                "reason": None,
                "target": None,
                "calls": 3,
            },
            {
                "path": "trailmaps/shop/b.trail.yaml",
                "trailmap": None,
                "status": "parsed",
                "reason": "no target",
                "target": None,
                "calls": 0,
            },
            {
                "path": "trailmaps/shop/c.trail.yaml",
                "trailmap": None,
                "status": "rejected",
                "reason": None,
                "target": None,
                "calls": 0,
            },
        ],
        "findings": [
            {
                "kind": "type",
                "path": "trailmaps/shop/a.trail.yaml",
                "line": 12,
                "column": 9,
                "step": 3,
                "classifier": "android",
                "tool": "inputText",
                "code": "TS2322",
                "message": "Type 'number' is not assignable to type 'string'.",
                "fatal": True,
                "key_path": "trail[2].recording.android[0].inputText.text",
                "trailmap": "shop",
                "position": None,
                "property": "text",
            },
            {
                "kind": "parse",
                "path": "trailmaps/shop/c.trail.yaml",
                "line": 2,
                "column": 3,
                "step": None,
                "classifier": None,
                "tool": None,
                "code": "unknown-key",
                "message": "unknown key 'stpe' (did you mean 'step'?)",
                "fatal": True,
                "key_path": "trail[0]",
                "trailmap": None,
                "position": None,
                "property": None,
            },
            {
                "kind": "warning",
                "path": "trailmaps/shop/trailmap.yaml",
                "line": 4,
                "column": 1,
                "step": None,
                "classifier": None,
                "tool": None,
                "code": "tool-source-missing",
                "message": "a, b: 100% odd\nnew line",
                "fatal": False,
                "key_path": "",
                "trailmap": None,
                "position": None,
                "property": None,
            },
        ],
    }
