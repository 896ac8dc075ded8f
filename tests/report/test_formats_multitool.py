"""Our SARIF, validated by Microsoft's SARIF Multitool with GitHub's rules: what code scanning
accepts.

The Multitool is a self-contained .NET program shipped in npm packages
(`@microsoft/sarif-multitool` and one per platform); the test session installs the pinned
version into the toolchain cache like the compiler, and runs it with .NET's invariant
globalization (so it needs no ICU library).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import MINIMAL_MANIFEST, toolchain_cache, write_tree
from trailblaze.cli.main import main
from trailblaze.toolchain.compilers import ToolchainError
from trailblaze.toolchain.npm import install_npm_tool
from trailblaze.toolchain.proc import run

MULTITOOL_VERSION = "5.7.0"
_PLATFORMS = {"linux": "linux", "darwin": "darwin", "win32": "win32"}
ENV = {
    **os.environ,
    "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1",
    "DOTNET_CLI_TELEMETRY_OPTOUT": "1",
}


def _executable(directory: Path) -> Path:
    platform = _PLATFORMS.get(sys.platform, sys.platform)
    name = "Sarif.Multitool.exe" if sys.platform == "win32" else "Sarif.Multitool"
    return directory / "node_modules" / "@microsoft" / f"sarif-multitool-{platform}" / name


def _probe(directory: Path) -> None:
    exe = _executable(directory)
    if not exe.is_file():
        raise ToolchainError(f"{exe}: missing")
    result = run([str(exe), "--version"], env=ENV, timeout=60)
    if not result.ok or f"SARIF Multitool {MULTITOOL_VERSION}" not in result.stdout + result.stderr:
        raise ToolchainError(f"{exe} --version: exit {result.returncode}: {result.stderr}")


@pytest.fixture(scope="session")
def multitool() -> Path:
    platform = _PLATFORMS.get(sys.platform, sys.platform)
    directory = install_npm_tool(
        f"sarif-multitool-{MULTITOOL_VERSION}",
        [
            f"@microsoft/sarif-multitool@{MULTITOOL_VERSION}",
            f"@microsoft/sarif-multitool-{platform}@{MULTITOOL_VERSION}",
        ],
        probe=_probe,
        base=toolchain_cache(),
    )
    return _executable(directory)


def validate(multitool: Path, sarif: Path) -> list[tuple[str, str, str]]:
    """(level, rule, message) of every error and warning, SARIF and GitHub rules both."""
    out = sarif.with_suffix(".validation.sarif")
    result = run(
        # The file first: the list options would take it as one more value.
        [str(multitool), "validate", str(sarif), "--rule-kind", "Sarif;Gh",
         "--level", "Error;Warning", "--output", str(out), "--log", "ForceOverwrite"],
        env=ENV,
        timeout=120,
    )  # fmt: skip
    assert result.ok, result.stdout + result.stderr
    [validation] = json.loads(out.read_text("utf-8"))["runs"]
    return [
        (r.get("level", "warning"), r["ruleId"], r["message"].get("text", "")[:200])
        for r in validation.get("results", [])
    ]


def test_the_multitool_catches_what_github_rejects(multitool: Path, tmp_path: Path) -> None:
    # The control: SARIF as this project wrote it before (no $schema, rules without help).
    old = tmp_path / "old.sarif"
    old.write_text(
        json.dumps(
            {
                "version": "2.1.0",
                "runs": [
                    {
                        "tool": {"driver": {"name": "trailblaze-doit", "rules": [
                            {"id": "TS2322", "shortDescription": {"text": "type finding"}}]}},
                        "results": [{"ruleId": "TS2322", "level": "error", "message": {"text": "m"},
                                     "locations": [{"physicalLocation": {
                                         "artifactLocation": {"uri": "a.trail.yaml"},
                                         "region": {"startLine": 1}}}]}],
                    }
                ],
            }
        )
    )  # fmt: skip
    problems = {rule for level, rule, _ in validate(multitool, old) if level == "error"}
    assert {"GH1013", "GH2012"} <= problems


@pytest.mark.tsc
def test_our_sarif_has_no_errors_and_no_warnings_with_githubs_rules(
    multitool: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = write_tree(
        tmp_path / "ws",
        {
            "trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app"),
            "trailmaps/app/trails/parse.trail.yaml": "trail:\n  - stpe: a\n",
            "trailmaps/app/trails/with space.trail.yaml": (
                "config: {target: app}\ntrail:\n  - step: s\n    recording:\n      android:\n"
                "        - tapOnElementWithText: {text: [5]}\n"
            ),
            "trailmaps/app/trails/runif.trail.yaml": (
                "config: {target: app}\ntrail:\n  - step: s\n    recording:\n      android:\n"
                "        - runIf: {condition: {}, then: []}\n"
            ),
        },
    )
    (ws / ".git").mkdir()
    sarif = tmp_path / "report.sarif"
    assert main(["check", str(ws), "--format", "sarif", "--output", str(sarif)]) == 1
    capsys.readouterr()
    document = json.loads(sarif.read_text("utf-8"))
    kinds = {r["properties"]["kind"] for r in document["runs"][0]["results"]}
    assert {"parse", "type"} <= kinds
    assert validate(multitool, sarif) == []
