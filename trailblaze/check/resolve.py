"""The resolve stage: every target's tool model, where its artifacts go, and its exemption.

A target is a workspace trailmap, or a bundled one no workspace trailmap shadows (its
validation-only surfaces go to the scratch directory, `trail-validation/<id>/tools/`). Each is
resolved once (`resolution.Resolver`): the surfaces stage writes its artifacts from the result,
the parse stage generates its trails' modules against it, the type gate compiles them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from trailblaze.check.context import CheckContext
from trailblaze.check.discover import Discovery
from trailblaze.finding import Finding
from trailblaze.state.scratch import Layout
from trailblaze.toolmodel.catalog import Catalog
from trailblaze.toolmodel.records import BundledTrailmap, Resolution
from trailblaze.toolmodel.resolution import Resolver

TRANSITIONAL_EXEMPT = {"default": "the synthetic default host target has no trailmap.yaml"}
"""Kept from the reference: the synthetic `default` host target has no manifest and is exempt."""


class Resolved(msgspec.Struct, frozen=True):
    """Resolved trailmaps, in the order their artifacts are written: the workspace's, then
    the bundled targets no workspace trailmap shadows, each sorted."""

    resolutions: dict[str, Resolution]
    dirs: dict[str, Path]
    """Trailmap -> the directory its `tools/` artifacts are written in."""
    workspace: frozenset[str]
    """The workspace trailmaps (their `.gitignore` is kept up to date, not the bundled ones')."""

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for r in self.resolutions.values() for f in r.findings)


def resolve_workspace(
    root: Path,
    scratch: Path,
    trailmaps: Mapping[str, tuple[Any, Path]],
    catalog: Catalog,
    *,
    only: Iterable[str] | None = None,
    bundled: Mapping[str, BundledTrailmap] | None = None,
) -> Resolved:
    """Resolve the workspace's trailmaps (all, or `only` these) and the bundled targets."""
    resolver = Resolver(dict(trailmaps), root, catalog, bundled)
    wanted = set(only) if only is not None else None
    # A trailmap outside the workspace (`TRAILBLAZE_CONFIG_DIR` or a `trailmaps:` entry naming
    # a directory elsewhere: a shipped configuration) is not ours to write into: its surface is
    # validation-only, in the scratch directory, as a bundled target's. One reached through a
    # link from inside the workspace keeps its place (`write_surfaces` judges the link).
    dirs = {
        dir_name: path if path.is_relative_to(root) else Layout(scratch).validation_dir(dir_name)
        for dir_name, (_, path) in sorted(trailmaps.items())
    }
    dirs |= {
        target_id: Layout(scratch).validation_dir(target_id)
        for target_id, item in sorted((bundled or {}).items())
        if target_id not in trailmaps and item.manifest.is_target
    }
    if wanted is not None:
        dirs = {name: path for name, path in dirs.items() if name in wanted}
    return Resolved(
        resolutions={name: resolver.resolve(name) for name in dirs},
        dirs=dirs,
        workspace=frozenset(
            name for name, (_, path) in trailmaps.items() if path.is_relative_to(root)
        ),
    )


class Targets(msgspec.Struct, frozen=True):
    """What the resolve stage gives the rest of the check."""

    resolved: Resolved
    exempt: dict[str, str]
    """Target -> why its trails' type findings are not fatal."""
    known: frozenset[str]
    """Every name a trail may target that is not a typo: workspace and bundled trailmaps."""

    @property
    def resolutions(self) -> dict[str, Resolution]:
        return self.resolved.resolutions


def resolve(ctx: CheckContext, discovery: Discovery) -> Targets:
    """The resolve stage."""
    manifests = discovery.manifests
    bundled = discovery.bundled.trailmaps
    with ctx.timer.phase("surfaces"):
        resolved = resolve_workspace(
            ctx.ws.root, ctx.ws.scratch, manifests.with_dirs(), ctx.catalog, bundled=bundled
        )
    exempt = dict(TRANSITIONAL_EXEMPT)
    for item_id, item in bundled.items():
        if item_id not in manifests.trailmaps and item.manifest.exempt_reason:
            exempt[item_id] = item.manifest.exempt_reason
    for dir_name, trailmap in manifests.trailmaps.items():
        if trailmap.exempt_reason:
            exempt[dir_name] = trailmap.exempt_reason
        else:
            exempt.pop(dir_name, None)
    return Targets(
        resolved=resolved,
        exempt=exempt,
        known=frozenset(manifests.dirs) | frozenset(bundled),
    )
