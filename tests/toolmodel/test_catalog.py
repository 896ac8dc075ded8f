"""Tests for trailblaze.toolmodel.catalog: the bundled framework tool catalog and its loader.

The facts in ``trailblaze/data/catalog.json`` are compared with the research notes in
``tests/data/reference/tool-catalog.json`` (see the NOTICE next to it). Where the catalog is
deliberately richer or different, the test says so and why.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from importlib import resources
from typing import Any

import jsonschema
import pytest

from tests.conftest import DATA
from trailblaze.toolmodel.catalog import (
    FORMAT_VERSION,
    Catalog,
    CatalogError,
    Tool,
    load_catalog,
    parse_catalog,
)

REFERENCE_PATH = DATA / "reference" / "tool-catalog.json"
REFERENCE: dict[str, Any] = json.loads(REFERENCE_PATH.read_text(encoding="utf-8"))
REF_TOOLS: dict[str, dict[str, Any]] = {t["name"]: t for t in REFERENCE["tools"]}

# Tools the catalog adds on top of the reference's framework (class / hand / yaml) tools.
EXTRA_TOOLS = {"openUrl", "runIf"}

# Tools whose Kotlin class exists upstream but that no *.tool.yaml registers (reference counts).
UNREGISTERED = {
    "booleanAssertion",
    "elementRetriever",
    "runCommand",
    "runTrail",
    "stopApp",
    "stringEvaluation",
}
# Unregistered upstream, but emitted in our surfaces because our replay implements it.
SURFACED_ANYWAY = {"stopApp"}

# (tool id, Kotlin class) from every `class:` line of the upstream *.tool.yaml files at a022ca69
# (trails/config/trailmaps/*/tools/*.tool.yaml in the common, compose, playwright, revyl and
# scripting modules).
CORPUS_TOOL_CLASSES: list[tuple[str, str]] = [
    ("android_adbShell", "xyz.block.trailblaze.mobile.tools.AdbShellTrailblazeTool"),
    (
        "android_grantAppOpsPermission",
        "xyz.block.trailblaze.mobile.tools.AndroidGrantAppOpsPermissionTrailblazeTool",
    ),
    (
        "android_grantPermissions",
        "xyz.block.trailblaze.mobile.tools.AndroidGrantPermissionsTrailblazeTool",
    ),
    (
        "android_sendBroadcast",
        "xyz.block.trailblaze.mobile.tools.AndroidSendBroadcastTrailblazeTool",
    ),
    (
        "android_systemUiDemoMode",
        "xyz.block.trailblaze.android.tools.AndroidSystemUiDemoModeTrailblazeTool",
    ),
    (
        "android_writeBytesToFile",
        "xyz.block.trailblaze.mobile.tools.AndroidWriteBytesToFileTrailblazeTool",
    ),
    (
        "android_writeFileToDownloads",
        "xyz.block.trailblaze.mobile.tools.AndroidWriteFileToDownloadsTrailblazeTool",
    ),
    (
        "android_writeImageToMediaStore",
        "xyz.block.trailblaze.mobile.tools.AndroidWriteImageToMediaStoreTrailblazeTool",
    ),
    ("mobile_clearAppData", "xyz.block.trailblaze.mobile.tools.ClearAppDataTrailblazeTool"),
    (
        "mobile_listInstalledApps",
        "xyz.block.trailblaze.mobile.tools.ListInstalledAppsTrailblazeTool",
    ),
    (
        "mobile_listInstalledAppsDetailed",
        "xyz.block.trailblaze.mobile.tools.ListInstalledAppsDetailedTrailblazeTool",
    ),
    (
        "mobile_pasteClipboard",
        "xyz.block.trailblaze.toolcalls.commands.PasteClipboardTrailblazeTool",
    ),
    ("mobile_setClipboard", "xyz.block.trailblaze.mobile.tools.SetClipboardTrailblazeTool"),
    ("assertEquals", "xyz.block.trailblaze.toolcalls.commands.memory.AssertEqualsTrailblazeTool"),
    ("assertMath", "xyz.block.trailblaze.toolcalls.commands.memory.AssertMathTrailblazeTool"),
    (
        "assertNotEquals",
        "xyz.block.trailblaze.toolcalls.commands.memory.AssertNotEqualsTrailblazeTool",
    ),
    (
        "assertNotVisibleBySelector",
        "xyz.block.trailblaze.toolcalls.commands.AssertNotVisibleBySelectorTrailblazeTool",
    ),
    (
        "assertNotVisibleWithText",
        "xyz.block.trailblaze.toolcalls.commands.AssertNotVisibleWithTextTrailblazeTool",
    ),
    ("assertVisible", "xyz.block.trailblaze.toolcalls.commands.AssertVisibleTrailblazeTool"),
    (
        "assertVisibleBySelector",
        "xyz.block.trailblaze.toolcalls.commands.AssertVisibleBySelectorTrailblazeTool",
    ),
    (
        "assertVisibleWithAccessibilityText",
        "xyz.block.trailblaze.toolcalls.commands.AssertVisibleWithAccessibilityTextTrailblazeTool",
    ),
    (
        "assertVisibleWithResourceId",
        "xyz.block.trailblaze.toolcalls.commands.AssertVisibleWithResourceIdTrailblazeTool",
    ),
    (
        "assertVisibleWithText",
        "xyz.block.trailblaze.toolcalls.commands.AssertVisibleWithTextTrailblazeTool",
    ),
    ("assertWaypoint", "xyz.block.trailblaze.toolcalls.commands.AssertWaypointTrailblazeTool"),
    ("assertWithAi", "xyz.block.trailblaze.toolcalls.commands.memory.AssertWithAiTrailblazeTool"),
    ("clearText", "xyz.block.trailblaze.toolcalls.commands.ClearTextTrailblazeTool"),
    ("dragByPoints", "xyz.block.trailblaze.toolcalls.commands.DragByPointsTrailblazeTool"),
    ("dragTo", "xyz.block.trailblaze.toolcalls.commands.DragToTrailblazeTool"),
    ("dumpMemory", "xyz.block.trailblaze.toolcalls.commands.memory.DumpMemoryTrailblazeTool"),
    ("exec", "xyz.block.trailblaze.toolcalls.commands.ExecTrailblazeTool"),
    ("findMatches", "xyz.block.trailblaze.toolcalls.commands.FindMatchesTrailblazeTool"),
    ("hideKeyboard", "xyz.block.trailblaze.toolcalls.commands.HideKeyboardTrailblazeTool"),
    ("inputText", "xyz.block.trailblaze.toolcalls.commands.InputTextTrailblazeTool"),
    ("inputTextRandom", "xyz.block.trailblaze.toolcalls.commands.InputTextRandomTrailblazeTool"),
    ("launchApp", "xyz.block.trailblaze.toolcalls.commands.LaunchAppTrailblazeTool"),
    ("longPress", "xyz.block.trailblaze.toolcalls.commands.LongPressTrailblazeTool"),
    (
        "longPressElementWithAccessibilityText",
        "xyz.block.trailblaze.toolcalls.commands.LongPressElementWithAccessibilityTextTrailblazeTool",
    ),
    (
        "longPressOnElementWithText",
        "xyz.block.trailblaze.toolcalls.commands.LongPressOnElementWithTextTrailblazeTool",
    ),
    ("mobile_maestro", "xyz.block.trailblaze.toolcalls.commands.MaestroTrailblazeTool"),
    (
        "networkConnection",
        "xyz.block.trailblaze.toolcalls.commands.NetworkConnectionTrailblazeTool",
    ),
    ("objectiveStatus", "xyz.block.trailblaze.toolcalls.commands.ObjectiveStatusTrailblazeTool"),
    ("pressKey", "xyz.block.trailblaze.toolcalls.commands.PressKeyTrailblazeTool"),
    (
        "rememberNumber",
        "xyz.block.trailblaze.toolcalls.commands.memory.RememberNumberTrailblazeTool",
    ),
    ("rememberText", "xyz.block.trailblaze.toolcalls.commands.memory.RememberTextTrailblazeTool"),
    (
        "rememberWithAi",
        "xyz.block.trailblaze.toolcalls.commands.memory.RememberWithAiTrailblazeTool",
    ),
    (
        "requestDetailedViewHierarchy",
        "xyz.block.trailblaze.toolcalls.commands.RequestDetailedViewHierarchyTrailblazeTool",
    ),
    (
        "scrollUntilTextIsVisible",
        "xyz.block.trailblaze.toolcalls.commands.ScrollUntilTextIsVisibleTrailblazeTool",
    ),
    ("swipe", "xyz.block.trailblaze.toolcalls.commands.SwipeTrailblazeTool"),
    (
        "swipeWithRelativeCoordinates",
        "xyz.block.trailblaze.toolcalls.commands.SwipeWithRelativeCoordinatesTool",
    ),
    ("takeSnapshot", "xyz.block.trailblaze.toolcalls.commands.TakeSnapshotTool"),
    ("tap", "xyz.block.trailblaze.toolcalls.commands.TapTrailblazeTool"),
    ("tapOn", "xyz.block.trailblaze.toolcalls.commands.TapOnTrailblazeTool"),
    (
        "tapOnAccessibilityNode",
        "xyz.block.trailblaze.toolcalls.commands.TapOnAccessibilityNodeTrailblazeTool",
    ),
    ("tapOnElementBySelector", "xyz.block.trailblaze.toolcalls.commands.TapOnByElementSelector"),
    (
        "tapOnElementWithAccessibilityText",
        "xyz.block.trailblaze.toolcalls.commands.TapOnElementWithAccessiblityTextTrailblazeTool",
    ),
    (
        "tapOnElementWithText",
        "xyz.block.trailblaze.toolcalls.commands.TapOnElementWithTextTrailblazeTool",
    ),
    ("tapOnPoint", "xyz.block.trailblaze.toolcalls.commands.TapOnPointTrailblazeTool"),
    ("wait", "xyz.block.trailblaze.toolcalls.commands.WaitForIdleSyncTrailblazeTool"),
    ("waitForChange", "xyz.block.trailblaze.toolcalls.commands.WaitForChangeTrailblazeTool"),
    (
        "waitUntilNotVisible",
        "xyz.block.trailblaze.toolcalls.commands.WaitUntilNotVisibleTrailblazeTool",
    ),
    ("compose_click", "xyz.block.trailblaze.compose.driver.tools.ComposeClickTool"),
    (
        "compose_request_details",
        "xyz.block.trailblaze.compose.driver.tools.ComposeRequestDetailsTool",
    ),
    ("compose_scroll", "xyz.block.trailblaze.compose.driver.tools.ComposeScrollTool"),
    ("compose_type", "xyz.block.trailblaze.compose.driver.tools.ComposeTypeTool"),
    (
        "compose_verify_element_visible",
        "xyz.block.trailblaze.compose.driver.tools.ComposeVerifyElementVisibleTool",
    ),
    (
        "compose_verify_text_visible",
        "xyz.block.trailblaze.compose.driver.tools.ComposeVerifyTextVisibleTool",
    ),
    ("compose_wait", "xyz.block.trailblaze.compose.driver.tools.ComposeWaitTool"),
    (
        "playwright_desktop_launchGoose",
        "xyz.block.trailblaze.playwright.tools.PlaywrightDesktopLaunchGooseTool",
    ),
    ("web_applyCookies", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeApplyCookiesTool"),
    (
        "web_assertNetworkEvent",
        "xyz.block.trailblaze.playwright.tools.PlaywrightNativeAssertNetworkEventTool",
    ),
    ("web_click", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeClickTool"),
    ("web_currentUrl", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeCurrentUrlTool"),
    ("web_evaluate", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeEvaluateTool"),
    ("web_fillSecret", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeFillSecretTool"),
    (
        "web_getStorageState",
        "xyz.block.trailblaze.playwright.tools.PlaywrightNativeGetStorageStateTool",
    ),
    ("web_hover", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeHoverTool"),
    ("web_navigate", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeNavigateTool"),
    ("web_pressKey", "xyz.block.trailblaze.playwright.tools.PlaywrightNativePressKeyTool"),
    (
        "web_requestDetails",
        "xyz.block.trailblaze.playwright.tools.PlaywrightNativeRequestDetailsTool",
    ),
    ("web_resize", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeResizeTool"),
    ("web_scroll", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeScrollTool"),
    ("web_selectOption", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeSelectOptionTool"),
    ("web_snapshot", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeSnapshotTool"),
    ("web_type", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeTypeTool"),
    (
        "web_verifyElementVisible",
        "xyz.block.trailblaze.playwright.tools.PlaywrightNativeVerifyElementVisibleTool",
    ),
    (
        "web_verifyListVisible",
        "xyz.block.trailblaze.playwright.tools.PlaywrightNativeVerifyListVisibleTool",
    ),
    (
        "web_verifyTextVisible",
        "xyz.block.trailblaze.playwright.tools.PlaywrightNativeVerifyTextVisibleTool",
    ),
    ("web_verifyValue", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeVerifyValueTool"),
    ("web_wait", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeWaitTool"),
    ("web_waitForUrl", "xyz.block.trailblaze.playwright.tools.PlaywrightNativeWaitForUrlTool"),
    ("revyl_assert", "xyz.block.trailblaze.revyl.tools.RevylNativeAssertTool"),
    ("revyl_back", "xyz.block.trailblaze.revyl.tools.RevylNativeBackTool"),
    ("revyl_doubleTap", "xyz.block.trailblaze.revyl.tools.RevylNativeDoubleTapTool"),
    ("revyl_navigate", "xyz.block.trailblaze.revyl.tools.RevylNativeNavigateTool"),
    ("revyl_pressKey", "xyz.block.trailblaze.revyl.tools.RevylNativePressKeyTool"),
    ("revyl_swipe", "xyz.block.trailblaze.revyl.tools.RevylNativeSwipeTool"),
    ("revyl_tap", "xyz.block.trailblaze.revyl.tools.RevylNativeTapTool"),
    ("revyl_type", "xyz.block.trailblaze.revyl.tools.RevylNativeTypeTool"),
    ("script", "xyz.block.trailblaze.scripting.ScriptTrailblazeTool"),
]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def ref_param_names() -> Iterator[tuple[str, str]]:
    for tool in REFERENCE["tools"]:
        for param in tool["params"]:
            yield tool["name"], param["name"]


# --- loading ---------------------------------------------------------------------------------


def test_load_is_cached_and_version_is_sha256_of_the_file(catalog: Catalog) -> None:
    data = (resources.files("trailblaze") / "data" / "catalog.json").read_bytes()
    assert load_catalog() is catalog
    assert catalog.version == hashlib.sha256(data).hexdigest()
    assert json.loads(data)["format_version"] == FORMAT_VERSION


def test_parse_rejects_an_unknown_format_version() -> None:
    data = (resources.files("trailblaze") / "data" / "catalog.json").read_bytes()
    raw = json.loads(data)
    raw["format_version"] = FORMAT_VERSION + 1
    with pytest.raises(CatalogError, match="format_version"):
        parse_catalog(json.dumps(raw).encode())


def test_parse_rejects_a_tool_set_naming_an_unknown_tool() -> None:
    raw = json.loads((resources.files("trailblaze") / "data" / "catalog.json").read_bytes())
    raw["toolsets"][0]["tools"].append("noSuchTool")
    with pytest.raises(CatalogError, match="noSuchTool"):
        parse_catalog(json.dumps(raw).encode())


def test_catalog_mappings_are_read_only(catalog: Catalog) -> None:
    with pytest.raises(TypeError):
        catalog.tools["x"] = catalog.tools["tap"]  # type: ignore[index]


# --- names and flags against the reference ---------------------------------------------------


def test_every_reference_tool_is_in_the_catalog_plus_our_additions(catalog: Catalog) -> None:
    assert set(catalog.tools) == set(REF_TOOLS) | EXTRA_TOOLS
    assert len(REF_TOOLS) == 107


@pytest.mark.parametrize("name", sorted(REF_TOOLS))
def test_tool_matches_reference(catalog: Catalog, name: str) -> None:
    ref = REF_TOOLS[name]
    tool = catalog.tool(name)
    assert tool is not None
    assert tool.origin == ref["source"]
    assert tool.recordable is ref["recordable"]
    assert tool.surface_to_llm is ref["surfaceToLlm"]
    assert tool.requires_host is bool(ref.get("requiresHost"))
    assert tool.is_verification is bool(ref.get("isVerification"))
    assert tool.deprecated is bool(ref.get("deprecated"))
    # The reference writes null for tools in no tool set; the catalog uses an empty tuple.
    if name in SURFACED_ANYWAY:
        # Our replay implements it on Android and iOS; the reference lists it in no tool set.
        assert tool.platforms == ("android", "ios")
    else:
        assert tool.platforms == tuple(ref["platforms"] or ())
    # Parameter names in Kotlin declaration order (the renderer reorders, not the catalog).
    assert [n for n, _ in tool.properties] == [p["name"] for p in ref["params"]]
    assert tool.required == tuple(p["name"] for p in ref["params"] if p["required"])
    if ref["source"] in ("class", "hand"):
        assert tool.kotlin_class == ref["kotlin_class"]
    else:
        assert tool.kotlin_class is None


@pytest.mark.parametrize("name", sorted(REF_TOOLS))
def test_result_type_matches_reference(catalog: Catalog, name: str) -> None:
    ref = REF_TOOLS[name]
    expected = ref.get("resultType")
    hand = ref.get("hand_curated")
    if expected is None and hand is not None and hand["result"] != "string":
        expected = hand["result"]  # findMatches and waitUntilNotVisible are typed by hand.
    tool = catalog.tools[name]
    assert tool.result == expected


def test_result_types(catalog: Catalog) -> None:
    results = {t.name: t.result for t in catalog.tools.values() if t.result is not None}
    assert results == {
        "findMatches": "MatchDescriptor[]",
        "mobile_listInstalledApps": "ListInstalledAppsResult",
        "mobile_listInstalledAppsDetailed": "ListInstalledAppsDetailedResult",
        "waitUntilNotVisible": "boolean",
    }


def test_counts(catalog: Catalog) -> None:
    tools = catalog.tools.values()
    assert len(catalog.tools) == 109
    framework = [t for t in tools if t.origin in ("class", "hand", "yaml")]
    assert len(framework) == 107
    assert sum(t.recordable for t in framework) == 90
    assert sum(not t.surface_to_llm for t in framework) == 31
    # The reference's "82 emitted into every generated surface via the recordable union":
    # recordable, registered (surface), not hand-curated, class- or YAML-backed.
    union = [
        t
        for t in framework
        if t.recordable and t.surface and t.name not in catalog.hand_curated_recordable
        if t.origin in ("class", "yaml")
    ]
    # 82 upstream, plus stopApp which we surface deliberately (SURFACED_ANYWAY).
    assert len(union) == 82 + len(SURFACED_ANYWAY)
    assert len(catalog.toolsets) == 16
    assert sum(ts.always_enabled for ts in catalog.toolsets.values()) == 6


def test_surface_flag(catalog: Catalog) -> None:
    hidden = {t.name for t in catalog.tools.values() if not t.surface}
    # script: Map parameter, descriptor build fails; the rest: never registered upstream.
    assert hidden == (UNREGISTERED - SURFACED_ANYWAY) | {"script"}
    for name in hidden:
        note = catalog.tools[name].note
        assert note is not None
        assert "surface" in note


def test_hand_curated_recordable(catalog: Catalog) -> None:
    assert catalog.hand_curated_recordable == frozenset(REFERENCE["hand_curated_recordable"])
    assert catalog.hand_curated_recordable == {
        "mobile_maestro",
        "mobile_listInstalledApps",
        "mobile_listInstalledAppsDetailed",
    }


def test_recordable_tools_sorted_by_name(catalog: Catalog) -> None:
    names = [t.name for t in catalog.recordable_tools()]
    assert names == sorted(names)
    assert set(names) == {t.name for t in catalog.tools.values() if t.recordable}
    assert {"runIf", "openUrl", "tapOnElementBySelector"} <= set(names)
    assert "tap" not in names


def test_open_url_and_run_if_flags(catalog: Catalog) -> None:
    open_url = catalog.tools["openUrl"]
    assert (open_url.origin, open_url.recordable, open_url.platforms) == (
        "script",
        True,
        ("android", "ios"),
    )
    assert open_url.required == ("url",)
    run_if = catalog.tools["runIf"]
    assert run_if.origin == "builtin"
    assert run_if.recordable
    assert not run_if.surface_to_llm
    assert run_if.platforms == ("android", "compose", "ios", "web")
    assert [n for n, _ in run_if.properties] == ["condition", "then", "else"]
    assert run_if.required == ("condition", "then")


# --- argument types --------------------------------------------------------------------------

_SCALARS = {
    "String": "string",
    "Boolean": "boolean",
    # Deliberate difference: the reference's TS surface says `number` for Int/Long; the
    # catalog keeps the real Kotlin type so `index: 1.5` is caught.
    "Int": "integer",
    "Long": "integer",
    "Float": "number",
    "Double": "number",
}


def expected_schema_shape(tool: str, param: dict[str, Any]) -> dict[str, Any]:
    """The type part of a parameter schema, derived from the reference's Kotlin facts."""
    kotlin = param.get("kotlin_type")
    if param.get("enum"):
        return {"type": "string", "enum": param["enum"]}
    if param.get("selector") == "node_selector":
        return {"$ref": "#/$defs/TrailblazeNodeSelector"}
    if kotlin is None and param.get("yaml_type") == "integer":
        return {"type": "integer"}
    if (tool, param["name"]) == ("mobile_maestro", "commands"):
        # Hand-typed as Array<Record<string, unknown>>: the recorded wire key.
        return {"type": "array", "items": {"type": "object"}}
    if kotlin == "Map<String, String>":
        # Richer than the reference (which cannot lower it): an object of string values.
        return {"type": "object", "additionalProperties": {"type": "string"}}
    assert kotlin is not None, (tool, param["name"])
    if kotlin.startswith("List<"):
        # Deliberate difference: the reference's generated surface drops list item types
        # (`unknown[]`); the catalog keeps them.
        item = param["kotlin_item_type"]
        if item == "String":
            return {"type": "array", "items": {"type": "string"}}
        if item == "BroadcastExtra":
            return {"type": "array", "items": {"type": "object"}}  # shape checked separately
        # Enum item types whose constants the reference does not list: strings.
        assert item.endswith("ViewHierarchyDetail"), item
        return {"type": "array", "items": {"type": "string"}}
    return {"type": _SCALARS[kotlin.rstrip("?")]}


