"""Nested tool projects: a directory below `tools/` with its own tsconfig is compiled on its own.

A trailmap with both kinds of sub-project real trailmaps hold: a host-only tools folder using
`node:fs` (needs `@types/node`) and a server with its own dependency (`zod`, as an MCP server's
SDK brings). Each test runs `trailblaze check` in a child process with the real compiler; the
installed dependencies are real packages, installed once into the toolchain cache and linked
into the fixture's `node_modules`, as `npm install` would place them.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, run_python, toolchain_cache, write_tree
from trailblaze.toolchain.compilers import Compiler, ToolchainError, install_library
from trailblaze.toolchain.npm import install_npm_tool
from trailblaze.workspace import find_workspace, scan_trailmaps, trailmap_files

TYPES_NODE = "22.20.7"

TOOLS = "trailmaps/app/tools"

HOST_TOOL = """\
import { trailblaze } from "@trailblaze/scripting";
import { firstLine } from "./files.js";

export const app_head = trailblaze.tool<{ path: string }>(
  { description: "First line of a file on the host." },
  async (input) => firstLine(input.path),
);
"""

FILES = """\
import { readFileSync } from "node:fs";

export function firstLine(path: string): string {
  return readFileSync(path, "utf-8").split("\\n")[0] ?? "";
}
"""

SERVER = """\
import { z } from "zod";
import process from "node:process";

