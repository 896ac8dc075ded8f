"""A framework tool's entry is one object in every trailmap, and what the surfaces are made of
is worked out once per entry (`records.framework_entry`, `tsrender.render_entry`,
`trailschema`): the surfaces are those of entries made anew for each trailmap."""

from __future__ import annotations

import json

from tests.conftest import ROOT
from trailblaze.check.discover import load_manifests
from trailblaze.generate import trailschema, tsrender
from trailblaze.generate.artifacts import render_client_dts
from trailblaze.generate.trailschema import trail_schema
from trailblaze.toolmodel import records
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.toolmodel.resolution import Resolver
from trailblaze.workspace import find_workspace, scan


def surfaces() -> dict[str, tuple[str, str]]:
    """Each bundled trailmap's client surface and editor schema, as written."""
    ws = find_workspace(ROOT, explicit=True)
    manifests = load_manifests(ws, scan(ws))
    catalog = load_catalog()
    resolver = Resolver(manifests.with_dirs(), ws.root, catalog)
    out = {}
    for name in manifests.trailmaps:
        resolution = resolver.resolve(name)
        tools = manifests.dirs[name] / "tools"
        out[name] = (
            render_client_dts(resolution, tools, catalog),
            json.dumps(trail_schema(resolution, catalog), indent=2),
        )
    return out


def test_every_trailmap_shares_the_framework_entries() -> None:
    catalog = load_catalog()
    tool = next(iter(catalog.tools.values()))
    entry = records.framework_entry(tool, "framework")
    assert records.framework_entry(tool, "framework") is entry
    assert records.framework_entry(tool, "sdk") is not entry
    assert records.framework_entry(tool, "sdk").source == "sdk"


def test_the_surfaces_of_shared_entries_are_those_of_entries_made_anew() -> None:
    shared = surfaces()
    assert len(shared) >= 2
    # A second pass takes what the first worked out; nothing of one trailmap leaked into
    # another's (each rendered text is the one a cold process renders).
    assert surfaces() == shared
    records._FRAMEWORK_ENTRIES.clear()
    tsrender._RENDERED.clear()
    trailschema._ARGS.clear()
    trailschema._DEFS.clear()
    fresh = surfaces()
    assert fresh == shared
