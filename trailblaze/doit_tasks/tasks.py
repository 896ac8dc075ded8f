"""The doit task dicts behind `trailblaze.doit_tasks` (the module a `dodo.py` imports).

This module only translates into doit tasks: names, `targets`, `file_dep`, `uptodate`
(`uptodate.py`), `params`, `clean`. What each task runs is `actions.py`'s; together they
are the only modules of the library that import doit. Importing either writes nothing.

Tasks are coarse (one per workspace, or one per trailmap for surfaces), never one per trail:
doit's per-task cost is paid on every run. What changed inside a task is tracked by our own
content caches; doit only decides whether the task runs at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from doit import get_var
from doit.tools import config_changed

from trailblaze import __version__
from trailblaze.doit_tasks import actions
from trailblaze.doit_tasks.config import doit_config, workspace_of
from trailblaze.doit_tasks.surfacebuild import BUILD, MANIFESTS, passed
from trailblaze.doit_tasks.surfaceplan import SurfacePlan, surface_plan, trailmaps_scan
from trailblaze.doit_tasks.uptodate import (
    EveryVerdict,
    InputsDigest,
    ReportVerdict,
    last_run_complete,
    options_fingerprint,
)
from trailblaze.errors import TrailblazeError
from trailblaze.options import (
    NO_TESTS_ENV,
    NO_WRITE_ENV,
    OVERWRITE_GENERATED_ENV,
    RERUN_TESTS_ENV,
    CheckOptions,
)
from trailblaze.state.scratch import Layout
from trailblaze.toolmodel.sources import check_inputs
from trailblaze.workspace import GENERATED_TOOL_FILES, Scan, Workspace, scan

if TYPE_CHECKING:
    from trailblaze.runs.monorepo import Monorepo

# Only what task creation needs is imported above: doit creates every task on every run, a
# no-op included. The pipeline (YAML, jsonschema, rich, the compiler) loads inside the actions.

# What a dodo.py imports is listed once, in `trailblaze.doit_tasks` (its `__all__`).

FORMAT_NAMES = ("text", "json", "sarif", "junit", "github")
"""`formats.FORMATS`, named here without importing the renderers at task creation."""


def _failing_task(basename: str, doc: str, error: TrailblazeError) -> dict[str, Any]:
    """The task standing in for a command's when its tasks cannot be made (no workspace, a
    bad `[tool.trailblaze]`): it fails, saying why."""
    return {
        "basename": basename,
        "actions": [actions.failing(basename, error)],
        # `doit clean` says why too, and removes nothing (doit's exit status stays 0).
        "clean": [actions.failing("clean", error)],
        "uptodate": [False],
        "doc": doc,
    }


def _or_failing(
    basename: str, doc: str, make: Callable[[], Iterator[dict[str, Any]]]
) -> Iterator[Any]:
    """The tasks `make` makes, or, when a user error stops it (no workspace, a bad
    `[tool.trailblaze]`, a monorepo without workspaces), the one task that fails with it:
    the one place task creation meets a `TrailblazeError`, so doit never shows a traceback."""
    try:
        tasks = list(make())
    except TrailblazeError as exc:
        tasks = [_failing_task(basename, doc, exc)]
    yield from _internal_as_subtasks(tasks)  # a generator: what doit wants of a task creator


INTERNAL = "run"
"""The last part of the name of a task that does the work of the task named without it
(`check:run` for `check`): internal, so a subtask of that one, which `doit list` shows only
with `--all`, as it does every subtask."""


def _internal_as_subtasks(tasks: list[dict[str, Any]]) -> Iterator[Any]:
    """`tasks`, each internal one (`INTERNAL`) made a doit subtask of the task it works for.

    doit makes a subtask of a `name`d task only under a group task, which has no actions of
    its own; `check` has them, so the subtask is made here, as a `Task` (a creator may yield
    one) with `subtask_of` set. Its name, and every command naming it, are as before.
    """
    from doit.task import dict_to_task  # noqa: PLC0415 - doit is loaded: a creator runs

    names = {str(task.get("basename")) for task in tasks}
    for task in tasks:
        name = str(task.get("basename"))
        parent, _, last = name.rpartition(":")
        if last != INTERNAL or parent not in names:
            yield task
            continue
        made = dict_to_task({"name": name, **{k: v for k, v in task.items() if k != "basename"}})
        made.subtask_of = parent
        yield made


def _option(name: str, text: str, kind: type = str, *, long: str | None = None) -> dict[str, Any]:
    # doit's options are strings unless told otherwise: no `type` then, and `doit info` shows
    # no `<class 'str'>`.
    option: dict[str, Any] = {
        "name": name,
        "long": long or name,
        "default": [] if kind is list else "",
        "help": text,
    }
    if kind is not str:
        option["type"] = kind
    return option


def _switch(name: str, text: str, long: str | None = None) -> dict[str, Any]:
    return {"name": name, "long": long or name, "type": bool, "default": False, "help": text}


def check_task(workspace: str | Path | None = None) -> Iterator[dict[str, Any]]:
    """The `check` tasks of a workspace: `check:run` does the work, `check` tells.

    `check:run` runs the pipeline when an input changed (or the last run could not check
    everything) and records the report; it succeeds even when there are findings, so doit
    remembers it and a second run with nothing changed does no work. `check` prints the
    recorded report (or writes it in another format: `doit check --format sarif --output
    FILE`) and decides the exit code. It is up to date only while the inputs are as when it
    last passed: then doit shows one line, `-- check: up to date, <summary>`, and succeeds;
    while findings stand it runs (from the recorded view, cheaply) and fails.
    """
    doc = "check every trail of the workspace: parse gate, manifests, surfaces, type gate"
    return _or_failing("check", doc, lambda: _check_tasks(workspace_of(workspace), doc))


COMMAND_LINE_VARIABLES = {
    "no_tests": NO_TESTS_ENV,
    "rerun_tests": RERUN_TESTS_ENV,
    "no_write": NO_WRITE_ENV,
    "overwrite_generated": OVERWRITE_GENERATED_ENV,
}
"""doit's command-line variables (`doit check no_tests=1`) and the switch each one sets. A
task parameter (`--format`) reaches only its own task's action, after every up-to-date check;
these shape what `check:run` does and whether it is up to date, so they are read when the
tasks are made, as doit reads its variables, and stand for the environment variable."""


def apply_command_line_variables() -> None:
    """Set the switch of each variable given on doit's command line (`COMMAND_LINE_VARIABLES`)
    in this process's environment, where the check's options are read: a value the switch
    does not know is then the same usage error as in the environment."""
    for name, env in COMMAND_LINE_VARIABLES.items():
        value = get_var(name)
        if value is not None:
            os.environ[env] = str(value)


def _check_parts(ws: Workspace) -> tuple[Scan, Layout, InputsDigest]:
    """What a workspace's check tasks are made of: its scan, scratch layout and inputs."""
    apply_command_line_variables()
    found = scan(ws)
    layout = Layout(ws.scratch)
    options = {
        **options_fingerprint(CheckOptions.from_env(), ws.remote_keys),
        "workspace": ws.settings,
        # What the scan said of files that are no inputs (`trailblaze.yaml`'s `trailmaps:`).
        "scan": [f.to_json() for f in found.findings],
    }
    inputs = InputsDigest(check_inputs(found, ws.targets_dir), options, found, layout)
    return found, layout, inputs


