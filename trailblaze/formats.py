"""Machine formats of a check report for CI: SARIF 2.1.0, JUnit XML, GitHub annotations.

Each renders the same `Report` records the console and JSON show; nothing is computed here.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any
from xml.etree import ElementTree

from trailblaze import __version__
from trailblaze.escaping import json_text, printable, xml_text
from trailblaze.finding import Finding
from trailblaze.report import Report

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


def sarif(report: Report) -> str:
    """SARIF 2.1.0: one run, one result per finding, rules named by finding code."""
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for finding in report.findings:
        rule = _rule(finding)
        rules.setdefault(
            rule,
            {"id": rule, "shortDescription": {"text": f"{finding.kind} finding {rule}"}},
        )
        result: dict[str, Any] = {
            "ruleId": rule,
            "level": _level(finding),
            "message": {"text": _message(finding)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": finding.path, "uriBaseId": "WORKSPACE"},
                        "region": {"startLine": finding.line, "startColumn": finding.column},
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
    document = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "trailblaze-doit",
                        "version": __version__,
                        "rules": sorted(rules.values(), key=lambda r: r["id"]),
                    }
                },
                "properties": {
                    "findings": report.counts()["findings"],
                    "toolFindings": report.counts()["tool_findings"],
                },
                "originalUriBaseIds": {
                    "WORKSPACE": {"uri": f"file://{report.workspace.rstrip('/')}/"}
                },
                "results": results,
            }
        ],
    }
    return json_text(document, indent=2) + "\n"


def junit(report: Report) -> str:
    """JUnit XML: one test case per trail (failed when it has a fatal finding) plus one for
    the workspace's own files (manifests, tool files)."""
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.findings:
        by_path[finding.path].append(finding)
    suite = ElementTree.Element("testsuite", name="trailblaze check")
    failures = skipped = 0
    cases = 0
    trail_paths = {t.path for t in report.trails}
    for status in report.trails:
        case = ElementTree.SubElement(
            suite, "testcase", classname=status.trailmap or "trails", name=status.path
        )
        cases += 1
        fatal = [
            f
            for f in by_path.get(status.path, [])
            if f.fatal and f.kind not in ("warning", "infra")
        ]
        if fatal:
            failures += 1
            failure = ElementTree.SubElement(
                case, "failure", message=f"{len(fatal)} finding(s)", type=fatal[0].kind
            )
            failure.text = "\n".join(f.text for f in fatal)
        elif status.status != "type-checked":
            skipped += 1
            ElementTree.SubElement(case, "skipped", message=status.reason or status.status)
    tools = [
        f
        for path, found in by_path.items()
        if path not in trail_paths
        for f in found
        if f.fatal and f.kind == "tool"
    ]
    if tools:
        # Scripted tools' own diagnostics: a test case of their own, apart from trails.
        case = ElementTree.SubElement(
            suite, "testcase", classname="tools", name="scripted tool sources"
        )
        cases += 1
        failures += 1
        failure = ElementTree.SubElement(
            case, "failure", message=f"{len(tools)} finding(s)", type="tool"
        )
        failure.text = "\n".join(f.text for f in tools)
    other = [
        f
        for path, found in by_path.items()
        if path not in trail_paths
        for f in found
        if f.fatal and f.kind != "tool"
    ]
    if other:
        case = ElementTree.SubElement(
            suite, "testcase", classname="workspace", name="manifests and tools"
        )
        cases += 1
        failures += 1
        failure = ElementTree.SubElement(
            case, "failure", message=f"{len(other)} finding(s)", type="manifest"
        )
        failure.text = "\n".join(f.text for f in other)
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    suite.set("errors", "0")
    _well_formed(suite)
    ElementTree.indent(suite)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        + ElementTree.tostring(suite, encoding="unicode")
        + "\n"
    )


def _well_formed(root: ElementTree.Element) -> None:
    """Every attribute and text escaped where XML 1.0 forbids a character (a control character
    in a file name or message would make the whole document unreadable)."""
    for element in root.iter():
        for name, value in element.attrib.items():
            element.set(name, xml_text(value))
        if element.text:
            element.text = xml_text(element.text)


def _escape_data(text: str) -> str:
    return (
        printable(text, newlines=True).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    )


def _escape_property(text: str) -> str:
    return _escape_data(printable(text)).replace(":", "%3A").replace(",", "%2C")


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
        return json_text(report.to_json(), indent=2) + "\n"
    if fmt == "sarif":
        return sarif(report)
    if fmt == "junit":
        return junit(report)
    if fmt == "github":
        return github(report)
    raise ValueError(f"unknown format {fmt!r}")