export const Request = z.object({ method: z.string() });
export const argv: string[] = process.argv;
"""


def _workspace(root: Path) -> Path:
    return write_tree(
        root,
        {
            "trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: app\n",
            f"{TOOLS}/greet.ts": (
                'import { trailblaze } from "@trailblaze/scripting";\n'
                "export const app_greet = trailblaze.tool<{ name: string }>(\n"
                '  { description: "greet" },\n'
                "  async (input) => input.name,\n"
                ");\n"
            ),
            # A host-only folder: its own tsconfig (node types, our SDK by a path of its own).
            f"{TOOLS}/host/package.json": json.dumps(
                {"private": True, "devDependencies": {"@types/node": f"^{TYPES_NODE}"}}
            ),
            f"{TOOLS}/host/tsconfig.json": json.dumps(
                {
                    "compilerOptions": {
                        "target": "ES2022",
                        "module": "NodeNext",
                        "moduleResolution": "NodeNext",
                        "strict": True,
                        "types": ["node"],
                        "noEmit": True,
                        "paths": {
                            "@trailblaze/scripting": ["../../../../.trailblaze/sdk/dist/index"]
                        },
                    },
                    "include": ["*.ts"],
                }
            ),
            f"{TOOLS}/host/files.ts": FILES,
            f"{TOOLS}/host/readfile.ts": HOST_TOOL,
            # A server: its own dependencies, no `types` (TypeScript 5 includes @types/node).
            f"{TOOLS}/mcp/package.json": json.dumps(
                {
                    "private": True,
                    "type": "module",
                    "dependencies": {"zod": "^4.0.0"},
                    "devDependencies": {"@types/node": f"^{TYPES_NODE}"},
                }
            ),
            f"{TOOLS}/mcp/tsconfig.json": json.dumps(
                {
                    "compilerOptions": {
                        "target": "ES2022",
                        "module": "NodeNext",
                        "moduleResolution": "NodeNext",
                        "strict": True,
                        "outDir": "dist",
                        "incremental": True,
                    },
                    "include": ["src"],
                }
            ),
            f"{TOOLS}/mcp/src/server.ts": SERVER,
            "trailmaps/app/trails/t.trail.yaml": (
                "config: {target: app}\n"
                "trail:\n"
                "  - step: s\n"
                "    recording:\n"
                "      android:\n"
                "        - app_greet: {name: x}\n"
                "        - app_head: {path: /tmp/x}\n"
            ),
        },
    )


def _probe_types_node(directory: Path) -> None:
    if not (directory / "node_modules/@types/node/package.json").is_file():
        raise ToolchainError(f"{directory}: no @types/node")


@pytest.fixture(scope="session")
def node_modules() -> dict[str, Path]:
    """Real packages, installed once: what `npm install` would put in the projects."""
    types = install_npm_tool(
        f"types-node-{TYPES_NODE}",
        [f"@types/node@{TYPES_NODE}"],
        probe=_probe_types_node,
        base=toolchain_cache(),
    )
    return {
        "@types/node": types / "node_modules/@types/node",
        "undici-types": types / "node_modules/undici-types",
        "zod": install_library("zod", base=toolchain_cache()),
    }


def _install(project: Path, packages: dict[str, Path], names: list[str]) -> None:
    for name in names:
        link = project / "node_modules" / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(packages[name], target_is_directory=True)


def _check(ws: Path, *args: str) -> tuple[dict[str, Any], int]:
    result = run_python(ws, "-m", "trailblaze", "check", "--format", "json", *args)
    assert "Traceback" not in result.stderr, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report, result.returncode


def _shown(report: dict[str, Any]) -> list[tuple[str, str, int, int, str | None, bool]]:
    return sorted(
        (f["kind"], f["path"], f["line"], f["column"], f["code"], f["fatal"])
        for f in report["findings"]
    )


def _listing(directory: Path) -> list[str]:
    return sorted(
        str(p.relative_to(directory))
        for p in directory.rglob("*")
        if "node_modules" not in p.relative_to(directory).parts
    )


def test_without_node_modules_each_project_is_one_warning_never_a_fatal_finding(
    tmp_path: Path, tsc: Compiler
) -> None:
    ws = _workspace(tmp_path / "ws")
    report, code = _check(ws)
    infra = [
        (f["path"], f["code"], f["message"], f["fatal"])
        for f in report["findings"]
        if f["code"] == "nested-not-installed"
    ]
    assert infra == [
        (
            f"{TOOLS}/host/package.json",
            "nested-not-installed",
            f"not checked: run `npm install` in {TOOLS}/host (not installed: @types/node); "
            "the tools it exports are not type-checked",
            False,
        ),
        (
            f"{TOOLS}/mcp/package.json",
            "nested-not-installed",
            f"not checked: run `npm install` in {TOOLS}/mcp (not installed: @types/node, zod); "
            "the tools it exports are not type-checked",
            False,
        ),
    ]
    assert not [f for f in report["findings"] if f["fatal"]], report["findings"]
    assert code == 0
    assert report["summary"]["infra"] >= 2
    # The host folder's tool is still known: its call is not type-checked, and says why.
    [unchecked] = [f for f in report["findings"] if f["code"] == "unresolved-input"]
    assert unchecked["path"] == "trailmaps/app/trails/t.trail.yaml"
    assert unchecked["line"] == 7
    assert f"run `npm install` in {TOOLS}/host" in unchecked["message"]

    required, code = _check(ws, "--require-typecheck")
    assert code == 3
    assert required["exit_code"] == 3
    # `--no-typecheck` governs them as it governs the tools' own diagnostics.
    hidden, code = _check(ws, "--no-typecheck", "--require-typecheck")
    assert not [f for f in hidden["findings"] if f["code"] == "nested-not-installed"]


def test_installed_projects_compile_clean_with_their_own_tsconfig(
    tmp_path: Path, tsc: Compiler, node_modules: dict[str, Path]
) -> None:
    ws = _workspace(tmp_path / "ws")
    _install(ws / TOOLS / "host", node_modules, ["@types/node"])
    _install(ws / TOOLS / "mcp", node_modules, ["@types/node", "zod"])
    before = {name: _listing(ws / TOOLS / name) for name in ("host", "mcp")}
    report, code = _check(ws, "--require-typecheck")
    assert report["findings"] == []
    assert code == 0
    assert [(t["path"], t["status"], t["calls"]) for t in report["trails"]] == [
        ("trailmaps/app/trails/t.trail.yaml", "type-checked", 2)
    ]
    # Compiled with --noEmit's effect on the projects: nothing written into them (no dist/,
    # no .tsbuildinfo although the server's tsconfig asks for incremental builds).
    assert {name: _listing(ws / TOOLS / name) for name in ("host", "mcp")} == before


def test_a_nested_tool_keeps_its_type_in_the_trailmaps_surface(
    tmp_path: Path, tsc: Compiler, node_modules: dict[str, Path]
) -> None:
    ws = _workspace(tmp_path / "ws")
    _install(ws / TOOLS / "host", node_modules, ["@types/node"])
    _install(ws / TOOLS / "mcp", node_modules, ["@types/node", "zod"])
    trail = ws / "trailmaps/app/trails/t.trail.yaml"
    trail.write_text(trail.read_text("utf-8").replace("{path: /tmp/x}", "{pth: /tmp/x}"))
    report, code = _check(ws)
    [finding] = report["findings"]
    assert (finding["kind"], finding["line"], finding["column"], finding["code"]) == (
        "type",
        7,
        22,
        "TS2561",
    )
    assert "'pth' does not exist in type '{ path: string; }'" in finding["message"]
    assert "Did you mean to write 'path'?" in finding["message"]
    assert code == 1


def test_an_error_in_a_nested_file_is_a_located_fatal_finding(
    tmp_path: Path, tsc: Compiler, node_modules: dict[str, Path]
) -> None:
    ws = _workspace(tmp_path / "ws")
    _install(ws / TOOLS / "host", node_modules, ["@types/node"])
    _install(ws / TOOLS / "mcp", node_modules, ["@types/node", "zod"])
    server = ws / TOOLS / "mcp/src/server.ts"
    server.write_text(SERVER + 'export const port: number = "8080";\n')
    report, code = _check(ws)
    assert _shown(report) == [("tool", f"{TOOLS}/mcp/src/server.ts", 6, 14, "TS2322", True)]
    assert report["findings"][0]["message"] == "Type 'string' is not assignable to type 'number'."
    assert code == 1
    assert report["summary"]["tool_findings"] == 1


def test_a_cached_verdict_never_survives_a_change_to_the_projects_node_modules(
    tmp_path: Path, tsc: Compiler, node_modules: dict[str, Path]
) -> None:
    ws = _workspace(tmp_path / "ws")
    _install(ws / TOOLS / "host", node_modules, ["@types/node"])
    mcp = ws / TOOLS / "mcp"
    _install(mcp, node_modules, ["@types/node", "zod"])
    # A package of the server's own, whose declarations the next steps edit.
    limits = mcp / "node_modules/limits"
    write_tree(
        limits,
        {
            "package.json": '{"name": "limits", "version": "1.0.0", "types": "index.d.ts"}\n',
            "index.d.ts": "export declare const limit: number;\n",
        },
    )
    package = json.loads((mcp / "package.json").read_text("utf-8"))
    package["dependencies"]["limits"] = "1.0.0"
    (mcp / "package.json").write_text(json.dumps(package))
    server = mcp / "src/server.ts"
    server.write_text(
        SERVER + 'import { limit } from "limits";\nexport const most: number = limit;\n'
    )
    first, code = _check(ws)
    assert (first["findings"], code) == ([], 0)
    assert _check(ws) == (first, 0)  # again, from the caches

    # The package's declarations change, its package.json does not: a read, not an input.
    (limits / "index.d.ts").write_text("export declare const limit: string;\n")
    stamp = os.stat(limits / "index.d.ts")
    os.utime(limits / "index.d.ts", ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 60_000_000_000))
    report, code = _check(ws)
    assert _shown(report) == [("tool", f"{TOOLS}/mcp/src/server.ts", 7, 14, "TS2322", True)]
    assert code == 1

    # Uninstalled: the same run says so, not the last verdict.
    shutil.rmtree(mcp / "node_modules")
    report, code = _check(ws)
    assert [f["code"] for f in report["findings"]] == ["nested-not-installed"]
    assert code == 0

    # Installed again, the old version: the verdict of that version.
    _install(mcp, node_modules, ["@types/node", "zod"])
    write_tree(
        limits,
        {
            "package.json": '{"name": "limits", "version": "1.0.0", "types": "index.d.ts"}\n',
            "index.d.ts": "export declare const limit: number;\n",
        },
    )
    report, code = _check(ws)
    assert report["findings"] == []
    assert code == 0


def test_a_tsconfig_the_pinned_compiler_refuses_is_not_checked_never_fatal(
    tmp_path: Path, tsc: Compiler
) -> None:
    ws = _workspace(tmp_path / "ws")
    shutil.rmtree(ws / TOOLS / "mcp")
    shutil.rmtree(ws / TOOLS / "host")
    trail = ws / "trailmaps/app/trails/t.trail.yaml"
    trail.write_text(trail.read_text("utf-8").replace("        - app_head: {path: /tmp/x}\n", ""))
    write_tree(
        ws / TOOLS / "legacy",
        {
            "tsconfig.json": json.dumps(
                {"compilerOptions": {"module": "commonjs", "moduleResolution": "node"}}
            ),
            "legacy.ts": 'export const count: number = "a type error nobody compiled";\n',
        },
    )
    report, code = _check(ws)
    assert _shown(report) == [
        ("infra", f"{TOOLS}/legacy/tsconfig.json", 1, 1, "nested-not-checked", False)
    ]
    assert "Option 'moduleResolution=node10' has been removed" in report["findings"][0]["message"]
    assert code == 0
    assert _check(ws, "--require-typecheck")[1] == 3


def test_uninstalling_a_dependency_nothing_imports_is_seen_by_the_next_run(
    tmp_path: Path, tsc: Compiler, node_modules: dict[str, Path]
) -> None:
    # The command line's no-op repeats a complete run while its inputs' stamps hold: a
    # dependency the compiler never read is among them (`workspace.trailmap_files`).
    ws = _workspace(tmp_path / "ws")
    _install(ws / TOOLS / "host", node_modules, ["@types/node"])
    mcp = ws / TOOLS / "mcp"
    _install(mcp, node_modules, ["@types/node", "zod"])
    write_tree(mcp / "node_modules/unused", {"package.json": '{"name": "unused"}\n'})
    package = json.loads((mcp / "package.json").read_text("utf-8"))
    package["dependencies"]["unused"] = "1.0.0"
    (mcp / "package.json").write_text(json.dumps(package))
    [trailmap], _ = scan_trailmaps(find_workspace(ws, explicit=True))
    stamped = trailmap_files(trailmap)
    assert stamped.count(mcp.resolve() / "node_modules/unused/package.json") == 1
    first, code = _check(ws)
    assert (first["findings"], code) == ([], 0)

    shutil.rmtree(mcp / "node_modules/unused")
    report, code = _check(ws, "--require-typecheck")
    assert [(f["code"], f["path"]) for f in report["findings"]] == [
        ("nested-not-installed", f"{TOOLS}/mcp/package.json")
    ]
    assert "(not installed: unused)" in report["findings"][0]["message"]
    assert code == 3


def test_a_nested_tool_whose_type_does_not_resolve_from_the_gate_is_not_type_checked(
    tmp_path: Path, tsc: Compiler, node_modules: dict[str, Path]
) -> None:
    # Its input type names a type of the project's own package: the project compiles, the
    # type gate (which does not see that package) cannot check calls against it.
    ws = _workspace(tmp_path / "ws")
    _install(ws / TOOLS / "host", node_modules, ["@types/node"])
    mcp = ws / TOOLS / "mcp"
    _install(mcp, node_modules, ["@types/node", "zod"])
    write_tree(
        mcp / "node_modules/limits",
        {
            "package.json": '{"name": "limits", "version": "1.0.0", "types": "index.d.ts"}\n',
            "index.d.ts": "export interface Limit { most: number }\n",
        },
    )
    package = json.loads((mcp / "package.json").read_text("utf-8"))
    package["dependencies"]["limits"] = "1.0.0"
    (mcp / "package.json").write_text(json.dumps(package))
    tsconfig = json.loads((mcp / "tsconfig.json").read_text("utf-8"))
    # An ES module package: the path names the declaration file, extension included.
    tsconfig["compilerOptions"]["paths"] = {
        "@trailblaze/scripting": ["../../../../.trailblaze/sdk/dist/index.d.ts"]
    }
    (mcp / "tsconfig.json").write_text(json.dumps(tsconfig))
    (mcp / "src/query.ts").write_text(
        'import { trailblaze } from "@trailblaze/scripting";\n'
        'import type { Limit } from "limits";\n'
        "export const app_query = trailblaze.tool<{ method: string; limit: Limit }>(\n"
        '  { description: "Ask the server." },\n'
        "  async (input) => input.method,\n"
        ");\n"
    )
    trail = ws / "trailmaps/app/trails/t.trail.yaml"
    trail.write_text(
        trail.read_text("utf-8") + "        - app_query: {method: list, limit: {most: 3}}\n"
    )
    report, code = _check(ws)
    assert [(f["kind"], f["line"], f["code"], f["fatal"]) for f in report["findings"]] == [
        ("infra", 8, "unresolved-input", False)
    ]
    message = report["findings"][0]["message"]
    assert message.startswith("not type-checked: input type of `app_query` unresolved (")
    assert "Cannot find module 'limits'" in message
    assert [t["status"] for t in report["trails"]] == ["parsed"]
    assert code == 0
    assert _check(ws, "--require-typecheck")[1] == 3


@pytest.mark.parametrize("how", ["reference-surface", "no-write"])
def test_nested_projects_beside_a_surface_in_the_scratch_directory_give_the_same_verdict(
    tmp_path: Path, tsc: Compiler, node_modules: dict[str, Path], how: str
) -> None:
    # The trailmap's own program then reads our surface from the scratch directory: the nested
    # projects are still left out of it, and compiled on their own.
    def installed(root: Path) -> Path:
        ws = _workspace(root)
        _install(ws / TOOLS / "host", node_modules, ["@types/node"])
        _install(ws / TOOLS / "mcp", node_modules, ["@types/node", "zod"])
        trail = ws / "trailmaps/app/trails/t.trail.yaml"
        trail.write_text(trail.read_text("utf-8").replace("{path: /tmp/x}", "{pth: /tmp/x}"))
        return ws

    expected, code = _check(installed(tmp_path / "ours"))
    assert code == 1
    ws = installed(tmp_path / "theirs")
    args: tuple[str, ...] = ("--no-write",)
    if how == "reference-surface":
        theirs = (DATA / "reference-generated" / "trailblaze-client.d.ts").read_bytes()
        (ws / TOOLS / "trailblaze-client.d.ts").write_bytes(theirs)
        args = ()
    before = _listing(ws / "trailmaps")
    report, code = _check(ws, *args)
    assert code == 1
    notes = [f for f in report["findings"] if f["code"] == "generated-left-alone"]
    assert len(notes) == (1 if how == "reference-surface" else 0)
    assert _shown({"findings": [f for f in report["findings"] if f not in notes]}) == _shown(
        expected
    )
    assert report["trails"] == expected["trails"]
    assert _listing(ws / "trailmaps") == before  # nothing written there