@pytest.mark.parametrize(("tool", "param"), sorted(ref_param_names()))
def test_param_type(catalog: Catalog, tool: str, param: str) -> None:
    ref = next(p for p in REF_TOOLS[tool]["params"] if p["name"] == param)
    schema = dict(catalog.tools[tool].properties)[param]
    expected = expected_schema_shape(tool, ref)
    for key, value in expected.items():
        if key == "items":
            assert schema["items"]["type"] == value["type"]
        else:
            assert schema[key] == value, key
    assert isinstance(schema.get("description"), str)
    assert schema["description"].strip()


@pytest.mark.parametrize(("tool", "param"), sorted(ref_param_names()))
def test_param_default(catalog: Catalog, tool: str, param: str) -> None:
    ref = next(p for p in REF_TOOLS[tool]["params"] if p["name"] == param)
    schema = dict(catalog.tools[tool].properties)[param]
    if ref.get("has_default") and ref["default"] is not None:
        assert schema["default"] == ref["default"]
    else:
        # Deliberate: a Kotlin `= null` default is "optional, absent means null", not a
        # `"default": null` that would not validate against the parameter's own type.
        assert "default" not in schema


def test_selector_params(catalog: Catalog) -> None:
    with_selector = {
        (t.name, name, name in t.required)
        for t in catalog.tools.values()
        for name, schema in t.properties
        if schema.get("$ref") == "#/$defs/TrailblazeNodeSelector"
    }
    assert with_selector == {
        ("assertNotVisibleBySelector", "nodeSelector", False),
        ("assertVisibleBySelector", "nodeSelector", False),
        ("findMatches", "selector", True),
        ("tapOn", "selector", True),
        ("tapOnElementBySelector", "nodeSelector", False),
        ("waitUntilNotVisible", "nodeSelector", True),
        ("web_click", "nodeSelector", False),
        ("web_hover", "nodeSelector", False),
        ("web_scroll", "nodeSelector", False),
        ("web_selectOption", "nodeSelector", False),
        ("web_type", "nodeSelector", False),
        ("web_verifyElementVisible", "nodeSelector", False),
        ("web_verifyListVisible", "nodeSelector", False),
        ("web_verifyValue", "nodeSelector", False),
    }


