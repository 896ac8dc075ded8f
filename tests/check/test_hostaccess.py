"""Recordings are data, as `trailblaze check` and `doit check` report it.

A recorded call that reaches a host tool (exec, runCommand, script, a runTrail outside the
workspace) directly, through composed tools, in a runIf, in either trail format, is a fatal,
located finding, unless `[tool.trailblaze] allow-host-programs` allows its program. The setting
and the tool model are inputs of every key that repeats a verdict: changing either is seen by
the next run of each entry point, and no unchanged trail is parsed again for it. The case
corpus (`tests/data/cases/host/`) holds every form with its exact message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_python, write_tree
from trailblaze.check.run import last_stats
from trailblaze.cli.main import main
from trailblaze.toolchain.compilers import Compiler

pytestmark = pytest.mark.tsc

MANIFEST = """\
id: app
dependencies:
  - trailblaze
target:
  display_name: App
  platforms:
    android:
      app_ids:
        - com.example.app
"""
DODO = "from trailblaze.doit_tasks import DOIT_CONFIG, task_check\n"
TIDY = """\
id: app_tidy
description: Tidy up after a run.
tools:
  - app_sweep: {}
"""
SWEEP_CLEAN = """\
id: app_sweep
description: Sweep.
tools:
  - pressBack: {}
"""
SWEEP_HOST = """\
id: app_sweep
description: Sweep.
tools:
  - pressBack: {}
  - exec:
      argv: [rm, -rf, /var/tmp/app]
"""


def trail(*calls: str, target: str = "app") -> str:
    head = f"config:\n  target: {target}\n" if target else ""
    body = "".join(f"        - {call}\n" for call in calls)
    return f"{head}trail:\n  - step: Go\n    recording:\n      android:\n{body}"


LEGACY = """\
- config:
    target: app
- tools:
    - exec: {argv: [whoami]}
