"""`@trailblaze/scripting`: our declarations of the real SDK, and which SDK tools compile with.

Every test runs the real compiler through `trailblaze check`, against zod's real declarations
(installed by npm, pinned): the whole documented API compiles, each misuse is its own
diagnostic, a real trailmap's tools compile clean, the workspace's own SDK wins, a mapping that
does not resolve falls back with one warning, and no call is passed against an input type that
did not resolve.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.conftest import DATA, write_tree
from trailblaze.check.run import run_check
from trailblaze.finding import Finding
from trailblaze.generate.sdk import (
    OURS_LABEL,
    SDK_TYPE_NAMES,
    SUBPATHS,
    render_sdk,
    render_subpath,
    strip_jsonc,
)
from trailblaze.options import CheckOptions
from trailblaze.report.formats import junit, sarif
from trailblaze.report.record import Report
from trailblaze.state.scratch import Layout, scratch_name
from trailblaze.toolchain import proc
from trailblaze.toolchain.compilers import install_library
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.workspace import find_workspace

pytestmark = pytest.mark.usefixtures("tsc")

PLAYWRIGHT = DATA / "scripted" / "playwright-native"
PLAYWRIGHT_TOOLS = PLAYWRIGHT / "trails/config/trailmaps/playwrightSample/tools"
SDK_DATA = DATA / "sdk"

# Everything the real SDK's `src/index.ts` exports, values and types.
INDEX_VALUES = {
    "z",
    "fromMeta",
    "captureViewHierarchy",
    "ConditionalActionFailedError",
    "runConditionalActions",
    "selectors",
    "trailblaze",
    "run",
    "tool",
}
INDEX_TYPES = {
    "TrailblazeContext",
    "TrailblazeDevice",
    "TrailblazeLogger",
    "TrailblazeLogLevel",
    "TrailblazeMemory",
    "TrailblazeTarget",
    "TrailblazeCallToolResult",
    "TrailblazeClient",
    "TrailblazeToolEntry",
    "TrailblazeToolMap",
    "EmptyInput",
    "ToolContext",
    "TypedToolDefinition",
    "ConditionalAction",
    "ViewHierarchy",
    "Bounds",
    "DriverNodeMatchAndroidAccessibility",
    "DriverNodeMatchAndroidMaestro",
    "DriverNodeMatchCompose",
    "DriverNodeMatchIosAxe",
    "DriverNodeMatchIosMaestro",
    "DriverNodeMatchWeb",
    "MatchDescriptor",
    "TrailblazeNodeSelector",
    "InstalledApp",
    "ListInstalledAppsDetailedResult",
    "ListInstalledAppsResult",
    "RunOptions",
    "TrailblazeToolHandler",
    "TrailblazeToolSpec",
    "TrailblazeTypedToolSpec",
    "TrailheadSpec",
}


def check(root: Path, **options: Any) -> Report:
    return run_check(find_workspace(root, explicit=True), CheckOptions(**options))


def texts(report: Report, kind: str | None = None) -> list[str]:
    return [f.text for f in report.findings if kind is None or f.kind == kind]


def type_finding(finding: Finding) -> tuple[str, str | None, str]:
    """A trail's type finding, by what stays put when the generator changes (not its column)."""
    assert finding.kind == "type", finding
    return (finding.path, finding.tool, finding.code)


def copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / "ws"
    shutil.copytree(source, target)
    return target


def edit(path: Path, old: str, new: str) -> None:
    """Replace the first `old` in the file by `new` (there must be one)."""
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


@pytest.fixture
def playwright_ws(tmp_path: Path) -> Path:
    """A copy of the real playwright-native sample: one trailmap of scripted tools, no trail."""
    return copy(PLAYWRIGHT, tmp_path)


@pytest.fixture
def misuse_ws(tmp_path: Path) -> Path:
    """A copy of the misuse fixture: one tool file with 18 marked misuses of the SDK."""
    return copy(SDK_DATA / "misuse", tmp_path)


def test_our_bundle_exports_exactly_what_the_sdk_index_exports() -> None:
    bundle = render_sdk(load_catalog())
    values = set(re.findall(r"^export declare (?:const|function|class) (\w+)", bundle, re.M))
    values |= set(re.findall(r"^export \{ (\w+) \} from", bundle, re.M))
    types = set(re.findall(r"^export (?:interface|type) (\w+)", bundle, re.M))
    assert values == INDEX_VALUES
    assert types == INDEX_TYPES
    # The one pin of the export list: our hand-written types plus the catalog's selector types.
    catalog_types = set(load_catalog().defs)
    assert catalog_types <= INDEX_TYPES
    assert INDEX_TYPES - catalog_types == SDK_TYPE_NAMES
    # zod is the real package, not an imitation.
    assert 'export { z } from "zod";' in bundle
    assert "ZodType" not in re.sub(r"ZodCore\.\$ZodType", "", bundle)


def test_a_fixture_using_every_export_compiles_with_zero_diagnostics(tmp_path: Path) -> None:
    ws = copy(SDK_DATA / "every-export", tmp_path)
    sources = "\n".join(p.read_text() for p in sorted((ws / "trailmaps/kit/tools").glob("*.ts")))
    unused = sorted(n for n in INDEX_VALUES | INDEX_TYPES if not re.search(rf"\b{n}\b", sources))
    assert unused == []
    report = check(ws)
    assert texts(report) == []
    assert report.sdks == {"kit": OURS_LABEL}
    assert report.exit_code == 0
    # Compiled, although no trail targets the trailmap: the declarations are there.
    decls = Layout(ws / ".trailblaze").tooldecl("kit")
    assert sorted(p.name for p in decls.glob("*.d.ts")) == [
        "kit_globals.d.ts",
        "kit_imperative.d.ts",
        "kit_typed.d.ts",
    ]


