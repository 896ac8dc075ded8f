"""Which calls of a recording reach a host tool, through a trailmap's tool model as replay
dispatches it; what a trail's state row keeps of its calls."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.conftest import write_tree
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.toolmodel.manifest import load_manifest
from trailblaze.toolmodel.records import Resolution
from trailblaze.toolmodel.resolution import Resolver
from trailblaze.trail.hostcalls import HOST_TOOLS, Reach, noted_tools, plain_names, recorded_calls
from trailblaze.trail.parse import parse_trail

MANIFEST = """\
id: app
dependencies:
  - trailblaze
target:
  display_name: App
  platforms:
    android:
      tool_sets:
        - app_set
"""


def resolution(root: Path, tools: dict[str, str]) -> Resolution:
    files = {"trailmaps/app/trailmap.yaml": MANIFEST}
    listed: list[str] = [n for n in ("app_runner", "app_command") if n in tools] or ["pressBack"]
    files |= {
        "trailmaps/app/toolsets/app_set.yaml": "id: app_set\ndescription: x\ntools:\n"
        + "".join(f"  - {n}\n" for n in listed)
    }
    files |= {f"trailmaps/app/tools/{name}.tool.yaml": text for name, text in tools.items()}
    write_tree(root, files)
    directory = root / "trailmaps/app"
    loaded = load_manifest(directory / "trailmap.yaml", "trailmaps/app/trailmap.yaml", "app")
    assert loaded.trailmap is not None, loaded.findings
    resolver = Resolver({"app": (loaded.trailmap, directory)}, root, load_catalog())
    model = resolver.resolve("app")
    assert not [f.text for f in model.findings if f.fatal]
    return model


def composed(name: str, *calls: str) -> str:
    body = "".join(f"  - {call}\n" for call in calls)
    return f"id: {name}\ndescription: {name}.\ntools:\n{body}"


def test_the_list_is_the_catalogs_host_tools_and_nothing_it_marks_otherwise() -> None:
    catalog = load_catalog()
    assert sorted(HOST_TOOLS) == ["exec", "runCommand", "runTrail", "script"]
    # Every tool the catalog says needs the host runs a program there, or reads a waypoint
    # definition of the trailmap (assertWaypoint: replay reads it from the workspace, test_waypoints).
    host = {t.name for t in catalog.tools.values() if t.requires_host}
    assert host - set(HOST_TOOLS) == {"assertWaypoint"}
    # Not every tool that is not recordable: findMatches and the device's tools stay callable.
    plain = plain_names(catalog)
    callable_ = {n for n in catalog.tools if n not in HOST_TOOLS}
    assert {"findMatches", "android_adbShell", "android_writeBytesToFile"} <= callable_
    assert not plain & set(HOST_TOOLS)
    assert {"tapOnElementBySelector", "inputText"} <= plain
    assert "runIf" not in plain  # a trailmap may ship its own, which may reach the host


def test_a_name_reaches_the_host_the_way_replay_dispatches_it(tmp_path: Path) -> None:
    model = resolution(
        tmp_path,
        {
            "app_reset": composed("app_reset", "pressBack: {}", "app_tidy: {}", "app_safe: {}"),
            "app_tidy": composed("app_tidy", "app_wipe: {}", "app_wipe: {}"),
            "app_wipe": composed("app_wipe", "'exec': {argv: [rm]}"),
            "app_safe": composed("app_safe", "tapOnElementWithText: {text: x}"),
            "app_guard": composed(
                "app_guard",
                "runIf: {condition: {tool: exec, args: {argv: [test]}}, then: [{pressBack: {}}],"
                " else: [{runIf: {condition: {selector: {}}, then: [{runCommand: {command: x}}]}}]}",
            ),
            "app_runner": "id: app_runner\n"
            "class: xyz.block.trailblaze.toolcalls.commands.ExecTrailblazeTool\n",
            "app_command": "id: app_command\n"
            "class: xyz.block.trailblaze.toolcalls.commands.RunCommandTrailblazeTool\n",
        },
    )
    reach = Reach(model, load_catalog())

    def found(name: str, args: object = None) -> list[tuple[str, tuple[str, ...], object]]:
        return [(c.tool.name, c.via, c.args) for c in reach.calls(name, args)]

    assert found("exec", {"argv": ["id"]}) == [("exec", ("exec",), {"argv": ["id"]})]
    assert found("app_reset") == [
        ("exec", ("app_reset", "app_tidy", "app_wipe", "exec"), {"argv": ["rm"]})
    ]
    assert found("app_guard") == [
        ("exec", ("app_guard", "exec"), {"argv": ["test"]}),
        ("runCommand", ("app_guard", "runCommand"), {"command": "x"}),
    ]
    assert found("app_runner", {"argv": ["id"]}) == [
        ("exec", ("app_runner", "exec"), {"argv": ["id"]})
    ]
    assert found("app_command")[0][:2] == ("runCommand", ("app_command", "runCommand"))
    assert found("runTrail", {"path": "x"})[0][0] == "runTrail"  # not on the surface: the catalog
    assert found("script")[0][0] == "script"
    for innocent in ("app_safe", "pressBack", "runIf", "nobodyDefinesThis"):
        assert found(innocent) == [], innocent
    # Without a trailmap (no target): the framework's tools only.
    bare = Reach(None, load_catalog())
    assert [c.tool.name for c in bare.calls("exec", None)] == ["exec"]
    assert bare.calls("app_reset", None) == ()


def test_a_wide_cycle_of_composed_tools_is_walked_once_each(tmp_path: Path) -> None:
    # Every tool calls every other ten times: a walk without memory would never end.
    names = [f"app_t{i}" for i in range(40)]
    tools = {
        name: composed(name, *[f"{other}: {{}}" for other in names for _ in range(10)])
        for name in names
    }
    tools["app_t39"] += "  - exec: {argv: [rm]}\n"
    reach = Reach(resolution(tmp_path, tools), load_catalog())

    started = time.monotonic()
    found = [c.via for c in reach.calls("app_t0", None)]

    assert found == [("app_t0", "app_t39", "exec")]
    assert time.monotonic() - started < 2


def test_a_recordings_calls_are_every_call_and_every_runif_call_in_any_form() -> None:
    text = """\
