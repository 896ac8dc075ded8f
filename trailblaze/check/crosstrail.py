"""Findings about the workspace rather than one trail, shared by the report stage and
`report merge` (`shard`): the same runIf branch recorded in several trails, and trails whose
target has a manifest but no surface."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from trailblaze import codes
from trailblaze.finding import Finding

# `runif` (and with it the YAML model and ruamel.yaml) is imported only where a warning is
# made: `report merge` and a warm clone's hit put a report together from stored trails and
# parse no YAML, and the import is a tenth of a hit's own time.


def repeated_branches(
    branches: Mapping[str, Sequence[tuple[str, int, int]]],
) -> list[Finding]:
    """One warning per runIf branch recorded in two or more trails: a named tool is missing.

    `branches` maps a trail path to the (signature, line, column) of each of its runIf trees.
    """
    groups: dict[str, list[tuple[str, int, int]]] = {}
    for path, found in sorted(branches.items()):
        for sig, line, column in found:
            groups.setdefault(sig, []).append((path, line, column))
    warnings = []
    for places in groups.values():
        trails = {path for path, _, _ in places}
        if len(trails) < 2:
            continue
        from trailblaze.trail.runif import RUNIF  # noqa: PLC0415 - see the imports above

        first, *_ = places
        where = ", ".join(f"{p}:{line}:{col}" for p, line, col in places)
        warnings.append(
            Finding(
                "warning",
                first[0],
                first[1],
                first[2],
                f"the same runIf branch is recorded in {len(trails)} trails ({where}); "
                f"a named tool would say it once",
                code=codes.RUNIF_REPEATED,
                fatal=False,
                tool=RUNIF,
            )
        )
    return warnings


def no_surface_finding(manifest: str, target: str, count: int) -> Finding:
    """`count` trails target a trailmap whose manifest did not load (so it has no surface)."""
    return Finding(
        "type",
        manifest,
        1,
        1,
        f"{count} trail(s) target '{target}', which has a trailmap.yaml but no typed surface "
        f"(the manifest did not load); fix it or set trail_validation.exempt",
        code=codes.NO_SURFACE,
        trailmap=target,
    )