def test_each_misuse_gives_its_own_diagnostic(misuse_ws: Path) -> None:
    source = misuse_ws / "trailmaps/kit/tools/kit_misuse.ts"
    expected = [
        (n, match.group(1))
        for n, line in enumerate(source.read_text().splitlines(), 1)
        if (match := re.search(r"// MISUSE: (TS\d+)$", line))
    ]
    assert len(expected) == 18
    report = check(misuse_ws)
    found = [(f.line, f.code) for f in report.findings]
    assert found == expected
    assert {(f.kind, f.path, f.fatal) for f in report.findings} == {
        ("tool", "trailmaps/kit/tools/kit_misuse.ts", True)
    }
    by_line = {f.line: f.message for f in report.findings}
    assert by_line[14] == (
        'Type \'"windows"\' is not assignable to type \'"android" | "desktop" | "ios" | "web"\'.'
    )
    assert by_line[20] == "Property 'sessionId' does not exist on type 'ToolContext'."
    assert by_line[21] == "'ctx.target' is possibly 'undefined'."
    assert by_line[30] == "Property 'callTool' does not exist on type 'TrailblazeClient'."


def test_every_playwright_native_tool_compiles_with_zero_diagnostics(playwright_ws: Path) -> None:
    report = check(playwright_ws)
    assert texts(report) == []
    assert report.sdks == {"playwrightSample": OURS_LABEL}
    assert [t.path for t in report.trails] == []  # no trail targets it, and still:
    emitted = Layout(playwright_ws / "trails/.trailblaze").tooldecl("playwrightSample")
    sources = sorted(
        p.name.removesuffix(".ts")
        for p in PLAYWRIGHT_TOOLS.glob("*.ts")
        if not p.name.endswith(".test.ts")
    )
    assert len(sources) == 11
    assert sorted(p.name.removesuffix(".d.ts") for p in emitted.glob("*.d.ts")) == sources
    # The type smoke tests' `@ts-expect-error` lines held: a type that was too loose would
    # leave one unused (TS2578), one too strict would fail a happy-path line.
    smoke = playwright_ws / "trails/config/trailmaps/playwrightSample/tools/_type_smoke_web.ts"
    text = smoke.read_text()
    assert text.count("// @ts-expect-error") == 15
    # Take one directive away: the error it expected is there, on the next line.
    lines = text.splitlines(keepends=True)
    first = next(n for n, line in enumerate(lines) if line.startswith("// @ts-expect-error"))
    smoke.write_text("".join([*lines[:first], "\n", *lines[first + 1 :]]))
    [finding] = check(playwright_ws).findings
    assert (finding.kind, finding.line, finding.code) == ("tool", first + 2, "TS2353")


def test_an_error_in_a_tool_of_an_untargeted_trailmap_is_a_tool_finding(
    playwright_ws: Path,
) -> None:
    tool = PLAYWRIGHT_TOOLS.relative_to(PLAYWRIGHT) / "playwrightSample_web_openFormIfNeeded.ts"
    edit(playwright_ws / tool, "{ text: formHeading }", "{ txt: formHeading }")
    report = check(playwright_ws)
    [finding] = report.findings
    assert (finding.kind, finding.path, finding.code, finding.fatal) == (
        "tool",
        "trails/config/trailmaps/playwrightSample/tools/playwrightSample_web_openFormIfNeeded.ts",
        "TS2561",
        True,
    )
    assert report.exit_code == 1
    counts = report.counts()
    assert (counts["findings"], counts["tool_findings"], counts["tool_files"]) == (0, 1, 1)


# -- which SDK --------------------------------------------------------------------------------

HAND_TSCONFIG = """\
{
  // hand-written, kept by trailblaze-doit
  "compilerOptions": {
    "target": "ES2022", "module": "ESNext", "moduleResolution": "Bundler", "lib": ["ES2022"],
    "strict": true, "noEmit": true, "skipLibCheck": true,
    "paths": {"@trailblaze/scripting": ["../../../sdks/typescript/dist/index"]},
  },
  "include": ["**/*.ts"],
  "exclude": ["**/*.test.ts"],
}
"""
TOOL = """\
import { trailblaze } from "@trailblaze/scripting";
export interface Input { user: string }
export const app_login = trailblaze.tool<Input>({ owner: "team-a" }, async (i) => i.user);
"""
TRAIL = """\
config: {target: app}
trail:
  - step: s
    recording:
      android:
        - app_login: {user: 5}
"""
# A workspace's own SDK that differs from ours: its typed spec has an `owner` field.
WORKSPACE_SDK = """\
export interface TrailblazeToolMap {}
export interface TrailblazeNodeSelector { [key: string]: unknown }
export type TypedToolDefinition<I, O> = (args: I, ctx: unknown, client: unknown) => Promise<O>;
export declare const trailblaze: {
  tool<I, O = string>(spec: { owner: string }, handler: (input: I) => Promise<O>): TypedToolDefinition<I, O>;
};
"""


APP_TOOL = "trailmaps/app/tools/app_login.ts"
APP_TSCONFIG = "trailmaps/app/tools/tsconfig.json"
APP_TRAIL = "trailmaps/app/trails/a.trail.yaml"
OWN_SDK = "sdks/typescript/dist/index.d.ts"


@pytest.fixture
def app_ws(tmp_path: Path) -> Path:
    """Target `app` with one scripted tool, a hand-written tsconfig mapping the SDK to `OWN_SDK`
    (not there), and one trail passing the tool a wrong type."""
    return write_tree(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: app\n",
            APP_TOOL: TOOL,
            APP_TSCONFIG: HAND_TSCONFIG,
            APP_TRAIL: TRAIL,
        },
    )


@pytest.fixture
def own_sdk_ws(app_ws: Path) -> Path:
    """`app_ws` with the workspace's own SDK where its tsconfig maps the SDK."""
    return write_tree(app_ws, {OWN_SDK: WORKSPACE_SDK})


def with_app_tool(
    ws: Path, tool: str, trail: str = TRAIL, *, more: dict[str, str] | None = None
) -> Path:
    """`ws` (target `app`) with `tool` as `app_login.ts`, `trail` as `a.trail.yaml`, and `more`."""
    return write_tree(ws, {APP_TOOL: tool, APP_TRAIL: trail, **(more or {})})


