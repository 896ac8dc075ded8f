"""The generated surfaces under the real TypeScript compiler (the `tsc` session fixture)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS, DATA, write_tree
from trailblaze.check.discover import load_manifests
from trailblaze.check.surfaces import generate_surfaces
from trailblaze.check.typegate.proof import parse_output
from trailblaze.generate.artifacts import DTS_NAME
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolchain.proc import ProcResult, run
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.workspace import find_workspace, scan

pytestmark = pytest.mark.tsc

CORPUS_CODE = DATA / "corpus-code"
SELECTOR = {"androidAccessibility": {"textRegex": "x"}}
CLIENT_HEADER = (
    'import type { TrailblazeClient } from "@trailblaze/scripting";\n'
    "declare const client: TrailblazeClient;\n"
    "export async function calls(): Promise<void> {\n"
)
HEADER_LINES = CLIENT_HEADER.count("\n")


def tsc_project(tsc: Compiler, tools_dir: Path, *extra: str) -> ProcResult:
    return run(
        [
            *tsc.argv_prefix,
            "-p",
            str(tools_dir / "tsconfig.json"),
            "--noEmit",
            "--pretty",
            "false",
            *extra,
        ],
        cwd=tools_dir,
        timeout=120,
    )


# The generated tsconfig has `skipLibCheck: true` (as the reference's does), so tsc does not
# look inside the generated `.d.ts` files; checking them too needs this flag.
CHECK_DECLARATIONS = ("--skipLibCheck", "false")


def diagnostics(result: ProcResult, tools_dir: Path, file: str) -> dict[int, str]:
    """`{line: TS code}` of the diagnostics in one file (one per line expected)."""
    found: dict[int, str] = {}
    for diag in parse_output(result.stdout, tools_dir):
        assert diag.file == (tools_dir / file).resolve(), diag
        assert diag.line not in found, f"two errors on line {diag.line}: {result.stdout}"
        found[diag.line] = diag.code
    return found


def generate_workspace(root: Path) -> dict[str, Path]:
    """Generate a workspace's surfaces; its trailmaps' `tools/` directories by name."""
    ws = find_workspace(root, explicit=True)
    manifests = load_manifests(ws, scan(ws))
    generate_surfaces(ws.root, ws.scratch, manifests.with_dirs(), load_catalog())
    return {name: directory / "tools" for name, directory in manifests.dirs.items()}


# -- the corpus -------------------------------------------------------------------------------


def test_every_corpus_head_trailmap_surface_compiles(tsc: Compiler, tmp_path: Path) -> None:
    head = tmp_path / "head"
    shutil.copytree(CORPUS / "head", head)
    shutil.copytree(CORPUS_CODE / "head", head, dirs_exist_ok=True)  # the scripted tools
    roots = sorted({m.parents[4] for m in head.rglob("trails/config/trailmaps/*/trailmap.yaml")})
    compiled: list[str] = []
    for root in roots:
        for name, tools_dir in sorted(generate_workspace(root).items()):
            assert (tools_dir / DTS_NAME).is_file(), name
            where = tools_dir.relative_to(head).as_posix()
            for extra in ((), CHECK_DECLARATIONS):
                result = tsc_project(tsc, tools_dir, *extra)
                assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), where
            compiled.append(where.removesuffix("/tools").rsplit("/", 1)[-1])
    assert sorted(compiled) == [
        "android",
        "clock",
        "compose",
        "contacts",
        "contacts",
        "jvmTestFixture",
        "mobile",
        "revyl",
        "sampleapp",
        "trailblaze",
        "web",
    ]


# -- every framework tool, and the errors a bad call gives ----------------------------------------


def minimal_args(schema: Any, defs: dict[str, Any]) -> Any:
    """The smallest valid value of a JSON Schema: required properties only, first enum value."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return SELECTOR if name == "TrailblazeNodeSelector" else minimal_args(defs[name], defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for combinator in ("oneOf", "anyOf"):
        if combinator in schema:
            return minimal_args(schema[combinator][0], defs)
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    simple = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "null": None}
    if kind in simple:
        return simple[kind]
    if kind == "array":
        return [minimal_args(schema["items"], defs) for _ in range(schema.get("minItems", 0))]
    properties = schema.get("properties", {})
    out = {name: minimal_args(properties[name], defs) for name in schema.get("required", [])}
    if len(out) < schema.get("minProperties", 0):
        extra = schema.get("additionalProperties")
        out["x"] = minimal_args(extra, defs) if isinstance(extra, dict) else {}
    return out


@dataclass(frozen=True)
class AllTools:
    tools_dir: Path
    names: list[str]


