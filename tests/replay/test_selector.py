"""Selector and text matching against a dump, including recorded (corpus) selectors."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from trailblaze.replay.hierarchy import Hierarchy, UiNode, parse_hierarchy
from trailblaze.replay.javaregex import JavaRegexError, compile_pattern, translate_java_regex
from trailblaze.replay.matches import (
    AmbiguousSelectorError,
    NoMatchError,
    center,
    find,
    find_by_text,
    pick_for_tap,
)
from trailblaze.replay.selector import SelectorError, validate_selector

DATA = Path(__file__).resolve().parent.parent / "data" / "replay"
CORPUS = YAML(typ="safe", pure=True).load((DATA / "corpus_selectors.yaml").read_text("utf-8"))


@pytest.fixture(scope="module")
def dump() -> Hierarchy:
    return parse_hierarchy((DATA / "sample_dump.xml").read_text(encoding="utf-8"))


def shown(node: UiNode) -> str:
    """A match as corpus_selectors.yaml writes it."""
    if node.resolved_text:
        return node.resolved_text
    child = next((c.resolved_text for c in node.children if c.resolved_text), "")
    return f"<{node.class_name.rsplit('.', 1)[-1]}> {child}"


def texts(nodes: list[UiNode]) -> list[str]:
    return [shown(n) for n in nodes]


def accessibility(**fields: Any) -> dict[str, Any]:
    return {"androidAccessibility": fields}


@pytest.mark.parametrize(
    "case", CORPUS, ids=[f"{i}-{c['from'].rsplit('/', 1)[-1]}" for i, c in enumerate(CORPUS)]
)
def test_recorded_selectors(case: dict[str, Any], dump: Hierarchy) -> None:
    if "error" in case:
        with pytest.raises(SelectorError) as caught:
            find(case["nodeSelector"], dump)
        assert str(caught.value) == case["error"]
    else:
        assert texts(find(case["nodeSelector"], dump)) == case["expect"]


# --- Java regex ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("java", "python", "on", "off"),
    [
        (r"\QName: Jane (Doe)\E", r"Name:\ Jane\ \(Doe\)", 0, 0),
        (r"Total \Q$3.00", r"Total \$3\.00", 0, 0),
        (r"[\Q-]\E]", r"[\-\]]", 0, 0),
        ("(?-i)Submit", "Submit", 0, re.IGNORECASE),
        ("(?is)a.b", "a.b", re.IGNORECASE | re.DOTALL, 0),
        (r"\p{L}+ \P{L}", r"[^\W\d_]+ [\W\d_]", 0, 0),
        (r"[\p{Alpha}\p{Digit}_]+", "[a-zA-Z0-9_]+", 0, 0),
        (r"\p{IsDigit}\p{Upper}", r"\d[A-Z]", 0, 0),
        (r"(?<word>\w+) \k<word>", r"(?P<word>\w+) (?P=word)", 0, 0),
        (r"(?u:x)(?-i:y)", "(?:x)(?-i:y)", 0, 0),
        (r"\x{1F600}\0101\cI", r"\U0001f600\x41\x09", 0, 0),
        (
            r"a\z|b\Z|\h",
            r"a\Z|b(?=\n?\Z)|[ \t\xa0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000]",
            0,
            0,
        ),
        ("[a&b|c~d]", r"[a\&b\|c\~d]", 0, 0),
        ("[]a]", "[]a]", 0, 0),
    ],
)
def test_java_regex_translation(java: str, python: str, on: int, off: int) -> None:
    assert translate_java_regex(java) == (python, on, off)


@pytest.mark.parametrize(
    ("java", "message"),
    [
        (r"\p{Lu}", r"Java regex class \p{Lu} is not supported (write it without \p{…})"),
        (r"[\p{L}0-9]", r"Java regex class \p{L} is not supported (write it without \p{…})"),
        ("[a-z&&[^x]]", "Java character class intersection in '[a-z&&[^x]]' is not supported"),
        ("[a[b]]", "Java character class union in '[a[b]]' is not supported"),
        (
            "a(?i)b",
            "Java inline flags (?i) in the middle of 'a(?i)b' are not supported "
            "(put them at the start)",
        ),
        (r"\Gx", r"Java regex \G in '\\Gx' is not supported"),
    ],
)
def test_java_regex_features_python_lacks_are_explicit_errors(java: str, message: str) -> None:
    with pytest.raises(JavaRegexError) as caught:
        compile_pattern(java)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("pattern", "value", "native", "maestro"),
    [
        ("Submit", "Submit", True, True),
        ("Submit", "submit", False, True),
        ("ok", "book", False, False),  # whole value, never a substring
        ("(Online|Offline)", "Offline", True, True),
        ("$3.00", "$3.00", True, True),  # a regex that cannot match: the literal leg does
        ("Price (USD", "Price (USD", True, True),  # not a regex: literal
        ("Price (USD", "price (usd", False, True),  # Maestro escapes it and ignores case
        ("(?-i)Submit", "submit", False, False),
        ("Item.*", "Item 1\nItem 2", False, True),  # Maestro is dot-all
        (r"\QA+B\E", "A+B", True, True),
        (r"\p{L}+", "Café", True, True),
    ],
)
def test_regex_or_literal_matching(pattern: str, value: str, native: bool, maestro: bool) -> None:
    assert compile_pattern(pattern).matches(value) is native
    assert compile_pattern(pattern, maestro=True).matches(value) is maestro


def test_a_price_matches_itself_without_escaping(dump: Hierarchy) -> None:
    assert texts(find(accessibility(textRegex="$3.00"), dump)) == ["$3.00"]
    assert texts(find(accessibility(textRegex=r"\$\d\.\d\d"), dump)) == ["$3.00", "$4.50"]


# --- fields -------------------------------------------------------------------------------


def test_index_applies_after_sorting_top_to_bottom(dump: Hierarchy) -> None:
    coffees = find(accessibility(textRegex="Coffee"), dump)
    assert [n.bounds.top for n in coffees] == [1090, 1370]
    (second,) = find({**accessibility(textRegex="Coffee"), "index": 1}, dump)
    assert second is coffees[1]
    assert find({**accessibility(textRegex="Coffee"), "index": 2}, dump) == []


def test_sorting_breaks_ties_left_to_right(dump: Hierarchy) -> None:
    toggles = find({"containsChild": accessibility(textRegex="Toggle .")}, dump)
    assert texts(toggles) == ["<View> Toggle A", "<View> Toggle B"]


def test_resource_ids_match_the_full_id(dump: Hierarchy) -> None:
    assert len(find(accessibility(resourceIdRegex="android:id/text1"), dump)) == 3
    assert find(accessibility(resourceIdRegex="text1"), dump) == []
    assert texts(find(accessibility(resourceIdRegex=".*:id/network_status"), dump)) == ["Online"]


def test_boolean_fields(dump: Hierarchy) -> None:
    assert texts(find({**accessibility(isEnabled=False), "index": 0}, dump)) == [
        "<Button> Clear All"
    ]
    focused = find(accessibility(isFocused=True), dump)
    assert [n.hint for n in focused] == ["Name"]
    assert len(find(accessibility(isScrollable=True), dump)) == 1
    selected = find(accessibility(isSelected=True, isClickable=True), dump)
    assert texts(selected) == ["<View> Forms"]


def test_content_description_and_hint_fields(dump: Hierarchy) -> None:
    assert texts(find(accessibility(contentDescriptionRegex="Toggle ."), dump)) == [
        "Toggle A",
        "Toggle B",
    ]
    assert find(accessibility(hintTextRegex="Email", textRegex="jane@example.com"), dump)
    assert find(accessibility(hintTextRegex=".*"), dump)[0].hint == "Name"  # blank is absent


def test_maestro_matcher_ignores_case(dump: Hierarchy) -> None:
    submit = {"androidMaestro": {"textRegex": "submit", "clickable": False}}
    assert texts(find(submit, dump)) == ["Submit"]
    assert texts(find({"androidMaestro": {"accessibilityTextRegex": "back"}}, dump)) == ["Back"]
    assert find({"androidMaestro": {"textRegex": "SUBMIT", "clickable": True}}, dump) == []


def test_hint_needs_a_dump_that_has_hints() -> None:
    xml = (
        "<?xml version='1.0' ?><hierarchy><node text='Name' class='android.widget.EditText' "
        "bounds='[0,0][100,100]'/></hierarchy>"
    )
    with pytest.raises(SelectorError) as caught:
        find(accessibility(hintTextRegex="Name"), parse_hierarchy(xml))
    assert str(caught.value) == (
        "field 'androidAccessibility.hintTextRegex' cannot be resolved from this uiautomator "
        "dump (the platform's dump has no hint attribute)"
    )


# --- relations ----------------------------------------------------------------------------


def test_child_of_searches_inside_the_parent(dump: Hierarchy) -> None:
    in_list = {**accessibility(textRegex="Coffee.*"), "childOf": accessibility(isScrollable=True)}
    assert texts(find(in_list, dump)) == ["Coffee", "Coffee Latte", "Coffee"]
    in_second_row = {
        **accessibility(textRegex=r"\$.*"),
        "childOf": {"containsChild": accessibility(textRegex="Coffee Latte")},
    }
    assert texts(find(in_second_row, dump)) == ["$4.50"]


def test_contains_child_is_direct_children_only(dump: Hierarchy) -> None:
    assert texts(find({"containsChild": accessibility(textRegex="Coffee Latte")}, dump)) == [
        "<View> Coffee Latte"
    ]
    recycler = {
        **accessibility(isScrollable=True),
        "containsChild": accessibility(textRegex="Coffee"),
    }
    assert find(recycler, dump) == []


def test_contains_descendants_needs_all_of_them(dump: Hierarchy) -> None:
    both = {
        "containsDescendants": [
            accessibility(textRegex="Coffee"),
            accessibility(textRegex="$3.00"),
        ],
        **accessibility(isClickable=True),
    }
    assert texts(find(both, dump)) == ["<View> Coffee"]
    recycler = {
        "containsDescendants": [accessibility(textRegex="Coffee Latte")],
        **accessibility(isScrollable=True),
    }
    assert len(find(recycler, dump)) == 1


def test_spatial_relations(dump: Hierarchy) -> None:
    label = accessibility(textRegex="Name")
    fields = accessibility(classNameRegex="android.widget.EditText")
    assert [n.hint for n in find({**fields, "below": label}, dump)] == ["Name", "Email"]
    assert find({**fields, "above": label}, dump) == []
    prices = accessibility(textRegex=r"\$.*")
    assert texts(find({**prices, "rightOf": accessibility(textRegex="Coffee Latte")}, dump)) == [
        "$3.00",
        "$4.50",
    ]
    assert texts(
        find(
            {**accessibility(textRegex="Online"), "leftOf": accessibility(textRegex="Version 1.0")},
            dump,
        )
    ) == ["Online"]


def test_nested_index_picks_the_anchor(dump: Hierarchy) -> None:
    second_coffee_row = {"containsChild": {**accessibility(textRegex="Coffee"), "index": 1}}
    assert [n.bounds.top for n in find(second_coffee_row, dump)] == [1340]


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            accessibility(isHeading=True),
            "field 'androidAccessibility.isHeading' cannot be resolved from a uiautomator dump",
        ),
        (
            {"containsChild": accessibility(inputType=1)},
            "field 'containsChild.androidAccessibility.inputType' cannot be resolved from a "
            "uiautomator dump",
        ),
        (
            {"containsDescendants": [accessibility(textRegex="a"), {"compose": {"testTag": "x"}}]},
            "field 'containsDescendants[1].compose' cannot be resolved from a uiautomator dump",
        ),
        (
            accessibility(textregex="Submit"),
            "unknown selector field 'androidAccessibility.textregex' (did you mean 'textRegex'?)",
        ),
        ({"childof": {}}, "unknown selector field 'childof' (did you mean 'childOf'?)"),
        ({"index": 1}, "selector has no criteria: it would match every node"),
        (
            {**accessibility(textRegex="a"), "index": -1},
            "field 'index' must be a whole number >= 0",
        ),
        (
            accessibility(isChecked="yes"),
            "field 'androidAccessibility.isChecked' must be true or false, not 'yes'",
        ),
        (
            accessibility(textRegex=5),
            "field 'androidAccessibility.textRegex' must be a string, not 5",
        ),
        (
            {"androidAccessibility": "Submit"},
            "field 'androidAccessibility' must be a mapping, not str",
        ),
        ("Submit", "selector must be a mapping, not str"),
    ],
)
def test_bad_selectors_name_the_field(selector: Any, message: str, dump: Hierarchy) -> None:
    with pytest.raises(SelectorError) as caught:
        find(selector, dump)
    assert str(caught.value) == message


def test_unresolvable_fields_fail_even_when_nothing_else_matches(dump: Hierarchy) -> None:
    selector = {**accessibility(textRegex="no such text"), "childOf": accessibility(isHeading=True)}
    with pytest.raises(SelectorError, match="isHeading"):
        find(selector, dump)
    with pytest.raises(SelectorError, match="isHeading"):
        validate_selector(selector)


def test_nesting_deeper_than_ten_levels_is_refused(dump: Hierarchy) -> None:
    selector: dict[str, Any] = accessibility(textRegex="Coffee")
    for _ in range(10):
        selector = {"childOf": selector}
    with pytest.raises(SelectorError) as caught:
        find(selector, dump)
    assert str(caught.value).endswith("nests deeper than 10 levels")
    assert find(selector["childOf"], dump) == []


def test_first_driver_match_wins_like_the_runtime(dump: Hierarchy) -> None:
    both = {**accessibility(textRegex="Online"), "web": {"ariaRole": "heading"}}
    assert texts(find(both, dump)) == ["Online"]


# --- picking a tap target -----------------------------------------------------------------


def test_pick_prefers_the_single_clickable_match(dump: Hierarchy) -> None:
    matches = find(accessibility(textRegex="Forms"), dump)
    assert len(matches) == 2  # the title, and the selected tab's label
    rows = find({"containsDescendants": [accessibility(textRegex="Coffee Latte")]}, dump)
    picked = pick_for_tap(rows)
    assert picked.clickable
    assert center(picked) == (540, 1270)


def test_pick_takes_the_first_or_refuses_in_strict_mode(dump: Hierarchy) -> None:
    coffees = find(accessibility(textRegex="Coffee"), dump)
    assert pick_for_tap(coffees) is coffees[0]
    assert pick_for_tap(coffees, index=1) is coffees[1]
    with pytest.raises(AmbiguousSelectorError) as caught:
        pick_for_tap(coffees, strict=True)
    assert str(caught.value) == (
        "2 elements match and 0 of them are clickable: "
        "TextView 'Coffee' id=android:id/text1 [40,1090][700,1170]; "
        "TextView 'Coffee' id=android:id/text1 [40,1370][700,1450]"
    )
    assert caught.value.matches == tuple(coffees)
    with pytest.raises(NoMatchError, match="no match at index 2"):
        pick_for_tap(coffees, index=2)
    with pytest.raises(NoMatchError, match="no element matches"):
        pick_for_tap([])


# --- text tools ---------------------------------------------------------------------------


def test_tap_text_is_a_case_insensitive_contains_match(dump: Hierarchy) -> None:
    assert texts(find_by_text(dump, "latte", contains=True)) == ["Coffee Latte"]
    assert texts(find_by_text(dump, "Jane Doe", contains=True)) == [
        "Name: Jane Doe\nEmail: jane@example.com"
    ]
    assert find_by_text(dump, "(Doe", contains=True) == []  # literal, never a regex


def test_assert_visible_text_is_a_full_match(dump: Hierarchy) -> None:
    assert len(find_by_text(dump, "Coffee", contains=False)) == 2
    assert find_by_text(dump, "Coff", contains=False) == []
    assert texts(find_by_text(dump, "coffee l.*", contains=False)) == ["Coffee Latte"]
    assert texts(find_by_text(dump, "$3.00", contains=False)) == ["$3.00"]


def test_text_tools_look_at_text_hint_and_content_desc(dump: Hierarchy) -> None:
    assert [n.hint for n in find_by_text(dump, "Email", contains=False)] == ["Email"]
    assert texts(find_by_text(dump, "Toggle A", contains=False)) == ["Toggle A"]
    assert find_by_text(dump, "Done", contains=False) == []  # the keyboard is not the app


def test_not_visible_check_is_lenient(dump: Hierarchy) -> None:
    assert find_by_text(dump, "coffee latte (", contains=False) == []
    assert find_by_text(dump, "COFFEE LATTE", contains=False, lenient=True)
    assert find_by_text(dump, "$4.50", contains=False, lenient=True)


def test_text_filters(dump: Hierarchy) -> None:
    coffee = find_by_text(
        dump, "Coffee", contains=True, resource_id_regex="android:id/text1", index=2
    )
    assert [n.bounds.top for n in coffee] == [1370]
    assert texts(find_by_text(dump, "Clear All", contains=False, enabled=False)) == ["Clear All"]
    assert find_by_text(dump, "Clear All", contains=False, enabled=True) == []
    assert texts(find_by_text(dump, "Forms", contains=False, selected=False)) == ["Forms", "Forms"]
    with pytest.raises(SelectorError, match="must not be empty"):
        find_by_text(dump, "", contains=True)