def tools_tsconfig(ws: Path) -> Any:
    """The tsconfig the type gate compiled `app`'s tools with (one extending the user's)."""
    return json.loads(Layout(ws / ".trailblaze").tools_tsconfig("app").read_text("utf-8"))


def test_the_workspaces_own_sdk_is_preferred(own_sdk_ws: Path) -> None:
    report = check(own_sdk_ws)
    assert texts(report, "warning") == [
        "trailmaps/app/tools/tsconfig.json:1:1: hand-written tsconfig.json kept; scripted tools "
        "compile against the workspace's own SDK at sdks/typescript/dist/index.d.ts",
    ]
    # The trail is still checked against the tool's own input type.
    assert [type_finding(f) for f in report.findings if f.kind == "type"] == [
        ("trailmaps/app/trails/a.trail.yaml", "app_login", "TS2322")
    ]
    assert report.sdks == {"app": "workspace SDK sdks/typescript/dist/index.d.ts"}
    assert report.to_json()["summary"]["sdk"] == {
        "workspace SDK sdks/typescript/dist/index.d.ts": ["app"]
    }
    # Against ours the same tool is wrong: `owner` is no field of the real SDK's spec.
    (own_sdk_ws / "sdks").rename(own_sdk_ws / "elsewhere")
    [tool] = [f for f in check(own_sdk_ws).findings if f.kind == "tool"]
    assert (tool.path, tool.line, tool.code) == ("trailmaps/app/tools/app_login.ts", 3, "TS2353")


def test_a_mapping_that_does_not_resolve_is_one_warning_and_trails_are_still_checked(
    app_ws: Path,
) -> None:
    edit(app_ws / APP_TOOL, '{ owner: "team-a" }', '{ description: "Log in" }')
    report = check(app_ws)
    assert texts(report, "warning") == [
        "trailmaps/app/tools/tsconfig.json:1:1: hand-written trailmaps/app/tools/tsconfig.json "
        "maps '@trailblaze/scripting' to 'sdks/typescript/dist/index', which does not exist; "
        f"scripted tools and trails are checked against {OURS_LABEL} instead",
    ]
    assert [type_finding(f) for f in report.findings if f.kind != "warning"] == [
        ("trailmaps/app/trails/a.trail.yaml", "app_login", "TS2322")
    ]
    assert [t.status for t in report.trails] == ["type-checked"]
    # The user's tsconfig is untouched; the compile went through one extending it.
    assert (app_ws / "trailmaps/app/tools/tsconfig.json").read_text() == HAND_TSCONFIG
    scratch = tools_tsconfig(app_ws)
    assert scratch["extends"] == (app_ws / "trailmaps/app/tools/tsconfig.json").as_posix()
    assert scratch["compilerOptions"]["paths"]["@trailblaze/scripting"] == [
        (app_ws / ".trailblaze/sdk-trailblaze-doit/dist/index").as_posix()
    ]


def test_a_hand_written_tsconfig_without_file_lists_still_compiles_its_tools(
    app_ws: Path,
) -> None:
    # Real hand-written tsconfigs often say no `include`: tsc then takes every file beside
    # it. The compile goes through a tsconfig in the scratch directory extending it, where
    # that default would find no tool at all (TS18003, so nothing type-checked).
    edit(app_ws / APP_TOOL, '{ owner: "team-a" }', '{ description: "Log in" }')
    tsconfig = app_ws / "trailmaps/app/tools/tsconfig.json"
    edit(tsconfig, '  "include": ["**/*.ts"],\n  "exclude": ["**/*.test.ts"],\n', "")
    report = check(app_ws)
    assert [f.code for f in report.findings if f.kind == "infra"] == []
    assert [type_finding(f) for f in report.findings if f.kind == "type"] == [
        ("trailmaps/app/trails/a.trail.yaml", "app_login", "TS2322")
    ]
    assert [t.status for t in report.trails] == ["type-checked"]
    scratch = tools_tsconfig(app_ws)
    tools = (app_ws / "trailmaps/app/tools").as_posix()
    assert scratch["include"] == [f"{tools}/**/*"]
    assert f"{tools}/node_modules" in scratch["exclude"]


def test_a_bundle_the_reference_cli_extracted_is_used_and_never_overwritten(
    playwright_ws: Path,
) -> None:
    extracted = playwright_ws / "trails/.trailblaze/sdk/dist/index.d.ts"
    theirs = render_sdk(load_catalog()).replace(
        "// GENERATED BY trailblaze-doit", "// bundled by dts-bundle-generator; was"
    )
    write_tree(extracted.parent, {"index.d.ts": theirs})
    (extracted.parent.parent / "node_modules").mkdir()
    (extracted.parent.parent / "node_modules/zod").symlink_to(install_library("zod"))
    report = check(playwright_ws)
    assert texts(report) == []
    assert report.sdks == {
        "playwrightSample": "workspace SDK trails/.trailblaze/sdk/dist/index.d.ts "
        "(extracted by the Trailblaze CLI)"
    }
    assert extracted.read_text() == theirs
    # Declarations alone, nothing bun can run: the unit tests run on our runtime.
    assert [t.status for t in report.tests] == ["passed"] * 6


# -- no silent pass ---------------------------------------------------------------------------

BROKEN_TOOL = """\
import { trailblaze } from "@trailblaze/scripting";
import type { LoginInput } from "./missing-types";
export const app_login = trailblaze.tool<LoginInput>({ description: "Log in" }, async () => "ok");
"""


def test_calls_to_a_tool_with_a_broken_import_are_reported_not_checked_never_passed(
    compact_ws: Path,
) -> None:
    with_app_tool(compact_ws, BROKEN_TOOL, TRAIL.replace("{user: 5}", "{anything: 5}"))
    for _ in range(2):  # never cached: the second run says the same
        report = check(compact_ws)
        tool, unchecked = sorted(report.findings, key=lambda f: f.kind, reverse=True)
        assert (tool.kind, tool.path, tool.code) == (
            "tool",
            "trailmaps/app/tools/app_login.ts",
            "TS2307",
        )
        assert (unchecked.kind, unchecked.fatal, unchecked.text) == (
            "infra",
            False,
            "trailmaps/app/trails/a.trail.yaml:6:11: not type-checked: input type of "
            "`app_login` unresolved (trailmaps/app/tools/app_login.ts:2:33: Cannot find module "
            "'./missing-types' or its corresponding type declarations. [TS2307])",
        )
        assert [(t.status, t.reason) for t in report.trails] == [
            ("parsed", "type check could not run")
        ]
        assert report.counts()["unchecked_calls"] == 1
    assert check(compact_ws, require_typecheck=True).exit_code == 3


