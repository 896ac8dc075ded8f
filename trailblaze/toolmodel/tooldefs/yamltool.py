"""`*.tool.yaml` (and `*.shortcut.yaml`, `*.trailhead.yaml`): a framework class registered under
an id (`class:`), or a tool composed of other tool calls (`tools:`) with `parameters:`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trailblaze import codes
from trailblaze.finding import did_you_mean, join_key
from trailblaze.toolmodel.records import ToolDef
from trailblaze.toolmodel.tooldefs.loader import Loader, flag, text_of
from trailblaze.toolmodel.tooldefs.navigation import check_navigation, present
from trailblaze.yaml.node import YMap, YNode, YScalar, YSeq

YAML_TOOL_SUFFIXES = (".tool.yaml", ".shortcut.yaml", ".trailhead.yaml")
_CLASS_ONLY_FORBIDDEN = (
    "tools",
    "parameters",
    "surface_to_llm",
    "is_recordable",
    "requires_host",
    "is_verification",
)

PARAM_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "int": {"type": "integer"},
    "long": {"type": "integer"},
    "number": {"type": "number"},
    "float": {"type": "number"},
    "double": {"type": "number"},
    "boolean": {"type": "boolean"},
    "bool": {"type": "boolean"},
    "array": {"type": "array"},
    "list": {"type": "array"},
    "object": {"type": "object"},
    "map": {"type": "object"},
}
"""A declared parameter's type name (any case) to its JSON Schema."""


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A tool's input schema from its declared parameters: closed, as the surface types it."""
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def read_yaml_tool(loader: Loader, path: Path) -> None:
    file = loader.load(path, "toolYaml", "id")
    if file is None:
        return
    root, rel, id_node = file.root, file.rel, file.name
    name = id_node.text
    _, trailhead_to = check_navigation(loader, rel, root)
    class_node = root.get("class")
    tools = root.get("tools")
    if (
        class_node is None
        and tools is None
        and (present(root, "shortcut") is not None or present(root, "trailhead") is not None)
    ):
        _metadata_only(loader, rel, root)
        return
    # A tool whose navigation metadata is refused is still defined: its calls are checked
    # against it rather than each reported as a call of an unknown tool.
    if class_node is not None:
        for key in _CLASS_ONLY_FORBIDDEN:
            if (key_node := root.key_node(key)) is not None:
                if key == "parameters" and not _declares_parameters(root):
                    continue  # `parameters: []` declares none, as the reference reads it
                loader.error(
                    rel,
                    key_node,
                    "",
                    f"'{key}' cannot be combined with 'class' (the class defines the tool)",
                    code=codes.INVALID_VALUE,
                )
                return
        assert isinstance(class_node, YScalar)
        framework = loader.catalog.by_kotlin_class(class_node.text)
        if framework is None:
            loader.error(
                rel,
                class_node,
                "class",
                f"unknown tool class '{class_node.text}'",
                code=codes.UNKNOWN_CLASS,
            )
            return
        loader.add(
            ToolDef(
                name=name,
                kind="class",
                description=text_of(root.get("description")) or framework.description,
                input_schema=dict(framework.input_schema),
                recordable=framework.recordable,
                surface_to_llm=framework.surface_to_llm,
                requires_host=framework.requires_host,
                is_verification=framework.is_verification,
                path=rel,
                line=id_node.line,
                column=id_node.column,
                trailhead_to=trailhead_to,
                implements=framework.name,
            ),
            id_node,
        )
        return
    if tools is None:
        loader.error(
            rel,
            root,
            "",
            "a tool file needs 'class' or 'tools' (or, to attach navigation metadata to a tool "
            "defined elsewhere, only a 'shortcut' or 'trailhead' block)",
            code=codes.MISSING_KEY,
        )
        return
    description = text_of(root.get("description"))
    if not description:
        loader.error(
            rel,
            id_node,
            "",
            "a composed tool ('tools:') needs a 'description'",
            code=codes.MISSING_KEY,
        )
        return
    schema = _parameters(loader, root.get("parameters"), rel)
    if schema is None:
        return
    assert isinstance(tools, YSeq)
    body = tuple(
        (str(call.items[0][0].value), call.items[0][1].to_python())
        for call in tools.items
        if isinstance(call, YMap) and call.items
    )
    loader.add(
        ToolDef(
            name=name,
            kind="yaml",
            description=description,
            input_schema=schema,
            recordable=flag(root, "is_recordable", True),
            surface_to_llm=flag(root, "surface_to_llm", True),
            requires_host=flag(root, "requires_host", False),
            is_verification=flag(root, "is_verification", False),
            path=rel,
            line=id_node.line,
            column=id_node.column,
            trailhead_to=trailhead_to,
            body=body,
        ),
        id_node,
    )


_METADATA_FORBIDDEN = ("description", "parameters", *_CLASS_ONLY_FORBIDDEN[2:])


def _declares_parameters(root: YMap) -> bool:
    node = root.get("parameters")
    return isinstance(node, YSeq) and bool(node.items)


def _metadata_only(loader: Loader, rel: str, root: YMap) -> None:
    """A file with only a `shortcut:`/`trailhead:` block attaches that metadata to a tool of the
    same id defined elsewhere (a scripted tool): it defines no tool itself, and what the tool
    it names declares (description, parameters, flags) may not be declared here."""
    for key in _METADATA_FORBIDDEN:
        key_node = root.key_node(key)
        if key_node is None:
            continue
        if key == "parameters" and not _declares_parameters(root):
            continue
        if key == "description" and text_of(root.get("description")) is None:
            continue
        loader.error(
            rel,
            key_node,
            "",
            f"'{key}' comes from the tool this file attaches its navigation metadata to; a "
            f"file with neither 'class' nor 'tools' may not declare it",
            code=codes.INVALID_VALUE,
        )


def _parameters(loader: Loader, node: YNode | None, rel: str) -> dict[str, Any] | None:
    """A composed tool's input schema from its `parameters:` list; None after an error."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    ok = True
    if isinstance(node, YSeq):
        for i, item in enumerate(node.items):
            assert isinstance(item, YMap)
            name_node = item.get("name")
            assert isinstance(name_node, YScalar)
            pname = name_node.text
            path = join_key("parameters", i)
            if pname in properties:
                loader.error(
                    rel,
                    name_node,
                    path,
                    f"parameter '{pname}' is declared twice",
                    code=codes.DUPLICATE_KEY,
                )
                ok = False
                continue
            type_node = item.get("type")
            type_name = text_of(type_node) or "string"
            mapped = PARAM_TYPES.get(type_name.lower())
            if mapped is None:
                loader.error(
                    rel,
                    type_node if type_node is not None else name_node,
                    join_key(path, "type"),
                    f"unknown parameter type '{type_name}'{did_you_mean(type_name, tuple(PARAM_TYPES))}; "
                    f"expected string, integer, number, boolean, array or object",
                    code=codes.INVALID_VALUE,
                )
                ok = False
                continue
            prop = dict(mapped)
            if (desc := text_of(item.get("description"))) is not None:
                prop["description"] = desc
            if "default" in item:
                default = item.get("default")
                prop["default"] = default.to_python() if default is not None else None
            properties[pname] = prop
            if flag(item, "required", True):
                required.append(pname)
    return object_schema(properties, required) if ok else None
