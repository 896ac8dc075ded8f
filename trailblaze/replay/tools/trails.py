"""``runTrail``: replay another trail file's recordings inside the current tool.

The path is read relative to the working directory (upstream's rule), then relative to the
directory of the trail that calls it. A recording may replay only the workspace's own trails:
the file found must be a trail file (``*.trail.yaml``, ``trail.yaml``, ``blaze.yaml``) inside
the workspace, symlinks resolved (without a workspace, inside the directory of the trail
replayed); any other is refused unread (``OutsideWorkspace``, ``trail.hostpolicy``). The file goes through the same parse gate and ``runIf``
validator as any trail, and its recordings are picked with the device's classifier chain; a
step with nothing to replay fails the tool (it would need the AI runner), never passes
silently. Its calls run nested, in the caller's execution context, and a trail that runs itself
(directly or not) is an error, not a hang.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import ToolError
from trailblaze.replay.tools.base import ToolImpl
from trailblaze.report.escaping import printable
from trailblaze.trail.hostpolicy import is_inside, is_trail_file_name
from trailblaze.yaml.node import YamlError, read_text

if TYPE_CHECKING:
    from trailblaze.replay.plan import TrailPlan

#: How many of a refused sub-trail's findings the message shows.
_SHOWN = 3


class OutsideWorkspace(ToolError):
    """``runTrail`` names a file that is not a trail file of the workspace: refused unread."""


def _resolve(raw: str, trail_file: Path | None) -> Path:
    given = Path(raw).expanduser()
    candidates = [given if given.is_absolute() else Path.cwd() / given]
    if not given.is_absolute() and trail_file is not None:
        candidates.append(trail_file.parent / given)
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    tried = ", ".join(str(c) for c in candidates)
    raise ToolError(f"runTrail: no trail file '{raw}' (looked for {tried})")


def load_trail(
    raw: str,
    trail_file: Path | None,
    classifiers: tuple[str, ...],
    outer: Sequence[Path] = (),
    *,
    home: Path | None,
    ships_runif: bool = False,
) -> tuple[Path, TrailPlan]:
    """The trail ``runTrail`` would replay, planned; ``ToolError`` says why it cannot.

    ``outer`` are the trails already replaying around it (a cycle is an error), ``home`` the
    directory it must be in (``HostPolicy.home``; None: nowhere). ``run`` calls this before a
    trail starts, so a missing, broken or outside sub-trail refuses the caller.
    """
    # Imported here: planning a trail needs the parse layer, which tools otherwise never do.
    from trailblaze.replay.plan import plan_trail  # noqa: PLC0415

    if not raw.strip():
        raise ToolError("runTrail: 'path' is empty")
    raw = raw.strip()
    path = _resolve(raw, trail_file)
    if home is None or not is_trail_file_name(path.name) or not is_inside(path, home.resolve()):
        where = "the workspace" if home is not None else "a workspace"
        raise OutsideWorkspace(
            f"runTrail reads the host file '{printable(raw)}' ({printable(str(path))}), which "
            f"is not a trail file inside {where}: a recording may replay only the workspace's "
            "own trails"
        )
    chain = [p for p in (trail_file, *outer) if p is not None]
    if any(path == p.resolve() for p in chain):
        shown = " -> ".join(p.name for p in (*chain, path))
        raise ToolError(f"runTrail: '{raw}' would replay itself ({shown})")
    try:
        text = read_text(path)
    except YamlError as exc:
        raise ToolError(f"runTrail: cannot read '{raw}': {exc}") from None
    # Its calls resolve in the caller's tools: our runIf grammar applies where the caller's does.
    plan = plan_trail(
        raw, text, classifiers, ships_runif=(lambda _target: True) if ships_runif else None
    )
    if plan.refused:
        shown = "; ".join(f.text for f in plan.findings[:_SHOWN])
        more = f" (and {len(plan.findings) - _SHOWN} more)" if len(plan.findings) > _SHOWN else ""
        # Its arguments bind as a replayed trail's do, with no value given: defaults only.
        why = (
            "cannot start, its arguments do not bind"
            if plan.refused_args
            else "does not pass the parse gate"
        )
        raise ToolError(f"runTrail: '{raw}' {why}: {shown}{more}")
    if plan.skip_reason is not None:
        raise ToolError(f"runTrail: '{raw}' has nothing to replay: {plan.skip_reason}")
    missing = [s for s in plan.steps if s.recording is None]
    if missing:
        first = missing[0]
        raise ToolError(
            f"runTrail: step {first.step.number} of '{raw}' cannot replay: {first.skip_reason}"
        )
    return path, plan


def run_trail(context: ExecutionContext, args: dict[str, Any]) -> str:
    raw = args["path"].strip()
    trail_dir = context.trail_file.parent if context.trail_file is not None else None
    path, plan = load_trail(
        raw,
        context.trail_file,
        context.options.classifiers,
        context.running_trails,
        home=context.options.host.home(trail_dir),
        ships_runif=context.ships_runif,
    )
    context.running_trails.append(path)
    calls = 0
    try:
        for sp in plan.steps:
            assert sp.recording is not None
            label = "trailhead" if sp.step.kind == "trailhead" else f"step {sp.step.number}"
            context.run_tools(sp.recording.calls, f"runTrail({raw}) {label}")
            calls += len(sp.recording.calls)
    finally:
        context.running_trails.pop()
    return f"replayed {len(plan.steps)} step(s), {calls} call(s) of {raw}"


TOOLS = (ToolImpl("runTrail", run_trail),)