@pytest.mark.parametrize(
    ("declared", "why"),
    [
        ("any", "it accepts anything: `any`, `unknown` or a type that does not resolve"),
        ("unknown", "it accepts anything: `any`, `unknown` or a type that does not resolve"),
    ],
)
def test_a_tool_typed_any_is_probed_and_its_calls_are_not_checked(
    compact_ws: Path, declared: str, why: str
) -> None:
    with_app_tool(
        compact_ws,
        'import { trailblaze } from "@trailblaze/scripting";\n'
        f"export const app_login = trailblaze.tool<{declared}>({{}}, async () => 'ok');\n"
        "export const app_ok = trailblaze.tool<{ n: number }>({}, async () => 'ok');\n",
        TRAIL.replace("{user: 5}", "{user: 5}\n        - app_ok: {n: x}"),
        more={
            "trailmaps/app/trails/b.trail.yaml": TRAIL.replace(
                "app_login: {user: 5}", "app_ok: {n: x}"
            )
        },
    )
    report = check(compact_ws)
    unchecked, checked = report.findings
    assert unchecked.text == (
        "trailmaps/app/trails/a.trail.yaml:6:11: not type-checked: input type of `app_login` "
        f"unresolved ({why})"
    )
    # Calls to the other tool of the same module are checked.
    assert type_finding(checked) == ("trailmaps/app/trails/b.trail.yaml", "app_ok", "TS2322")
    assert [t.status for t in report.trails] == ["parsed", "type-checked"]


def test_tool_findings_are_counted_apart_in_every_format(misuse_ws: Path) -> None:
    report = check(misuse_ws)
    summary = report.to_json()["summary"]
    assert (summary["findings"], summary["tool_findings"], summary["tool_files"]) == (0, 18, 1)
    assert {f["kind"] for f in report.to_json()["findings"]} == {"tool"}
    suite = ElementTree.fromstring(junit(report).split("\n", 1)[1])
    [case] = suite.iter("testcase")
    assert (case.get("classname"), case.get("name")) == ("tools", "scripted tool sources")
    [failure] = case.iter("failure")
    assert (failure.get("type"), failure.get("message")) == ("tool", "18 finding(s)")
    run = json.loads(sarif(report))["runs"][0]
    assert run["properties"] == {"findings": 0, "toolFindings": 18}
    assert {r["properties"]["kind"] for r in run["results"]} == {"tool"}


def test_jsonc_comments_and_trailing_commas_are_stripped_but_strings_kept() -> None:
    text = '{\n  // a comment\n  "a": "//not a comment", /* block */ "b": [1, 2,],\n}\n'
    assert json.loads(strip_jsonc(text)) == {"a": "//not a comment", "b": [1, 2]}


def test_a_type_only_the_workspace_sdk_has_leaves_calls_unchecked_not_passed(
    own_sdk_ws: Path,
) -> None:
    # The tools compile clean against the workspace's SDK; trails are checked against ours,
    # which lacks `Owner`: the tool's declarations do not resolve there.
    (own_sdk_ws / OWN_SDK).write_text(WORKSPACE_SDK + "export interface Owner { team: string }\n")
    edit(
        own_sdk_ws / APP_TOOL,
        "export interface Input { user: string }",
        'import type { Owner } from "@trailblaze/scripting";\n'
        "export interface Input { user: string; owner?: Owner }",
    )
    report = check(own_sdk_ws)
    assert [f.kind for f in report.findings] == ["warning", "infra"]
    unchecked = report.findings[1]
    assert unchecked.text.startswith(
        "trailmaps/app/trails/a.trail.yaml:6:11: not type-checked: input type of `app_login` "
        "unresolved (its declarations do not resolve: "
        f"typegate/tooldecl-check/{scratch_name('app')}/app_login.ts("
    )
    assert "TS2305" in unchecked.message
    assert [t.status for t in report.trails] == ["parsed"]


def test_an_empty_input_type_takes_no_arguments(compact_ws: Path) -> None:
    with_app_tool(
        compact_ws,
        'import { trailblaze, type EmptyInput } from "@trailblaze/scripting";\n'
        "export const app_login = trailblaze.tool<EmptyInput>({}, async () => 'ok');\n",
    )
    [finding] = check(compact_ws).findings
    assert type_finding(finding) == ("trailmaps/app/trails/a.trail.yaml", "app_login", "TS2322")


def test_a_workspace_sdk_in_node_modules_is_found_without_a_mapping(app_ws: Path) -> None:
    edit(
        app_ws / APP_TSCONFIG,
        '    "paths": {"@trailblaze/scripting": ["../../../sdks/typescript/dist/index"]},\n',
        "",
    )
    package = "node_modules/@trailblaze/scripting"
    write_tree(
        app_ws,
        {
            f"{package}/package.json": '{"name": "@trailblaze/scripting", "types": "index.d.ts"}',
            f"{package}/index.d.ts": WORKSPACE_SDK,
        },
    )
    report = check(app_ws)
    assert texts(report, "warning") == [
        "trailmaps/app/tools/tsconfig.json:1:1: hand-written tsconfig.json kept; scripted tools "
        f"compile against the workspace's own SDK at {package}",
    ]
    assert report.sdks == {"app": f"workspace SDK {package}"}
    assert [f.kind for f in report.findings] == ["warning", "type"]


def test_an_edit_of_the_workspace_sdk_compiles_the_tools_again(own_sdk_ws: Path) -> None:
    assert [f.kind for f in check(own_sdk_ws).findings] == ["warning", "type"]
    edit(own_sdk_ws / OWN_SDK, "owner: string", "owner: number")
    [tool] = [f for f in check(own_sdk_ws).findings if f.kind == "tool"]
    assert (tool.path, tool.line, tool.code) == ("trailmaps/app/tools/app_login.ts", 3, "TS2322")


