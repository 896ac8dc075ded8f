from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import dedent, write_tree
from trailblaze.cli.main import main
from trailblaze.toolmodel.manifest import is_safe_id, load_manifest, manifest_schema, parse_manifest
from trailblaze.yaml.node import load


def messages(text: str, dir_name: str = "app") -> list[str]:
    return [
        f.text for f in parse_manifest(load(dedent(text)), "m/trailmap.yaml", dir_name).findings
    ]


def test_schema_we_ship_is_a_valid_json_schema() -> None:
    Draft202012Validator.check_schema(manifest_schema())


def test_target_manifest_becomes_a_record(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "shop/trailmap.yaml": """
                id: shop
                dependencies: [trailblaze, common]
                trail_validation:
                  exempt: "records MCP tools"
                target:
                  display_name: Shop
                  tools: [shop_signIn]
                  platforms:
                    android:
                      app_ids: [com.example.shop]
                      tool_sets: [core_interaction, verification]
                      tools: [shop_android_only, shop_signIn]
                    ios: {}
            """
        },
    )
    outcome = load_manifest(tmp_path / "shop/trailmap.yaml", "shop/trailmap.yaml", "shop")
    assert outcome.findings == ()
    trailmap = outcome.trailmap
    assert trailmap is not None
    assert trailmap.is_target
    assert trailmap.display_name == "Shop"
    assert [d.value for d in trailmap.dependencies] == ["trailblaze", "common"]
    assert [(d.value, d.line, d.column) for d in trailmap.dependencies][1] == ("common", 2, 28)
    assert [t.value for t in trailmap.own_tool_sets] == ["core_interaction", "verification"]
    assert [t.value for t in trailmap.scripted_tools] == ["shop_signIn", "shop_android_only"]
    assert trailmap.exempt_reason == "records MCP tools"


@pytest.mark.parametrize("reason", ['""', "'   '", "null"])
def test_blank_exemption_reason_is_not_an_exemption(reason: str) -> None:
    outcome = parse_manifest(
        load(f"id: a\ntrail_validation:\n  exempt: {reason}\n"), "m/trailmap.yaml", "a"
    )
    assert outcome.trailmap is not None
    assert outcome.trailmap.exempt_reason is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "target: {display_name: A}\n",
            ["m/trailmap.yaml:1:1: missing required key 'id' in the document"],
            id="missing-id",
        ),
        pytest.param(
            "id: app\ntarget: {}\n",
            ["m/trailmap.yaml:2:9: target: missing required key 'display_name' in 'target'"],
            id="missing-display-name",
        ),
        pytest.param(
            "id: app\ndependencys: [x]\n",
            ["m/trailmap.yaml:2:1: unknown key 'dependencys' (did you mean 'dependencies'?)"],
            id="unknown-key",
        ),
        pytest.param(
            "id: app\ntarget:\n  display_name: A\n  platforms:\n    andriod: {}\n",
            [
                "m/trailmap.yaml:5:5: target.platforms: unknown key 'andriod' (did you mean "
                "'android'?); expected one of android, ios, web, compose, desktop"
            ],
            id="unknown-platform",
        ),
        pytest.param(
            "id: app\ntarget:\n  display_name: A\n  platforms:\n    ios:\n      tool_set: [x]\n",
            [
                "m/trailmap.yaml:6:7: target.platforms.ios: unknown key 'tool_set' (did you "
                "mean 'tool_sets'?)"
            ],
            id="unknown-platform-key",
        ),
        pytest.param(
            "id: app\ntarget:\n  display_name: A\n  has_custom_ios_driver: 'true'\n",
            [
                "m/trailmap.yaml:4:26: target.has_custom_ios_driver: expected true or false, "
                "found the quoted string 'true'"
            ],
            id="quoted-boolean",
        ),
        pytest.param(
            "id: app\ndependencies: trailblaze\n",
            ["m/trailmap.yaml:2:15: dependencies: expected a list, found a string"],
            id="dependencies-not-a-list",
        ),
        pytest.param(
            "id: app\ntarget: {display_name: A}\nplatforms: {android: {}}\n",
            [
                "m/trailmap.yaml:3:1: 'platforms' belongs to library trailmaps; a target "
                "declares them under 'target.platforms'"
            ],
            id="platforms-on-target",
        ),
        pytest.param(
            "id: app\ntarget:\n  display_name: A\n  system_prompt: hi\n",
            [
                "m/trailmap.yaml:4:3: target: an inline 'system_prompt' is not allowed; point "
                "'system_prompt_file' at a file"
            ],
            id="inline-system-prompt",
        ),
        pytest.param(
            # The removed `target.system_prompt` must not hide the unknown top-level one.
            "id: app\nsystem_prompt: hi\ntarget:\n  display_name: A\n  system_prompt: hi\n",
            [
                "m/trailmap.yaml:5:3: target: an inline 'system_prompt' is not allowed; point "
                "'system_prompt_file' at a file",
                "m/trailmap.yaml:2:1: unknown key 'system_prompt'",
            ],
            id="inline-system-prompt-and-top-level-one",
        ),
        pytest.param(
            "id: app\nuse: [trailblaze]\n",
            [
                "m/trailmap.yaml:2:1: 'use' was removed from trailmap.yaml; list trailmaps "
                "under 'dependencies'"
            ],
            id="removed-key",
        ),
        pytest.param(
            "id: app\ntrail_validation: {exempt: yes, reason: x}\n",
            ["m/trailmap.yaml:2:33: trail_validation: unknown key 'reason'"],
            id="exempt-extra-key",
        ),
        pytest.param(
            "id: app\ndependencies: [trailblaze, '']\n",
            ["m/trailmap.yaml:2:28: dependencies[1]: must not be empty"],
            id="empty-dependency",
        ),
    ],
)
def test_manifest_message_shapes(text: str, expected: list[str]) -> None:
    assert messages(text) == expected


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("..", "'..' is not a valid name"),
        (".", "'.' is not a valid name"),
        ("a/b", "'a/b' is not a valid name"),
        # `{bad!r}` doubles the backslash, and single-quoted YAML keeps both.
        ("a\\b", "'a\\\\b' is not a valid name"),
        ("/abs", "'/abs' is not a valid name"),
        ("", "must not be empty"),
        ("../escape", "'../escape' is not a valid name"),
    ],
)
def test_ids_that_could_escape_a_directory_are_rejected(bad: str, message: str) -> None:
    assert not is_safe_id(bad)
    found = messages(f"id: {bad!r}\n", dir_name="x")
    assert len(found) == 1
    assert found[0].startswith("m/trailmap.yaml:1:5: id: ")
    assert found == [f"m/trailmap.yaml:1:5: id: {message}"]