def test_rich_list_types(catalog: Catalog) -> None:
    def prop(tool: str, name: str) -> Any:
        return dict(catalog.tools[tool].properties)[name]

    for tool, name in [
        ("android_grantPermissions", "permissions"),
        ("web_selectOption", "values"),
        ("web_verifyListVisible", "items"),
        ("exec", "argv"),
        ("android_adbShell", "command"),
    ]:
        assert prop(tool, name) == {
            "type": "array",
            "items": {"type": "string"},
            "description": prop(tool, name)["description"],
        }
    extras = prop("android_sendBroadcast", "extras")
    assert extras["default"] == []
    assert list(extras["items"]["properties"]) == ["key", "value", "type"]
    assert extras["items"]["required"] == ["key", "value"]
    assert extras["items"]["additionalProperties"] is False


def test_input_schemas_are_closed_objects(catalog: Catalog) -> None:
    for tool in catalog.tools.values():
        schema = tool.input_schema
        assert schema["type"] == "object", tool.name
        assert schema["additionalProperties"] is False, tool.name
        assert set(schema["required"]) <= set(schema["properties"]), tool.name
        for name, prop in tool.properties:
            assert prop.get("description"), (tool.name, name)


# --- JSON Schema -----------------------------------------------------------------------------


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


@pytest.mark.parametrize("name", sorted(load_catalog().tools))
def test_schema_for_is_a_valid_self_contained_schema(catalog: Catalog, name: str) -> None:
    schema = catalog.schema_for(catalog.tools[name])
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for ref in _refs(schema):
        assert ref.startswith("#/$defs/")
        assert ref.removeprefix("#/$defs/") in schema["$defs"]