def test_tools_of_a_trailmap_whose_manifest_did_not_load_are_compiled(compact_ws: Path) -> None:
    write_tree(
        compact_ws,
        {
            "trailmaps/broken/trailmap.yaml": "id: broken\ntarget:\n  display_nam: x\n",
            "trailmaps/broken/tools/broken_tool.ts": (
                'import { trailblaze } from "@trailblaze/scripting";\n'
                "export const broken_tool = trailblaze.tool<{ n: number }>(\n"
                "  { supportedPlatforms: ['android'] },\n"
                "  async (i) => i.m,\n"
                ");\n"
            ),
        },
    )
    report = check(compact_ws)
    assert [(f.kind, f.path, f.line, f.code) for f in report.findings if f.kind != "manifest"] == [
        ("tool", "trailmaps/broken/tools/broken_tool.ts", 4, "TS2339")
    ]


def test_a_hand_written_mapping_to_our_declarations_says_so(app_ws: Path) -> None:
    edit(
        app_ws / APP_TSCONFIG,
        "../../../sdks/typescript/dist/index",
        "../../../.trailblaze/sdk/dist/index",
    )
    edit(app_ws / APP_TOOL, '{ owner: "team-a" }', "{}")
    report = check(app_ws)
    assert texts(report, "warning") == [
        "trailmaps/app/tools/tsconfig.json:1:1: hand-written tsconfig.json kept; its mapping "
        f"reaches {OURS_LABEL}"
    ]
    assert report.sdks == {"app": OURS_LABEL}
    assert [f.kind for f in report.findings] == ["warning", "type"]


# -- the subpaths `@trailblaze/scripting/in-process` and `/sub-process` ---------------------------

# What the real SDK's `src/in-process.ts` exports: the lightweight part of index.ts and its own
# typed-only `tool`, option-less `run` and `trailblaze`.
IN_PROCESS_VALUES = INDEX_VALUES  # the same names as index.ts
IN_PROCESS_TYPES = INDEX_TYPES - {
    "InstalledApp",
    "ListInstalledAppsDetailedResult",
    "ListInstalledAppsResult",
    "RunOptions",
    "TrailblazeToolHandler",
    "TrailblazeToolSpec",
}
# What `src/sub-process.ts` exports: the full `tool`/`run`/`trailblaze` and the tool types.
SUB_PROCESS_VALUES = {"trailblaze", "run", "tool"}
SUB_PROCESS_TYPES = {
    "RunOptions",
    "TrailblazeToolHandler",
    "TrailblazeToolResult",
    "TrailblazeToolSpec",
    "TrailblazeTypedToolSpec",
    "TrailheadSpec",
    "ToolContext",
    "EmptyInput",
    "TypedToolDefinition",
}


def exported_names(declarations: str) -> tuple[set[str], set[str]]:
    """The value and type names a declaration file exports (declared or re-exported)."""
    values = set(re.findall(r"^export declare (?:const|function|class) (\w+)", declarations, re.M))
    types = set(re.findall(r"^export (?:interface|type) (\w+)", declarations, re.M))
    for kind, names in re.findall(r"^export (type )?\{([^}]*)\} from", declarations, re.M):
        (types if kind else values).update(re.findall(r"\w+", names))
    return values, types


@pytest.mark.parametrize(
    ("subpath", "values", "types"),
    [
        ("in-process", IN_PROCESS_VALUES, IN_PROCESS_TYPES),
        ("sub-process", SUB_PROCESS_VALUES, SUB_PROCESS_TYPES),
    ],
)
def test_each_subpath_exports_exactly_what_the_sdk_entry_exports(
    subpath: str, values: set[str], types: set[str]
) -> None:
    assert exported_names(render_subpath(subpath)) == (values, types)
    assert subpath in SUBPATHS