def _report_params() -> list[dict[str, Any]]:
    """`--format`, `--output` and `--path-base` of a task that shows a report."""
    return [
        {
            "name": "format",
            "long": "format",
            "default": "text",
            "choices": tuple((name, "") for name in FORMAT_NAMES),
            "help": "text (default), json, sarif, junit or github",
        },
        _option("output", "write the report in --format to FILE (the text still shows)"),
        _option(
            "path_base",
            "paths relative to DIR (default: where doit runs; github/sarif: the git root)",
            long="path-base",
        ),
    ]


def _check_tasks(
    ws: Workspace, doc: str, parts: tuple[Scan, Layout, InputsDigest] | None = None
) -> Iterator[dict[str, Any]]:
    found, layout, inputs = parts if parts is not None else _check_parts(ws)
    verdict = ReportVerdict(inputs, layout)
    yield {
        "basename": "check:run",
        "actions": [(actions.check_run, [str(ws.root)], {"found": found, "inputs": inputs})],
        "targets": [str(layout.report)],
        "uptodate": [inputs, last_run_complete(layout)],
        "clean": [(actions.check_clean, [str(ws.root)])],
        "verbosity": 2,
        "doc": "run the check pipeline and record its report",
    }
    yield {
        "basename": "check",
        "actions": [(actions.check_report, [str(ws.root)])],
        "task_dep": ["check:run"],
        "uptodate": [verdict],
        "title": verdict.title,
        "params": _report_params(),
        "verbosity": 2,
        "doc": doc,
    }