def test_schema_for_returns_a_copy(catalog: Catalog) -> None:
    tool = catalog.tools["tapOn"]
    schema = catalog.schema_for(tool)
    schema["properties"].clear()
    schema["$defs"].clear()
    assert catalog.schema_for(tool)["properties"]
    assert "TrailblazeNodeSelector" in catalog.defs


def _is_valid(catalog: Catalog, tool: str, args: Any) -> bool:
    validator = jsonschema.Draft202012Validator(catalog.schema_for(catalog.tools[tool]))
    return bool(validator.is_valid(args))


SEL = {"androidAccessibility": {"textRegex": "Not now"}}

ARGUMENT_CASES: list[tuple[str, Any, bool]] = [
    # selector tools
    ("tapOnElementBySelector", {"nodeSelector": SEL}, True),
    ("tapOnElementBySelector", {}, True),
    ("tapOnElementBySelector", {"nodeSelector": SEL, "longPress": True, "reason": "r"}, True),
    (
        "tapOnElementBySelector",
        {"nodeSelector": {"androidAccessibility": {"txtRegex": "x"}}},
        False,
    ),
    ("tapOnElementBySelector", {"nodeSelector": {"android": {"textRegex": "x"}}}, False),
    ("tapOnElementBySelector", {"nodeSelector": SEL, "longPress": "true"}, False),
    ("tapOnElementBySelector", {"selector": SEL}, False),
    (
        "tapOnElementBySelector",
        {
            "nodeSelector": {
                "web": {"ariaRole": "button", "ariaNameRegex": "Save", "nthIndex": 1},
                "containsChild": {"iosMaestro": {"textRegex": "x", "focused": None}},
                "containsDescendants": [{"compose": {"testTag": "t"}}],
                "below": None,
                "index": 2,
            }
        },
        True,
    ),
    ("tapOnElementBySelector", {"nodeSelector": {"index": 1.5}}, False),
    ("tapOnElementBySelector", {"nodeSelector": {"containsDescendants": SEL}}, False),
    ("tapOnElementBySelector", {"nodeSelector": {"iosAxe": {"enabled": "yes"}}}, False),
    ("tapOn", {"selector": SEL, "relativePoint": "50%,50%"}, True),
    ("tapOn", {}, False),
    ("tapOn", {"nodeSelector": SEL}, False),
    ("findMatches", {"selector": SEL, "timeoutMs": 500}, True),
    ("waitUntilNotVisible", {}, False),
    ("assertVisibleBySelector", {"nodeSelector": SEL, "textMatchMode": "REGEX"}, True),
    ("assertVisibleBySelector", {"nodeSelector": SEL, "textMatchMode": "regex"}, False),
    ("web_verifyValue", {"expected": "1", "type": "ATTRIBUTE", "attribute": "value"}, True),
    # enums (strict names: a lowercase value replays upstream but fails its type gate)
    ("launchApp", {"appId": "com.example"}, True),
    ("launchApp", {"appId": "com.example", "launchMode": "RESUME"}, True),
    ("launchApp", {"appId": "com.example", "launchMode": "SIDEWAYS"}, False),
    ("launchApp", {"appId": "com.example", "launchMode": "resume"}, False),
    ("launchApp", {"launchMode": "RESUME"}, False),
    ("swipe", {}, True),
    ("swipe", {"direction": "UP"}, True),
    ("swipe", {"direction": "up"}, False),
    ("web_scroll", {"direction": "LEFT", "amount": 200}, True),
    ("pressKey", {"keyCode": "ENTER"}, True),
    ("pressKey", {}, False),
    # scalars
    ("inputText", {"text": "hello"}, True),
    ("inputText", {"text": 5}, False),
    ("inputText", {}, False),
    ("wait", {"timeToWaitInSeconds": 2}, True),
    ("wait", {"ms": 5000}, False),
    ("wait", {"timeToWaitInSeconds": 2.5}, False),
    ("wait", {"timeToWaitInSeconds": "2"}, False),
    ("tapOnPoint", {"x": 10, "y": 20}, True),
    ("tapOnPoint", {"x": "10", "y": 20}, False),
    ("tapOnElementWithText", {"text": "OK", "index": 1}, True),
    ("tapOnElementWithAccessibilityText", {"accessibilityText": "OK", "index": "1"}, True),
    ("tapOnElementWithAccessibilityText", {"accessibilityText": "OK", "index": 1}, False),
    ("eraseText", {}, True),
    ("eraseText", {"charactersToErase": 3}, True),
    ("eraseText", {"charactersToErase": "3"}, False),
    ("pressBack", {}, True),
    ("pressBack", {"times": 2}, False),
    ("openUrl", {"url": "https://example.com"}, True),
    ("openUrl", {}, False),
    # lists and nested objects
    (
        "android_grantPermissions",
        {"appId": "a", "permissions": ["android.permission.CAMERA"]},
        True,
    ),
    ("android_grantPermissions", {"appId": "a", "permissions": [1]}, False),
    ("android_grantPermissions", {"appId": "a", "permissions": "android.permission.CAMERA"}, False),
    ("web_selectOption", {"values": ["a", "b"]}, True),
    ("web_selectOption", {"values": "a"}, False),
    ("exec", {"argv": ["ls", "-l"], "timeoutSeconds": 5}, True),
    ("exec", {"argv": "ls -l"}, False),
    ("android_adbShell", {"command": ["pm", "list", "packages"]}, True),
    (
        "android_sendBroadcast",
        {
            "action": "a",
            "componentPackage": "p",
            "componentClass": "c",
            "extras": [{"key": "k", "value": "v"}, {"key": "n", "value": "1", "type": "int"}],
        },
        True,
    ),
    (
        "android_sendBroadcast",
        {"action": "a", "componentPackage": "p", "componentClass": "c", "extras": [{"key": "k"}]},
        False,
    ),
    (
        "android_sendBroadcast",
        {
            "action": "a",
            "componentPackage": "p",
            "componentClass": "c",
            "extras": [{"key": "k", "value": "v", "flag": True}],
        },
        False,
    ),
    (
        "mobile_maestro",
        {"commands": [{"back": {}}, {"eraseText": {"charactersToErase": "9"}}]},
        True,
    ),
    ("mobile_maestro", {"commands": ["back"]}, False),
    ("mobile_maestro", {"yaml": "- back"}, False),
    ("mobile_listInstalledApps", {}, True),
    ("mobile_listInstalledApps", {"includeSystemApps": True}, False),
    ("script", {"source": "1", "params": {"a": "b"}}, True),
    ("script", {"source": "1", "params": {"a": 1}}, False),
    ("compose_request_details", {"include": ["BOUNDS"]}, True),
    ("compose_request_details", {"include": [{"kind": "BOUNDS"}]}, False),
]