trail:
  - step: go
    recording:
      android:
        - tapOnElementBySelector: {}
        - runIf:
            condition: {tool: exec, args: {argv: [a]}}
            then:
              - app_x: {}
              - runIf:
                  condition: {tool: {app_y: {}, app_z: {}}}
                  then: [{exec: {argv: [b]}}]
            else: [{pressBack: {}, runCommand: {}}]
"""
    trail = parse_trail("t.trail.yaml", text).trail
    assert trail is not None
    seen = [(c.call.name, c.position, c.call.line) for c in recorded_calls(trail)]

    assert seen == [
        ("tapOnElementBySelector", None, 5),
        ("runIf", None, 6),
        ("exec", "runIf.condition", 7),
        ("app_x", "runIf.then[0]", 9),
        ("runIf", "runIf.then[1]", 10),
        ("app_y", "runIf.then[1] › runIf.condition", 11),
        ("app_z", "runIf.then[1] › runIf.condition", 11),
        ("exec", "runIf.then[1] › runIf.then[0]", 12),
        ("pressBack", "runIf.else[0]", 13),
        ("runCommand", "runIf.else[0]", 13),
    ]
    noted = noted_tools(trail, plain_names(load_catalog()))
    assert noted is not None
    # runIf too: a trailmap may ship its own, which may reach the host.
    assert json.loads(noted) == ["app_x", "app_y", "app_z", "exec", "runCommand", "runIf"]
    plain = parse_trail("p.trail.yaml", text.split("        - runIf", maxsplit=1)[0]).trail
    assert plain is not None
    assert noted_tools(plain, plain_names(load_catalog())) is None


def test_a_trailmaps_own_runif_reaches_the_host_through_its_body(tmp_path: Path) -> None:
    # Ours is replay's own (the calls in a recorded one are walked as calls of their own); a
    # trailmap's composed runIf replaces it and is walked like any composed tool.
    model = resolution(tmp_path, {"runIf": composed("runIf", "'exec': {argv: [rm]}")})
    reach = Reach(model, load_catalog())

    assert [(c.tool.name, c.via) for c in reach.calls("runIf", {"label": "x"})] == [
        ("exec", ("runIf", "exec"))
    ]