def surfaces_task(workspace: str | Path | None = None) -> Iterator[dict[str, Any]]:
    """`surfaces:<trailmap>` subtasks: one trailmap's artifacts, rebuilt only when its inputs change.

    A trailmap's inputs are its manifest and tool files and those of its dependencies (whose
    exports and tool sets it uses: `surfaceplan.py`); the generator and catalog versions are
    part of the key.
    """
    doc = "generate every trailmap's typed surface and trail JSON Schema"
    return _or_failing("surfaces", doc, lambda: _surfaces_tasks(workspace_of(workspace)))


def _surfaces_plan(ws: Workspace) -> tuple[Scan, SurfacePlan]:
    found = trailmaps_scan(ws)
    return found, surface_plan(ws, found)


def _surface_steps(plan: SurfacePlan) -> list[str]:
    """What `surfaces:_result` gives the verdict of: the manifests, then every trailmap."""
    return [MANIFESTS, *sorted(plan.trailmaps)]


def _surfaces_tasks(
    ws: Workspace, parts: tuple[Scan, SurfacePlan] | None = None
) -> Iterator[dict[str, Any]]:
    found, plan = parts if parts is not None else _surfaces_plan(ws)
    versions = {"generator": __version__, "catalog": plan.catalog}
    yield {
        "basename": "surfaces",
        "name": None,
        "doc": "generate every trailmap's typed surface, tsconfig, sidecar and trail JSON Schema",
    }
    yield {
        "basename": "surfaces",
        "name": "_manifests",
        "actions": [(actions.surfaces_manifests, [str(ws.root)])],
        "file_dep": [str(t.manifest) for t in found.trailmaps if t.manifest.is_file()],
        "uptodate": [config_changed(versions), passed(ws, MANIFESTS)],
        "verbosity": 2,
        "doc": "validate every trailmap.yaml",
    }
    for dir_name, entry in sorted(plan.trailmaps.items()):
        tools_dir = Path(entry.dir) / "tools"
        yield {
            "basename": "surfaces",
            "name": f"{dir_name}:{BUILD}",
            "actions": [(actions.surfaces_build, [str(ws.root), dir_name])],
            "file_dep": [p for p in entry.inputs if os.path.isfile(p)],
            "targets": [str(tools_dir / name) for name in sorted(GENERATED_TOOL_FILES)],
            "uptodate": [config_changed(versions), passed(ws, dir_name)],
            "clean": [(actions.surfaces_clean, [str(ws.root), str(tools_dir)])],
            "verbosity": 2,
            "doc": f"build the typed surface of trailmap '{dir_name}' (its failure recorded)",
        }
    # Then: the steps record their failures instead of failing (doit would stop at the first),
    # so every valid trailmap's surface is written; this one fails with them all.
    steps = _surface_steps(plan)
    yield {
        "basename": "surfaces",
        "name": "_result",
        "actions": [(actions.surfaces_result, [str(ws.root), steps])],
        "uptodate": [passed(ws, step) for step in steps],
        "verbosity": 2,
        "doc": "fail when any manifest or surface above had a problem",
    }
    # `doit surfaces:<trailmap>`: that trailmap's surfaces built, and a failure for its own
    # problems. Yielded after `_result`, so a whole `doit surfaces` has built every trailmap
    # and said every problem before any of these could stop it.
    for dir_name in sorted(plan.trailmaps):
        yield {
            "basename": "surfaces",
            "name": dir_name,
            "actions": [(actions.surfaces_result, [str(ws.root), [dir_name]])],
            "task_dep": [f"surfaces:{dir_name}:{BUILD}"],
            "uptodate": [passed(ws, dir_name)],
            "verbosity": 2,
            "doc": f"typed surface of trailmap '{dir_name}'",
        }


