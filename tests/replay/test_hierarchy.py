"""uiautomator dump parsing: the node tree, the drop rules, and the errors a bad dump gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from trailblaze.replay.device import DeviceError
from trailblaze.replay.hierarchy import (
    Bounds,
    Hierarchy,
    UiNode,
    is_keyboard_node,
    parse_hierarchy,
    visible_nodes,
)

DUMP = Path(__file__).resolve().parent.parent / "data" / "replay" / "sample_dump.xml"
HEAD = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
ATTRS = (
    'text="" resource-id="" class="android.view.View" package="p" content-desc="" '
    'checkable="false" checked="false" clickable="false" enabled="true" focusable="false" '
    'focused="false" scrollable="false" long-clickable="false" password="false" selected="false"'
)


@pytest.fixture(scope="module")
def dump() -> Hierarchy:
    return parse_hierarchy(DUMP.read_text(encoding="utf-8"))


def by_text(hierarchy: Hierarchy, text: str) -> UiNode:
    (node,) = (n for n in hierarchy.iter_nodes() if n.text == text)
    return node


def test_nodes_carry_every_dump_attribute(dump: Hierarchy) -> None:
    email = by_text(dump, "jane@example.com")
    assert email.resource_id == "xyz.block.trailblaze.examples.sampleapp:id/email_field"
    assert email.class_name == "android.widget.EditText"
    assert email.package == "xyz.block.trailblaze.examples.sampleapp"
    assert email.hint == "Email"
    assert email.content_desc == ""
    assert (email.clickable, email.enabled, email.focusable, email.long_clickable) == (
        True,
        True,
        True,
        True,
    )
    assert (email.checkable, email.checked, email.focused, email.scrollable) == (
        False,
        False,
        False,
        False,
    )
    assert (email.password, email.selected) == (False, False)
    assert email.bounds == Bounds(60, 420, 1020, 560)
    assert email.children == ()


def test_index_paths_and_children_follow_the_document(dump: Hierarchy) -> None:
    toggle = by_text(dump, "Toggle A")
    assert toggle.index_path == (0, 0, 0, 4, 0)
    parent = dump.node_at((0, 0, 0, 4))
    assert parent.children == (toggle,)
    assert parent.checked is True
    assert parent.is_ancestor_of(toggle)
    assert not toggle.is_ancestor_of(parent)
    assert [n.index_path for n in dump.roots] == [(0,), (1,)]
    assert dump.rotation == 0
    assert dump.has_hint_attribute is True


def test_iter_nodes_is_depth_first_in_document_order(dump: Hierarchy) -> None:
    paths = [n.index_path for n in dump.iter_nodes()]
    assert paths[:4] == [(0,), (0, 0), (0, 0, 0), (0, 0, 0, 0)]
    assert paths == sorted(paths)
    assert len(paths) == 37


def test_entities_and_newlines_are_decoded(dump: Hierarchy) -> None:
    result = dump.node_at((0, 0, 0, 8))
    assert result.text == "Name: Jane Doe\nEmail: jane@example.com"


def test_resolved_text_is_text_then_hint_then_content_desc(dump: Hierarchy) -> None:
    name_field = dump.node_at((0, 0, 0, 2))
    assert (name_field.text, name_field.resolved_text) == ("", "Name")
    back = dump.node_at((0, 0, 0, 14))
    assert back.resolved_text == "Back"
    assert dump.node_at((0, 0, 0)).resolved_text is None


def test_visible_nodes_drop_zero_area_offscreen_and_keyboard(dump: Hierarchy) -> None:
    visible = visible_nodes(dump)
    texts = {n.text for n in visible}
    assert "Ghost" not in texts  # zero area
    assert "Below the fold" not in texts  # off-screen
    assert "Done" not in texts  # soft keyboard
    assert not any(n.package == "com.google.android.inputmethod.latin" for n in visible)
    assert {"Submit", "Coffee Latte", "Online"} <= texts
    assert len(visible) == 32
    assert is_keyboard_node(by_text(dump, "Done"))


def test_screen_comes_from_the_windows(dump: Hierarchy) -> None:
    assert dump.screen == Bounds(0, 0, 1080, 2400)
    assert parse_hierarchy(f"{HEAD}<hierarchy rotation='1'/>").screen == Bounds(0, 0, 0, 0)


def test_a_dump_without_hints_says_so() -> None:
    xml = f'{HEAD}<hierarchy rotation="0"><node {ATTRS} bounds="[0,0][10,10]"/></hierarchy>'
    hierarchy = parse_hierarchy(xml)
    (node,) = hierarchy.iter_nodes()
    assert node.hint is None
    assert hierarchy.has_hint_attribute is False


def test_inverted_bounds_read_as_empty() -> None:
    xml = f'{HEAD}<hierarchy><node {ATTRS} bounds="[50,50][10,10]"/></hierarchy>'
    (node,) = parse_hierarchy(xml).iter_nodes()
    assert node.bounds.area == 0


def test_bounds_geometry() -> None:
    bounds = Bounds(60, 250, 1020, 390)
    assert bounds.center == (540, 320)
    assert (bounds.width, bounds.height, bounds.area) == (960, 140, 134400)
    assert bounds.contains_point(60, 250)
    assert not bounds.contains_point(1020, 390)
    assert bounds.intersects(Bounds(0, 0, 61, 251))
    assert not bounds.intersects(Bounds(0, 0, 60, 250))


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        ("", "uiautomator dump is not XML (it starts with '')"),
        (
            "ERROR: could not get idle state.",
            "uiautomator dump is not XML (it starts with 'ERROR: could not get idle state.')",
        ),
        (
            f"{HEAD}<hierarchy><node",
            "uiautomator dump is malformed XML: unclosed token: line 1, column 67",
        ),
        (f"{HEAD}<screen/>", "uiautomator dump has no <hierarchy> root (found <screen>)"),
        (
            f'{HEAD}<hierarchy rotation="sideways"/>',
            "uiautomator dump has a bad rotation 'sideways'",
        ),
        (
            f'{HEAD}<hierarchy><node {ATTRS}><node {ATTRS} bounds="[0,0][1,"/></node></hierarchy>',
            "uiautomator dump node 0 has no bounds",
        ),
        (
            f'{HEAD}<hierarchy><node {ATTRS} bounds="[0,0][9,9]">'
            f'<node {ATTRS} bounds="0,0,1,1"/></node></hierarchy>',
            "uiautomator dump node 0/0 has bad bounds '0,0,1,1' (expected '[l,t][r,b]')",
        ),
        (
            f'{HEAD}<!DOCTYPE x [<!ENTITY a "aaaa">]><hierarchy/>',
            "uiautomator dump contains a DOCTYPE, which dumps never have",
        ),
    ],
)
def test_bad_dumps_are_device_errors(xml: str, message: str) -> None:
    with pytest.raises(DeviceError) as caught:
        parse_hierarchy(xml)
    assert str(caught.value) == message
