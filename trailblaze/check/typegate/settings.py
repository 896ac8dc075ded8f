"""What every part of the type gate shares: compiler options, limits, the infra finding."""

from __future__ import annotations

import re
from collections.abc import Mapping

from trailblaze import codes
from trailblaze.finding import Finding
from trailblaze.options import env_milliseconds

TIMEOUT_ENV = "TRAILBLAZE_TYPECHECK_TIMEOUT_MS"
DEFAULT_TIMEOUT = 300.0
BATCH_SIZE = 2000
"""Trails per compiler run: one program of 10,000 trails peaks near 1.5 GiB, 2,000 near 0.3; with
smaller batches the compiler keeps up with the parse and less is left to compile at the end."""
TAIL_BATCH = 250
"""The smallest batch compiled while trails are still being parsed. Toward the end of a parse
each batch is half of what is left (`TypeGate.expect`), so the batch compiled after the last
trail is parsed, on the run's critical path, is at most this big instead of up to `BATCH_SIZE`;
below it, the compiler's start-up (its libraries and the surfaces) outweighs the trails."""
COMPILER_OPTIONS = {
    "target": "ES2022",
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "lib": ["ES2022"],
    "types": [],
    "strict": True,
    "noEmit": True,
    # Declaration files are not re-checked with every batch of trails: `check_surfaces` checks
    # ours (surfaces, tool declarations, the SDK) strictly whenever one changes. Unchecked, an
    # unresolved import in one would silently become `any` and every call would pass.
    "skipLibCheck": True,
    "allowJs": False,
    # Trails are always checked against our declarations (`scratch.Layout.own_sdk_dir`).
    "paths": {
        "@trailblaze/scripting": ["../sdk-trailblaze-doit/dist/index"],
        "@trailblaze/scripting/*": ["../sdk-trailblaze-doit/dist/*"],
    },
}
UNRESOLVED_CODES = frozenset(
    {"TS2304", "TS2305", "TS2307", "TS2503", "TS2552", "TS2614", "TS2694", "TS2724", "TS2792"}
)
"""Diagnostics of a name or module that does not resolve: what leaves error types behind."""


def timeout_seconds(env: Mapping[str, str] | None = None) -> float:
    return env_milliseconds(TIMEOUT_ENV, DEFAULT_TIMEOUT, floor=1.0, env=env)


def infra_finding(
    path: str, message: str, trailmap: str | None = None, *, code: str = codes.TYPEGATE
) -> Finding:
    """A check that could not run: never fatal, whatever its trailmap."""
    return Finding("infra", path, 1, 1, message, code=code, fatal=False, trailmap=trailmap)


# Declaration files are not checked here either: zod's alone cost seconds. What could make a
# call pass unchecked (an import that does not resolve, an `any` input) the probes find.
SURFACE_OPTIONS = {**COMPILER_OPTIONS, "skipDefaultLibCheck": True}


UNRESOLVED_MARK = "trailblaze-unresolved:"
"""Marks the probe that `undefined` is refused: else the input type is `any` or `unknown`."""


OPEN_MARK = "trailblaze-open:"
"""Marks the probe that a property of any value is refused: else any arguments pass."""


PROBE_MARK_PATTERN = re.compile(
    f"({re.escape(UNRESOLVED_MARK)}|{re.escape(OPEN_MARK)})" + r"([^\"'`]+)"
)


PROBE_REASONS = {
    UNRESOLVED_MARK: "it accepts anything: `any`, `unknown` or a type that does not resolve",
    OPEN_MARK: "it accepts any arguments: an index signature of `any` or `unknown`",
}
"""Why a tool whose probe was not refused is not type-checked, by the probe's mark."""
