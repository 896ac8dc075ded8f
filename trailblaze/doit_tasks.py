"""doit task creators: the one module of the library that knows doit.

A monorepo's own `dodo.py` uses them after `pip install trailblaze-doit`::

    from trailblaze.doit_tasks import DOIT_CONFIG, task_check, task_surfaces, task_toolchain

or binds them to a workspace that is not the current directory::

    from trailblaze.doit_tasks import doit_config, make_tasks
    DOIT_CONFIG = doit_config("apps/shop")
    globals().update(make_tasks("apps/shop"))

Tasks are coarse (one per workspace, or one per trailmap for surfaces), never one per trail:
doit's per-task cost is paid on every run. What changed inside a task is tracked by our own
content caches; doit only decides whether the task runs at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from doit.exceptions import TaskError, TaskFailed
from doit.tools import config_changed

from trailblaze import __version__
from trailblaze.fsutil import stamp_of, write_atomic
from trailblaze.options import CheckOptions
from trailblaze.report import EXIT_INFRA, EXIT_OK
from trailblaze.scratch import GITIGNORE, Layout, clear_way, write_scratch
from trailblaze.store import Kind, Store
from trailblaze.toolchain import (
    TS_VERSION,
    TSC_ENV,
    ToolchainError,
    find_compiler,
    install_library,
    install_typescript,
    installed_compiler,
    installed_library,
)
from trailblaze.workspace import (
    GENERATED_TOOL_FILES,
    Scan,
    Workspace,
    WorkspaceError,
    find_workspace,
    scan,
    scan_trailmaps,
    trailmap_files,
)

if TYPE_CHECKING:
    from trailblaze.finding import Finding
    from trailblaze.monorepo import Monorepo
    from trailblaze.report import Report, ReportView

# Only what task creation needs is imported above: doit creates every task on every run, a
# no-op included. The pipeline (YAML, jsonschema, rich, the compiler) loads inside the actions.


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """What the last `check:run` recorded of its outcome, for doit's up-to-date checks."""

    complete: bool
    """Everything was really checked (no infrastructure problem)."""
    exit_code: int
    summary: str = ""
    """The report in one line: what an up-to-date `doit check` shows."""

    def to_json(self) -> dict[str, Any]:
        return {"complete": self.complete, "exit_code": self.exit_code, "summary": self.summary}

    @classmethod
    def from_json(cls, data: Any) -> CheckOutcome:
        complete, code = data["complete"], data["exit_code"]
        summary = data.get("summary", "")
        if (
            not isinstance(complete, bool)
            or not isinstance(code, int)
            or not isinstance(summary, str)
        ):
            raise TypeError("malformed check outcome")
        return cls(complete, code, summary)


OUTCOME: Kind[CheckOutcome] = Kind("check-outcome", CheckOutcome.from_json, CheckOutcome.to_json)
"""The last `check:run`'s outcome, vouching for the report.json it wrote: a report written by
another run (one whose outcome could not be recorded) makes it missing, and the check runs."""


def _workspace(root: str | Path | None) -> Workspace:
    if root is None:
        return find_workspace()
    return find_workspace(Path(root), explicit=True)


def _no_workspace_task(basename: str, doc: str, error: WorkspaceError) -> dict[str, Any]:
    """The task standing in for a command's when there is no workspace: it fails, saying why."""
    message = f"trailblaze {basename}: {error}"
    return {
        "basename": basename,
        "actions": [lambda: TaskError(message)],
        "uptodate": [False],
        "doc": doc,
    }


def doit_config(workspace: str | Path | None = None) -> dict[str, Any]:
    """`DOIT_CONFIG` for a workspace: sqlite3 backend in the scratch dir, `check` by default.

    sqlite3 rather than doit's default dbm (which is the slow `dbm.dumb` on many Pythons) or
    json (rewritten whole, non-atomically, on every run). Nothing is written here (importing
    a dodo.py must not): the scratch directory is made when doit opens its dependency file.
    """
    try:
        scratch = _workspace(workspace).scratch
    except WorkspaceError:
        scratch = Path(".trailblaze")
    return {
        "backend": "sqlite3",
        "dep_file": _DepFile(scratch),
        "default_tasks": ["check"],
    }