@pytest.mark.parametrize("good", ["wikipedia", "my-trailmap", "a_b_c", "v1.2"])
def test_ordinary_ids_are_accepted(good: str) -> None:
    assert is_safe_id(good)
    assert messages(f"id: {good}\n", dir_name=good) == []


def test_id_differing_from_directory_is_a_warning() -> None:
    outcome = parse_manifest(load("id: shop\n"), "m/trailmap.yaml", "store")
    assert outcome.trailmap is not None
    assert [(f.kind, f.fatal, f.text) for f in outcome.findings] == [
        (
            "warning",
            False,
            "m/trailmap.yaml:1:5: id: trailmap id 'shop' differs from its directory name "
            "'store'; trails target the directory name",
        )
    ]


def test_broken_yaml_in_a_manifest_is_located(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a/trailmap.yaml": "id: [a\n"})
    outcome = load_manifest(tmp_path / "a/trailmap.yaml", "a/trailmap.yaml", "a")
    assert outcome.trailmap is None
    assert len(outcome.findings) == 1
    assert outcome.findings[0].text.startswith("a/trailmap.yaml:2:1: invalid YAML: ")


def test_a_manifest_that_is_no_mapping_gets_one_finding_at_its_top_level_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A list or a scalar also got "'platforms' belongs to library trailmaps" (the schema's
    rule for targets held for any document that is not a mapping)."""
    write_tree(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": "- id: app\n- target: {display_name: App}\n",
            "trailmaps/lib/trailmap.yaml": "# lib\n\n  'lib'\n",
            "trailmaps/web/trailmap.yaml": "---\n[id, web]\n",
            "trailmaps/ok/trailmap.yaml": "id: ok\ntarget:\n  display_name: OK\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--format", "json"]) == 1
    out, err = capsys.readouterr()
    assert err == ""
    report = json.loads(out)
    assert [
        (f["kind"], f["path"], f["line"], f["column"], f["message"]) for f in report["findings"]
    ] == [
        ("manifest", "trailmaps/app/trailmap.yaml", 1, 1, "expected a mapping, found a list"),
        (
            "manifest",
            "trailmaps/lib/trailmap.yaml",
            3,
            3,
            "expected a mapping, found the quoted string 'lib'",
        ),
        ("manifest", "trailmaps/web/trailmap.yaml", 2, 1, "expected a mapping, found a list"),
    ]
    assert report["trailmaps"] == ["ok"]


def test_a_library_trailmap_may_ship_trailheads_shortcuts_and_waypoints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(
        tmp_path,
        {
            "trailmaps/kit/trailmap.yaml": "id: kit\ndependencies: [trailblaze]\n",
            "trailmaps/kit/trailheads/kit_launch.trailhead.yaml": (
                "id: kit_launch\ndescription: Launch.\ntrailhead:\n  to: kit/android/home\n"
                "tools:\n  - launchApp:\n      appId: com.example.kit\n"
            ),
            "trailmaps/kit/shortcuts/kit_back.shortcut.yaml": (
                "id: kit_back\ndescription: Back.\nshortcut:\n  from: kit/android/detail\n"
                "  to: kit/android/home\ntools:\n  - pressBack: {}\n"
            ),
            "trailmaps/kit/waypoints/android/kit_home.waypoint.yaml": (
                "id: kit/android/home\nandroid:\n  required:\n"
                "    - selector: {androidAccessibility: {textRegex: Home}}\n"
            ),
            "trailmaps/app/trailmap.yaml": (
                "id: app\ndependencies: [kit]\ntarget:\n  display_name: App\n"
            ),
        },
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-typecheck", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["findings"] == []


def test_a_library_must_leave_the_waypoints_list_empty_a_target_may_keep_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(
        tmp_path,
        {
            "trailmaps/kit/trailmap.yaml": "id: kit\nwaypoints:\n  - kit/android/home\n",
            "trailmaps/app/trailmap.yaml": (
                "id: app\ntarget:\n  display_name: App\nwaypoints: [app/android/home]\n"
            ),
            "trailmaps/none/trailmap.yaml": "id: none\nwaypoints: []\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-typecheck", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [
        (f["kind"], f["fatal"], f["path"], f["line"], f["column"], f["code"], f["message"])
        for f in report["findings"]
    ] == [
        (
            "manifest",
            True,
            "trailmaps/kit/trailmap.yaml",
            2,
            1,
            "waypoints-list",
            "a library trailmap (no 'target') must leave 'waypoints' empty: the list is "
            "deprecated, and waypoint files are found under the trailmap's waypoints/ without it",
        ),
    ]