def toolchain_task() -> dict[str, Any]:
    """The `toolchain` task dict: install the pinned TypeScript compiler into the cache."""
    return {
        "actions": [actions.toolchain_install],
        "uptodate": [actions.toolchain_ready],
        "doc": "Install the pinned TypeScript compiler and zod (npm) into the toolchain cache.",
    }


def replay_task(workspace: str | Path | None = None) -> dict[str, Any]:
    """The `replay` task dict: replay the workspace's trails on an Android device.

    Its own target, never a dependency of `check`, and never up to date (a device run is not a
    build product). `doit replay --device SERIAL[,SERIAL] --spread --arg=NAME=VALUE --args-file FILE --classifier C --json FILE
    --junit FILE` (with doit, `--arg=` takes its `=`: doit reads a bare `NAME=VALUE` as its own
    variable); the results go to the scratch dir's replay.json and replay-junit.xml unless
    named. The device code (and adbutils) is imported only when the task runs.
    """
    root = None if workspace is None else str(workspace)
    return {
        "actions": [(actions.replay, [root])],
        "params": [
            _option(
                "device",
                "adb serial; repeatable or comma-separated: every trail runs on each device "
                "(default: ANDROID_SERIAL, else the only one)",
                list,
            ),
            {
                "name": "all_devices",
                "long": "all-devices",
                "type": bool,
                "default": False,
                "help": "replay on every ready device, in parallel (every trail on each)",
            },
            {
                "name": "spread",
                "long": "spread",
                "type": bool,
                "default": False,
                "help": "with several devices, run each trail once on the next free device",
            },
            _option(
                "arg",
                "--arg=NAME=VALUE: a trail argument ({{args.NAME}}); repeatable; "
                "wins over --args-file",
                list,
            ),
            _option(
                "args_file", "YAML file of trail argument values (NAME: VALUE)", long="args-file"
            ),
            _option("classifier", "device classifier (default: android-phone, then android)"),
            _option("json_file", "results as JSON (default: <scratch>/replay.json)", long="json"),
            _option("junit_file", "JUnit XML (default: <scratch>/replay-junit.xml)", long="junit"),
            # The reference's run flags (docs/replay.md); doit reads a bare NAME=VALUE as its
            # own variable, so these are written --memory=NAME=VALUE.
            _option("tags", "replay only trails whose config.tags hold any of these", list),
            _option("memory", "--memory=NAME=VALUE: seed the trails' memory; repeatable", list),
            _option(
                "secret",
                "--secret=NAME=VALUE, or --secret=NAME (from the environment): a memory value "
                "hidden in every output; repeatable",
                list,
            ),
            _option("driver", "android-ondevice-accessibility or -instrumentation (over pins)"),
            _option("report", "DIR: index.html (screenshots inline) and summary.md"),
            _switch("logcat", "with --report: each trail's logcat slice"),
            _switch("record_video", "with --report: each trail's screen recording", "record-video"),
        ],
        "uptodate": [False],
        "verbosity": 2,
        "doc": "replay the workspace's recorded trails on an Android device (adbutils)",
    }


