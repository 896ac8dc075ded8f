"""`waypoints/**/*.waypoint.yaml`, decoded and validated as the reference's loader does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, write_tree
from trailblaze.cli.main import main
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.toolmodel.records import TrailmapTools
from trailblaze.toolmodel.tooldefs import RelPath, load_trailmap_tools

CORPUS = ROOT / "tests/data/corpus/head/trails/config/trailmaps"
W = "trailmaps/app/waypoints/home.waypoint.yaml"


def load(root: Path, files: dict[str, str]) -> TrailmapTools:
    write_tree(root, {f"trailmaps/app/{rel}": text for rel, text in files.items()})
    return load_trailmap_tools(root / "trailmaps" / "app", RelPath(root), load_catalog())


def waypoint(tmp_path: Path, text: str) -> TrailmapTools:
    return load(tmp_path, {"waypoints/home.waypoint.yaml": text})


def texts(tools: TrailmapTools) -> list[str]:
    return [f.text for f in tools.findings]


@pytest.mark.parametrize("trailmap", ["clock", "goose"])
def test_every_waypoint_of_the_upstream_corpus_loads_without_a_finding(
    tmp_path: Path, trailmap: str
) -> None:
    shutil.copytree(CORPUS / trailmap, tmp_path / trailmap)
    tools = load_trailmap_tools(tmp_path / trailmap, RelPath(tmp_path), load_catalog())
    assert texts(tools) == []
    read = sorted(p.name for p in tools.files if p.name.endswith(".waypoint.yaml"))
    assert read == sorted(p.name for p in (CORPUS / trailmap / "waypoints").iterdir())


def test_waypoints_are_found_at_any_depth_and_only_under_waypoints(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "waypoints/android/deep/home.waypoint.yaml": "id: app/home\nandroid: {}\n",
            "waypoints/notes.md": "not yaml: [\n",
            "waypoints/home.yaml": "not yaml: [\n",  # not a waypoint file: not read
        },
    )
    assert texts(tools) == []
    assert [p.name for p in tools.files] == ["home.waypoint.yaml"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "id: app/home\nrequired:\n  - selector: {androidAccessibility: {textRegex: Home}}\n",
            f"{W}:2:1: 'required' at the top is the legacy (v1) waypoint format: move "
            "'required'/'forbidden' under a device classifier block ('android:', 'ios:', "
            "'web:', ...) and drop 'platforms'",
        ),
        (
            "id: app/home\nplatforms: [android]\nandroid: {}\n",
            f"{W}:2:1: 'platforms' at the top is the legacy (v1) waypoint format: move "
            "'required'/'forbidden' under a device classifier block ('android:', 'ios:', "
            "'web:', ...) and drop 'platforms'",
        ),
        ("description: Home.\nandroid: {}\n", f"{W}:1:1: a waypoint needs an 'id:'"),
        ("id:\nandroid: {}\n", f"{W}:1:4: id: 'id' must be text"),
        ("id: app/home\ndescription: [a]\n", f"{W}:2:14: description: 'description' must be text"),
        (
            "- id: app/home\n",
            f"{W}:1:1: a waypoint file is a mapping ('id:', 'description:', then one block per device classifier)",
        ),
        (
            "id: app/home\nios: [a]\n",
            f"{W}:2:6: ios: 'ios' is a device classifier block: expected a mapping "
            "('required:', 'forbidden:', 'route:', 'example:')",
        ),
        (
            "id: app/home\nandroid:\n  required:\n    selector: {}\n",
            f"{W}:4:5: android.required: expected a list, found a mapping",
        ),
        (
            "id: app/home\nandroid:\n  forbidden:\n    - minCount: two\n",
            f"{W}:4:17: android.forbidden[0].minCount: expected an integer, found a string",
        ),
        (
            "id: app/home\nandroid:\n  required:\n    - selector:\n"
            "        androidAccessibility: [x]\n",
            f"{W}:5:31: android.required[0].selector.androidAccessibility: ",
        ),
        ("", f"{W}:1:1: empty waypoint file: it needs an 'id'"),
        ("id: [\n", f"{W}:2:1: "),
    ],
)
def test_what_the_reference_cannot_decode_is_a_located_finding(
    tmp_path: Path, text: str, message: str
) -> None:
    tools = waypoint(tmp_path, text)
    assert len(tools.findings) == 1, texts(tools)
    assert tools.findings[0].text.startswith(message)
    assert tools.findings[0].fatal
    assert tools.findings[0].kind == "manifest"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "id: app/home\nandroid:\n  required:\n    - selector:\n"
            "        androidAccessibility: {textRegx: Home}\n",
            f"{W}:5:32: android.required[0].selector.androidAccessibility: unknown key "
            "'textRegx' (did you mean 'textRegex'?); the reference's lenient decoding drops it",
        ),
        (
            "id: app/home\nandroid:\n  required:\n    - minCount: '2'\n",
            f"{W}:4:17: android.required[0].minCount: expected an integer, found the quoted string '2'; the "
            "reference's lenient decoding reads the text",
        ),
        (
            "id: app/home\nandroid:\n  required:\n    - selector:\n"
            "        androidAccessibility: {isSelected: 'true'}\n",
            f"{W}:5:44: android.required[0].selector.androidAccessibility.isSelected: expected "
            "true or false, found the quoted string 'true'; the reference's lenient decoding reads "
            "the text",
        ),
    ],
)
def test_what_the_reference_decodes_leniently_is_a_warning(
    tmp_path: Path, text: str, message: str
) -> None:
    tools = waypoint(tmp_path, text)
    assert texts(tools) == [message]
    assert not tools.findings[0].fatal


def test_the_reference_s_documented_example_loads(tmp_path: Path) -> None:
    text = """\