RUN_IF_CASES: list[tuple[str, Any, bool]] = [
    (
        "selector condition",
        {"condition": {"selector": SEL}, "then": [{"hideKeyboard": None}]},
        True,
    ),
    (
        "tool condition with else",
        {
            "condition": {"tool": {"assertVisibleBySelector": {"nodeSelector": SEL}}},
            "then": [{"tapOnElementBySelector": {"nodeSelector": SEL}}],
            "else": [{"pressBack": {}}],
        },
        True,
    ),
    (
        "both selector and tool",
        {
            "condition": {"selector": SEL, "tool": {"hideKeyboard": {}}},
            "then": [{"hideKeyboard": {}}],
        },
        False,
    ),
    ("empty then", {"condition": {"selector": SEL}, "then": []}, False),
    ("missing then", {"condition": {"selector": SEL}}, False),
    ("missing condition", {"then": [{"hideKeyboard": {}}]}, False),
    ("empty condition", {"condition": {}, "then": [{"hideKeyboard": {}}]}, False),
    (
        "unknown key",
        {"condition": {"selector": SEL}, "then": [{"hideKeyboard": {}}], "otherwise": []},
        False,
    ),
    (
        "two tools in the condition",
        {"condition": {"tool": {"a": {}, "b": {}}}, "then": [{"hideKeyboard": {}}]},
        False,
    ),
    (
        "tool condition by name (upstream's schema)",
        {"condition": {"tool": "assertVisible"}, "then": [{"hideKeyboard": {}}]},
        True,
    ),
    (
        "tool condition by name, with args",
        {
            "condition": {"tool": "assertVisible", "args": {"text": "a"}},
            "then": [{"hideKeyboard": {}}],
        },
        True,
    ),
    (
        "tool condition by name, args not an object",
        {"condition": {"tool": "assertVisible", "args": ["a"]}, "then": [{"hideKeyboard": {}}]},
        False,
    ),
    (
        "tool condition by an empty name",
        {"condition": {"tool": ""}, "then": [{"hideKeyboard": {}}]},
        False,
    ),
    (
        "args beside a tool call",
        {
            "condition": {"tool": {"assertVisible": {}}, "args": {"text": "a"}},
            "then": [{"hideKeyboard": {}}],
        },
        False,
    ),
    (
        "condition tool args not an object",
        {"condition": {"tool": {"wait": 3}}, "then": [{"hideKeyboard": {}}]},
        False,
    ),
    (
        "two calls in one then item",
        {"condition": {"selector": SEL}, "then": [{"hideKeyboard": {}, "pressBack": {}}]},
        False,
    ),
    ("then item args a string", {"condition": {"selector": SEL}, "then": [{"wait": "3"}]}, False),
    ("bad selector", {"condition": {"selector": {"nope": 1}}, "then": [{"pressBack": {}}]}, False),
    (
        "nested runIf call",
        {
            "condition": {"selector": SEL},
            "then": [{"runIf": {"condition": {"selector": SEL}, "then": [{"pressBack": {}}]}}],
        },
        True,
    ),
]


