"""Golden files for what a user reads: every report format and the generated per-trail TypeScript.

`tests/data/seeded/` is a small workspace with seeded errors (see its README): located type
findings on the argument at fault, a parse rejection with "did you mean", a manifest finding, a
bad runIf, a repeated runIf branch and a quoted number (warnings), and trails that are parsed but
not type-checked for each reason (the type gate turned off, too). One `trailblaze check` per format runs over a copy of it, from
the workspace (so paths are relative to it; a `.git` makes it the git root for github and
sarif), with the real compiler. The outputs are compared with `tests/data/golden/reports/` and
the generated trail modules with `tests/data/golden/typescript/`.

What the goldens pin is the command's output, not how it is computed: a refactor that keeps the
output passes, one that changes it fails with a unified diff (golden first, actual second).
Only what differs from run to run is scrubbed first: the temporary workspace's path (shown as
`<workspace>`) and JUnit's `time` attributes.

To regenerate after an intended change, then review `git diff tests/data/golden`:

    TRAILBLAZE_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_golden.py
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import DATA, isolate_env
from tests.golden import assert_golden, mismatch, scrub
from trailblaze.cli import main
from trailblaze.options import DISABLE_ENV
from trailblaze.scratch import Layout
from trailblaze.toolchain import Compiler

SEEDED = DATA / "seeded"
FORMATS = {
    "text": "text.txt",
    "json": "report.json",
    "sarif": "report.sarif",
    "junit": "junit.xml",
    "github": "github.txt",
}
TRAILS = (
    "trailmaps/shop/trails/browse.trail.yaml",
    "trailmaps/shop/trails/checkout.trail.yaml",
    "trailmaps/shop/trails/runif.trail.yaml",
)


@dataclass(frozen=True)
class Checked:
    ws: Path
    outputs: dict[str, str]
    """Format -> the report it wrote, scrubbed."""
    codes: dict[str, int]
    gate_disabled: tuple[int, str]
    """Exit code and text report with the type gate turned off (`DISABLE_ENV`)."""
    again: str
    """The text report of a second run, answered from the cache."""
    typescript: dict[str, str]
    """Trail -> the module the type gate generated for it (read right after the cold run)."""


def _check(ws: Path, fmt: str) -> tuple[int, str]:
    out = ws.parent / f"out.{fmt}"
    code = main(["check", ".", "--format", fmt, "--output", str(out)])
    return code, scrub(out.read_bytes().decode("utf-8"), ws)


@pytest.fixture(scope="module")
def checked(tsc: Compiler, tmp_path_factory: pytest.TempPathFactory) -> Checked:
    ws = tmp_path_factory.mktemp("golden") / "ws"
    shutil.copytree(SEEDED, ws, ignore=shutil.ignore_patterns("README.md"))
    (ws / ".git").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        isolate_env(mp)
        mp.chdir(ws)
        results = {fmt: _check(ws, fmt) for fmt in FORMATS}
        layout = Layout(ws / ".trailblaze")
        typescript = {t: layout.trail_file(t).read_bytes().decode("utf-8") for t in TRAILS}
        with pytest.MonkeyPatch.context() as disabled:
            disabled.setenv(DISABLE_ENV, "1")
            gate_disabled = _check(ws, "text")
        _, again = _check(ws, "text")
    return Checked(
        ws=ws,
        outputs={fmt: text for fmt, (_, text) in results.items()},
        codes={fmt: code for fmt, (code, _) in results.items()},
        gate_disabled=gate_disabled,
        again=again,
        typescript=typescript,
    )


@pytest.mark.tsc
@pytest.mark.parametrize("fmt", FORMATS)
def test_golden_report(checked: Checked, fmt: str) -> None:
    assert checked.codes[fmt] == 1
    assert_golden(checked.outputs[fmt], f"reports/{FORMATS[fmt]}")


@pytest.mark.tsc
def test_golden_report_with_the_type_gate_disabled(checked: Checked) -> None:
    code, text = checked.gate_disabled
    assert code == 1
    assert_golden(text, "reports/text-gate-disabled.txt")


@pytest.mark.tsc
@pytest.mark.parametrize("trail", TRAILS, ids=[Path(t).name.split(".")[0] for t in TRAILS])
def test_golden_trail_typescript(checked: Checked, trail: str) -> None:
    assert_golden(checked.typescript[trail], f"typescript/{Path(trail).name}.ts")


@pytest.mark.tsc
def test_a_cached_run_reports_exactly_what_the_cold_run_did(checked: Checked) -> None:
    # After a run with the gate disabled, too: that run must not have cached anything as a pass.
    assert checked.again == checked.outputs["text"]


@pytest.mark.tsc
def test_what_the_goldens_pin_said_in_words(checked: Checked) -> None:
    """So a regenerated golden cannot silently lose what the seeded workspace is there for."""
    report = json.loads(checked.outputs["json"])
    assert report["workspace"] == "<workspace>"
    findings = {(f["path"].rsplit("/", 1)[1], f["line"], f["column"], f["code"], f["property"])
                for f in report["findings"]}  # fmt: skip
    assert {
        ("checkout.trail.yaml", 25, 34, "TS2322", "timeToWaitInSeconds"),
        ("checkout.trail.yaml", 29, 17, "TS2353", "nodeSelector.androidAccessibility.textRegx"),
        ("checkout.trail.yaml", 31, 34, "quoted-number", "timeToWaitInSeconds"),
        ("browse.trail.yaml", 8, 11, "runif-repeated", None),
        ("runif.trail.yaml", 17, 13, "runif-unknown-key", None),
        ("typo.trail.yaml", 4, 5, "unknown-key", None),
        ("trailmap.yaml", 3, 3, "unknown-key", None),
    } <= findings
    assert report["summary"]["not_type_checked"] == {
        "no recorded calls": 1,
        "no target": 1,
        "unknown target": 1,
    }
    assert {t["status"] for t in report["trails"]} == {"type-checked", "parsed", "rejected"}
    # Each runIf branch and a condition tool are type-checked as calls of their own.
    checkout, browse = checked.typescript[TRAILS[1]], checked.typescript[TRAILS[0]]
    assert "client.tools.tapOnElementBySelector({ // step 1 [android] runIf.then[0]" in checkout
    assert "client.tools.assertVisibleWithText({ // step 3 [android] runIf.condition" in browse
    assert "client.tools.pressBack({}); // step 3 [android] runIf.else[0]" in browse
    assert 'time="' in checked.outputs["junit"]
    assert "<workspace>" not in checked.outputs["github"]


def test_scrub_replaces_the_workspace_and_junit_times(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    text = f'"{ws}" {ws.as_uri()}/a <testsuites time="0.296"><testcase time="12" />'
    assert scrub(text, ws) == (
        '"<workspace>" file://<workspace>/a <testsuites time="…"><testcase time="…" />'
    )


def test_a_golden_that_differs_fails_with_the_diff() -> None:
    message = mismatch("::error file=a,line=1::x\n", "::error file=a,line=2::x\n", "reports/g")
    assert message is not None
    assert "-::error file=a,line=1::x" in message.splitlines()
    assert "+::error file=a,line=2::x" in message.splitlines()