id: myapp/items
description: "Items home (All items / Categories / Modifiers)."
route: myapp-scheme://items
android:
  required: [ { selector: { androidAccessibility: { textRegex: "All items" } } } ]
  example: { file: items.android.example.json, capturedAt: 2026-06-27T08:45:09Z }
ios:
  required: [ { selector: { iosAxe: { uniqueId: "ItemsHeader" } } } ]
web:
  route: https://app.example.com/items
  required: [ { selector: { web: { ariaRole: heading, ariaNameRegex: "Items" } } } ]
android-tablet: {}
"""
    assert texts(waypoint(tmp_path, text)) == []


def test_a_number_where_text_belongs_is_read_as_text(tmp_path: Path) -> None:
    tools = waypoint(tmp_path, "id: 42\ndescription: 7\nandroid:\n  route: 3\n")
    assert texts(tools) == [
        f"{W}:4:10: android.route: expected a string, found a number; the reference's "
        "lenient decoding reads the text"
    ]


def test_a_check_reports_a_broken_waypoint_of_a_library_nobody_uses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(
        tmp_path,
        {
            "trailmaps/kit/trailmap.yaml": "id: kit\n",
            "trailmaps/kit/waypoints/kit_home.waypoint.yaml": (
                "id: kit/android/home\nforbidden:\n  - selector: {}\n"
            ),
        },
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert (
        "manifest: trailmaps/kit/waypoints/kit_home.waypoint.yaml:2:1: 'forbidden' at the top "
        "is the legacy (v1) waypoint format" in out
    )
    # fixed: the next check passes (the waypoint file is an input of the no-op key)
    (tmp_path / "trailmaps/kit/waypoints/kit_home.waypoint.yaml").write_text(
        "id: kit/android/home\nandroid:\n  forbidden:\n    - selector: {}\n"
    )
    assert main(["check"]) == 0


def test_the_decoder_gives_the_definition_replay_matches(tmp_path: Path) -> None:
    from trailblaze.toolmodel.tooldefs.waypoint import (  # noqa: PLC0415
        WaypointCondition,
        WaypointVariant,
        load_waypoints,
    )

    write_tree(
        tmp_path,
        {
            "trailmaps/app/waypoints/home.waypoint.yaml": """
                id: app/home
                route: app://home
                android:
                  required:
                    - {description: Title, selector: {androidAccessibility: {textRegex: Home}}}
                    - {selector: {androidAccessibility: {textRegex: Row}}, minCount: '2'}
                android-tablet:
                  forbidden: [{description: later}]
                ios: {}
                """,
            "trailmaps/app/waypoints/bad.waypoint.yaml": "id: app/bad\nandroid: [x]\n",
            "trailmaps/other/waypoints/dup.waypoint.yaml": "id: app/home\nandroid: {}\n",
        },
    )
    found = load_waypoints(
        [tmp_path / "trailmaps/app", tmp_path / "trailmaps/other"],
        RelPath(tmp_path),
        load_catalog(),
    )

    home = found.by_id["app/home"]
    assert (home.path, home.route) == ("trailmaps/app/waypoints/home.waypoint.yaml", "app://home")
    assert home.by_classifier == {
        "android": WaypointVariant(
            required=(
                WaypointCondition("Title", {"androidAccessibility": {"textRegex": "Home"}}),
                WaypointCondition(None, {"androidAccessibility": {"textRegex": "Row"}}, 2),
            ),
        ),
        "android-tablet": WaypointVariant(forbidden=(WaypointCondition("later", None),)),
        "ios": WaypointVariant(),
    }
    assert sorted(found.by_id) == ["app/home"]  # the first file of an id wins
    assert found.broken["app/bad"].text == (
        "trailmaps/app/waypoints/bad.waypoint.yaml:2:10: android: 'android' is a device "
        "classifier block: expected a mapping ('required:', 'forbidden:', 'route:', 'example:')"
    )