@pytest.mark.parametrize(("tool", "args", "valid"), ARGUMENT_CASES)
def test_argument_instances(catalog: Catalog, tool: str, args: Any, valid: bool) -> None:
    assert _is_valid(catalog, tool, args) is valid


@pytest.mark.parametrize(
    ("args", "valid"),
    [pytest.param(args, valid, id=case) for case, args, valid in RUN_IF_CASES],
)
def test_run_if_instances(catalog: Catalog, args: Any, valid: bool) -> None:
    assert _is_valid(catalog, "runIf", args) is valid


def test_every_tool_accepts_its_minimal_arguments(catalog: Catalog) -> None:
    # Arguments of the right type for every required parameter must validate; it proves no
    # required parameter is unsatisfiable (a typo'd $ref, an empty enum, ...).
    samples = {"string": "x", "integer": 1, "number": 1.5, "boolean": True}
    for tool in catalog.tools.values():
        if tool.name == "runIf":
            continue
        args: dict[str, Any] = {}
        for name, schema in tool.properties:
            if name not in tool.required:
                continue
            if "enum" in schema:
                args[name] = schema["enum"][0]
            elif "$ref" in schema:
                args[name] = {}
            elif schema["type"] == "array":
                item = schema["items"].get("type")
                args[name] = [{} if item == "object" else samples[item]]
            else:
                args[name] = samples[schema["type"]]
        assert _is_valid(catalog, tool.name, args), (tool.name, args)