def make_tasks(
    workspace: str | Path | Sequence[str | Path] | None = None,
) -> dict[str, Callable[[], Any]]:
    """`task_*` creators bound to one workspace, for `globals().update(...)` in a dodo.py.

    A list of workspaces (paths or globs, relative to the current directory) gives the tasks
    of `monorepo_tasks`: each workspace under its own names, `check:<path>`.
    """
    if workspace is not None and not isinstance(workspace, str | Path):
        return monorepo_tasks([str(w) for w in workspace])
    one = workspace

    def task_check() -> Iterator[dict[str, Any]]:
        return check_task(one)

    def task_surfaces() -> Iterator[dict[str, Any]]:
        return surfaces_task(one)

    def task_replay() -> dict[str, Any]:
        return replay_task(one)

    task_check.__doc__ = "Check every trail: parse gate, manifests, surfaces, type gate."
    task_surfaces.__doc__ = "Generate every trailmap's typed surface and trail JSON Schema."
    task_replay.__doc__ = "Replay the recorded trails on an Android device (adbutils)."
    return {
        "task_check": task_check,
        "task_surfaces": task_surfaces,
        "task_toolchain": task_toolchain,
        "task_replay": task_replay,
    }


def monorepo_tasks(
    workspaces: Sequence[str] | None = None, root: str | Path = "."
) -> dict[str, Callable[[], Any]]:
    """`task_check` and `task_surfaces` over every workspace of a monorepo (`monorepo.py`).

    `workspaces` lists paths or globs relative to `root`; None reads the root's
    `[tool.trailblaze] workspaces`, else finds every workspace below the root. Each workspace
    has the tasks of `make_tasks`, named by its path: `doit check` checks them all,
    `doit check:apps/shop` one, `doit -n 4 check` several side by side.
    """

    def find() -> Monorepo:
        from trailblaze.runs.monorepo import find_monorepo  # noqa: PLC0415

        return find_monorepo(Path(root), workspaces)

    def task_check() -> Iterator[dict[str, Any]]:
        yield from _or_failing("check", CHECK_ALL, lambda: _monorepo_check(find()))

    def task_surfaces() -> Iterator[dict[str, Any]]:
        yield from _or_failing("surfaces", SURFACES_ALL, lambda: _monorepo_surfaces(find()))

    task_check.__doc__ = "Check every workspace of the monorepo."
    task_surfaces.__doc__ = "Generate the surfaces of every workspace of the monorepo."
    return {
        "task_check": task_check,
        "task_surfaces": task_surfaces,
        "task_toolchain": task_toolchain,
    }


CHECK_ALL = "check every workspace of the monorepo"
SURFACES_ALL = "generate the surfaces of every workspace of the monorepo"


def _monorepo_check(mono: Monorepo) -> Iterator[dict[str, Any]]:
    """Each workspace's check tasks under its name, and `check` over them all.

    `check` depends on every workspace's `check:<name>:run`, not on its `check:<name>`: that
    one fails for its findings, and doit stops at the first failure, so the workspaces after
    a failing one would never be shown. `check` shows one report of every workspace (as
    `trailblaze check --all` does) and fails with all their findings; it is up to date while
    every workspace's own `check` would be. A workspace whose tasks cannot be made fails
    `check` too, after the others' report.
    """
    shown: list[tuple[str, str]] = []
    verdicts: list[tuple[str, ReportVerdict]] = []
    broken: list[str] = []
    for ws in mono.workspaces:
        name = mono.name(ws)
        doc = f"check every trail of workspace '{name}'"
        try:
            parts = _check_parts(ws)
        except TrailblazeError as exc:
            yield _in_workspace(_failing_task("check", doc, exc), "check", name)
            broken.append(f"{name}: {exc}")
            continue
        for task in _check_tasks(ws, doc, parts):
            yield _in_workspace(task, "check", name)
        _, layout, inputs = parts
        shown.append((name, str(ws.root)))
        verdicts.append((name, ReportVerdict(inputs, layout)))
    every = EveryVerdict(verdicts)
    yield {
        "basename": "check",
        "actions": [(actions.check_monorepo_report, [str(mono.root), shown, broken])],
        "task_dep": [f"check:{name}:run" for name, _ in shown],
        "uptodate": [every if not broken else False],
        "title": every.title,
        "params": _report_params(),
        "verbosity": 2,
        "doc": CHECK_ALL,
    }