"""
RUNIF = trail(
    "runIf: {condition: {tool: {exec: {argv: [test, -f, /tmp/x]}}}, then: [{pressBack: {}}]}"
)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    write_tree(
        root,
        {
            "trailmaps/app/trailmap.yaml": MANIFEST,
            "trailmaps/app/tools/app_tidy.tool.yaml": TIDY,
            "trailmaps/app/tools/app_sweep.tool.yaml": SWEEP_CLEAN,
            "dodo.py": DODO,
        },
    )
    monkeypatch.chdir(root)
    return root


def check(out: Path) -> tuple[int, dict[str, Any]]:
    """`trailblaze check --format json`: its exit code and report."""
    code = main(["check", "--format", "json", "--output", str(out)])
    return code, json.loads(out.read_text("utf-8"))


def host_findings(report: dict[str, Any]) -> list[tuple[str, int, int, str, str]]:
    return sorted(
        (f["path"].rsplit("/", 1)[-1], f["line"], f["column"], f["code"], f["message"])
        for f in report["findings"]
        if f["code"] in ("host-program", "host-file")
    )


def doit_check(root: Path) -> tuple[int, str]:
    done = run_python(root, "-m", "doit", "check")
    return done.returncode, done.stdout + done.stderr


def test_every_form_is_a_located_fatal_finding(tsc: Compiler, ws: Path, tmp_path: Path) -> None:
    write_tree(
        ws,
        {
            "trailmaps/app/tools/app_sweep.tool.yaml": SWEEP_HOST,
            "trailmaps/app/trails/direct.trail.yaml": trail("exec: {argv: [curl, evil]}"),
            "trailmaps/app/trails/composed.trail.yaml": trail("pressBack: {}", "app_tidy: {}"),
            "trailmaps/app/trails/condition.trail.yaml": RUNIF,
            "trailmaps/app/trails/legacy.trail.yaml": LEGACY,
            "trailmaps/app/trails/untargeted.trail.yaml": trail("exec: {argv: [id]}", target=""),
        },
    )

    code, report = check(tmp_path / "report.json")

    assert code == 1
    not_allowed = (
        "(argv[0]), which [tool.trailblaze] allow-host-programs in pyproject.toml does not "
        "allow: a recording may run on the machine that replays it only the programs that "
        "setting names"
    )
    assert host_findings(report) == [
        (
            "composed.trail.yaml", 8, 11, "host-program",
            "'app_tidy' reaches exec (app_tidy → app_sweep → exec): exec runs the host "
            f"program 'rm' {not_allowed}",
        ),
        ("condition.trail.yaml", 7, 38, "host-program", f"exec runs the host program 'test' {not_allowed}"),
        ("direct.trail.yaml", 7, 11, "host-program", f"exec runs the host program 'curl' {not_allowed}"),
        ("legacy.trail.yaml", 4, 7, "host-program", f"exec runs the host program 'whoami' {not_allowed}"),
        ("untargeted.trail.yaml", 5, 11, "host-program", f"exec runs the host program 'id' {not_allowed}"),
    ]  # fmt: skip
    assert all(f["fatal"] and f["kind"] == "parse" for f in report["findings"])
    condition = next(f for f in report["findings"] if f["path"].endswith("condition.trail.yaml"))
    assert (condition["step"], condition["tool"], condition["position"]) == (
        1,
        "exec",
        "runIf.condition",
    )
    # Type-checked, and failing: no trail is counted as checked without its finding.
    statuses = {t["path"].rsplit("/", 1)[-1]: t["status"] for t in report["trails"]}
    assert statuses["direct.trail.yaml"] == "type-checked"
    assert statuses["untargeted.trail.yaml"] == "parsed"

    done, output = doit_check(ws)
    assert done == 1, output
    assert "direct.trail.yaml:7:11: trail[0].recording.android[0]: exec runs the host" in output
    assert "'app_tidy' reaches exec (app_tidy → app_sweep → exec)" in output


def test_the_allow_list_is_read_by_every_entry_point_and_keys_every_verdict(
    tsc: Compiler, ws: Path, tmp_path: Path
) -> None:
    write_tree(ws, {"trailmaps/app/trails/adb.trail.yaml": trail("exec: {argv: [adb, devices]}")})
    assert check(tmp_path / "1.json")[0] == 1
    assert doit_check(ws)[0] == 1

    write_tree(ws, {"pyproject.toml": '[tool.trailblaze]\nallow-host-programs = ["adb"]\n'})
    code, report = check(tmp_path / "2.json")
    assert (code, host_findings(report)) == (0, [])
    # Only the setting changed: no trail was read or parsed again for it.
    assert last_stats(ws / ".trailblaze")["trails_parsed"] == 0
    done, output = doit_check(ws)
    assert done == 0, output

    # Taken back: the finding is back, not a remembered pass.
    write_tree(ws, {"pyproject.toml": "[tool.trailblaze]\nallow-host-programs = []\n"})
    code, report = check(tmp_path / "3.json")
    assert code == 1
    assert [f[0] for f in host_findings(report)] == ["adb.trail.yaml"]
    assert doit_check(ws)[0] == 1


def test_a_composed_tool_edited_to_reach_the_host_fails_the_trails_that_call_it(
    tsc: Compiler, ws: Path, tmp_path: Path
) -> None:
    write_tree(ws, {"trailmaps/app/trails/tidy.trail.yaml": trail("app_tidy: {}")})
    assert check(tmp_path / "1.json")[0] == 0
    assert doit_check(ws)[0] == 0

    write_tree(ws, {"trailmaps/app/tools/app_sweep.tool.yaml": SWEEP_HOST})
    code, report = check(tmp_path / "2.json")

    assert code == 1
    assert [f[:4] for f in host_findings(report)] == [("tidy.trail.yaml", 7, 11, "host-program")]
    # Seen through the run's tool model: the trail's row stood, its file was not read again
    # by the parse stage.
    assert last_stats(ws / ".trailblaze")["trails_parsed"] == 0
    write_tree(ws, {"trailmaps/app/tools/app_sweep.tool.yaml": SWEEP_CLEAN + "# edited\n"})
    assert doit_check(ws)[0] == 0
    write_tree(ws, {"trailmaps/app/tools/app_sweep.tool.yaml": SWEEP_HOST})
    done, output = doit_check(ws)
    assert done == 1, output
    assert "'app_tidy' reaches exec (app_tidy → app_sweep → exec)" in output


def test_host_calls_are_found_with_the_type_gate_off_and_for_an_exempt_target(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(
        ws,
        {
            "trailmaps/app/trailmap.yaml": MANIFEST
            + "trail_validation:\n  exempt: being re-recorded\n",
            "trailmaps/app/trails/direct.trail.yaml": trail("exec: {argv: [curl, evil]}"),
        },
    )
    monkeypatch.setenv("TRAILBLAZE_DISABLE_TRAIL_RECORDING_VALIDATION", "1")

    code, report = check(tmp_path / "report.json")

    assert code == 1
    assert [f[:4] for f in host_findings(report)] == [("direct.trail.yaml", 7, 11, "host-program")]
    assert report["trails"][0]["status"] == "parsed"


SCRIPTED = """\
import { trailblaze } from "@trailblaze/scripting";

/** Seeds the account: the workspace's own code, which may run what it likes. */
export const app_seed = trailblaze.tool(async (_input, ctx) => {
  return await ctx.tools.exec({ argv: ["./scripts/seed.sh"] });
});
"""


def test_a_scripted_tool_that_runs_a_host_program_is_the_workspaces_code(
    tsc: Compiler, ws: Path, tmp_path: Path
) -> None:
    write_tree(
        ws,
        {
            "trailmaps/app/tools/app_seed.ts": SCRIPTED,
            "trailmaps/app/trails/seed.trail.yaml": trail("app_seed: {}"),
        },
    )

    code, report = check(tmp_path / "report.json")

    assert (code, report["findings"]) == (0, [])
    assert report["trails"][0]["status"] == "type-checked"
