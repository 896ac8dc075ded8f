"""Tools a workspace trailmap defines itself, read from its `tools/`, `shortcuts/`,
`trailheads/` and `toolsets/` directories.

- `*.tool.yaml` (and `*.shortcut.yaml`, `*.trailhead.yaml`): a framework class registered under
  an id (`class:`), or a tool composed of other tool calls (`tools:`) with `parameters:`;
- `<name>.yaml` next to a script: a scripted tool declared by YAML, typed by its `inputSchema`;
- `*.ts` / `*.js` modules: scripted tools declared in code. Their input types belong to
  TypeScript: we only find which module exports which name, and the surfaces refer to the
  module's own declared type;
- `toolsets/*.yaml`: named tool sets.

Every file is validated against `data/toolfiles.schema.json`; every problem is a located
manifest finding.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from trailblaze.catalog import Catalog
from trailblaze.finding import Finding, did_you_mean, join_key
from trailblaze.manifest import Named, manifest_finding, schema_findings
from trailblaze.schemavalidation import check
from trailblaze.workspace import tool_files
from trailblaze.yamlnode import YamlError, YMap, YNode, YScalar, YSeq, load, read_text

ToolKind = Literal["class", "yaml", "descriptor", "module"]

YAML_TOOL_SUFFIXES = (".tool.yaml", ".shortcut.yaml", ".trailhead.yaml")
MODULE_SUFFIXES = (".ts", ".mts", ".cts", ".js", ".mjs", ".cjs")
_TEST_MODULE = re.compile(r"\.(test|spec)\.[cm]?[jt]s$")
_EXPORT_DECL = re.compile(
    r"^[ \t]*export[ \t]+(?:declare[ \t]+)?(?:const|let|var|(?:async[ \t]+)?function\*?)[ \t]+"
    r"([A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
_EXPORT_LIST = re.compile(r"^[ \t]*export[ \t]*\{([^}]*)\}", re.MULTILINE)
# `export const name = trailblaze.tool<I, O>(...)`: a tool the framework discovers by itself,
# whether or not the manifest names it.
_TOOL_EXPORT = re.compile(
    r"^[ \t]*export[ \t]+const[ \t]+([A-Za-z_$][\w$]*)[^=\n]*=[ \t]*(?:[\w$]+\.)?tool[ \t]*[<(]",
    re.MULTILINE,
)
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


@dataclass(frozen=True, slots=True)
class ToolDef:
    """One workspace tool. `input_schema` is None for module tools: tsc owns their type."""

    name: str
    kind: ToolKind
    description: str | None
    input_schema: dict[str, Any] | None
    recordable: bool
    surface_to_llm: bool
    requires_host: bool
    is_verification: bool
    path: str
    line: int
    column: int
    module: Path | None = None
    auto: bool = False
    """A module export declared with `trailblaze.tool(...)`: discovered without a manifest entry."""
    implements: str | None = None
    """For a `class:` tool: the framework tool whose class it registers."""
    trailhead_to: str | None = None
    body: tuple[tuple[str, Any], ...] = ()
    """For composed tools: the (tool name, raw args) calls it runs, for replay."""


@dataclass(frozen=True, slots=True)
class ToolSetDef:
    id: str
    description: str | None
    always_enabled: bool
    drivers: tuple[str, ...]
    tools: tuple[Named, ...]
    path: str


@dataclass(frozen=True, slots=True)
class TrailmapTools:
    """What one trailmap directory defines: tools by name, module exports, tool sets."""

    tools: dict[str, ToolDef] = field(default_factory=dict)
    modules: dict[str, ToolDef] = field(default_factory=dict)
    toolsets: dict[str, ToolSetDef] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    files: tuple[Path, ...] = ()


_DEF_REF = re.compile(r"#/(?:\$defs|definitions)/([A-Za-z_][A-Za-z0-9_]*)")


@functools.cache
def _schemas() -> dict[str, Any]:
    text = resources.files("trailblaze").joinpath("data/toolfiles.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@functools.cache
def _schema(name: str) -> Mapping[str, Any]:
    """One schema object per name (never mutated): validators and memo digests key on it."""
    return {"$defs": _schemas()["$defs"], "$ref": f"#/$defs/{name}"}


def load_trailmap_tools(directory: Path, rel: RelPath, catalog: Catalog) -> TrailmapTools:
    """Read every tool file of one trailmap directory."""
    loader = _Loader(rel, catalog)
    files: list[Path] = []
    # The walk doit's up-to-date check stamps too (`trailmap_files`): what is read is tracked.
    for sub, path in tool_files(directory):
        if loader.read(sub, path):
            files.append(path)
    return TrailmapTools(
        loader.tools, loader.modules, loader.toolsets, tuple(loader.findings), tuple(files)
    )


class RelPath:
    """Turns absolute paths into the workspace-relative form findings use."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


