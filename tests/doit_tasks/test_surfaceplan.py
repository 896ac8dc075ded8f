"""The surfaces plan: each trailmap's inputs, remembered, and worked out again when they change."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import MINIMAL_MANIFEST, write_tree
from trailblaze.doit_tasks.surfaceplan import (
    SURFACES_PLAN,
    PlannedSurface,
    SurfacePlan,
    surface_plan,
    trailmaps_scan,
)
from trailblaze.workspace import find_workspace


def _plan(root: Path) -> SurfacePlan:
    ws = find_workspace(root, explicit=True)
    return surface_plan(ws, trailmaps_scan(ws))


def test_each_trailmap_depends_on_its_manifest_and_tool_files(compact_ws: Path) -> None:
    manifest = compact_ws / "trailmaps/app/trailmap.yaml"
    plan = _plan(compact_ws)
    assert sorted(plan.trailmaps) == ["app"]
    assert plan.trailmaps["app"].dir == str(compact_ws / "trailmaps/app")
    assert str(manifest) in plan.trailmaps["app"].inputs
    # A new tool file changes the key: the plan is worked out again and names it.
    tool = compact_ws / "trailmaps/app/tools/app_x.tool.yaml"
    write_tree(
        compact_ws,
        {
            str(
                tool.relative_to(compact_ws)
            ): "id: app_x\ndescription: X.\ntools:\n  - hideKeyboard: {}\n"
        },
    )
    assert str(tool) in _plan(compact_ws).trailmaps["app"].inputs
    # A new trailmap too.
    write_tree(compact_ws, {"trailmaps/shop/trailmap.yaml": MINIMAL_MANIFEST.format(id="shop")})
    assert sorted(_plan(compact_ws).trailmaps) == ["app", "shop"]


def test_the_plan_round_trips_and_a_malformed_one_is_refused() -> None:
    plan = _plan_of({"app": ("/ws/trailmaps/app", ("/ws/trailmaps/app/trailmap.yaml",))})
    assert SURFACES_PLAN.decode(SURFACES_PLAN.encode(plan)) == plan
    for bad in (
        {"catalog": 1, "trailmaps": {}},
        {"catalog": "1", "trailmaps": []},
        {"catalog": "1", "trailmaps": {"app": {"dir": 1, "inputs": []}}},
        {"catalog": "1", "trailmaps": {"app": {"dir": "/x", "inputs": [1]}}},
    ):
        # The store reads a value its kind refuses as missing: the plan is worked out again.
        with pytest.raises(TypeError):
            SURFACES_PLAN.decode(bad)


def _plan_of(entries: dict[str, tuple[str, tuple[str, ...]]]) -> SurfacePlan:
    return SurfacePlan(
        catalog="1",
        trailmaps={k: PlannedSurface(dir=d, inputs=i) for k, (d, i) in entries.items()},
    )
