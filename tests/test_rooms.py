"""The rooms are folders: each folder of `trailblaze/` imports only folders below it.

`FLOORS` is the table docs/architecture.md shows, as data. Every import counts (module level, inside
functions, under TYPE_CHECKING), as in test_imports.py. The order within a folder is the
folder's own business (test_check_stages.py pins the check's); this test pins the floors a
newcomer reads, that every module lives in one, and that the package's top level holds nothing
but the ground floor.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "trailblaze"

GROUND = ("errors", "finding", "options", "fsutil", "workspace", "codes", "redaction")
"""The ground floor: the modules at the top of the package, importing only each other."""

FLOORS: list[tuple[str, tuple[str, ...]]] = [
    # Top to bottom. A floor is a folder of the package; the last one is the ground floor.
    # `trailblaze ...`, `python -m trailblaze`, and beside them `trailblaze lsp`'s server
    ("cli", ("cli", "__main__", "lsp")),
    ("doit_tasks", ("doit_tasks",)),  # what a dodo.py imports, and what its tasks run
    ("replay", ("replay",)),  # replay on devices; of the check it uses only `check.discover`
    ("runs", ("runs",)),  # monorepos, whole runs in the remote cache, their trail rows
    ("check", ("check",)),  # the orchestrator, its stages, the type gate
    ("generate", ("generate",)),  # TypeScript and JSON Schema we write
    ("trail", ("trail",)),  # the trail model, grammar, parse gate, runIf
    ("toolmodel", ("toolmodel",)),  # catalog, manifests, tool definitions, resolution
    ("yaml", ("yaml",)),  # located YAML, and schema errors at their node
    ("toolchain", ("toolchain",)),  # subprocesses, pinned compilers and npm tools
    ("state", ("state",)),  # store, result cache, scratch layout, remote cache
    ("report", ("report",)),  # the report record and every renderer
    ("ground", GROUND),
]
REPLAY_USES_OF_CHECK = {"trailblaze.check.discover"}
"""Of the check, replay uses one stage: the same validated manifests a check loads."""


def floor_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "trailblaze" or len(parts) < 2:
        return None
    for index, (_, members) in enumerate(FLOORS):
        if parts[1] in members:
            return index
    return None


def imports_of(path: Path) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "trailblaze" and node.level == 0:
            # `from trailblaze import state` imports the folder `state`.
            found.extend((f"trailblaze.{alias.name}", node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
    return found


def module_of(path: Path, root: Path = ROOT) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


def upward_imports(root: Path = ROOT) -> list[str]:
    """Every import of `root`/trailblaze that reaches a floor above its module's own."""
    upward = []
    for path in sorted((root / "trailblaze").rglob("*.py")):
        module = module_of(path, root)
        mine = floor_of(module)
        if mine is None:
            continue
        for target, line in imports_of(path):
            theirs = floor_of(target)
            if theirs is not None and theirs < mine:
                upward.append(
                    f"{module}:{line} ({FLOORS[mine][0]}) -> {target} ({FLOORS[theirs][0]})"
                )
    return upward


def modules_importing(name: str, root: Path = ROOT) -> list[str]:
    """Every module of `root`/trailblaze that imports `name` (or a module inside it), anywhere
    in its body: what the tests of the one module allowed to use a library scan for."""
    return sorted(
        module_of(path, root)
        for path in (root / "trailblaze").rglob("*.py")
        if any(t == name or t.startswith(f"{name}.") for t, _ in imports_of(path))
    )


def package_copy(tmp_path: Path, plant: tuple[str, str] | None = None) -> Path:
    """A copy of the package's modules under `tmp_path`/trailblaze, `plant` = (module, text)
    appended to one of them; `tmp_path` is returned (the root the walks above take)."""
    package = tmp_path / "trailblaze"
    for path in PACKAGE.rglob("*.py"):
        copy = package / path.relative_to(PACKAGE)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
    if plant is not None:
        module, text = plant
        with (package / module).open("a", encoding="utf-8") as out:
            out.write(text)
    return tmp_path


def test_every_module_of_the_package_has_a_floor() -> None:
    homeless = [
        module_of(p) for p in sorted(PACKAGE.rglob("*.py"))
        if module_of(p) != "trailblaze" and floor_of(module_of(p)) is None
    ]  # fmt: skip
    assert homeless == []


def test_the_top_of_the_package_holds_only_the_ground_floor() -> None:
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert top == sorted(("__init__", "__main__", *GROUND))
    folders = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    # A floor may hold folders side by side (`cli` and `lsp`): each is named in its floor.
    assert folders == sorted(m for _, members in FLOORS[:-1] for m in members if m != "__main__")


def test_no_module_imports_a_floor_above_its_own() -> None:
    assert upward_imports() == []


@pytest.mark.parametrize(
    ("module", "statement"),
    [
        ("state/store.py", "from trailblaze.check.run import run_check\n"),
        ("errors.py", "def later():\n    from trailblaze.yaml.node import Node\n"),
        ("report/console.py", "from trailblaze import state\n"),
    ],
)
def test_an_upward_import_is_found(tmp_path: Path, module: str, statement: str) -> None:
    # The same walk over a copy of the package with one upward import planted.
    found = upward_imports(package_copy(tmp_path, (module, statement)))
    assert len(found) == 1, found
    assert found[0].startswith(f"trailblaze.{module.removesuffix('.py').replace('/', '.')}:")


def test_replay_uses_no_stage_of_the_check_but_its_manifests() -> None:
    used = {
        target
        for path in sorted((PACKAGE / "replay").rglob("*.py"))
        for target, _ in imports_of(path)
        if target.startswith("trailblaze.check.")
    }
    assert used == REPLAY_USES_OF_CHECK