class _Loader:
    def __init__(self, rel: RelPath, catalog: Catalog) -> None:
        self.rel = rel
        self.catalog = catalog
        self.tools: dict[str, ToolDef] = {}
        self.modules: dict[str, ToolDef] = {}
        self.toolsets: dict[str, ToolSetDef] = {}
        self.findings: list[Finding] = []

    def error(
        self, path: str, line: int, column: int, key_path: str, message: str, code: str
    ) -> None:
        self.findings.append(manifest_finding(path, line, column, key_path, message, code))

    def read(self, sub: str, path: Path) -> bool:
        """Read one file if it is a tool file; True when it is one (an input of the surfaces)."""
        name = path.name
        if sub == "toolsets":
            if name.endswith((".yaml", ".yml")):
                self.toolset(path)
                return True
            return False
        if name.endswith(YAML_TOOL_SUFFIXES):
            self.yaml_tool(path)
            return True
        if sub == "tools" and name.endswith((".yaml", ".yml")):
            self.descriptor(path)
            return True
        if sub == "tools" and name.endswith(MODULE_SUFFIXES):
            if name.endswith(".d.ts") or _TEST_MODULE.search(name):
                return False
            self.module(path)
            return True
        return False

    def _load(self, path: Path, schema: str) -> YMap | None:
        rel = self.rel(path)
        try:
            root = load(read_text(path))
        except YamlError as exc:
            self.error(rel, exc.line, exc.column, "", exc.message, "yaml")
            return None
        if root is None:
            self.error(rel, 1, 1, "", "empty file", "empty")
            return None
        issues = check(root, _schema(schema))
        self.findings.extend(schema_findings(rel, issues))
        if issues or not isinstance(root, YMap):
            return None
        return root

    def _add(self, tool: ToolDef, node: YNode) -> None:
        previous = self.tools.get(tool.name)
        if previous is not None:
            self.error(
                tool.path,
                node.line,
                node.column,
                "id",
                f"tool '{tool.name}' is already defined in {previous.path}:{previous.line}",
                "duplicate-tool",
            )
            return
        self.tools[tool.name] = tool

    def yaml_tool(self, path: Path) -> None:
        root = self._load(path, "toolYaml")
        if root is None:
            return
        rel = self.rel(path)
        id_node = root.get("id")
        assert isinstance(id_node, YScalar)
        name = id_node.text
        class_node = root.get("class")
        if class_node is not None:
            for key in _CLASS_ONLY_FORBIDDEN:
                if (key_node := root.key_node(key)) is not None:
                    self.error(
                        rel,
                        key_node.line,
                        key_node.column,
                        "",
                        f"'{key}' cannot be combined with 'class' (the class defines the tool)",
                        "invalid-value",
                    )
                    return
            assert isinstance(class_node, YScalar)
            framework = self.catalog.by_kotlin_class(class_node.text)
            if framework is None:
                self.error(
                    rel,
                    class_node.line,
                    class_node.column,
                    "class",
                    f"unknown tool class '{class_node.text}'",
                    "unknown-class",
                )
                return
            self._add(
                ToolDef(
                    name,
                    "class",
                    _text(root.get("description")) or framework.description,
                    dict(framework.input_schema),
                    framework.recordable,
                    framework.surface_to_llm,
                    framework.requires_host,
                    framework.is_verification,
                    rel,
                    id_node.line,
                    id_node.column,
                    implements=framework.name,
                ),
                id_node,
            )
            return
        tools = root.get("tools")
        if tools is None:
            self.error(
                rel,
                root.line,
                root.column,
                "",
                "a tool file needs 'class' or 'tools'",
                "missing-key",
            )
            return
        description = _text(root.get("description"))
        if not description:
            self.error(
                rel,
                id_node.line,
                id_node.column,
                "",
                "a composed tool ('tools:') needs a 'description'",
                "missing-key",
            )
            return
        schema = self.parameters(root.get("parameters"), rel)
        if schema is None:
            return
        trailhead = root.get("trailhead")
        trailhead_to = None
        if isinstance(trailhead, YMap) and isinstance(trailhead.get("to"), YScalar):
            trailhead_to = _text(trailhead.get("to"))
        assert isinstance(tools, YSeq)
        body = tuple(
            (str(call.items[0][0].value), call.items[0][1].to_python())
            for call in tools.items
            if isinstance(call, YMap) and call.items
        )
        self._add(
            ToolDef(
                name,
                "yaml",
                description,
                schema,
                _flag(root, "is_recordable", True),
                _flag(root, "surface_to_llm", True),
                _flag(root, "requires_host", False),
                _flag(root, "is_verification", False),
                rel,
                id_node.line,
                id_node.column,
                trailhead_to=trailhead_to,
                body=body,
            ),
            id_node,
        )

    def parameters(self, node: YNode | None, rel: str) -> dict[str, Any] | None:
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
                    self.error(
                        rel,
                        name_node.line,
                        name_node.column,
                        path,
                        f"parameter '{pname}' is declared twice",
                        "duplicate-key",
                    )
                    ok = False
                    continue
                type_node = item.get("type")
                type_name = _text(type_node) or "string"
                mapped = PARAM_TYPES.get(type_name.lower())
                if mapped is None:
                    where = type_node if type_node is not None else name_node
                    self.error(
                        rel,
                        where.line,
                        where.column,
                        join_key(path, "type"),
                        f"unknown parameter type '{type_name}'{did_you_mean(type_name, tuple(PARAM_TYPES))}; "
                        f"expected string, integer, number, boolean, array or object",
                        "invalid-value",
                    )
                    ok = False
                    continue
                prop = dict(mapped)
                if (desc := _text(item.get("description"))) is not None:
                    prop["description"] = desc
                if "default" in item:
                    default = item.get("default")
                    prop["default"] = default.to_python() if default is not None else None
                properties[pname] = prop
                if _flag(item, "required", True):
                    required.append(pname)
        return _object_schema(properties, required) if ok else None

    def descriptor(self, path: Path) -> None:
        root = self._load(path, "descriptor")
        if root is None:
            return
        rel = self.rel(path)
        name_node = root.get("name")
        assert isinstance(name_node, YScalar)
        schema = self.input_schema(root.get("inputSchema"), rel)
        if schema is None:
            return
        self._add(
            ToolDef(
                name_node.text,
                "descriptor",
                _text(root.get("description")),
                schema,
                _flag(root, "isRecordable", True),
                _flag(root, "surfaceToLlm", True),
                _flag(root, "requiresHost", False),
                False,
                rel,
                name_node.line,
                name_node.column,
            ),
            name_node,
        )

    def input_schema(self, node: YNode | None, rel: str) -> dict[str, Any] | None:
        """A descriptor's `inputSchema`: the flat `name: {type, required, ...}` form or full JSON Schema."""
        if node is None:
            return {"type": "object", "properties": {}, "additionalProperties": False}
        assert isinstance(node, YMap)
        if isinstance(node.get("properties"), YMap) or node.get("type") is not None:
            # Already a JSON Schema object. Its references are resolved here or rejected: the
            # renderer writes a definition's name, never a reference's text.
            if not self.refs_resolve(node, rel, "inputSchema"):
                return None
            return node.to_python()
        properties: dict[str, Any] = {}
        required: list[str] = []
        ok = True
        for key, value in node:
            path = join_key("inputSchema", key.text)
            if not isinstance(value, YMap):
                self.error(
                    rel,
                    value.line,
                    value.column,
                    path,
                    "expected a mapping with 'type'",
                    "wrong-type",
                )
                ok = False
                continue
            issues = check(value, _schema("inputProperty"), key_path=path)
            if issues:
                self.findings.extend(schema_findings(rel, issues))
                ok = False
            type_name = _text(value.get("type")) or "string"
            mapped = PARAM_TYPES.get(type_name.lower())
            if mapped is None:
                where = value.get("type") or value
                self.error(
                    rel,
                    where.line,
                    where.column,
                    join_key(path, "type"),
                    f"unknown type '{type_name}'{did_you_mean(type_name, tuple(PARAM_TYPES))}",
                    "invalid-value",
                )
                ok = False
                continue
            prop = dict(mapped)
            raw = value.to_python()
            for extra in ("description", "enum", "items", "default"):
                if raw.get(extra) is not None:
                    prop[extra] = raw[extra]
            properties[key.text] = prop
            if raw.get("required", True):
                required.append(key.text)
        return _object_schema(properties, required) if ok else None

    def refs_resolve(self, node: YNode, rel: str, path: str) -> bool:
        """Every `$ref` under `node` names one of the framework's definitions; else an error."""
        ok = True
        if isinstance(node, YSeq):
            for index, item in enumerate(node.items):
                ok = self.refs_resolve(item, rel, f"{path}[{index}]") and ok
        elif isinstance(node, YMap):
            for key, value in node:
                where = join_key(path, key.text)
                if key.text != "$ref":
                    ok = self.refs_resolve(value, rel, where) and ok
                    continue
                target = value.text if isinstance(value, YScalar) else ""
                name = _DEF_REF.fullmatch(target)
                if name is None or name.group(1) not in self.catalog.defs:
                    known = ", ".join(f"#/$defs/{n}" for n in sorted(self.catalog.defs))
                    self.error(
                        rel,
                        value.line,
                        value.column,
                        where,
                        f"cannot resolve $ref {target!r}: a tool schema may refer to the "
                        f"framework's definitions only ({known})",
                        "invalid-value",
                    )
                    ok = False
        return ok

    def module(self, path: Path) -> None:
        rel = self.rel(path)
        try:
            text = read_text(path)
        except YamlError as exc:
            self.error(rel, exc.line, exc.column, "", exc.message, "io")
            return
        # (name, offset of the declaration or export list that exports it)
        names = [(m.group(1), m.start(1)) for m in _EXPORT_DECL.finditer(text)]
        tools = {m.group(1) for m in _TOOL_EXPORT.finditer(text)}
        for match in _EXPORT_LIST.finditer(text):
            for item in re.finditer(r"[^,\s][^,]*", match.group(1)):
                part = item.group(0).strip()
                if not part.startswith("type "):
                    names.append((part.split(" as ")[-1].strip(), match.start(1) + item.start()))
        for export, offset in names:
            if export in self.modules:
                continue  # the first module wins; tsc reports real conflicts
            line = text.count("\n", 0, offset) + 1
            self.modules[export] = ToolDef(
                export,
                "module",
                None,
                None,
                True,
                True,
                False,
                False,
                rel,
                line,
                1,
                module=path,
                auto=export in tools,
            )

    def toolset(self, path: Path) -> None:
        root = self._load(path, "toolset")
        if root is None:
            return
        rel = self.rel(path)
        id_node = root.get("id")
        assert isinstance(id_node, YScalar)
        tools = root.get("tools")
        names = tuple(
            Named(item.text, item.line, item.column)
            for item in (tools.items if isinstance(tools, YSeq) else ())
            if isinstance(item, YScalar)
        )
        drivers = root.get("drivers")
        self.toolsets[id_node.text] = ToolSetDef(
            id_node.text,
            _text(root.get("description")),
            _flag(root, "always_enabled", False),
            tuple(i.text for i in drivers.items if isinstance(i, YScalar))
            if isinstance(drivers, YSeq)
            else (),
            names,
            rel,
        )


def _text(node: YNode | None) -> str | None:
    if isinstance(node, YScalar) and node.value is not None:
        return node.text
    return None


def _flag(node: YMap, key: str, default: bool) -> bool:
    value = node.get(key)
    if isinstance(value, YScalar) and isinstance(value.value, bool):
        return value.value
    return default


def _object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A tool's input schema from its declared parameters: closed, as the surface types it."""
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