def _monorepo_surfaces(mono: Monorepo) -> Iterator[dict[str, Any]]:
    """Each workspace's surfaces tasks under its name, and `surfaces` over them all.

    As with `check`: `surfaces` depends on every workspace's builds, not on its `_result`
    (which fails, and would stop doit before the next workspace's surfaces are written), and
    fails with every workspace's problems.
    """
    steps: list[tuple[str, str, list[str]]] = []
    deps: list[str] = []
    broken: list[str] = []
    for ws in mono.workspaces:
        name = mono.name(ws)
        try:
            found, plan = _surfaces_plan(ws)
        except TrailblazeError as exc:
            doc = f"generate the surfaces of workspace '{name}'"
            yield _in_workspace(_failing_task("surfaces", doc, exc), "surfaces", name)
            broken.append(f"{name}: {exc}")
            continue
        for task in _surfaces_tasks(ws, (found, plan)):
            yield _in_workspace(task, "surfaces", name)
        steps.append((name, str(ws.root), _surface_steps(plan)))
        deps.append(f"surfaces:{name}:{MANIFESTS}")
        deps.extend(f"surfaces:{name}:{tm}:{BUILD}" for tm in sorted(plan.trailmaps))
    yield {
        "basename": "surfaces",
        "actions": [(actions.surfaces_monorepo_result, [steps, broken])],
        "task_dep": deps,
        "uptodate": [False],
        "verbosity": 2,
        "doc": SURFACES_ALL,
    }


def _in_workspace(task: dict[str, Any], base: str, name: str) -> dict[str, Any]:
    """A task of one workspace renamed into its own namespace: `check` -> `check:<name>`,
    `check:run` -> `check:<name>:run`, and the same for the tasks it depends on."""

    def rename(task_name: str) -> str:
        if task_name == base or task_name.startswith(f"{base}:"):
            return f"{base}:{name}{task_name[len(base) :]}"
        return task_name

    out = dict(task)
    out["basename"] = rename(str(task["basename"]))
    if "task_dep" in task:
        out["task_dep"] = [rename(dep) for dep in task["task_dep"]]
    return out


def task_check() -> Iterator[dict[str, Any]]:
    """Check every trail: parse gate, manifests, surfaces, type gate."""
    return check_task(None)


def task_surfaces() -> Iterator[dict[str, Any]]:
    """Generate every trailmap's typed surface and trail JSON Schema."""
    return surfaces_task(None)


def task_replay() -> dict[str, Any]:
    """Replay the recorded trails on an Android device (adbutils)."""
    return replay_task(None)


def task_toolchain() -> dict[str, Any]:
    """Install the pinned TypeScript compiler (npm) into the toolchain cache."""
    return toolchain_task()


def __getattr__(name: str) -> Any:
    # `from trailblaze.doit_tasks import DOIT_CONFIG` computes it for the current directory's
    # workspace only when asked for (finding the workspace is not import-time work).
    if name == "DOIT_CONFIG":
        return doit_config()
    raise AttributeError(name)


def run_tasks(workspace: str | Path | None, tasks: list[str]) -> int:
    """Run our doit tasks for a workspace that has no dodo.py of its own (the CLI uses this)."""
    from doit.cmd_base import ModuleTaskLoader  # noqa: PLC0415 - only the CLI path needs it
    from doit.doit_cmd import DoitMain  # noqa: PLC0415
    from doit.globals import Globals  # noqa: PLC0415

    namespace: dict[str, Any] = dict(make_tasks(workspace))
    namespace["DOIT_CONFIG"] = doit_config(workspace)
    before = Globals.dep_manager
    try:
        result: int = DoitMain(ModuleTaskLoader(namespace)).run(tasks)
    finally:
        # doit opens its dependency file (a sqlite3 connection) for every command, and closes it
        # only once tasks ran: `list`, `info`, an unknown task name or a task that fails to
        # load leave it open, held by `Globals.dep_manager` until a later run replaces it. Ours
        # is closed here (a no-op when doit did); another run's, still in progress, is not.
        ours = Globals.dep_manager
        if ours is not None and ours is not before:
            ours.close()
    return result
