"""Shortcut and trailhead metadata in tool files, validated as the reference's loader does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, write_tree
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.toolmodel.records import TrailmapTools
from trailblaze.toolmodel.tooldefs import RelPath, load_trailmap_tools
from trailblaze.toolmodel.tooldefs.navigation import waypoint_id_problem

CORPUS = ROOT / "tests/data/corpus/head/trails/config/trailmaps"
LAUNCH = "tools:\n  - launchApp:\n      appId: com.example\n"


def load(root: Path, files: dict[str, str]) -> TrailmapTools:
    write_tree(root, {f"trailmaps/app/{rel}": text for rel, text in files.items()})
    return load_trailmap_tools(root / "trailmaps" / "app", RelPath(root), load_catalog())


def texts(tools: TrailmapTools) -> list[str]:
    return [f.text for f in tools.findings]


def trailhead(tmp_path: Path, block: str, *, body: str = LAUNCH) -> TrailmapTools:
    text = f"id: app_launch\ndescription: Launch.\ntrailhead:\n{block}{body}"
    return load(tmp_path, {"trailheads/app_launch.trailhead.yaml": text})


def test_every_shortcut_of_the_upstream_corpus_loads_without_a_finding(tmp_path: Path) -> None:
    shutil.copytree(CORPUS / "contacts", tmp_path / "contacts")
    tools = load_trailmap_tools(tmp_path / "contacts", RelPath(tmp_path), load_catalog())
    assert texts(tools) == []
    assert len(tools.tools) == 81
    assert all(t.path.startswith("contacts/shortcuts/") for t in tools.tools.values())


@pytest.mark.parametrize(
    "block",
    [
        "  to: app/android/home\n",
        "  dynamic: true\n",
        "  to: null\n  dynamic: true\n",
        "  dynamic: false\n  to: app/android/home\n",
        "  toByPlatform:\n    android: app/android/home\n    ios: app/ios/home\n",
        "  to: app/home\n  toByPlatform:\n    ios: app/ios/home\n",
    ],
)
def test_trailheads_the_reference_accepts_load(tmp_path: Path, block: str) -> None:
    tools = trailhead(tmp_path, block)
    assert texts(tools) == []
    assert "app_launch" in tools.tools


def test_a_trailhead_s_destination_reaches_the_surface(tmp_path: Path) -> None:
    tools = trailhead(tmp_path, "  to: app/android/home\n")
    assert tools.tools["app_launch"].trailhead_to == "app/android/home"


F = "trailmaps/app/trailheads/app_launch.trailhead.yaml"


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (
            "  to: app/android/home\n  dynamic: true\n",
            f"{F}:4:3: trailhead: 'dynamic: true' says the destination varies by input, so the "
            "trailhead cannot also name one in 'to': drop 'to', or drop 'dynamic' and name the "
            "destination",
        ),
        (
            "  dynamic: true\n  toByPlatform: {ios: app/ios/home}\n",
            f"{F}:5:3: trailhead: 'dynamic: true' says the destination varies by input, so the "
            "trailhead cannot also name one in 'toByPlatform': drop 'toByPlatform', or drop "
            "'dynamic' and name the destination",
        ),
        (
            "  {}\n",
            f"{F}:4:3: trailhead: a trailhead needs the waypoint it lands on ('to:', or "
            "'toByPlatform:'), or 'dynamic: true' when its destination varies by input",
        ),
        (
            "  dynamic: false\n",
            f"{F}:4:3: trailhead: a trailhead needs the waypoint it lands on ('to:', or "
            "'toByPlatform:'), or 'dynamic: true' when its destination varies by input",
        ),
        (
            "  toByPlatform: {}\n",
            f"{F}:4:3: trailhead: a trailhead needs the waypoint it lands on ('to:', or "
            "'toByPlatform:'), or 'dynamic: true' when its destination varies by input",
        ),
        (
            "  to: home\n",
            f"{F}:4:7: trailhead.to: 'home' is not a waypoint id: waypoint ids are "
            "slash-namespaced with at least two non-blank segments (e.g. 'clock/android/alarm_tab')",
        ),
        (
            "  toByPlatform:\n    android: app/android/home\n    ios: app//home\n",
            f"{F}:6:10: trailhead.toByPlatform.ios: 'app//home' is not a waypoint id: waypoint "
            "ids are slash-namespaced with at least two non-blank segments (e.g. "
            "'clock/android/alarm_tab')",
        ),
        (
            "  toByPlatform: [app/android/home]\n",
            f"{F}:4:17: trailhead.toByPlatform: expected a mapping of platform to waypoint id",
        ),
        ("  dynamic: yes please\n", f"{F}:4:12: trailhead.dynamic: expected true or false"),
    ],
)
def test_trailhead_rules_are_located_findings(tmp_path: Path, block: str, message: str) -> None:
    tools = trailhead(tmp_path, block)
    assert texts(tools) == [message]
    assert all(f.fatal and f.kind == "manifest" for f in tools.findings)
    # the tool is still defined (its calls are checked), without a destination
    assert tools.tools["app_launch"].trailhead_to is None


@pytest.mark.parametrize("value", ["", "/", "/foo", "foo/", "a//b", "home", "a/ /b"])
def test_malformed_waypoint_ids(value: str) -> None:
    assert waypoint_id_problem(value) is not None


@pytest.mark.parametrize(
    "value", ["a/b", "clock/android/alarm_tab", "myapp/inbox/inventory-upsell"]
)
def test_waypoint_ids(value: str) -> None:
    assert waypoint_id_problem(value) is None


def test_a_trailhead_that_is_text_is_refused(tmp_path: Path) -> None:
    tools = trailhead(tmp_path, "", body="  app/android/home\n" + LAUNCH)
    assert texts(tools) == [
        f"{F}:4:3: trailhead: expected a mapping, found a string",
    ]


def test_an_unknown_key_in_a_block_is_a_warning_the_reference_would_drop(tmp_path: Path) -> None:
    tools = trailhead(tmp_path, "  to: app/android/home\n  from: app/android/login\n")
    assert texts(tools) == [
        f"{F}:5:3: trailhead: unknown key 'from': the reference ignores it (a 'trailhead' block "
        "takes to, toByPlatform, dynamic)"
    ]
    assert not tools.findings[0].fatal
    assert "app_launch" in tools.tools


S = "trailmaps/app/shortcuts/app_go.shortcut.yaml"


def shortcut(
    tmp_path: Path, block: str, *, name: str = "shortcuts/app_go.shortcut.yaml"
) -> TrailmapTools:
    text = f"id: app_go\ndescription: Go.\nshortcut:\n{block}tools:\n  - pressBack: {{}}\n"
    return load(tmp_path, {name: text})


@pytest.mark.parametrize(
    ("block", "messages"),
    [
        (
            "  to: app/android/b\n",
            [f"{S}:4:3: shortcut: a shortcut needs 'from:', the waypoint it starts on"],
        ),
        (
            "  from: app/android/a\n  to: ''\n",
            [
                f"{S}:5:7: shortcut.to: '' is not a waypoint id: waypoint ids are slash-namespaced "
                "with at least two non-blank segments (e.g. 'clock/android/alarm_tab')"
            ],
        ),
        (
            "  from: /a\n  to: app/android/b\n",
            [
                f"{S}:4:9: shortcut.from: '/a' is not a waypoint id: waypoint ids are "
                "slash-namespaced with at least two non-blank segments (e.g. "
                "'clock/android/alarm_tab')"
            ],
        ),
        (
            "  from: app/android/a\n  to: app/android/b\n  variant: ' '\n",
            [
                f"{S}:6:12: shortcut.variant: 'variant' is present but blank: omit it, or name what "
                "tells this shortcut apart from the others of the same 'from' and 'to'"
            ],
        ),
    ],
)
def test_shortcut_rules_are_located_findings(
    tmp_path: Path, block: str, messages: list[str]
) -> None:
    tools = shortcut(tmp_path, block)
    assert texts(tools) == messages
    assert "app_go" in tools.tools


def test_a_shortcut_with_a_variant_loads(tmp_path: Path) -> None:
    tools = shortcut(tmp_path, "  from: app/android/a\n  to: app/android/b\n  variant: fast\n")
    assert texts(tools) == []


def test_a_tool_is_a_shortcut_or_a_trailhead_not_both(tmp_path: Path) -> None:
    text = (
        "id: app_go\ndescription: Go.\nshortcut:\n  from: app/android/a\n  to: app/android/b\n"
        "trailhead:\n  to: app/android/b\ntools:\n  - pressBack: {}\n"
    )
    tools = load(tmp_path, {"shortcuts/app_go.shortcut.yaml": text})
    assert texts(tools) == [
        f"{S}:6:1: a tool is a shortcut (gated on the current waypoint) or a trailhead (always "
        "available), not both: keep one of the 'shortcut' and 'trailhead' blocks",
        f"{S}:6:1: a 'trailhead' block belongs in a file named '*.trailhead.yaml' (in the "
        "trailmap's 'trailheads/'): the reference refuses it here",
    ]


def test_a_block_in_a_file_not_named_for_it_is_refused(tmp_path: Path) -> None:
    tools = shortcut(
        tmp_path, "  from: app/android/a\n  to: app/android/b\n", name="tools/app_go.tool.yaml"
    )
    assert texts(tools) == [
        "trailmaps/app/tools/app_go.tool.yaml:3:1: a 'shortcut' block belongs in a file named "
        "'*.shortcut.yaml' (in the trailmap's 'shortcuts/'): the reference refuses it here"
    ]


def test_a_null_block_is_no_block(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {"tools/app_x.tool.yaml": "id: app_x\ndescription: X.\ntrailhead:\n" + LAUNCH},
    )
    assert texts(tools) == []
    assert tools.tools["app_x"].trailhead_to is None


def test_a_metadata_only_file_attaches_to_a_tool_defined_elsewhere(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "trailheads/app_launch.trailhead.yaml": (
                "id: app_launchSignedIn\ntrailhead:\n  to: app/android/home\nparameters: []\n"
            ),
            "shortcuts/app_go.shortcut.yaml": (
                "id: app_go\nshortcut:\n  from: app/android/a\n  to: app/android/b\n"
            ),
        },
    )
    assert texts(tools) == []
    assert tools.tools == {}  # it defines no tool: the scripted tool of that id is the tool


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("description: Launch.\n", "5:1: 'description' comes from the tool"),
        ("parameters:\n  - name: email\n", "5:1: 'parameters' comes from the tool"),
        ("requires_host: true\n", "5:1: 'requires_host' comes from the tool"),
    ],
)
def test_a_metadata_only_file_declares_nothing_of_the_tool(
    tmp_path: Path, extra: str, message: str
) -> None:
    text = "id: app_launch\ntrailhead:\n  to: app/android/home\n\n" + extra
    tools = load(tmp_path, {"trailheads/app_launch.trailhead.yaml": text})
    assert len(tools.findings) == 1
    assert message in tools.findings[0].text
    assert tools.findings[0].fatal


def test_a_class_tool_may_write_an_empty_parameter_list(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "tools/app_hide.tool.yaml": (
                "id: app_hide\n"
                "class: xyz.block.trailblaze.toolcalls.commands.HideKeyboardTrailblazeTool\n"
                "parameters: []\n"
            )
        },
    )
    assert texts(tools) == []
    assert "app_hide" in tools.tools


def test_a_composed_tool_may_compose_nothing(tmp_path: Path) -> None:
    tools = load(
        tmp_path, {"tools/app_noop.tool.yaml": "id: app_noop\ndescription: N.\ntools: []\n"}
    )
    assert texts(tools) == []
    assert tools.tools["app_noop"].body == ()


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (
            "trailhead: {}\n",
            "4:12: trailhead: a trailhead needs the waypoint it lands on ('to:', or "
            "'toByPlatform:'), or 'dynamic: true' when its destination varies by input (the "
            "trailhead is dropped, the tool kept)",
        ),
        (
            "trailhead:\n  to: app/home\n  dynamic: true\n",
            "5:3: trailhead: 'dynamic: true' says the destination varies by input",
        ),
        ("trailhead:\n  to: home\n", "5:7: trailhead.to: 'home' is not a waypoint id"),
        ("trailhead: app/home\n", "4:12: trailhead: expected a mapping"),
    ],
)
def test_a_scripted_tool_s_own_trailhead_is_checked_and_a_bad_one_only_warns(
    tmp_path: Path, block: str, message: str
) -> None:
    """The SDK's `TrailheadSpec`: the reference drops a bad one with a warning."""
    tools = load(
        tmp_path,
        {
            "tools/app_open.yaml": f"name: app_open\nscript: ./app_open.js\ndescription: Open.\n{block}",
            "tools/app_open.js": "export {};\n",
        },
    )
    assert len(tools.findings) == 1
    finding = tools.findings[0]
    assert finding.text.startswith(f"trailmaps/app/tools/app_open.yaml:{message}")
    assert (finding.kind, finding.fatal) == ("warning", False)
    assert tools.tools["app_open"].trailhead_to is None


def test_a_scripted_tool_s_valid_trailhead_reaches_the_surface(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {"tools/app_open.yaml": "name: app_open\ntrailhead:\n  to: app/android/home\n"},
    )
    assert texts(tools) == []
    assert tools.tools["app_open"].trailhead_to == "app/android/home"