# --- selector grammar ------------------------------------------------------------------------


def test_selector_grammar_matches_reference(catalog: Catalog) -> None:
    grammar = REFERENCE["selector_grammar"]
    node = catalog.defs["TrailblazeNodeSelector"]
    assert list(node["properties"]) == [
        f["name"] for f in grammar["TrailblazeNodeSelector"]["fields"]
    ]
    for field in grammar["TrailblazeNodeSelector"]["fields"]:
        assert _accepts_null(node["properties"][field["name"]]), field["name"]
    for match in grammar["driver_matches"].values():
        definition = catalog.defs[match["ts_interface"]]
        assert list(definition["properties"]) == [f["name"] for f in match["fields"]]
        for field in match["fields"]:
            prop = definition["properties"][field["name"]]
            ts_base = field["ts_type"].removesuffix(" | null")
            # Numeric selector fields are Kotlin Ints (indexes, levels, input-type bits).
            expected = {"string": "string", "boolean": "boolean", "number": "integer"}[ts_base]
            assert prop["type"] == [expected, "null"], field["name"]
    assert set(catalog.defs) == {
        "TrailblazeNodeSelector",
        "DriverNodeMatchAndroidAccessibility",
        "DriverNodeMatchAndroidMaestro",
        "DriverNodeMatchWeb",
        "DriverNodeMatchCompose",
        "DriverNodeMatchIosMaestro",
        "DriverNodeMatchIosAxe",
        "Bounds",
        "MatchDescriptor",
    }
    for name, definition in catalog.defs.items():
        assert definition["type"] == "object", name
        assert definition["additionalProperties"] is False, name
    assert catalog.defs["TrailblazeNodeSelector"].get("required", []) == []
    assert catalog.defs["Bounds"]["required"] == ["left", "top", "right", "bottom"]
    assert catalog.defs["MatchDescriptor"]["required"] == ["indexPath"]


def _accepts_null(schema: dict[str, Any]) -> bool:
    types = schema.get("type")
    if isinstance(types, list):
        return "null" in types
    return any(option.get("type") == "null" for option in schema.get("anyOf", []))


# --- descriptions ----------------------------------------------------------------------------


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(".").casefold()


def _reference_descriptions() -> set[str]:
    texts: set[str] = set()
    for tool in REFERENCE["tools"]:
        texts.add(tool["description"])
        texts.update(p["description"] for p in tool["params"] if p.get("description"))
    for toolset in REFERENCE["toolsets"].values():
        texts.add(toolset["description_short"])
    return {_norm(t) for t in texts}


def test_no_description_is_copied_from_the_reference(catalog: Catalog) -> None:
    reference = _reference_descriptions()
    ours: list[tuple[str, str]] = []
    for tool in catalog.tools.values():
        ours.append((tool.name, tool.description))
        ours.extend((f"{tool.name}.{n}", s["description"]) for n, s in tool.properties)
    ours.extend((ts.id, ts.description) for ts in catalog.toolsets.values())
    copied = [(where, text) for where, text in ours if _norm(text) in reference]
    assert copied == []


