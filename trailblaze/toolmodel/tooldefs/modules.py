"""`tools/*.ts` / `*.js` modules: scripted tools declared in code.

Their input types belong to TypeScript: only which module exports which name is found here (by
the export declarations' text), and the surfaces refer to the module's own declared type.
"""

from __future__ import annotations

import re
from pathlib import Path

from trailblaze import codes
from trailblaze.toolmodel.records import ToolDef
from trailblaze.toolmodel.tooldefs.loader import Loader
from trailblaze.yaml.node import YamlError, read_text

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


def is_tool_module(name: str) -> bool:
    """A module file that may export tools: not a declaration file, not a test."""
    return name.endswith(MODULE_SUFFIXES) and not (
        name.endswith(".d.ts") or _TEST_MODULE.search(name)
    )


def read_module(loader: Loader, path: Path) -> None:
    rel = loader.rel(path)
    try:
        text = read_text(path)
    except YamlError as exc:
        loader.error(rel, exc, "", exc.message, code=codes.IO)
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
        if export in loader.modules:
            continue  # the first module wins; tsc reports real conflicts
        loader.modules[export] = ToolDef(
            name=export,
            kind="module",
            description=None,
            input_schema=None,
            recordable=True,
            surface_to_llm=True,
            requires_host=False,
            is_verification=False,
            path=rel,
            line=text.count("\n", 0, offset) + 1,
            column=1,
            module=path,
            auto=export in tools,
        )