class _DepFile(os.PathLike[str]):
    """doit's dependency file in the scratch directory, which is made (and described) only
    when the file is opened: doit opens it by path, through `os.fspath`."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.path = str(Layout(scratch).doit_db)

    def __fspath__(self) -> str:
        return str(_prepared(self.scratch).doit_db)

    def __str__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return repr(self.path)

    def __eq__(self, other: object) -> bool:
        return str(other) == self.path

    def __hash__(self) -> int:
        return hash(self.path)


def _prepared(scratch: Path) -> Layout:
    """The scratch directory, made and describing itself (`.gitignore`), for doit's database.

    A scratch path of ours in the way (a file where the directory belongs, a directory where
    doit's database does) is cleared: doit would fail on it with a traceback.
    """
    layout = Layout(scratch)
    clear_way(layout.doit_db, scratch.parent)
    scratch.mkdir(parents=True, exist_ok=True)
    if not os.path.isfile(layout.gitignore):
        write_scratch(layout.gitignore, GITIGNORE, scratch)
    return layout


def _options_fingerprint(options: CheckOptions) -> dict[str, Any]:
    return {
        "strict": options.strict,
        "typecheck": options.typecheck,
        "require_typecheck": options.require_typecheck,
        "version": __version__,
    }


class _InputsChanged:
    """doit `uptodate`: the task is up to date while its inputs and options are as last time.

    The inputs are compared by a digest of every path with its size, mtime and inode, worked
    out only when doit asks (not for `doit list` or another task). A `file_dep` on ten thousand
    trails would do the same at several times the cost (doit stats, records and re-saves each
    dependency on every run), and would miss a deleted or renamed trail; a digest of the path
    list notices those. Content that did not change behind a new mtime costs one pipeline run,
    which re-reads nothing else (the pipeline's own state compares content hashes).
    """

    KEY = "trailblaze-inputs"

    def __init__(self, paths: list[str], options: dict[str, Any]) -> None:
        self.paths = paths
        self.options = json.dumps(options, sort_keys=True)
        self.stats: dict[str, os.stat_result | None] = {}
        """What `digest` saw, for the pipeline: it need not stat every trail a second time."""
        self._digest: str | None = None

    def digest(self) -> str:
        """Worked out once per process: `check:run` and `check` ask for it, and the verdict
        must be recorded against the inputs the run checked."""
        if self._digest is None:
            self._digest = self._compute()
        return self._digest

    def _compute(self) -> str:
        stat = os.stat
        seen = self.stats
        parts = [self.options]
        for path in self.paths:
            try:
                st = seen[path] = stat(path)
                parts.append(f"{path}\0{stamp_of(st)}")
            except OSError:
                seen[path] = None
                parts.append(f"{path}\0missing")
        return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        current = self.digest()
        task.value_savers.append(lambda: {self.KEY: current})
        return bool(values.get(self.KEY) == current)


def _recorded_outcome(layout: Layout) -> CheckOutcome | None:
    """What the last `check:run` recorded of its outcome (None: unknown, gone or stale)."""
    with Store.open(layout) as store:
        return store.get(OUTCOME, "")


def _report_view(data: Any) -> ReportView:
    from trailblaze.report import ReportView  # noqa: PLC0415 - only when a view is read

    return ReportView.from_json(data)


def _view_json(view: ReportView) -> dict[str, Any]:
    return view.to_json()


REPORT_VIEW: Kind[ReportView] = Kind("report-view", _report_view, _view_json)
"""The view of the last `check:run`'s report (what `check` shows), vouching for the
report.json it was recorded with."""


def _last_run_complete(layout: Layout) -> Callable[[], bool]:
    """An uptodate check: False when the last run could not check everything (infra problems).

    doit would otherwise remember a run whose type check could not run as a success and skip
    the next one: a cached pass for a run that did not really check. Findings do not make it
    run again: they are in the recorded report, which `check` shows every time. A
    recorded report that is gone makes it run too: doit checks that the task's targets exist,
    and the outcome vouches for the report it was recorded with.
    """

    def check() -> bool:
        outcome = _recorded_outcome(layout)
        return outcome is not None and outcome.complete

    return check


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
    try:
        ws = _workspace(workspace)
    except WorkspaceError as exc:
        yield _no_workspace_task("check", doc, exc)
        return
    found = scan(ws)
    files = list(found.trail_paths)  # a directory named like a trail is an input too
    for trailmap in found.trailmaps:
        files.extend(str(p) for p in trailmap_files(trailmap))
    options = CheckOptions.from_env()
    layout = Layout(ws.scratch)
    fingerprint = _options_fingerprint(options)
    inputs = _InputsChanged(files, fingerprint)
    verdict = _ReportVerdict(inputs, layout)
    yield {
        "basename": "check:run",
        "actions": [(_run_check_action, [str(ws.root)], {"found": found, "inputs": inputs})],
        "targets": [str(layout.report)],
        "uptodate": [inputs, _last_run_complete(layout)],
        "clean": [(_clean_action, [str(ws.root)])],
        "verbosity": 2,
        "doc": "run the check pipeline and record its report",
    }
    yield {
        "basename": "check",
        "actions": [(_report_action, [str(ws.root)])],
        "task_dep": ["check:run"],
        "uptodate": [verdict],
        "title": verdict.title,
        "params": [
            {
                "name": "format",
                "long": "format",
                "type": str,
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
        ],
        "verbosity": 2,
        "doc": doc,
    }


FORMAT_NAMES = ("text", "json", "sarif", "junit", "github")
"""`formats.FORMATS`, named here without importing the renderers at task creation."""


class _ReportVerdict:
    """doit `uptodate` of `check`: the inputs and the recorded report are as when it last
    passed, the recorded run was complete and clean, and no other format was asked for. Also
    its title: the one-line summary an up-to-date run shows.

    The report is compared by stamp rather than as a `file_dep`: before the first run there is
    none, and `doit info` would call that an error instead of saying the task will run.
    """

    KEY = "trailblaze-report"

    def __init__(self, inputs: _InputsChanged, layout: Layout) -> None:
        self.inputs = inputs
        self.layout = layout
        self.fresh = False
        self.summary = ""

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        options = task.options or {}
        st = _stat(str(self.layout.report))
        report = stamp_of(st) if st is not None else None
        task.value_savers.append(lambda: {self.KEY: report})
        unchanged = self.inputs(task, values)
        outcome = _recorded_outcome(self.layout)
        self.summary = outcome.summary if outcome is not None else ""
        self.fresh = (
            unchanged
            and report is not None
            and values.get(self.KEY) == report
            and outcome is not None
            and outcome.complete
            and outcome.exit_code == EXIT_OK
            and options.get("format", "text") == "text"
            and not options.get("output")
        )
        return self.fresh

    def title(self, task: Any) -> str:
        if not self.fresh:
            return str(task.name)
        return (
            f"{task.name}: up to date, {self.summary}"
            if self.summary
            else f"{task.name}: up to date"
        )


def _run_check_action(root: str, found: Scan, inputs: _InputsChanged) -> TaskError | None:
    from trailblaze.batch import no_gc  # noqa: PLC0415 - see the note on imports above

    # As in run_check: writing the report of ten thousand trails builds as many dicts, and the
    # cyclic collector would walk every object of the run again and again to free nothing.
    with no_gc():
        return _check_and_record(root, found, inputs)


def _check_and_record(root: str, found: Scan, inputs: _InputsChanged) -> TaskError | None:
    try:
        ws = find_workspace(Path(root), explicit=True)
    except WorkspaceError as exc:
        return TaskError(f"trailblaze check: {exc}")
    from trailblaze.check import run_check  # noqa: PLC0415 - see the note on imports above
    from trailblaze.console import RichProgress, one_line_summary, toolchain_progress  # noqa: PLC0415
    from trailblaze.remote import RemoteConfig, RemoteConfigError  # noqa: PLC0415

    options = CheckOptions.from_env()
    try:
        RemoteConfig.resolve(options.remote_cache, read_only=options.remote_read_only)
    except RemoteConfigError as exc:
        return TaskError(f"trailblaze check: {exc}")
    # The scan made when the task was created: the one its inputs digest was worked out from.
    with toolchain_progress(sys.stderr):
        report = run_check(
            ws,
            options,
            progress=RichProgress.for_terminal(),
            found=found,
            stats=inputs.stats,
        )
    layout = Layout(ws.scratch)
    with Store.open(layout) as store:
        previous = store.get(REPORT_VIEW, "")
        # Not indented: json's C encoder does not indent, and the report of a large workspace
        # is megabytes (`trailblaze check --format json` prints it for people).
        text = json.dumps(report.to_json(seconds=True), ensure_ascii=False) + "\n"
        write_scratch(layout.report, text, ws.scratch, always=True)
        # What `check` shows, on every run while there are findings: kept small.
        frames, stamps = _frames(ws, report, inputs.stats, previous)
        view = report.view(frames, stamps)
        outcome = CheckOutcome(
            complete=not report.infra_findings,
            exit_code=report.exit_code,
            summary=one_line_summary(view),
        )
        vouched = [layout.report]
        store.put(REPORT_VIEW, "", view, files=vouched)
        store.put(OUTCOME, "", outcome, files=vouched)
        # Not recorded (locked, say): the outcome and view no longer vouch for the new report,
        # so the next run checks again and `check` reads the report itself.
        store.commit()
    return None


def _frames(
    ws: Workspace,
    report: Report,
    stats: dict[str, os.stat_result | None],
    previous: ReportView | None,
) -> tuple[dict[str, str], dict[str, str]]:
    """The YAML line of every finding, and the stamps of the files they were read from.

    Lines of a file whose stamp is what the last view recorded are taken from that view: a
    check that changed one trail of a workspace with hundreds of findings reads one file.
    """
    from trailblaze.console import frame_key, source_lines  # noqa: PLC0415

    root = str(ws.root)
    stamps: dict[str, str] = {}
    for path in {f.path for f in report.findings}:
        full = os.path.join(root, path)
        st = stats[full] if full in stats else _stat(full)
        if st is not None:
            stamps[path] = stamp_of(st)
    frames: dict[str, str] = {}
    unread: list[Finding] = []
    for finding in report.findings:
        key = frame_key(finding)
        stamp = stamps.get(finding.path)
        if (
            previous is not None
            and stamp is not None
            and previous.stamps.get(finding.path) == stamp
            and key in previous.frames
        ):
            frames[key] = previous.frames[key]
        else:
            unread.append(finding)
    frames.update(source_lines(ws.root, unread))
    return frames, stamps


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _report_action(
    root: str, format: str = "text", output: str = "", path_base: str = ""
) -> TaskFailed | TaskError | None:
    try:
        ws = find_workspace(Path(root), explicit=True)
    except WorkspaceError as exc:
        return TaskError(f"trailblaze check: {exc}")
    from trailblaze.console import render_report, report_console  # noqa: PLC0415
    from trailblaze.pathbase import default_base, rebaser  # noqa: PLC0415
    from trailblaze.report import Report  # noqa: PLC0415

    if path_base and not Path(path_base).is_dir():
        return TaskError(f"trailblaze check: --path-base {path_base}: not a directory")
    view = _recorded_view(ws)
    full: Report | None = None
    if view is not None and format != "text":
        try:
            full = Report.from_json(json.loads(Layout(ws.scratch).report.read_bytes()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            view = None
    if view is None:
        with Store.open(ws.scratch) as store:
            store.drop(OUTCOME, "")  # so that the next run checks again
            store.commit()
        return TaskError("trailblaze check: the recorded report cannot be read; run again")
    here = Path(path_base) if path_base else default_base("text", ws.root)
    shown = view.with_paths(rebaser(ws.root, here))
    if full is None or output:
        # The text on stdout, unless another format goes there instead.
        render_report(report_console(sys.stdout), shown, ws.root)
    if full is not None or output:
        from trailblaze.formats import render  # noqa: PLC0415

        base = (Path(path_base) if path_base else default_base(format, ws.root)).absolute()
        if full is not None:
            text = render(full.with_paths(rebaser(ws.root, base), str(base)), format)
        else:
            from io import StringIO  # noqa: PLC0415

            buffer = StringIO()
            render_report(report_console(buffer, color=False), shown, ws.root)
            text = buffer.getvalue()
        if output:
            try:
                write_atomic(Path(output), text)
            except OSError as exc:
                return TaskError(f"trailblaze check: cannot write {output}: {exc.strerror}")
        else:
            sys.stdout.write(text)
    code = view.exit_code
    if code == EXIT_INFRA:
        # doit has no exit code of its own for "the required type check could not run": an
        # error (doit exits 2), not a finding.
        return TaskError(
            "trailblaze check: the type check could not run completely and is required "
            "(CI, TRAILBLAZE_REQUIRE_TYPECHECK=1)"
        )
    if code != EXIT_OK:
        return TaskFailed(f"trailblaze check: {len(view.fatal_findings)} finding(s)")
    return None


def _clean_tools_action(root: str, tools_dir: str) -> None:
    """`doit clean surfaces`: one trailmap's generated tool files that carry our banner."""
    from trailblaze.clean import generated_tool_files  # noqa: PLC0415
    from trailblaze.tooldefs import RelPath  # noqa: PLC0415

    rel = RelPath(Path(root))
    for path in generated_tool_files(Path(tools_dir)):
        path.unlink(missing_ok=True)
        print(f"  removed {rel(path)}")


def _clean_action(root: str) -> None:
    """`doit clean`: the generated tool files that carry our banner, and the scratch dir."""
    from trailblaze.clean import clean_scratch, clean_trailmaps  # noqa: PLC0415

    try:
        ws = find_workspace(Path(root), explicit=True)
    except WorkspaceError as exc:
        print(f"trailblaze clean: {exc}")
        return
    trailmaps, _ = scan_trailmaps(ws)
    for path in [*clean_trailmaps(trailmaps), *clean_scratch(ws)]:
        print(f"  removed {ws.rel(path)}")


def _recorded_view(ws: Workspace) -> ReportView | None:
    """The view recorded with the last report, else one read from the report itself (the
    view could not be recorded, or was lost); None when neither can be read."""
    from trailblaze.console import source_lines  # noqa: PLC0415
    from trailblaze.report import ReportView  # noqa: PLC0415

    layout = Layout(ws.scratch)
    with Store.open(layout) as store:
        view = store.get(REPORT_VIEW, "")
    if view is not None:
        return view
    try:
        view = ReportView.from_json(json.loads(layout.report.read_bytes()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return replace(view, frames=source_lines(ws.root, view.findings))


def surfaces_task(workspace: str | Path | None = None) -> Iterator[dict[str, Any]]:
    """`surfaces:<trailmap>` subtasks: one trailmap's artifacts, rebuilt only when its inputs change.

    A trailmap's inputs are its manifest and tool files and those of its dependencies (whose
    exports and tool sets it uses); the generator and catalog versions are part of the key.
    """
    try:
        ws = _workspace(workspace)
    except WorkspaceError as exc:
        yield _no_workspace_task(
            "surfaces", "generate every trailmap's typed surface and trail JSON Schema", exc
        )
        return
    found = _trailmaps_scan(ws)
    plan = _surface_plan(ws, found)
    versions = {"generator": __version__, "catalog": plan["catalog"]}
    yield {
        "basename": "surfaces",
        "name": None,
        "doc": "generate every trailmap's typed surface, tsconfig, sidecar and trail JSON Schema",
    }
    yield {
        "basename": "surfaces",
        "name": "_manifests",
        "actions": [(_manifests_action, [str(ws.root)])],
        "file_dep": [str(t.manifest) for t in found.trailmaps],
        "uptodate": [config_changed(versions)],
        "verbosity": 2,
        "doc": "validate every trailmap.yaml",
    }
    for dir_name, entry in sorted(plan["trailmaps"].items()):
        tools_dir = Path(entry["dir"]) / "tools"
        yield {
            "basename": "surfaces",
            "name": dir_name,
            "actions": [(_surfaces_action, [str(ws.root), dir_name])],
            "file_dep": [p for p in entry["inputs"] if os.path.isfile(p)],
            "targets": [str(tools_dir / name) for name in sorted(GENERATED_TOOL_FILES)],
            "uptodate": [config_changed(versions)],
            "clean": [(_clean_tools_action, [str(ws.root), str(tools_dir)])],
            "verbosity": 2,
            "doc": f"typed surface of trailmap '{dir_name}'",
        }


def _trailmaps_scan(ws: Workspace) -> Scan:
    """A `Scan` of the trailmaps only: the surfaces need no walk of every trail."""
    trailmaps, findings = scan_trailmaps(ws)
    return Scan(trailmaps, (), findings)


def _plan(data: Any) -> dict[str, Any]:
    trailmaps = data["trailmaps"]
    if not isinstance(data["catalog"], str) or not isinstance(trailmaps, dict):
        raise TypeError("malformed surfaces plan")
    for entry in trailmaps.values():
        if not isinstance(entry["dir"], str) or not all(
            isinstance(p, str) for p in entry["inputs"]
        ):
            raise TypeError("malformed surfaces plan")
    return {"catalog": data["catalog"], "trailmaps": trailmaps}


SURFACES_PLAN: Kind[dict[str, Any]] = Kind("surfaces-plan", _plan)
"""Which files each trailmap's surface depends on, keyed by what could change that."""


def _surface_plan(ws: Workspace, found: Scan) -> dict[str, Any]:
    """Which files each trailmap's surface depends on, remembered between runs.

    Working it out means parsing every manifest and tool file (dependencies decide whose files
    count); doing that on every `doit` run would make a no-op pay for it. The plan is keyed by
    what could change it: the manifests' contents, the list of tool files, the installed
    packages (their directories' stamps: a new package may bring bundled trailmaps) and our
    version.
    """
    key_parts = [__version__, _stamp(_catalog_file())]
    for trailmap in found.trailmaps:
        key_parts.append(_content(trailmap.manifest))
        key_parts.extend(str(p) for p in trailmap_files(trailmap))
    if ws.targets_dir is not None and ws.targets_dir.is_dir():
        key_parts.extend(_content(p) for p in sorted(ws.targets_dir.glob("*.yaml")))
    # Installing a package adds a *.dist-info directory to site-packages, changing its mtime.
    key_parts.extend(
        _stamp(Path(entry))
        for entry in sys.path
        if entry.endswith(("site-packages", "dist-packages"))
    )
    key = hashlib.sha256("\0".join(key_parts).encode()).hexdigest()
    with Store.open(ws.scratch) as store:
        plan = store.get(SURFACES_PLAN, key=key)
        if plan is None:
            plan = _compute_plan(ws, found)
            store.put(SURFACES_PLAN, "", plan, key=key)
            store.commit()
    return plan


def _compute_plan(ws: Workspace, found: Scan) -> dict[str, Any]:
    from trailblaze.bundled import discover  # noqa: PLC0415 - see the note on imports above
    from trailblaze.catalog import load_catalog  # noqa: PLC0415
    from trailblaze.discovery import load_manifests  # noqa: PLC0415
    from trailblaze.resolve import Resolver  # noqa: PLC0415

    manifests = load_manifests(ws, found)
    catalog = load_catalog()
    bundled = discover(catalog, workspace_targets=ws.targets_dir)
    resolver = Resolver(manifests.with_dirs(), ws.root, catalog, bundled.trailmaps)
    dirs: dict[str, Path] = dict(manifests.dirs)
    for target_id, item in bundled.trailmaps.items():
        if target_id not in dirs and item.manifest.is_target:
            dirs[target_id] = Layout(ws.scratch).validation_dir(target_id)
    trailmaps = {}
    for dir_name in sorted(dirs):
        if dir_name not in manifests.trailmaps and dir_name not in bundled.trailmaps:
            continue  # its manifest did not load: surfaces:_manifests reports why
        inputs = [str(p) for p in resolver.resolve(dir_name).inputs]
        trailmaps[dir_name] = {"dir": str(dirs[dir_name]), "inputs": inputs}
    return {"catalog": catalog.version, "trailmaps": trailmaps}


def _content(path: Path) -> str:
    """A small file's identity by content (a touched but unchanged manifest keeps its plan)."""
    try:
        return f"{path}:{hashlib.sha256(path.read_bytes()).hexdigest()}"
    except OSError:
        return f"{path}:-"


def _stamp(path: Path) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}:-"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def _catalog_file() -> Path:
    from importlib import resources  # noqa: PLC0415

    return Path(str(resources.files("trailblaze").joinpath("data/catalog.json")))


def _manifests_action(root: str) -> TaskFailed | TaskError | None:
    try:
        ws = find_workspace(Path(root), explicit=True)
    except WorkspaceError as exc:
        return TaskError(f"trailblaze surfaces: {exc}")
    from trailblaze.discovery import load_manifests  # noqa: PLC0415 - see the note on imports above

    manifests = load_manifests(ws, _trailmaps_scan(ws))
    return _show(manifests.findings, "trailmap.yaml")


def _surfaces_action(root: str, dir_name: str) -> TaskFailed | TaskError | None:
    try:
        ws = find_workspace(Path(root), explicit=True)
    except WorkspaceError as exc:
        return TaskError(f"trailblaze surfaces: {exc}")
    from trailblaze.bundled import discover  # noqa: PLC0415 - see the note on imports above
    from trailblaze.catalog import load_catalog  # noqa: PLC0415
    from trailblaze.discovery import load_manifests  # noqa: PLC0415
    from trailblaze.surface import generate_surfaces  # noqa: PLC0415

    manifests = load_manifests(ws, _trailmaps_scan(ws))
    catalog = load_catalog()
    bundled = discover(catalog, workspace_targets=ws.targets_dir)
    if dir_name not in manifests.trailmaps and dir_name not in bundled.trailmaps:
        return TaskFailed(f"trailblaze surfaces: trailmap '{dir_name}' no longer loads")
    result = generate_surfaces(
        ws.root,
        ws.scratch,
        manifests.with_dirs(),
        catalog,
        only=[dir_name],
        bundled=bundled.trailmaps,
    )
    for path in result.written:
        print(f"  wrote {ws.rel(path)}")
    return _show(result.findings, f"trailmap '{dir_name}'")


def _show(findings: tuple[Finding, ...], what: str) -> TaskFailed | None:
    from trailblaze.console import make_console  # noqa: PLC0415 - see the note on imports above

    console = make_console(sys.stdout)
    for finding in findings:
        console.print(f"{finding.kind}: {finding.text}", markup=False)
    fatal = [f for f in findings if f.fatal]
    if fatal:
        return TaskFailed(f"trailblaze surfaces: {len(fatal)} problem(s) in {what}")
    return None


def toolchain_task() -> dict[str, Any]:
    """The `toolchain` task dict: install the pinned TypeScript compiler into the cache."""
    return {
        "actions": [_install_toolchain_action],
        "uptodate": [_toolchain_ready],
        "doc": "Install the pinned TypeScript compiler and zod (npm) into the toolchain cache.",
    }


def _toolchain_ready() -> bool:
    # Up to date only when a later type gate will find a compiler; a TRAILBLAZE_TSC naming a
    # missing file makes the task run (and fail with the message) instead.
    override = os.environ.get(TSC_ENV, "").strip()
    if override and not Path(override).expanduser().is_file():
        return False
    try:
        installed_compiler(TS_VERSION)
        installed_library("zod")
    except ToolchainError:
        return False
    return True


def _install_toolchain_action() -> TaskError | None:
    from trailblaze.console import toolchain_progress  # noqa: PLC0415

    try:
        with toolchain_progress(sys.stderr):
            install_typescript()
            install_library("zod")  # the declarations scripted tools compile against
        # Also validates TRAILBLAZE_TSC, so a bad override fails here and not in the type gate.
        find_compiler()
    except ToolchainError as exc:
        return TaskError(f"trailblaze toolchain: {exc}")
    return None


def replay_task(workspace: str | Path | None = None) -> dict[str, Any]:
    """The `replay` task dict: replay the workspace's trails on an Android device.

    Its own target, never a dependency of `check`, and never up to date (a device run is not a
    build product). `doit replay --device SERIAL --arg=NAME=VALUE --classifier C --json FILE
    --junit FILE` (with doit, `--arg=` takes its `=`: doit reads a bare `NAME=VALUE` as its own
    variable); the results go to the scratch dir's replay.json and replay-junit.xml unless
    named. The device code (and adbutils) is imported only when the task runs.
    """
    root = None if workspace is None else str(workspace)
    return {
        "actions": [(_replay_action, [root])],
        "params": [
            _option(
                "device",
                "adb serial; repeatable (default: ANDROID_SERIAL, else the only one)",
                list,
            ),
            {
                "name": "all_devices",
                "long": "all-devices",
                "type": bool,
                "default": False,
                "help": "replay on every ready device, in parallel",
            },
            _option("arg", "--arg=NAME=VALUE: a trail argument ({{args.NAME}}); repeatable", list),
            _option("classifier", "device classifier (default: android-phone, then android)"),
            _option("json_file", "results as JSON (default: <scratch>/replay.json)", long="json"),
            _option("junit_file", "JUnit XML (default: <scratch>/replay-junit.xml)", long="junit"),
        ],
        "uptodate": [False],
        "verbosity": 2,
        "doc": "replay the workspace's recorded trails on an Android device (adbutils)",
    }


def _option(name: str, text: str, kind: type = str, *, long: str | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "long": long or name,
        "type": kind,
        "default": [] if kind is list else "",
        "help": text,
    }


def _replay_action(
    root: str | None,
    device: list[str],
    all_devices: bool,
    arg: list[str],
    classifier: str,
    json_file: str,
    junit_file: str,
) -> TaskFailed | TaskError | None:
    from trailblaze.replay.command import EXIT_USAGE, run_command  # noqa: PLC0415
    from trailblaze.replay.run import ReplayRequest  # noqa: PLC0415

    try:
        ws = _workspace(root)
    except WorkspaceError as exc:
        return TaskError(f"trailblaze replay: {exc}")
    request = ReplayRequest(
        workspace=ws.root,
        serials=tuple(device),
        all_devices=all_devices,
        args=tuple(arg),
        classifier=classifier or None,
        json_path=Path(json_file) if json_file else Layout(ws.scratch).replay_json,
        junit_path=Path(junit_file) if junit_file else Layout(ws.scratch).replay_junit,
    )
    code = run_command(request, prog="doit replay", out=sys.stdout)
    if code == EXIT_USAGE:
        return TaskError("trailblaze replay: could not start (see the message above)")
    if code != EXIT_OK:
        return TaskFailed("trailblaze replay: a trail failed, was refused or was cancelled")
    return None


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

    task_check.__doc__ = "Check every trail: parse gate, manifests, surfaces, type gate."
    task_surfaces.__doc__ = "Generate every trailmap's typed surface and trail JSON Schema."

    def task_replay() -> dict[str, Any]:
        return replay_task(one)

    task_replay.__doc__ = "Replay the recorded trails on an Android device (adbutils)."
    return {
        "task_check": task_check,
        "task_surfaces": task_surfaces,
        "task_toolchain": task_toolchain,
        "task_replay": task_replay,
    }


def monorepo_config(root: str | Path = ".") -> dict[str, Any]:
    """`DOIT_CONFIG` for a monorepo's root `dodo.py`: one sqlite3 database, in the root's
    `.trailblaze/`, for the tasks of every workspace; `check` by default."""
    return {
        "backend": "sqlite3",
        "dep_file": _DepFile(Path(root) / ".trailblaze"),  # made when doit opens it
        "default_tasks": ["check"],
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
        from trailblaze.monorepo import find_monorepo  # noqa: PLC0415

        return find_monorepo(Path(root), workspaces)

    def fan_out(
        basename: str, doc: str, make: Callable[[Path], Iterator[dict[str, Any]]]
    ) -> Iterator[dict[str, Any]]:
        """One `basename` task over every workspace's own, named by the workspace's path."""
        try:
            mono = find()
        except WorkspaceError as exc:
            yield _no_workspace_task(basename, doc, exc)
            return
        names = [mono.name(ws) for ws in mono.workspaces]
        yield {
            "basename": basename,
            "actions": None,
            "task_dep": [f"{basename}:{name}" for name in names],
            "doc": doc,
        }
        for ws, name in zip(mono.workspaces, names, strict=True):
            for task in make(ws.root):
                yield _in_workspace(task, basename, name)

    def task_check() -> Iterator[dict[str, Any]]:
        yield from fan_out("check", "check every workspace of the monorepo", check_task)

    def task_surfaces() -> Iterator[dict[str, Any]]:
        yield from fan_out(
            "surfaces", "generate the surfaces of every workspace of the monorepo", surfaces_task
        )

    task_check.__doc__ = "Check every workspace of the monorepo."
    task_surfaces.__doc__ = "Generate the surfaces of every workspace of the monorepo."
    return {
        "task_check": task_check,
        "task_surfaces": task_surfaces,
        "task_toolchain": task_toolchain,
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
    # workspace only when asked for (creating the scratch directory is not import-time work).
    if name == "DOIT_CONFIG":
        return doit_config()
    raise AttributeError(name)


def run_tasks(workspace: str | Path | None, tasks: list[str]) -> int:
    """Run our doit tasks for a workspace that has no dodo.py of its own (the CLI uses this)."""
    from doit.cmd_base import ModuleTaskLoader  # noqa: PLC0415 - only the CLI path needs it
    from doit.doit_cmd import DoitMain  # noqa: PLC0415

    namespace: dict[str, Any] = dict(make_tasks(workspace))
    namespace["DOIT_CONFIG"] = doit_config(workspace)
    result: int = DoitMain(ModuleTaskLoader(namespace)).run(tasks)
    return result
