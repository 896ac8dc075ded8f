"""Recordings are data, as `trailblaze replay` enforces it, against the fake adb server.

A trail whose recording reaches a host tool the workspace does not allow is refused before any
device work: no shell command reaches the device, and the host program never starts (each
would touch a marker file). With the program allowed in `[tool.trailblaze]
allow-host-programs` it runs; a scripted tool's own calls run as its code says.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fakeadb import FakeAdbServer
from tests.conftest import write_tree
from trailblaze.cli.main import main
from trailblaze.toolchain.compilers import Compiler

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
      tool_sets:
        - app_set
"""
TOOLS = {
    "toolsets/app_set.yaml": "id: app_set\ndescription: The app's.\ntools:\n  - app_runner\n",
    "tools/app_runner.tool.yaml": (
        "id: app_runner\nclass: xyz.block.trailblaze.toolcalls.commands.ExecTrailblazeTool\n"
    ),
    "tools/app_reset.tool.yaml": (
        "id: app_reset\ndescription: Reset the app.\ntools:\n  - app_wipe: {}\n"
    ),
    "tools/app_wipe.tool.yaml": (
        "id: app_wipe\ndescription: Wipe.\ntools:\n  - exec: {argv: [touch, MARKER]}\n"
    ),
    "tools/app_setup.tool.yaml": (
        "id: app_setup\ndescription: Set up.\ntools:\n"
        "  - runTrail: {path: trailmaps/app/trails/setup/touch.trail.yaml}\n"
    ),
}
LIST = "mobile_listInstalledApps: {}"


def trail(*calls: str) -> str:
    body = "".join(f"        - {call}\n" for call in calls)
    return f"config:\n  target: app\ntrail:\n  - step: Go\n    recording:\n      android:\n{body}"


