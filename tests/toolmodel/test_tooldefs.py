"""Workspace tool files: `*.tool.yaml`, YAML descriptors, `.ts` modules and tool sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trailblaze.state.store import Store
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.toolmodel.records import TrailmapTools
from trailblaze.toolmodel.tooldefs import RelPath, load_trailmap_tools


def load(root: Path, files: dict[str, str]) -> TrailmapTools:
    write_tree(root, {f"trailmaps/app/{rel}": text for rel, text in files.items()})
    return load_trailmap_tools(root / "trailmaps" / "app", RelPath(root), load_catalog())


def texts(tools: TrailmapTools) -> list[str]:
    return [f.text for f in tools.findings]


def test_composed_tool_parameters_become_a_json_schema(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "tools/app_signIn.tool.yaml": """
                id: app_signIn
                description: Sign in.
                is_recordable: false
                parameters:
                  - name: user
                    description: Account name.
                  - name: attempts
                    type: int
                    required: false
                    default: 3
                  - name: ratio
                    type: Double
                  - name: remember
                    type: bool
                    required: false
                    default: false
                  - name: tags
                    type: list
                    required: false
                tools:
                  - inputText:
                      text: "{{params.user}}"
                  - hideKeyboard: {}
            """
        },
    )
    assert texts(tools) == []
    tool = tools.tools["app_signIn"]
    assert (tool.kind, tool.description, tool.recordable, tool.surface_to_llm) == (
        "yaml",
        "Sign in.",
        False,
        True,
    )
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "user": {"type": "string", "description": "Account name."},
            "attempts": {"type": "integer", "default": 3},
            "ratio": {"type": "number"},
            "remember": {"type": "boolean", "default": False},
            "tags": {"type": "array"},
        },
        "required": ["user", "ratio"],
        "additionalProperties": False,
    }
    assert tool.body == (("inputText", {"text": "{{params.user}}"}), ("hideKeyboard", {}))
    assert (tool.path, tool.line, tool.column) == ("trailmaps/app/tools/app_signIn.tool.yaml", 1, 5)


def test_class_tool_takes_the_framework_tools_arguments_and_flags(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "tools/app_tapOk.tool.yaml": """
                id: app_tapOk
                class: xyz.block.trailblaze.toolcalls.commands.TapOnElementWithTextTrailblazeTool
            """
        },
    )
    framework = load_catalog().tools["tapOnElementWithText"]
    tool = tools.tools["app_tapOk"]
    assert tool.kind == "class"
    assert tool.input_schema == dict(framework.input_schema)
    assert tool.description == framework.description
    assert (tool.recordable, tool.surface_to_llm) == (
        framework.recordable,
        framework.surface_to_llm,
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "id: x\nclass: com.example.NoSuchTool\n",
            "trailmaps/app/tools/x.tool.yaml:2:8: class: unknown tool class 'com.example.NoSuchTool'",
        ),
        (
            "id: x\nclass: xyz.block.trailblaze.toolcalls.commands.HideKeyboardTrailblazeTool\n"
            "tools:\n  - hideKeyboard: {}\n",
            "trailmaps/app/tools/x.tool.yaml:3:1: 'tools' cannot be combined with 'class' "
            "(the class defines the tool)",
        ),
        (
            "id: x\ndescription: d\n",
            "trailmaps/app/tools/x.tool.yaml:1:1: a tool file needs 'class' or 'tools' (or, to "
            "attach navigation metadata to a tool defined elsewhere, only a 'shortcut' or "
            "'trailhead' block)",
        ),
        (
            "id: x\ntools:\n  - hideKeyboard: {}\n",
            "trailmaps/app/tools/x.tool.yaml:1:5: a composed tool ('tools:') needs a 'description'",
        ),
        (
            "id: x\ndescription: d\nparameters:\n  - name: n\n    type: integr\ntools:\n  - hideKeyboard: {}\n",
            "trailmaps/app/tools/x.tool.yaml:5:11: parameters[0].type: unknown parameter type "
            "'integr' (did you mean 'integer'?); expected string, integer, number, boolean, "
            "array or object",
        ),
        (
            "id: x\ndescription: d\nparameters:\n  - name: n\n  - name: n\ntools:\n  - hideKeyboard: {}\n",
            "trailmaps/app/tools/x.tool.yaml:5:11: parameters[1]: parameter 'n' is declared twice",
        ),
    ],
)
def test_tool_yaml_errors_are_located(tmp_path: Path, text: str, message: str) -> None:
    tools = load(tmp_path, {"tools/x.tool.yaml": text})
    assert texts(tools) == [message]
    assert "x" not in tools.tools


def test_a_tool_defined_twice_is_an_error_at_the_second(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "tools/a.tool.yaml": "id: twice\ndescription: first\ntools:\n  - hideKeyboard: {}\n",
            "tools/b.tool.yaml": "id: twice\ndescription: second\ntools:\n  - hideKeyboard: {}\n",
        },
    )
    assert texts(tools) == [
        "trailmaps/app/tools/b.tool.yaml:1:5: id: tool 'twice' is already defined in "
        "trailmaps/app/tools/a.tool.yaml:1"
    ]
    assert tools.tools["twice"].description == "first"


def test_descriptor_flat_input_schema(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "tools/app_search.yaml": """
                script: ./app_search.js
                name: app_search
                description: Search.
                surfaceToLlm: false
                inputSchema:
                  query:
                    type: string
                    description: What to search for.
                  scope:
                    type: string
                    enum: [all, titles]
                    required: false
                  limit:
                    type: integer
                    required: false
                    default: 10
                  tags:
                    type: array
                    items: {type: string}
                    required: false
            """,
        },
    )
    assert texts(tools) == []
    tool = tools.tools["app_search"]
    assert (tool.kind, tool.surface_to_llm, tool.recordable) == ("descriptor", False, True)
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to search for."},
            "scope": {"type": "string", "enum": ["all", "titles"]},
            "limit": {"type": "integer", "default": 10},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def test_descriptor_full_json_schema_is_kept_as_written(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "tools/app_go.yaml": """
                name: app_go
                inputSchema:
                  type: object
                  properties:
                    where: {type: string, enum: [home, away]}
                  required: [where]
            """,
            "tools/app_none.yaml": "name: app_none\n",
        },
    )
    assert tools.tools["app_go"].input_schema == {
        "type": "object",
        "properties": {"where": {"type": "string", "enum": ["home", "away"]}},
        "required": ["where"],
    }
    assert tools.tools["app_none"].input_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_descriptor_unknown_property_type_is_located(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {"tools/app_go.yaml": "name: app_go\ninputSchema:\n  n:\n    type: strng\n"},
    )
    assert texts(tools) == [
        "trailmaps/app/tools/app_go.yaml:4:11: inputSchema.n.type: unknown type 'strng' "
        "(did you mean 'string'?)"
    ]
    assert tools.tools == {}


def test_modules_export_tools_typed_by_typescript(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "tools/app_fill.ts": """
                import { trailblaze } from "@trailblaze/scripting";
                export interface FillInput { text: string }
                export type Alias = FillInput;
                export const app_fill = trailblaze.tool<FillInput>({}, async () => "ok");
                export async function app_helper(): Promise<void> {}
                const a = 1;
                const b = 2;
                export { a, b as app_renamed, type Alias as AliasToo };
            """,
            "tools/nested/app_deep.mts": "export const app_deep = tool({}, () => 1);\n",
            "tools/app_fill.test.ts": "export const app_test = 1;\n",
            "tools/types.d.ts": "export declare const app_decl: number;\n",
            "tools/trailblaze-client.d.ts": "export declare const generated: number;\n",
        },
    )
    assert texts(tools) == []
    assert sorted(tools.modules) == ["a", "app_deep", "app_fill", "app_helper", "app_renamed"]
    fill = tools.modules["app_fill"]
    assert (fill.kind, fill.input_schema, fill.path, fill.line) == (
        "module",
        None,
        "trailmaps/app/tools/app_fill.ts",
        4,
    )
    assert fill.module == tmp_path / "trailmaps/app/tools/app_fill.ts"
    # Declared with `trailblaze.tool(...)`: discovered without a manifest entry.
    assert {name for name, tool in tools.modules.items() if tool.auto} == {"app_fill", "app_deep"}
    assert [p.name for p in tools.files] == ["app_fill.ts", "app_deep.mts"]


def test_toolsets_are_read(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "toolsets/app_basics.yaml": """
                id: app_basics
                description: The basics.
                drivers: [android-ondevice-accessibility]
                tools: [tapOnElementWithText, app_signIn]
            """,
            "toolsets/broken.yaml": "id: broken\n",
        },
    )
    toolset = tools.toolsets["app_basics"]
    assert [(n.value, n.line, n.column) for n in toolset.tools] == [
        ("tapOnElementWithText", 4, 9),
        ("app_signIn", 4, 31),
    ]
    assert toolset.drivers == ("android-ondevice-accessibility",)
    assert texts(tools) == [
        "trailmaps/app/toolsets/broken.yaml:1:1: missing required key 'tools' in the document"
    ]


def test_a_module_export_is_located_at_its_declaration(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "tools/app_fill.ts": """
                // app_fill fills the form; see also app_more below.
                import { trailblaze } from "@trailblaze/scripting";
                export const app_fill = trailblaze.tool({}, async () => "ok");
                const a = 1;
                const app_more = 2;
                export {
                  a,
                  app_more as app_renamed,
                };
            """,
        },
    )
    assert {name: tool.line for name, tool in tools.modules.items()} == {
        "app_fill": 3,
        "a": 7,  # not the `a` of `app_fill` in the comment
        "app_renamed": 8,
    }


def test_tool_file_schemas_are_built_and_digested_once(tmp_path: Path) -> None:
    from trailblaze.toolmodel import tooldefs  # noqa: PLC0415
    from trailblaze.yaml import schema as schemavalidation  # noqa: PLC0415

    assert tooldefs.loader.file_schema("toolYaml") is tooldefs.loader.file_schema("toolYaml")
    files = {
        "tools/app_signIn.tool.yaml": "id: app_signIn\nclass: nope\n",
        "tools/app_x.yaml": "name: app_x\ninputSchema:\n  text: {type: string}\n",
    }
    with Store.open(tmp_path / ".trailblaze") as store, schemavalidation.remembering(store):
        load(tmp_path, files)
        size = len(schemavalidation._SCHEMA_TEXTS)
        load(tmp_path, files)
        load(tmp_path, files)
    assert len(schemavalidation._SCHEMA_TEXTS) == size


def test_descriptor_refs_are_resolved_or_rejected_where_they_are_written(tmp_path: Path) -> None:
    tools = load(
        tmp_path,
        {
            "tools/app_pick.yaml": """
                name: app_pick
                inputSchema:
                  type: object
                  properties:
                    target: {$ref: "#/$defs/TrailblazeNodeSelector"}
            """,
            "tools/app_bad.yaml": """
                name: app_bad
                inputSchema:
                  type: object
                  properties:
                    x:
                      anyOf:
                        - $ref: "#/$defs/string; } & { hack: 1"
            """,
        },
    )
    assert texts(tools) == [
        "trailmaps/app/tools/app_bad.yaml:7:17: inputSchema.properties.x.anyOf[0].$ref: "
        "cannot resolve $ref '#/$defs/string; } & { hack: 1': a tool schema may refer to the "
        "framework's definitions only (#/$defs/Bounds, #/$defs/DriverNodeMatchAndroidAccessibility, "
        "#/$defs/DriverNodeMatchAndroidMaestro, #/$defs/DriverNodeMatchCompose, "
        "#/$defs/DriverNodeMatchIosAxe, #/$defs/DriverNodeMatchIosMaestro, #/$defs/DriverNodeMatchWeb, "
        "#/$defs/MatchDescriptor, #/$defs/TrailblazeNodeSelector)"
    ]
    assert sorted(tools.tools) == ["app_pick"]
