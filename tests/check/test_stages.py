"""The check reads the way the data flows: stages import only the stages before them."""

from __future__ import annotations

import ast
from pathlib import Path

import trailblaze

PACKAGE = Path(trailblaze.__file__).parent

STAGES = (
    "trailblaze.check.context",
    "trailblaze.check.discover",
    "trailblaze.check.resolve",
    "trailblaze.check.surfaces",
    "trailblaze.check.parse",
    "trailblaze.check.typegate.gate",
    "trailblaze.check.unittests.phase",
    "trailblaze.check.report",
    "trailblaze.check.run",
)
"""The check's context, its stages in the order they run, and the orchestrator last."""


def imported(module: str) -> set[str]:
    """The trailblaze modules `module` imports, at any depth of its code."""
    path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("trailblaze.")}


def test_a_stage_imports_no_stage_after_it() -> None:
    for position, stage in enumerate(STAGES):
        later = set(STAGES[position + 1 :])
        assert imported(stage) & later == set(), stage


def test_only_the_orchestrator_runs_the_stages() -> None:
    orchestrator = imported("trailblaze.check.run")
    assert set(STAGES[:-1]) <= orchestrator
    # Nothing outside the check's own modules starts a stage: entry points call run_check.
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(("trailblaze", *path.relative_to(PACKAGE).with_suffix("").parts))
        if module in STAGES or module.endswith(".__init__"):
            continue
        text = path.read_text("utf-8")
        for name in ("check.parse import Parser", "typegate.gate import TypeGate"):
            assert name not in text, (module, name)


TYPEGATE = (
    "proof",
    "settings",
    "reads",
    "jobs",
    "mapping",
    "tsserver",
    "compilation",
    "projects",
    "declarations",
    "surfaces",
    "surfacecheck",
    "preparation",
    "remoteverdicts",
    "orphans",
    "warm",
    "primed",
    "gate",
    "tooltypes",
)
"""The type gate's rooms in the order of its docstring: each imports only rooms above it."""


def test_a_type_gate_room_imports_only_rooms_above_it() -> None:
    rooms = [f"trailblaze.check.typegate.{name}" for name in TYPEGATE]
    on_disk = {
        f"trailblaze.check.typegate.{p.stem}"
        for p in (PACKAGE / "check" / "typegate").glob("*.py")
        if p.stem != "__init__"
    }
    assert set(rooms) == on_disk
    for position, room in enumerate(rooms):
        assert imported(room) & set(rooms[position:]) == set(), room