def test_every_tool_has_a_short_description(catalog: Catalog) -> None:
    for tool in catalog.tools.values():
        assert tool.description.strip(), tool.name
        assert len(tool.description) <= 240, tool.name


# --- tool sets -------------------------------------------------------------------------------


def test_toolsets_match_reference(catalog: Catalog) -> None:
    assert set(catalog.toolsets) == set(REFERENCE["toolsets"])
    for toolset_id, ref in REFERENCE["toolsets"].items():
        toolset = catalog.toolsets[toolset_id]
        assert toolset.tools == tuple(ref["tools"]), toolset_id
        assert toolset.always_enabled is ref["always_enabled"], toolset_id
        # The reference writes null when the file has no drivers key (= every driver).
        assert toolset.drivers == tuple(ref["drivers"] or ()), toolset_id
        assert toolset.description.strip()


def test_resolve_toolsets_adds_always_enabled_sets(catalog: Catalog) -> None:
    names = [t.name for t in catalog.resolve_toolsets(["web_core"])]
    assert names[:16] == list(catalog.toolsets["web_core"].tools)
    always = [ts for ts in catalog.toolsets.values() if ts.always_enabled]
    assert {ts.id for ts in always} == {
        "android_framework",
        "android_primitives",
        "core_interaction",
        "meta",
        "mobile_primitives",
        "web_framework",
    }
    for toolset in always:
        assert set(toolset.tools) <= set(names), toolset.id
    assert len(names) == len(set(names))
    assert "objectiveStatus" in names
    assert "web_verifyTextVisible" not in names


def test_resolve_toolsets_first_listed_wins(catalog: Catalog) -> None:
    names = [t.name for t in catalog.resolve_toolsets(["verification", "compose_verification"])]
    # assertWaypoint is in both named sets; it keeps the position of its first appearance.
    assert names[:3] == ["assertVisible", "assertNotVisibleWithText", "assertWaypoint"]
    assert names[3:5] == ["compose_verify_text_visible", "compose_verify_element_visible"]
    assert names.count("assertWaypoint") == 1
    # With no named sets, only the always-enabled ones remain.
    assert {t.name for t in catalog.resolve_toolsets([])} == {
        name for ts in catalog.toolsets.values() if ts.always_enabled for name in ts.tools
    }


def test_resolve_toolsets_unknown_name(catalog: Catalog) -> None:
    with pytest.raises(KeyError) as excinfo:
        catalog.resolve_toolsets(["web_core", "no_such_set"])
    assert excinfo.value.args == ("no_such_set",)


def test_every_toolset_tool_exists(catalog: Catalog) -> None:
    for toolset in catalog.toolsets.values():
        for name in toolset.tools:
            assert isinstance(catalog.tool(name), Tool), (toolset.id, name)


# --- Kotlin classes --------------------------------------------------------------------------


@pytest.mark.parametrize(("tool_id", "fqn"), CORPUS_TOOL_CLASSES)
def test_by_kotlin_class_finds_every_corpus_class(catalog: Catalog, tool_id: str, fqn: str) -> None:
    tool = catalog.by_kotlin_class(fqn)
    assert tool is not None
    assert tool.name == tool_id
    assert tool.kotlin_class == fqn


def test_corpus_class_list_is_complete() -> None:
    assert len(CORPUS_TOOL_CLASSES) == 99
    assert len(dict(CORPUS_TOOL_CLASSES)) == 99


def test_kotlin_classes(catalog: Catalog) -> None:
    assert catalog.by_kotlin_class("xyz.block.trailblaze.NoSuchTool") is None
    registered = dict(CORPUS_TOOL_CLASSES)
    for tool in catalog.tools.values():
        if tool.origin in ("yaml", "script", "builtin"):
            assert tool.kotlin_class is None, tool.name
        elif tool.name in registered:
            assert tool.kotlin_class == registered[tool.name]
        else:
            # Annotated upstream but not registered by any tool.yaml: the class is still named,
            # so a workspace tool.yaml that registers it resolves.
            assert tool.name in UNREGISTERED
            assert tool.kotlin_class is not None
    assert catalog.by_kotlin_class("xyz.block.trailblaze.toolcalls.commands.StopAppTrailblazeTool")


# --- built-in trailmaps ----------------------------------------------------------------------


def test_builtin_trailmaps(catalog: Catalog) -> None:
    assert set(catalog.trailmaps) == {"trailblaze", "android", "mobile", "web", "compose", "revyl"}
    for trailmap_id, trailmap in catalog.trailmaps.items():
        assert trailmap.id == trailmap_id == trailmap.manifest["id"]
        assert "target" not in trailmap.manifest
        for section in ("defaults", "platforms"):
            for platform, config in trailmap.manifest.get(section, {}).items():
                assert platform in {"android", "ios", "web", "compose"}
                for toolset in config.get("tool_sets", []):
                    assert toolset in catalog.toolsets, (trailmap_id, toolset)


def test_trailblaze_trailmap_defaults(catalog: Catalog) -> None:
    mobile = ["core_interaction", "navigation", "observation", "verification", "memory"]
    assert catalog.trailmaps["trailblaze"].manifest == {
        "id": "trailblaze",
        "defaults": {
            "android": {"tool_sets": mobile},
            "ios": {"tool_sets": mobile},
            "web": {
                "drivers": ["playwright-native", "playwright-electron"],
                "tool_sets": ["web_core", "web_verification", "memory"],
            },
            "compose": {"tool_sets": ["compose_core", "compose_verification", "memory"]},
        },
    }
    assert catalog.trailmaps["revyl"].manifest["platforms"]["ios"] == {
        "drivers": ["revyl-ios"],
        "tool_sets": ["revyl_core", "revyl_verification"],
    }