@pytest.fixture
def ws(tmp_path: Path, server: FakeAdbServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    root = tmp_path / "ws"
    marker = tmp_path / "marker"
    files = {"trailmaps/app/trailmap.yaml": MANIFEST}
    files |= {f"trailmaps/app/{k}": v.replace("MARKER", str(marker)) for k, v in TOOLS.items()}
    write_tree(root, files)
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
    monkeypatch.chdir(root)
    return {"root": root, "marker": marker, "server": server}


def replay(ws: dict[str, Any], name: str, text: str) -> tuple[int, dict[str, Any]]:
    """`trailblaze replay` of one trail of the workspace: the exit code and its JSON result."""
    path = ws["root"] / "trailmaps/app/trails" / name
    write_tree(path.parent, {path.name: text})
    out = ws["root"].parent / "replay.json"
    code = main(["replay", str(path), "--json", str(out)])
    (result,) = json.loads(out.read_text("utf-8"))["trails"]
    return code, result


def device_commands(ws: dict[str, Any]) -> list[str]:
    commands: list[str] = ws["server"].commands["emulator-5554"]
    return commands


NOT_ALLOWED = (
    "(argv[0]), which [tool.trailblaze] allow-host-programs in pyproject.toml does not allow: a "
    "recording may run on the machine that replays it only the programs that setting names; "
    "replay refuses the trail before any device work"
)
TOUCH = "exec: {argv: [touch, MARKER]}"
FORMS = {
    "direct": (
        trail(LIST, TOUCH),
        f"8:11: trail[0].recording.android[1]: step 1, exec: exec runs the host program "
        f"'touch' {NOT_ALLOWED}",
    ),
    "composed at depth": (
        trail(LIST, "app_reset: {}"),
        "8:11: trail[0].recording.android[1]: step 1, app_reset: 'app_reset' reaches exec "
        f"(app_reset → app_wipe → exec): exec runs the host program 'touch' {NOT_ALLOWED}",
    ),
    "a class tool under another name": (
        trail(LIST, "app_runner: {argv: [touch, MARKER]}"),
        "8:11: trail[0].recording.android[1]: step 1, app_runner: 'app_runner' reaches exec "
        f"(app_runner → exec): exec runs the host program 'touch' {NOT_ALLOWED}",
    ),
    "a runIf condition": (
        trail(LIST, "runIf: {condition: {tool: {" + TOUCH + "}}, then: [{pressBack: {}}]}"),
        "8:38: trail[0].recording.android[1].runIf.condition.tool: step 1, exec: exec runs the "
        f"host program 'touch' {NOT_ALLOWED}",
    ),
    "a runIf else branch": (
        trail(
            LIST,
            "runIf: {condition: {selector: {androidAccessibility: {textRegex: Nope}}}, "
            "then: [{pressBack: {}}], else: [{" + TOUCH + "}]}",
        ),
        "8:118: trail[0].recording.android[1].runIf.else[0]: step 1, exec: exec runs the host "
        f"program 'touch' {NOT_ALLOWED}",
    ),
    "the legacy format": (
        f"- config:\n    target: app\n- tools:\n    - {LIST}\n    - {TOUCH}\n",
        f"5:7: [1].tools[1]: the tools block, exec: exec runs the host program 'touch' "
        f"{NOT_ALLOWED}",
    ),
    "a runTrail whose trail runs it": (
        trail(LIST, "runTrail: {path: setup/touch.trail.yaml}"),
        "8:11: trail[0].recording.android[1]: step 1, runTrail: runTrail replays "
        "'setup/touch.trail.yaml', whose step 1 calls exec: exec runs the host program 'touch' "
        f"{NOT_ALLOWED}",
    ),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_recording_that_reaches_the_host_is_refused_before_any_device_work(
    ws: dict[str, Any], form: str
) -> None:
    text, message = FORMS[form]
    touch = TOUCH.replace("MARKER", str(ws["marker"]))
    write_tree(ws["root"], {"trailmaps/app/trails/setup/touch.trail.yaml": trail(touch)})
    text = text.replace("MARKER", str(ws["marker"]))

    code, result = replay(ws, "host.trail.yaml", text)

    assert code == 1
    assert result["status"] == "refused"
    assert result["findings"] == [f"trailmaps/app/trails/host.trail.yaml:{message}"]
    assert device_commands(ws) == []
    assert not ws["marker"].exists()


def test_a_runtrail_of_a_file_outside_the_workspace_is_refused_unread(
    ws: dict[str, Any], tmp_path: Path
) -> None:
    outside = tmp_path / "outside.trail.yaml"
    outside.write_text(trail(LIST))

    code, result = replay(ws, "outside.trail.yaml", trail(LIST, f"runTrail: {{path: {outside}}}"))

    assert code == 1
    assert result["status"] == "refused"
    assert result["findings"] == [
        "trailmaps/app/trails/outside.trail.yaml:8:11: trail[0].recording.android[1]: step 1, "
        f"runTrail: runTrail reads the host file '{outside}', which is not a trail file inside "
        "the workspace: a recording may replay only the workspace's own trails; replay refuses "
        "the trail before any device work"
    ]
    assert device_commands(ws) == []


def test_a_program_the_workspace_allows_runs(ws: dict[str, Any]) -> None:
    root = ws["root"]
    script = root / "scripts" / "mark.sh"
    write_tree(
        root,
        {
            "pyproject.toml": '[tool.trailblaze]\nallow-host-programs = ["touch", "scripts/mark.sh"]\n',
            "scripts/mark.sh": '#!/bin/sh\necho marked > "$1"\n',
        },
    )
    script.chmod(0o755)
    second = ws["marker"].with_name("second")

    code, result = replay(
        ws,
        "allowed.trail.yaml",
        trail(
            LIST,
            f"exec: {{argv: [touch, {ws['marker']}]}}",
            "app_wipe: {}",
            f"exec: {{argv: [./scripts/mark.sh, {second}]}}",
        ),
    )

    assert (code, result["status"]) == (0, "passed"), result
    assert ws["marker"].exists()
    assert second.read_text() == "marked\n"
    assert device_commands(ws) != []


def test_a_program_given_by_a_token_is_refused_even_when_its_value_is_allowed(
    ws: dict[str, Any],
) -> None:
    write_tree(
        ws["root"], {"pyproject.toml": '[tool.trailblaze]\nallow-host-programs = ["touch"]\n'}
    )
    text = trail(LIST, f"exec: {{argv: ['{{{{args.tool}}}}', {ws['marker']}]}}").replace(
        "config:\n", "config:\n  args:\n    tool: {type: string, default: touch}\n", 1
    )

    code, result = replay(ws, "token.trail.yaml", text)

    assert (code, result["status"]) == (1, "refused")
    assert (
        "exec runs the host program '{{args.tool}}', known only at replay (a token)"
        in (result["findings"][0])
    )
    assert device_commands(ws) == []
    assert not ws["marker"].exists()


def test_a_host_call_only_the_run_reaches_is_refused_when_reached(ws: dict[str, Any]) -> None:
    # A composed tool's runTrail: the preflight cannot follow a trail a tool body names (its
    # path may be a parameter), so the engine refuses the exec when the replayed trail gets
    # there, before it starts.
    marker = ws["marker"]
    write_tree(
        ws["root"],
        {
            "trailmaps/app/trails/setup/touch.trail.yaml": trail(
                f"exec: {{argv: [touch, {marker}]}}"
            )
        },
    )

    code, result = replay(ws, "late.trail.yaml", trail(LIST, "app_setup: {}"))

    assert (code, result["status"]) == (1, "failed")
    (step,) = result["steps"]
    assert step["failure"]["failed_tool"] == "app_setup"
    assert (
        "tool 'exec' refused: exec runs the host program 'touch' (argv[0]), which "
        "[tool.trailblaze] allow-host-programs in pyproject.toml does not allow"
    ) in step["failure"]["error"]
    assert not marker.exists()


SCRIPTED = """\
import { trailblaze } from "@trailblaze/scripting";

/** Marks the run: the workspace's own code, which runs what it says. */
export const app_mark = trailblaze.tool(async (_input, ctx) => {
  return await ctx.tools.exec({ argv: ["touch", "MARKER"] });
});

/** Calls a composed tool: its body is data, like a recording. */
export const app_via = trailblaze.tool(async (_input, ctx) => {
  return await ctx.tools.app_wipe({});
});
"""


def test_a_scripted_tool_runs_host_programs_as_its_code_says(
    tsc: Compiler, ws: dict[str, Any]
) -> None:
    marker = ws["marker"]
    write_tree(
        ws["root"],
        {
            "trailmaps/app/tools/app_mark.ts": SCRIPTED.replace("MARKER", str(marker)),
            "trailmaps/app/trailmap.yaml": MANIFEST + "  tools:\n    - app_mark\n    - app_via\n",
        },
    )

    code, result = replay(ws, "scripted.trail.yaml", trail(LIST, "app_mark: {}"))

    assert (code, result["status"]) == (0, "passed"), result
    assert marker.exists()
    # The same program, recorded: refused.
    marker.unlink()
    code, result = replay(
        ws, "recorded.trail.yaml", trail(LIST, f"exec: {{argv: [touch, {marker}]}}")
    )
    assert (code, result["status"]) == (1, "refused")
    assert not marker.exists()
    # A composed tool the code calls: its body's exec is the body's, refused when reached.
    code, result = replay(ws, "via.trail.yaml", trail(LIST, "app_via: {}"))
    assert (code, result["status"]) == (1, "failed")
    assert (
        "app_via.calls[0] › app_wipe.tools[0] exec failed: tool 'exec' refused: exec runs the "
        "host program 'touch'"
    ) in result["steps"][0]["failure"]["error"]
    assert not marker.exists()


def test_a_bad_setting_is_a_located_usage_error(
    ws: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    root = ws["root"]
    write_tree(root, {"pyproject.toml": "[tool.trailblaze]\nallow-host-programs = [true]\n"})
    path = root / "trailmaps/app/trails/any.trail.yaml"
    write_tree(path.parent, {path.name: trail(LIST)})

    code = main(["replay", str(path)])

    assert code == 2
    assert capsys.readouterr().err == (
        f"trailblaze replay: {root / 'pyproject.toml'}:2:1: [tool.trailblaze] "
        "allow-host-programs[0] must be a program name or path (a string), not True\n"
    )
    assert device_commands(ws) == []
    assert os.environ.get("ANDROID_ADB_SERVER_PORT")