@pytest.fixture(scope="module")
def all_tools(tmp_path_factory: pytest.TempPathFactory) -> AllTools:
    """A trailmap whose tool set lists every `surface` tool of the catalog."""
    catalog = load_catalog()
    names = sorted(t.name for t in catalog.tools.values() if t.surface)
    root = tmp_path_factory.mktemp("alltools")
    write_tree(
        root,
        {
            "trailmaps/all/trailmap.yaml": (
                "id: all\ntarget:\n  display_name: All\n  platforms:\n"
                "    android:\n      tool_sets: [everything]\n"
            ),
            "trailmaps/all/toolsets/everything.yaml": (
                "id: everything\ntools:\n" + "".join(f"  - {n}\n" for n in names)
            ),
        },
    )
    return AllTools(generate_workspace(root)["all"], names)


def test_a_call_to_every_framework_tool_compiles(tsc: Compiler, all_tools: AllTools) -> None:
    catalog = load_catalog()
    defs = dict(catalog.defs)
    assert "runIf" in all_tools.names
    assert len(all_tools.names) == len([t for t in catalog.tools.values() if t.surface]) > 90
    body = "".join(
        f"  await client.tools[{json.dumps(name)}]("
        f"{json.dumps(minimal_args(dict(catalog.tools[name].input_schema), defs))});\n"
        for name in all_tools.names
    )
    calls = all_tools.tools_dir / "calls.ts"
    calls.write_text(CLIENT_HEADER + body + "}\n")
    try:
        result = tsc_project(tsc, all_tools.tools_dir, *CHECK_DECLARATIONS)
    finally:
        calls.unlink()
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert 'await client.tools["runIf"]({"condition": {"selector": {"androidAccessibility"' in body


BAD_CALLS: list[tuple[str, str, set[str]]] = [
    ("unknown tool", 'client.tools.tapOnElementWithTxt({ text: "x" })', {"TS2339", "TS2551"}),
    ("missing required argument", "client.tools.inputText({})", {"TS2345", "TS2741"}),
    ("wrong primitive", "client.tools.inputText({ text: 1 })", {"TS2322"}),
    (
        "bad enum value",
        'client.tools.launchApp({ appId: "x", launchMode: "SOMETIMES" })',
        {"TS2322", "TS2820"},
    ),
    ("excess argument", 'client.tools.inputText({ text: "x", bogus: 1 })', {"TS2353", "TS2561"}),
    (
        "unknown selector field",
        'client.tools.tapOnElementBySelector({ nodeSelector: { androidAccessibility: { textRegx: "x" } } })',
        {"TS2353", "TS2561"},
    ),
    ("arguments to a tool that takes none", "client.tools.hideKeyboard({ now: true })", {"TS2322"}),
    (
        "unknown field of a nested object",
        "client.tools.runIf({ condition: { selectr: {} }, then: [] })",
        {"TS2353", "TS2561", "TS2322"},
    ),
]


def test_each_bad_call_gives_its_error_on_its_line(tsc: Compiler, all_tools: AllTools) -> None:
    bad = all_tools.tools_dir / "bad.ts"
    bad.write_text(
        CLIENT_HEADER + "".join(f"  await {call};\n" for _, call, _ in BAD_CALLS) + "}\n"
    )
    try:
        result = tsc_project(tsc, all_tools.tools_dir)
    finally:
        bad.unlink()
    assert result.returncode != 0
    found = diagnostics(result, all_tools.tools_dir, "bad.ts")
    for index, (what, _, codes) in enumerate(BAD_CALLS):
        line = HEADER_LINES + 1 + index
        assert found.get(line) in codes, f"{what} (line {line}): {result.stdout}"
    assert len(found) == len(BAD_CALLS)


# -- a scripted tool is typed by its own module ---------------------------------------------------


def test_a_scripted_tool_takes_its_input_type_from_its_module(
    tsc: Compiler, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(DATA / "surfaces", root)
    tools_dir = generate_workspace(root)["app"]
    dts = (tools_dir / DTS_NAME).read_bytes()
    assert b"submit" not in dts  # only the module declares the field
    clean = tsc_project(tsc, tools_dir, *CHECK_DECLARATIONS)
    assert (clean.returncode, clean.stdout) == (0, "")
    write_tree(
        tools_dir,
        {
            "use.ts": CLIENT_HEADER
            + '  await client.tools.app_fillForm({ fields: { Name: "Ada" }, submit: "yes" });\n'
            + '  await client.tools.lib_share({ recipient: "bob", channel: "fax" });\n'
            + '  await client.tools.app_fillForm({ fields: { Name: "Ada" }, mode: "careful" });\n'
            + "}\n"
        },
    )
    first = tsc_project(tsc, tools_dir)
    line = HEADER_LINES + 1
    assert diagnostics(first, tools_dir, "use.ts") == {line: "TS2322", line + 1: "TS2322"}

    # Widen the type in the module only: the verdict follows, nothing else is regenerated.
    module = tools_dir / "app_fillForm.ts"
    module.write_text(module.read_text().replace("submit?: boolean;", "submit?: boolean | string;"))
    second = tsc_project(tsc, tools_dir)
    assert diagnostics(second, tools_dir, "use.ts") == {line + 1: "TS2322"}
    assert (tools_dir / DTS_NAME).read_bytes() == dts