SLIM_TOOL = """\
import {
  captureViewHierarchy, ConditionalActionFailedError, fromMeta, run, runConditionalActions,
  selectors, tool, trailblaze, z,
  type Bounds, type ConditionalAction, type DriverNodeMatchAndroidAccessibility,
  type DriverNodeMatchAndroidMaestro, type DriverNodeMatchCompose, type DriverNodeMatchIosAxe,
  type DriverNodeMatchIosMaestro, type DriverNodeMatchWeb, type EmptyInput,
  type MatchDescriptor, type ToolContext, type TrailblazeCallToolResult, type TrailblazeClient,
  type TrailblazeContext, type TrailblazeDevice, type TrailblazeLogger, type TrailblazeLogLevel,
  type TrailblazeMemory, type TrailblazeNodeSelector, type TrailblazeTarget,
  type TrailblazeToolEntry, type TrailblazeToolMap, type TrailblazeTypedToolSpec,
  type TrailheadSpec, type TypedToolDefinition, type ViewHierarchy,
} from "@trailblaze/scripting/in-process";

export interface CopyInput { text: string }
const trailhead: TrailheadSpec = { to: "home" };
const spec: TrailblazeTypedToolSpec = { description: "Copy.", trailhead };
export const kit_slim: TypedToolDefinition<CopyInput, string> = trailblaze.tool<CopyInput>(
  spec,
  async (input, ctx: ToolContext) => {
    const memory: TrailblazeMemory = ctx.memory;
    const device: TrailblazeDevice | undefined = ctx.device;
    const target: TrailblazeTarget | undefined = ctx.target;
    await ctx.tools.tapOnElementWithText({ text: input.text });
    return `${memory.keys().length}${device?.platform ?? ""}${target?.id ?? ""}`;
  },
);
export const kit_slimBare = tool(async (_input: EmptyInput) => "done");
const schema = z.object({ n: z.number() });
export async function helpers(client: TrailblazeClient, meta: unknown): Promise<void> {
  const context: TrailblazeContext | undefined = fromMeta(meta);
  const logger: TrailblazeLogger | undefined = context?.logger;
  const level: TrailblazeLogLevel = "info";
  logger?.[level]("x");
  const selector: TrailblazeNodeSelector = selectors.web({ ariaRole: "button" });
  const screen: ViewHierarchy = await captureViewHierarchy(client, [selector]);
  const match: MatchDescriptor | null = screen.find(selector);
  const bounds: Bounds | null | undefined = match?.bounds;
  const action: ConditionalAction = {
    id: "a", description: "A", condition: (snap) => snap.visible(selector), action: async () => undefined,
  };
  await runConditionalActions(client, [action]);
  const result: TrailblazeCallToolResult | undefined = undefined;
  const entry: TrailblazeToolEntry | undefined = undefined as TrailblazeToolMap["tapOnElementWithText"] | undefined;
  const nodes: Array<DriverNodeMatchAndroidAccessibility | DriverNodeMatchAndroidMaestro
    | DriverNodeMatchCompose | DriverNodeMatchIosAxe | DriverNodeMatchIosMaestro
    | DriverNodeMatchWeb> = [];
  void [bounds, result, entry, nodes, schema.parse({ n: 1 }), new ConditionalActionFailedError("a", "b")];
  await run();
}
"""
FULL_TOOL = """\
import {
  run, tool, trailblaze,
  type EmptyInput, type RunOptions, type ToolContext, type TrailblazeToolHandler,
  type TrailblazeToolResult, type TrailblazeToolSpec, type TrailblazeTypedToolSpec,
  type TrailheadSpec, type TypedToolDefinition,
} from "@trailblaze/scripting/sub-process";

const trailhead: TrailheadSpec = { to: "home" };
const spec: TrailblazeTypedToolSpec = { description: "Count.", trailhead };
export const kit_full: TypedToolDefinition<{ n: number }, string> = trailblaze.tool<{ n: number }>(
  spec,
  async (input, ctx: ToolContext) => `${input.n}${ctx.memory.keys().length}`,
);
const imperative: TrailblazeToolSpec = { description: "Echo." };
const handler: TrailblazeToolHandler = async (args): Promise<TrailblazeToolResult> => ({
  content: [{ type: "text", text: String(args.text) }],
});
tool("kit_echo", imperative, handler);
export const kit_fullBare = tool(async (_input: EmptyInput) => "done");
const options: RunOptions = { name: "kit" };
await run(options);
"""
SUBPATH_TRAIL = """\
config: {target: kit}
trail:
  - step: s
    recording:
      web:
        - kit_slim: {text: %s}
        - kit_full: {n: 3}
"""


def subpath_ws(tmp_path: Path, *, text: str = "hello", **files: str) -> Path:
    return write_tree(
        tmp_path,
        {
            "trailmaps/kit/trailmap.yaml": (
                "id: kit\ntarget:\n  display_name: kit\n  platforms:\n    web:\n"
                "      tool_sets:\n        - web_core\n"
            ),
            "trailmaps/kit/tools/kit_slim.ts": SLIM_TOOL,
            "trailmaps/kit/tools/kit_full.ts": FULL_TOOL,
            "trailmaps/kit/trails/a.trail.yaml": SUBPATH_TRAIL % text,
            **files,
        },
    )


def test_tools_importing_each_subpath_compile_and_their_calls_are_checked(tmp_path: Path) -> None:
    assert [n for n in IN_PROCESS_VALUES | IN_PROCESS_TYPES if n not in SLIM_TOOL] == []
    assert [n for n in SUB_PROCESS_VALUES | SUB_PROCESS_TYPES if n not in FULL_TOOL] == []
    report = check(subpath_ws(tmp_path))
    assert texts(report) == []
    assert [t.status for t in report.trails] == ["type-checked"]
    assert report.exit_code == 0


def test_a_misuse_through_a_subpath_is_its_diagnostic(tmp_path: Path) -> None:
    misuse = (
        'import { trailblaze } from "@trailblaze/scripting/in-process";\n'
        "export const kit_bad = trailblaze.tool<{ n: number }>(async (i) => i.m);\n"
        'trailblaze.run({ name: "kit" });\n'
        'trailblaze.tool("kit_echo", {}, async () => ({ content: [] }));\n'
    )
    ws = subpath_ws(tmp_path, text="5", **{"trailmaps/kit/tools/kit_bad.ts": misuse})
    report = check(ws)
    bad = "trailmaps/kit/tools/kit_bad.ts"
    assert [(f.kind, f.path, f.line, f.code, f.message) for f in report.findings] == [
        ("tool", bad, 2, "TS2339", "Property 'm' does not exist on type '{ n: number; }'."),
        # The slim profile: `run()` takes no options, `tool` has no imperative form.
        ("tool", bad, 3, "TS2554", "Expected 0 arguments, but got 1."),
        ("tool", bad, 4, "TS2554", "Expected 1-2 arguments, but got 3."),
        # The trail's call is checked against the input type the in-process tool declares.
        (
            "type",
            "trailmaps/kit/trails/a.trail.yaml",
            6,
            "TS2322",
            "Type 'number' is not assignable to type 'string'.",
        ),
    ]


def test_a_subpath_import_compiles_against_ours_when_the_mapping_does_not_resolve(
    app_ws: Path,
) -> None:
    edit(app_ws / APP_TOOL, '"@trailblaze/scripting"', '"@trailblaze/scripting/in-process"')
    edit(app_ws / APP_TOOL, '{ owner: "team-a" }', '{ description: "Log in" }')
    report = check(app_ws)
    assert [f.kind for f in report.findings] == ["warning", "type"]
    assert [type_finding(f) for f in report.findings if f.kind == "type"] == [
        ("trailmaps/app/trails/a.trail.yaml", "app_login", "TS2322")
    ]
    scratch = tools_tsconfig(app_ws)
    assert scratch["compilerOptions"]["paths"]["@trailblaze/scripting/*"] == [
        (app_ws / ".trailblaze/sdk-trailblaze-doit/dist/*").as_posix()
    ]


# -- the subpath `@trailblaze/scripting/testing` ----------------------------------------------------

