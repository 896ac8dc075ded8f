"""The rooms of ARCHITECTURE.md, enforced: a module imports only its own room and rooms below it.

Every import counts (module level, inside functions, under TYPE_CHECKING), as in
test_imports.py. The order within a room is each room's own business (test_check_stages.py,
test_imports.py); this test pins the table a newcomer reads.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "trailblaze"

# Top to bottom, as in ARCHITECTURE.md's table "The rooms, and what each may import".
ROOMS: list[tuple[str, tuple[str, ...]]] = [
    ("entry points", ("cli", "checkcommand", "doit_tasks", "doit_actions", "doitconfig",
                      "uptodate", "recorded", "surfaceplan", "surfacebuild", "monorepo",
                      "monorepo_warn", "scope", "typedtools", "clean")),
    ("whole-run cache and no-op", ("runcache", "runstate", "noop")),
    ("orchestrator", ("check",)),
    ("replay", ("replay",)),  # the fake device included: tests/test_imports.py fences it
    ("output", ("output", "console", "formats", "framecache", "pathbase", "escaping")),
    ("stages", ("discovery", "targets", "surface", "parsestage", "typegate", "proof", "batch",
                "state", "reporting")),
    ("stage context", ("checkcontext", "shard", "crosstrail")),
    ("generation", ("codegen", "argvalues", "linetable", "tsrender", "artifacts", "sdk",
                    "trailschema", "editorschema")),
    ("model", ("grammar", "parse", "trail", "runif", "argtokens", "resolve", "bundled",
               "tooldefs", "manifest", "catalog", "schemavalidation", "workspace")),
    ("foundations", ("yamlnode", "yamlfile", "yamlplain", "finding", "report", "errors", "options", "fsutil", "scratch",
                     "store", "cache", "proc", "toolchain", "npmtool", "remote")),
]  # fmt: skip
# Of the check's stages, replay uses one: the same validated manifests a check loads.
REPLAY_STAGES = {"trailblaze.discovery"}


def _room(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "trailblaze" or len(parts) < 2:
        return None
    for index, (_, members) in enumerate(ROOMS):
        if parts[1] in members:
            return index
    return None


def _imports(path: Path) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
    return found


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def test_every_module_of_the_package_has_a_room() -> None:
    homeless = [
        _module(p) for p in sorted(PACKAGE.rglob("*.py"))
        if _module(p) != "trailblaze" and _room(_module(p)) is None
    ]  # fmt: skip
    assert homeless == []


def test_no_module_imports_a_room_above_its_own() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        mine = _room(module)
        if mine is None:
            continue
        for target, line in _imports(path):
            theirs = _room(target)
            if theirs is None or theirs >= mine:
                continue
            upward.append(f"{module}:{line} ({ROOMS[mine][0]}) -> {target} ({ROOMS[theirs][0]})")
    assert upward == []


def test_replay_uses_no_stage_of_the_check_but_its_manifests() -> None:
    stages = dict(ROOMS)["stages"]
    used = {
        target
        for path in sorted((PACKAGE / "replay").rglob("*.py"))
        for target, _ in _imports(path)
        if target.split(".")[:2][-1] in stages and target.startswith("trailblaze.")
    }
    assert used == REPLAY_STAGES
