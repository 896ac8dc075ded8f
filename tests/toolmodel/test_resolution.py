"""Per-trailmap tool resolution: sources in the reference's order, first write wins (§4.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from trailblaze.check.discover import load_manifests
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.toolmodel.records import Resolution
from trailblaze.toolmodel.resolution import Resolver
from trailblaze.workspace import find_workspace, scan

LIB_SHARE = """
    import { trailblaze } from "@trailblaze/scripting";
    export const lib_share = trailblaze.tool<{ to: string }>({}, async () => "shared");
"""


def resolve_all(root: Path, files: dict[str, str]) -> dict[str, Resolution]:
    write_tree(root, dict(files))
    ws = find_workspace(root, explicit=True)
    manifests = load_manifests(ws, scan(ws))
    assert [f.text for f in manifests.findings] == []
    resolver = Resolver(manifests.with_dirs(), ws.root, load_catalog())
    return {name: resolver.resolve(name) for name in sorted(manifests.trailmaps)}


def sources(resolution: Resolution) -> dict[str, tuple[str, str]]:
    return {e.name: (e.kind, e.source) for e in resolution.entries}


def texts(resolution: Resolution) -> list[str]:
    return [f.text for f in resolution.findings]


def test_own_tool_sets_come_first_with_the_always_enabled_sets(tmp_path: Path) -> None:
    resolved = resolve_all(
        tmp_path,
        {
            "trailmaps/plain/trailmap.yaml": "id: plain\ntarget:\n  display_name: Plain\n",
            "trailmaps/sets/trailmap.yaml": """
                id: sets
                target:
                  display_name: Sets
                  platforms:
                    android:
                      tool_sets: [core_interaction]
            """,
        },
    )
    plain, sets = sources(resolved["plain"]), sources(resolved["sets"])
    # `tap` is not recordable: only a tool set brings it in.
    assert "tap" not in plain
    assert sets["tap"] == ("framework", "toolset core_interaction")
    # A recordable tool of the set is attributed to the set (it was written first) ...
    assert sets["inputText"] == ("framework", "toolset core_interaction")
    assert plain["inputText"] == ("framework", "framework")
    # ... and the always-enabled sets come with any own set.
    assert sets["android_adbShell"] == ("framework", "toolset android_framework")
    assert plain["android_adbShell"] == ("framework", "sdk")
    # Every recordable framework tool is there whatever the tool sets say.
    recordable = {t.name for t in load_catalog().recordable_tools() if t.surface}
    assert recordable <= set(plain)
    assert recordable <= set(sets)
    assert texts(resolved["plain"]) == texts(resolved["sets"]) == []


def test_entries_are_sorted_by_name(tmp_path: Path) -> None:
    resolved = resolve_all(
        tmp_path, {"trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: App\n"}
    )
    names = [e.name for e in resolved["app"].entries]
    assert names == sorted(names)
    assert len(names) == len(set(names))


def test_workspace_tool_set_with_framework_and_own_tools(tmp_path: Path) -> None:
    resolved = resolve_all(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": """
                id: app
                target:
                  display_name: App
                  platforms:
                    android:
                      tool_sets: [app_set]
            """,
            "trailmaps/app/toolsets/app_set.yaml": """
                id: app_set
                tools: [requestDetailedViewHierarchy, app_helper, nope]
            """,
            "trailmaps/app/tools/helper.ts": "export function app_helper(): void {}\n",
        },
    )
    app = resolved["app"]
    assert sources(app)["requestDetailedViewHierarchy"] == ("framework", "toolset")
    assert sources(app)["app_helper"] == ("module", "trailmaps/app/tools/helper.ts")
    assert texts(app) == [
        "trailmaps/app/toolsets/app_set.yaml:2:51: tools: tool set 'app_set' names unknown tool 'nope'"
    ]


def test_first_write_wins(tmp_path: Path) -> None:
    resolved = resolve_all(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": """
                id: app
                dependencies: [lib]
                target:
                  display_name: App
                  tools: [inputText, lib_share]
            """,
            # 3. a YAML tool with a framework tool's name loses to the framework tool (2.)
            "trailmaps/app/tools/hideKeyboard.tool.yaml": """
                id: hideKeyboard
                description: Our own hideKeyboard.
                tools:
                  - pressBack: {}
            """,
            # 4. a scripted tool with a framework tool's name loses too, with a warning
            "trailmaps/app/tools/inputText.yaml": "name: inputText\ndescription: Ours.\n",
            # 4. a module export with a YAML tool's name loses to the YAML tool (3.)
            "trailmaps/app/tools/app_go.tool.yaml": """
                id: app_go
                description: The YAML one.
                tools:
                  - hideKeyboard: {}
            """,
            "trailmaps/app/tools/go.ts": (
                "export const app_go = trailblaze.tool<{ a: string }>({}, async () => 'x');\n"
            ),
            # 4. an own scripted tool wins over a dependency's export (5.), silently
            "trailmaps/app/tools/lib_share.yaml": "name: lib_share\ndescription: Local.\n",
            "trailmaps/lib/trailmap.yaml": "id: lib\nexports: [lib_share]\n",
            "trailmaps/lib/tools/lib_share.ts": LIB_SHARE,
        },
    )
    app = resolved["app"]
    assert sources(app)["hideKeyboard"] == ("framework", "framework")
    assert sources(app)["inputText"] == ("framework", "framework")
    assert sources(app)["app_go"] == ("yaml", "trailmaps/app/tools/app_go.tool.yaml")
    assert sources(app)["lib_share"] == ("descriptor", "trailmaps/app/tools/lib_share.yaml")
    assert texts(app) == [
        "trailmaps/app/tools/inputText.yaml:1:7: scripted tool 'inputText' has the name of a "
        "framework tool, which wins; recordings of 'inputText' are checked against the "
        "framework tool"
    ]


def test_dependency_exports_breadth_first_and_only_what_is_exported(tmp_path: Path) -> None:
    resolved = resolve_all(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": """
                id: app
                dependencies: [mid]
                target:
                  display_name: App
            """,
            "trailmaps/mid/trailmap.yaml": "id: mid\ndependencies: [lib, trailblaze]\n",
            "trailmaps/lib/trailmap.yaml": "id: lib\nexports: [lib_share, lib_tap]\n",
            "trailmaps/lib/tools/lib_share.ts": LIB_SHARE,
            "trailmaps/lib/tools/lib_tap.tool.yaml": """
                id: lib_tap
                description: Exported YAML tool.
                tools:
                  - tapOnElementWithText: {text: OK}
            """,
            "trailmaps/lib/tools/lib_private.tool.yaml": """
                id: lib_private
                description: Not exported.
                tools:
                  - hideKeyboard: {}
            """,
        },
    )
    app, lib = resolved["app"], resolved["lib"]
    assert app.dependencies == ("mid", "lib", "trailblaze")
    assert sources(app)["lib_share"] == ("module", "export of lib")
    assert sources(app)["lib_tap"] == ("yaml", "export of lib")
    assert "lib_private" not in sources(app)
    # The library's own surface has its own tools, exported or not.
    assert sources(lib)["lib_private"] == ("yaml", "trailmaps/lib/tools/lib_private.tool.yaml")
    assert sources(lib)["lib_share"] == ("module", "trailmaps/lib/tools/lib_share.ts")
    # What the dependency's files are is part of what the trailmap's surface depends on.
    inputs = {p.relative_to(tmp_path).as_posix() for p in app.inputs}
    assert inputs == {
        "trailmaps/app/trailmap.yaml",
        "trailmaps/mid/trailmap.yaml",
        "trailmaps/lib/trailmap.yaml",
        "trailmaps/lib/tools/lib_private.tool.yaml",
        "trailmaps/lib/tools/lib_share.ts",
        "trailmaps/lib/tools/lib_tap.tool.yaml",
    }
    assert texts(app) == []


def test_two_dependencies_exporting_one_name_is_an_error(tmp_path: Path) -> None:
    tool = "id: x_go\ndescription: Go.\ntools:\n  - hideKeyboard: {}\n"
    resolved = resolve_all(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": """
                id: app
                dependencies:
                  - one
                  - two
                target:
                  display_name: App
            """,
            "trailmaps/one/trailmap.yaml": "id: one\nexports: [x_go]\n",
            "trailmaps/one/tools/x_go.tool.yaml": tool,
            "trailmaps/two/trailmap.yaml": "id: two\nexports: [x_go]\n",
            "trailmaps/two/tools/x_go.tool.yaml": tool,
        },
    )
    assert texts(resolved["app"]) == [
        "trailmaps/app/trailmap.yaml:4:5: dependencies: tool 'x_go' is exported by both 'one' "
        "and 'two'; trailmap 'app' cannot depend on both"
    ]
    assert sources(resolved["app"])["x_go"] == ("yaml", "export of one")


def test_unknown_dependency_and_unknown_tool_set_are_located(tmp_path: Path) -> None:
    resolved = resolve_all(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": """
                id: app
                dependencies:
                  - trailblaz
                  - nowhere
                target:
                  display_name: App
                  platforms:
                    android:
                      tool_sets: [navigaton]
            """,
        },
    )
    assert texts(resolved["app"]) == [
        "trailmaps/app/trailmap.yaml:3:5: dependencies: unknown trailmap 'trailblaz' "
        "(did you mean 'trailblaze'?)",
        "trailmaps/app/trailmap.yaml:4:5: dependencies: unknown trailmap 'nowhere'",
        "trailmaps/app/trailmap.yaml:9:19: tool_sets: unknown tool set 'navigaton' "
        "(did you mean 'navigation'?)",
    ]


def test_a_dependency_cycle_is_one_located_error(tmp_path: Path) -> None:
    resolved = resolve_all(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": "id: app\ndependencies: [b]\ntarget:\n  display_name: A\n",
            "trailmaps/b/trailmap.yaml": "id: b\ndependencies:\n  - c\n",
            "trailmaps/c/trailmap.yaml": "id: c\ndependencies:\n  - trailblaze\n  - b\n",
            "trailmaps/self/trailmap.yaml": "id: self\ndependencies: [self]\n",
        },
    )
    every = [text for resolution in resolved.values() for text in texts(resolution)]
    assert sorted(every) == [
        "trailmaps/c/trailmap.yaml:4:5: dependencies: dependency cycle: b -> c -> b",
        "trailmaps/self/trailmap.yaml:2:16: dependencies: dependency cycle: self -> self",
    ]
    # Resolution still terminates with every trailmap reachable once.
    assert resolved["app"].dependencies == ("b", "c", "trailblaze")


def test_bad_parameter_type_and_unknown_export_are_located(tmp_path: Path) -> None:
    resolved = resolve_all(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": "id: app\ndependencies: [lib]\ntarget:\n  display_name: A\n",
            "trailmaps/other/trailmap.yaml": "id: other\ndependencies: [lib]\n",
            "trailmaps/lib/trailmap.yaml": "id: lib\nexports:\n  - lib_missing\n",
            "trailmaps/lib/tools/lib_bad.tool.yaml": """
                id: lib_bad
                description: Bad parameter.
                parameters:
                  - name: count
                    type: integr
                tools:
                  - hideKeyboard: {}
            """,
        },
    )
    every = [text for resolution in resolved.values() for text in texts(resolution)]
    # Problems of a shared trailmap are reported once per run, not once per dependent.
    assert every == [
        "trailmaps/lib/trailmap.yaml:3:5: exports: exported tool 'lib_missing' is not defined "
        "by trailmap 'lib'",
        "trailmaps/lib/tools/lib_bad.tool.yaml:5:11: parameters[0].type: unknown parameter type "
        "'integr' (did you mean 'integer'?); expected string, integer, number, boolean, array "
        "or object",
    ]


def test_declared_scripted_tool_without_a_source_warns_and_stays_callable(tmp_path: Path) -> None:
    resolved = resolve_all(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": """
                id: app
                target:
                  display_name: App
                  platforms:
                    ios:
                      tools: [app_ghost]
            """,
        },
    )
    app = resolved["app"]
    entry = app.entry("app_ghost")
    assert entry is not None
    assert (entry.kind, entry.input_schema) == (
        "open",
        {"type": "object", "additionalProperties": True},
    )
    assert [(f.kind, f.fatal, f.text) for f in app.findings] == [
        (
            "warning",
            False,
            "trailmaps/app/trailmap.yaml:6:15: scripted tool 'app_ghost' is declared but no "
            "module in tools/ exports it and no descriptor names it; its arguments are not "
            "type-checked",
        )
    ]


def test_tool_files_are_read_only_for_the_trailmaps_a_resolution_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trailblaze.toolmodel import resolution as resolve  # noqa: PLC0415
    from trailblaze.toolmodel import tooldefs  # noqa: PLC0415

    write_tree(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": """
                id: app
                dependencies: [lib]
                target:
                  display_name: App
            """,
            "trailmaps/lib/trailmap.yaml": "id: lib\nexports: [lib_share]\n",
            "trailmaps/lib/tools/lib_share.ts": LIB_SHARE,
            "trailmaps/other/trailmap.yaml": "id: other\ntarget:\n  display_name: Other\n",
            "trailmaps/other/tools/bad.tool.yaml": "id: bad\n",
        },
    )
    ws = find_workspace(tmp_path, explicit=True)
    manifests = load_manifests(ws, scan(ws))
    read: list[str] = []
    real = tooldefs.load_trailmap_tools

    def counting(directory: Path, *args: Any) -> Any:
        read.append(directory.name)
        return real(directory, *args)

    monkeypatch.setattr(resolve, "load_trailmap_tools", counting)
    resolver = Resolver(manifests.with_dirs(), ws.root, load_catalog())
    assert read == []
    app = resolver.resolve("app")
    assert sources(app)["lib_share"] == ("module", "export of lib")
    assert texts(app) == []
    assert read == ["app", "lib"]
    other = resolver.resolve("other")
    assert read == ["app", "lib", "other"]  # each trailmap's files are read once
    assert [f.code for f in other.findings] == ["missing-key"]
    resolver.resolve("app")
    assert read == ["app", "lib", "other"]