# What the SDK's `./testing` gives a tool's unit test: a mock client that records the calls and
# answers from stubs, a client with queued `findMatches` answers, a mock session context, and the
# types that name them: exactly upstream's names (`testing.ts`, copied in tests/data/sdk/upstream).
TESTING_VALUES = {"createMockClient", "createMockContext", "createQueuedFindMatchesClient"}
TESTING_TYPES = {
    "CreateMockContextOptions",
    "MockCall",
    "MockStubResponse",
    "MockTrailblazeClient",
    "QueuedFindMatchesClient",
}

TESTING_TOOL = """\
import { trailblaze, type MatchDescriptor, type TrailblazeContext } from "@trailblaze/scripting";
import {
  createMockClient, createMockContext, createQueuedFindMatchesClient,
  type CreateMockContextOptions, type MockCall, type MockStubResponse,
  type MockTrailblazeClient, type QueuedFindMatchesClient,
} from "@trailblaze/scripting/testing";

export const kit_open = trailblaze.tool<{ text: string }>(async (input, ctx) => {
  await ctx.tools.tapOnElementWithText({ text: input.text });
  const apps = await ctx.tools.mobile_listInstalledApps({});
  return `${input.text} ${apps.appIds.length} ${ctx.target?.resolveAppId() ?? "-"}`;
});

/** The tool's own check, run with the testing helpers (as a unit test would). */
export async function selfTest(): Promise<string> {
  const client: MockTrailblazeClient = createMockClient();
  const target = {
    id: "kit",
    appIds: ["com.example"],
    resolveAppId: () => "com.example",
    resolveBaseUrl: () => undefined,
  };
  const options: CreateMockContextOptions = {
    platform: "web",
    memory: { user: "a", n: 1 },
    target,
    device: { widthPixels: 390, driver: "legacy" },
    runtime: "host",
  };
  const ctx: TrailblazeContext = createMockContext(options);
  const apps: MockStubResponse = { textContent: "", structuredContent: { appIds: ["a", "b"] } };
  client.stub("mobile_listInstalledApps", apps);
  const result: string = await kit_open({ text: "Forms" }, ctx, client);
  const calls: MockCall[] = client.calls;
  const tools = calls.map((c) => `${c.tool}:${JSON.stringify(c.args)}`).join(",");
  client.stub("tapOnElementWithText", { textContent: "", errorMessage: "Text not found" });
  let thrown = "";
  try {
    await kit_open({ text: "Forms" }, createMockContext({ platform: "android" }), client);
  } catch (e) {
    thrown = (e as Error).message;
  }
  client.reset();
  const queued: QueuedFindMatchesClient = createQueuedFindMatchesClient();
  const none: MatchDescriptor[] = [];
  queued.queueFindMatches([none]);
  queued.queueWaitUntilNotVisible([true]);
  return JSON.stringify({ result, tools, thrown, after: calls.length, device: ctx.device, queued });
}
"""

TESTING_MISUSE = """\
import { trailblaze, type ToolContext } from "@trailblaze/scripting";
import { createMockClient, createMockContext, createMockTools } from "@trailblaze/scripting/testing"; // MISUSE: TS2305

export const kit_open = trailblaze.tool<{ text: string }>(async (input) => input.text);

export async function misuses(): Promise<void> {
  const client = createMockClient({}); // MISUSE: TS2554
  client.stub("tapOnElementWithText", {}); // MISUSE: TS2741
  client.stub("tapOnElementWithText", { textContent: "", errorMesage: "x" }); // MISUSE: TS2561
  client.stub(1, { textContent: "" }); // MISUSE: TS2345
  client.rest(); // MISUSE: TS2551
  void createMockContext({ platform: "windows" }); // MISUSE: TS2322
  void createMockContext({ memory: {} }); // MISUSE: TS2741
  void createMockContext({ platform: "web", device: { width: 1 } }); // MISUSE: TS2353
  const ctx: ToolContext = createMockContext({ platform: "web" }); // MISUSE: TS2741
  void createMockContext(); // MISUSE: TS2554
  await kit_open({ text: 1 }, createMockContext({ platform: "web" }), client); // MISUSE: TS2322
  void [ctx, createMockTools];
}
"""


def unit_ws(tmp_path: Path, tool: str) -> Path:
    """Target `kit` (android, core interaction) with `tool` as its one tool, `kit_open.ts`."""
    return write_tree(
        tmp_path,
        {
            "trailmaps/kit/trailmap.yaml": (
                "id: kit\ntarget:\n  display_name: kit\n  platforms:\n    android:\n"
                "      tool_sets:\n        - core_interaction\n"
            ),
            "trailmaps/kit/tools/kit_open.ts": tool,
        },
    )


def test_the_testing_subpath_exports_exactly_the_helpers_of_a_tools_unit_test() -> None:
    upstream = (SDK_DATA / "upstream/testing.ts").read_text("utf-8")
    assert exported_names(upstream.replace("export function", "export declare function")) == (
        TESTING_VALUES,
        TESTING_TYPES,
    )
    assert exported_names(render_subpath("testing")) == (TESTING_VALUES, TESTING_TYPES)
    assert "testing" in SUBPATHS
    # Real types: nothing of it is `any`.
    assert not re.search(r"\bany\b", render_subpath("testing"))


def test_a_tool_using_every_testing_helper_compiles_with_zero_diagnostics(tmp_path: Path) -> None:
    assert [n for n in TESTING_VALUES | TESTING_TYPES if n not in TESTING_TOOL] == []
    ws = unit_ws(tmp_path, TESTING_TOOL)
    report = check(ws)
    assert texts(report) == []
    assert report.sdks == {"kit": OURS_LABEL}
    assert (ws / ".trailblaze/sdk-trailblaze-doit/dist/testing.d.ts").is_file()


