"""Machine formats of a check report for CI: SARIF 2.1.0, JUnit XML, GitHub annotations.

Each renders the same `Report` records the console and JSON show; nothing is computed here.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree

from trailblaze import __version__, codes
from trailblaze.finding import Finding
from trailblaze.report.escaping import json_text, printable, xml_text
from trailblaze.report.record import Report

FORMATS = ("text", "json", "sarif", "junit", "github")


def _level(finding: Finding) -> str:
    if finding.kind == "warning" or not finding.fatal:
        return "warning" if finding.kind in ("warning", "infra") else "note"
    return "error"


def _rule(finding: Finding) -> str:
    return finding.code or finding.kind


def _message(finding: Finding) -> str:
    """`key.path: message`, or the message alone at the document level."""
    return f"{finding.key_path}: {finding.message}" if finding.key_path else finding.message


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/block/trailblaze"
"""The project whose trails these are: the SARIF driver's `informationUri`."""
SRCROOT = "%SRCROOT%"
SRCROOT_TEXT = (
    "The root of the repository (or the --path-base directory) the paths are relative to."
)


def _rule_json(rule: str, kind: str) -> dict[str, Any]:
    """One SARIF rule: its texts are the code's entry in the registry (`codes.py`)."""
    entry = codes.lookup(rule)
    # No entry: a finding of a report written by another version (`report merge`).
    short = entry.description if entry else codes.KINDS.get(kind, f"A {kind} finding.")
    full = entry.help if entry else short
    name = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", f"{kind} {rule}"))
    what = f"TypeScript diagnostic {rule}" if codes.is_typescript(rule) else f"`{rule}`"
    return {
        "id": rule,
        "name": name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": f"{full} Code: {rule}."},
        "help": {
            "text": f"{full} Code: {rule}.",
            "markdown": f"**{short}** ({what})\n\n{full}",
        },
        "defaultConfiguration": {
            "level": "error" if kind not in ("warning", "infra") else "warning"
        },
        "properties": {"kind": kind},
    }


def _artifact(path: str, base: str) -> dict[str, str]:
    """A path relative to the base (`%SRCROOT%`); an absolute one (outside the workspace: the
    compiler's, say) made relative to it too, so that no path of the machine that ran the
    check is in the file."""
    if os.path.isabs(path):
        path = os.path.relpath(path, base or os.sep).replace(os.sep, "/")
    return {"uri": quote(path, errors="backslashreplace"), "uriBaseId": SRCROOT}


def sarif(report: Report) -> str:
    """SARIF 2.1.0: one run, one result per finding, one rule per finding code.

    Locations are relative to the report's path base (`%SRCROOT%`: the repository root by
    default, see `pathbase.py`), so code scanning attaches them to files.
    """
    base = (report.path_base or report.workspace).rstrip("/")
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for finding in report.findings:
        rule = _rule(finding)
        if rule not in rules:
            rules[rule] = _rule_json(rule, finding.kind)
        result: dict[str, Any] = {
            "ruleId": rule,
            "level": _level(finding),
            "message": {"text": _message(finding)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": _artifact(finding.path, base),
                        "region": {
                            "startLine": max(finding.line, 1),
                            "startColumn": max(finding.column, 1),
                        },
                    }
                }
            ],
        }
        properties = {
            k: v
            for k, v in (("kind", finding.kind), ("step", finding.step), ("classifier", finding.classifier),
                         ("tool", finding.tool), ("trailmap", finding.trailmap), ("position", finding.position),
                         ("property", finding.property))
            if v is not None
        }  # fmt: skip
        if properties:
            result["properties"] = properties
        results.append(result)
    ordered = sorted(rules.values(), key=lambda r: r["id"])
    index = {r["id"]: i for i, r in enumerate(ordered)}
    for result in results:
        result["ruleIndex"] = index[result["ruleId"]]
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "trailblaze-doit",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": ordered,
                    }
                },
                "properties": {
                    "findings": report.counts()["findings"],
                    "toolFindings": report.counts()["tool_findings"],
                },
                # Where %SRCROOT% is on the machine that ran the check is not said: the
                # paths are relative to the repository's root (or `--path-base`), which is
                # where a code host (GitHub code scanning) reads them from.
                "originalUriBaseIds": {SRCROOT: {"description": {"text": SRCROOT_TEXT}}},
                "results": results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }
    return json_text(document, indent=2) + "\n"


