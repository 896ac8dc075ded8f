"""The JSON Schema to TypeScript renderer every surface is made of (reference §4.2, §4.3)."""

from __future__ import annotations

from typing import Any

import pytest

from trailblaze.generate.tsrender import (
    doc_escape,
    ordered_params,
    render_def,
    render_entry,
    ts_name,
    ts_type,
)
from trailblaze.toolmodel.records import ToolEntry


def entry(
    name: str = "demo",
    schema: dict[str, Any] | None = None,
    *,
    description: str | None = "Does a thing.",
    recordable: bool = True,
    surface_to_llm: bool = True,
    requires_host: bool = False,
    result: str | None = None,
    trailhead_to: str | None = None,
) -> ToolEntry:
    return ToolEntry(
        name,
        "module" if schema is None else "yaml",
        description,
        schema,
        recordable,
        surface_to_llm,
        requires_host,
        result,
        "test",
        trailhead_to=trailhead_to,
    )


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, "string"),
        ({"type": "integer"}, "number"),
        ({"type": "number"}, "number"),
        ({"type": "boolean"}, "boolean"),
        ({"type": "null"}, "null"),
        ({"type": ["string", "null"]}, "string | null"),
        ({"type": "string", "enum": ["A", 'say "hi"']}, '"A" | "say \\"hi\\""'),
        ({"const": "x"}, '"x"'),
        # Real item types, where the reference degrades to unknown[].
        ({"type": "array", "items": {"type": "string"}}, "string[]"),
        ({"type": "array", "items": {"enum": ["a", "b"]}}, '("a" | "b")[]'),
        (
            {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
            "(string | number)[]",
        ),
        ({"type": "array"}, "unknown[]"),
        # Real nested objects, where the reference degrades to Record<string, unknown>.
        (
            {
                "type": "object",
                "properties": {"a-b": {"type": "integer"}, "c": {"type": "boolean"}},
                "required": ["a-b"],
                "additionalProperties": False,
            },
            '{ "a-b": number; c?: boolean; }',
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}},
            "{ a?: string; [key: string]: unknown; }",
        ),
        ({"type": "object", "additionalProperties": {"type": "string"}}, "Record<string, string>"),
        ({"type": "object", "additionalProperties": False}, "Record<string, never>"),
        ({"type": "object"}, "Record<string, unknown>"),
        ({"$ref": "#/$defs/TrailblazeNodeSelector"}, "TrailblazeNodeSelector"),
        ({"anyOf": [{"$ref": "#/$defs/Bounds"}, {"type": "null"}]}, "Bounds | null"),
        ({"allOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}, "A & B"),
        ({"$ref": "https://example.com/other.json"}, "unknown"),
        ({}, "unknown"),
        ({"type": "date"}, "unknown"),
    ],
)
def test_json_schema_types_become_typescript_types(schema: dict[str, Any], expected: str) -> None:
    assert ts_type(schema) == expected


def test_depth_is_capped() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        schema = {"type": "array", "items": schema}
    assert ts_type(schema).endswith("unknown" + "[]" * 33)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("tapOn", "tapOn"),
        ("_x$1", "_x$1"),
        ("app.open-settings", '"app.open-settings"'),
        ("9lives", '"9lives"'),
        ('say"hi', '"say\\"hi"'),
    ],
)
def test_names_that_are_not_identifiers_are_quoted(name: str, expected: str) -> None:
    assert ts_name(name) == expected


def test_doc_comments_cannot_be_closed_by_a_description() -> None:
    assert doc_escape("a */ b */") == "a * / b * /"


def test_required_params_come_first_then_optional_then_selectors() -> None:
    schema = {
        "properties": {
            "opt": {"type": "string"},
            "sel": {"$ref": "#/$defs/TrailblazeNodeSelector"},
            "req": {"type": "string"},
            "opt2": {"type": "integer"},
            "req2": {"type": "boolean"},
        },
        "required": ["req", "req2", "sel"],
    }
    assert [(name, required) for name, _, required in ordered_params(schema)] == [
        ("req", True),
        ("req2", True),
        ("opt", False),
        ("opt2", False),
        ("sel", True),
    ]


def test_entry_layout_with_tags_docs_and_quoted_names() -> None:
    schema = {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "description": "How many */ times."},
            "odd-name": {"type": "string"},
        },
        "required": ["odd-name"],
        "additionalProperties": False,
    }
    rendered = render_entry(
        entry(
            "my.tool",
            schema,
            description="First line */ here.\nSecond line.",
            recordable=False,
            surface_to_llm=False,
            requires_host=True,
            trailhead_to="home",
        )
    )
    assert rendered == (
        "    /**\n"
        "     * First line * / here.\n"
        "     * Second line.\n"
        "     *\n"
        "     * @trailblazeHiddenFromLlm\n"
        "     * @trailblazeNotRecordable\n"
        "     * @trailblazeHostOnly\n"
        "     * @trailblazeTrailheadTo home\n"
        "     */\n"
        '    "my.tool": {\n'
        "      args: {\n"
        '        "odd-name": string;\n'
        "        /** How many * / times. */\n"
        "        count?: number;\n"
        "      };\n"
        "      result: string;\n"
        "    };"
    )


def test_entry_without_params_or_description() -> None:
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    assert render_entry(entry("hideIt", schema, description=None)) == (
        "    /**\n     */\n    hideIt: {\n      args: Record<string, never>;\n      result: string;\n    };"
    )


def test_open_entry_and_result_type() -> None:
    rendered = render_entry(
        entry(
            "anything",
            {"type": "object", "additionalProperties": True},
            description="Tags only:",
            recordable=False,
            result="ListInstalledAppsResult",
        ),
        indent=2,
    )
    assert rendered.splitlines() == [
        "  /**",
        "   * Tags only:",
        "   *",
        "   * @trailblazeNotRecordable",
        "   */",
        "  anything: {",
        "    args: Record<string, unknown>;",
        "    result: ListInstalledAppsResult;",
        "  };",
    ]


def test_module_entry_refers_to_the_modules_own_types() -> None:
    rendered = render_entry(entry("fill", None, description=None), module_ref="./fill")
    assert rendered.splitlines()[2:5] == [
        "    fill: {",
        '      args: typeof import("./fill").fill extends (args: infer A, ...rest: any[]) => unknown'
        " ? (keyof A extends never ? (A extends object ? Record<string, never> : A) : A) : never;",
        '      result: typeof import("./fill").fill extends (...args: any[]) => infer R'
        " ? Awaited<R> : never;",
    ]


def test_named_definitions_become_interfaces_or_aliases() -> None:
    interface = render_def(
        "Point",
        {
            "type": "object",
            "description": "A point */ on screen.",
            "properties": {
                "x": {"type": "integer", "description": "Left."},
                "y": {"type": "integer"},
            },
            "required": ["x"],
        },
    )
    assert interface == (
        "/** A point * / on screen. */\n"
        "export interface Point {\n"
        "  /** Left. */\n"
        "  x: number;\n"
        "  y?: number;\n"
        "}"
    )
    assert render_def("Mode", {"enum": ["a", "b"]}) == 'export type Mode = "a" | "b";'


def test_boolean_schemas_are_unknown_and_never() -> None:
    assert (ts_type(True), ts_type(False)) == ("unknown", "never")
    schema = {
        "type": "object",
        "properties": {"a": True, "b": False, "c": {"type": "object", "properties": {"d": False}}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert render_entry(entry("demo", schema, description=None)).splitlines()[3:8] == [
        "      args: {",
        "        a: unknown;",
        "        b?: never;",
        "        c?: { d?: never; [key: string]: unknown; };",
        "      };",
    ]