def test_each_misuse_of_the_testing_helpers_gives_its_own_diagnostic(tmp_path: Path) -> None:
    expected = [
        (n, match.group(1))
        for n, line in enumerate(TESTING_MISUSE.splitlines(), 1)
        if (match := re.search(r"// MISUSE: (TS\d+)$", line))
    ]
    assert len(expected) == 12
    ws = unit_ws(tmp_path, TESTING_MISUSE)
    report = check(ws)
    assert [(f.line, f.code) for f in report.findings] == expected
    assert {(f.kind, f.fatal) for f in report.findings} == {("tool", True)}
    by_line = {f.line: f.message for f in report.findings}
    assert by_line[2] == (
        "Module '\"@trailblaze/scripting/testing\"' has no exported member 'createMockTools'."
    )
    assert by_line[8] == (
        "Property 'textContent' is missing in type '{}' but required in type 'MockStubResponse'."
    )
    assert by_line[11] == (
        "Property 'rest' does not exist on type 'MockTrailblazeClient'. Did you mean 'reset'?"
    )


# A declaration of the `bun:test` functions the upstream samples' unit tests use, so that they
# compile as tool sources: our `testing` declarations must take what real tests do with them.
BUN_TEST = """\
declare module "bun:test" {
  interface Matchers {
    toEqual(expected: unknown): void;
    toMatchObject(expected: object): void;
    toContain(expected: unknown): void;
    toHaveLength(expected: number): void;
    toBe(expected: unknown): void;
    toBeGreaterThan(expected: number): void;
    toMatch(expected: RegExp | string): void;
    rejects: { toThrow(expected?: RegExp | string): Promise<void> };
  }
  export function describe(name: string, body: () => void): void;
  export function test(name: string, body: () => Promise<void> | void): void;
  export function expect(actual: unknown): Matchers;
}
"""


def test_the_upstream_samples_unit_tests_compile_against_our_testing_declarations(
    playwright_ws: Path,
) -> None:
    tools = playwright_ws / PLAYWRIGHT_TOOLS.relative_to(PLAYWRIGHT)
    unit_tests = sorted(tools.glob("*.test.ts"))
    assert len(unit_tests) == 3
    for test in unit_tests:
        # `*.test.ts` is not a tool source; under another name it is compiled like one.
        test.rename(tools / f"_unit_{test.name.removesuffix('.test.ts')}.ts")
    (tools / "bun-test.d.ts").write_text(BUN_TEST)
    report = check(playwright_ws)
    assert texts(report) == []
    # Compiled: a declaration was emitted for each.
    emitted = Layout(playwright_ws / "trails/.trailblaze").tooldecl("playwrightSample")
    assert len(list(emitted.glob("_unit_*.d.ts"))) == 3
    # And checked: a stub without the `textContent` upstream's type requires is a finding there.
    edit(
        tools / "_unit_playwrightSample_web_openFormIfNeeded.ts",
        'textContent: "",',
        "",
    )
    [finding] = check(playwright_ws).findings
    assert (finding.kind, finding.code) == ("tool", "TS2741")
    assert finding.path.endswith("_unit_playwrightSample_web_openFormIfNeeded.ts")


# -- our runtime beside the declarations -------------------------------------------------------

RUNTIME_SCRIPT = """\
import { createMockClient, createMockContext, createQueuedFindMatchesClient } from "SDK/testing.js";
import { trailblaze } from "SDK/index.js";

const probe = trailblaze.tool(async (_input, ctx) => {
  const found = await ctx.tools.findMatches({ selector: { textRegex: "Go" } });
  const gone = await ctx.tools.waitUntilNotVisible({ selector: { textRegex: "Go" } });
  await ctx.tools.tapOnElementWithText({ text: "Go" });
  return { found: found.length, gone };
});
const queued = createQueuedFindMatchesClient();
queued.queueFindMatches([[{ nodeId: 1 }, { nodeId: 2 }]]);
queued.queueWaitUntilNotVisible([true]);
const ctx = createMockContext({ platform: "web", memory: { user: "ann", n: 1 }, runtime: "host" });
const first = await probe({}, ctx, queued);
const empty = await probe({}, ctx, queued).catch((e) => e.message);

const client = createMockClient();
const calls = client.calls;
client.stub("web_click", { textContent: "", errorMessage: "gone" });
const thrown = await client.tools.web_click({ ref: "x" }).catch((e) => e.message);
client.reset();
console.log(JSON.stringify({
  first, empty, queuedCalls: queued.calls.map((c) => c.tool), thrown, cleared: calls.length,
  device: ctx.device, runtime: ctx.runtime ?? null, memory: ctx.memory.keys(),
  session: [ctx.sessionId, ctx.invocationId],
}));
"""


def test_the_scratch_sdk_folder_carries_a_runtime_node_can_import_beside_the_declarations(
    tmp_path: Path,
) -> None:
    # A workspace whose package.json says ESM: our `.js` entries are CommonJS all the same.
    ws = unit_ws(tmp_path, TESTING_TOOL)
    (ws / "package.json").write_text('{"type": "module"}\n')
    assert texts(check(ws)) == []
    sdk = ws / ".trailblaze/sdk-trailblaze-doit/dist"
    for name in ("index", "in-process", "sub-process", "testing"):
        assert (sdk / f"{name}.d.ts").is_file()
        assert (sdk / f"{name}.js").is_file()
    script = ws / "probe.mjs"
    script.write_text(RUNTIME_SCRIPT.replace("SDK/", sdk.as_posix() + "/"))
    result = proc.run(["node", str(script)], cwd=ws, timeout=60)
    assert result.ok, result.stderr
    assert json.loads(result.stdout) == {
        "first": {"found": 2, "gone": True},
        "empty": (
            "createQueuedFindMatchesClient: no more findMatches responses queued; received call "
            'with args={"selector":{"textRegex":"Go"}}. Did the test forget a queueFindMatches?'
        ),
        "queuedCalls": [
            "findMatches",
            "waitUntilNotVisible",
            "tapOnElementWithText",
            "findMatches",
        ],
        "thrown": 'trailblaze.client.callTool("web_click") tool failed: gone',
        "cleared": 0,
        "device": {
            "platform": "web",
            "widthPixels": 1080,
            "heightPixels": 2400,
            "driverType": "mock-driver",
        },
        "runtime": None,
        "memory": ["user"],
        "session": ["mock-session", "mock-invocation"],
    }