def junit(report: Report) -> str:
    """JUnit XML: `testsuites` holding one `testsuite`, with one test case per trail (failed
    when it has a fatal finding) plus one for the workspace's own files (manifests, tools).

    `time` is the run's wall time on the suites; trails are parsed and compiled in batches,
    so a trail has no time of its own: its case says 0.
    """
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.findings:
        by_path[finding.path].append(finding)
    seconds = f"{report.seconds:.3f}"
    suites = ElementTree.Element("testsuites", name="trailblaze check")
    suite = ElementTree.SubElement(suites, "testsuite", name="trailblaze check")
    failures = skipped = 0
    cases = 0
    trail_paths = {t.path for t in report.trails}
    for status in report.trails:
        case = ElementTree.SubElement(
            suite, "testcase", classname=status.trailmap or "trails", name=status.path, time="0"
        )
        cases += 1
        fatal = [
            f
            for f in by_path.get(status.path, [])
            if f.fatal and f.kind not in ("warning", "infra")
        ]
        if fatal:
            failures += 1
            _failure(case, fatal, fatal[0].kind)
        elif status.status != "type-checked":
            skipped += 1
            ElementTree.SubElement(case, "skipped", message=status.reason or status.status)
    outside = [
        f
        for path, found in by_path.items()
        if path not in trail_paths
        for f in found
        if f.fatal and f.kind != "test"
    ]
    # Scripted tools' own diagnostics are a test case of their own, apart from the workspace's.
    for classname, name, kind, found in (
        ("tools", "scripted tool sources", "tool", [f for f in outside if f.kind == "tool"]),
        ("workspace", "manifests and tools", "manifest", [f for f in outside if f.kind != "tool"]),
    ):
        if found:
            case = ElementTree.SubElement(
                suite, "testcase", classname=classname, name=name, time="0"
            )
            cases += 1
            failures += 1
            _failure(case, found, kind)
    for element in (suites, suite):
        element.set("tests", str(cases))
        element.set("failures", str(failures))
        element.set("errors", "0")
        element.set("time", seconds)
    suite.set("skipped", str(skipped))
    _unit_tests(suites, report)
    _well_formed(suites)
    ElementTree.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        + ElementTree.tostring(suites, encoding="unicode")
        + "\n"
    )


def _unit_tests(suites: ElementTree.Element, report: Report) -> None:
    """A second suite, `unit tests`: a case per unit test (its file as the class name), and one
    per test file that did not run to its end (its finding)."""
    problems = [f for f in report.findings if f.kind == "test" and f.code != codes.TEST_FAILED]
    if not report.tests and not problems:
        return
    failed: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.findings:
        if finding.code == codes.TEST_FAILED:
            failed[finding.path].append(finding)
    suite = ElementTree.SubElement(suites, "testsuite", name="unit tests")
    cases = failures = skipped = 0
    total = 0.0
    for test in report.tests:
        case = ElementTree.SubElement(
            suite, "testcase", classname=test.path, name=test.name, time=f"{test.duration:.3f}"
        )
        cases += 1
        total += test.duration
        if test.status == "failed":
            failures += 1
            mine = [f for f in failed[test.path] if f.message.startswith(f"{test.name}: ")]
            _failure(case, mine, "test")
        elif test.status != "passed":
            skipped += 1
            ElementTree.SubElement(case, "skipped", message=test.status)
    for finding in problems:
        case = ElementTree.SubElement(
            suite, "testcase", classname=finding.path, name="(the file)", time="0"
        )
        cases += 1
        failures += 1
        _failure(case, [finding], "test")
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", f"{total:.3f}")
    for name in ("tests", "failures"):
        suites.set(name, str(int(suites.get(name) or 0) + int(suite.get(name) or 0)))


def _failure(case: ElementTree.Element, findings: list[Finding], kind: str) -> None:
    """The case's `failure`: how many findings, and each finding's text."""
    failure = ElementTree.SubElement(
        case, "failure", message=f"{len(findings)} finding(s)", type=kind
    )
    failure.text = "\n".join(f.text for f in findings)


def _well_formed(root: ElementTree.Element) -> None:
    """Every attribute and text escaped where XML 1.0 forbids a character (a control character
    in a file name or message would make the whole document unreadable)."""
    for element in root.iter():
        for name, value in element.attrib.items():
            element.set(name, xml_text(value))
        if element.text:
            element.text = xml_text(element.text)


def _escape_data(text: str) -> str:
    """A workflow command's data as the runner reads it back: `%`, CR and LF as `%25`, `%0D`,
    `%0A`; any other control character as `\\xNN` (`printable`), never raw in the log."""
    return (
        printable(text, newlines=True).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    )


def _escape_property(text: str) -> str:
    """A property value (`file=`, `title=`): the data escapes, and `:` and `,` as `%3A`, `%2C`.

    A line break in a file name was `\\x0a` here (`printable` first): a name the runner could
    not match to the file."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(report: Report) -> str:
    """GitHub Actions workflow commands: one `::error`/`::warning`/`::notice` per finding."""
    lines = []
    for finding in report.findings:
        command = {"error": "error", "warning": "warning", "note": "notice"}[_level(finding)]
        title = f"trailblaze {finding.kind} {finding.code}".strip()
        message = _message(finding)
        lines.append(
            f"::{command} file={_escape_property(finding.path)},line={finding.line},"
            f"col={finding.column},title={_escape_property(title)}::{_escape_data(message)}"
        )
    return "".join(f"{line}\n" for line in lines)


def render(report: Report, fmt: str) -> str:
    if fmt == "json":
        # Trail statuses hold only strings, integers and None (`TrailStatus.to_json`): the
        # ten thousand of a large workspace need no walk for a type orjson writes otherwise.
        return json_text(report.to_json(), indent=2, built=("trails",)) + "\n"
    if fmt == "sarif":
        return sarif(report)
    if fmt == "junit":
        return junit(report)
    if fmt == "github":
        return github(report)
    raise ValueError(f"unknown format {fmt!r}")
