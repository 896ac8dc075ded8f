"""When the `check` doit tasks are up to date: their `uptodate` callables.

doit calls each `uptodate` entry as `check(task, values)` (or with no arguments) and saves what
`task.value_savers` return when the task succeeds: that is doit's public protocol for a
computed up-to-date check, and all this module knows of doit (it imports none of it).

- `InputsDigest`: `check:run` and `check` are up to date while every input (trails, manifests,
  tool files) and every file the last run's compilers read beyond them (`state.reads`) has the
  path, size, mtime and inode it had, the options are the same, and each generated file is in
  its place as the last run left it (none deleted, none stood in for).
- `last_run_complete`: `check:run` runs again after a run that could not check everything.
- `ReportVerdict`: `check` is up to date only while the inputs and the recorded report are as
  when it last passed cleanly; its `title` is the one line an up-to-date run shows.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from trailblaze import __version__
from trailblaze.doit_tasks.recorded import recorded_outcome
from trailblaze.fsutil import stamp_of
from trailblaze.generate.owners import outputs_state
from trailblaze.options import CheckOptions, unit_test_env
from trailblaze.report.record import EXIT_OK
from trailblaze.state.keys import code_stamps_digest, stamped_digest, stamps_digest
from trailblaze.state.reads import recorded_paths
from trailblaze.state.scratch import Layout
from trailblaze.state.store import Store
from trailblaze.toolchain.bun import BUN_ENV
from trailblaze.workspace import Scan


def options_fingerprint(options: CheckOptions, remote_keys: Sequence[str] = ()) -> dict[str, Any]:
    """The options that change a check's outcome, with our version, and the workspace's
    `remote-cache-public-keys`: a pass the remote served under some keys (or none) is not
    repeated under others (`signing.trust_scope`)."""
    return {
        "strict": options.strict,
        "typecheck": options.typecheck,
        "require_typecheck": options.require_typecheck,
        "tests": options.tests,
        # Every unit test again: never the same fingerprint twice.
        "rerun_tests": time.time_ns() if options.rerun_tests else None,
        "test_env": unit_test_env(),
        "bun": os.environ.get(BUN_ENV, ""),
        "write": options.write,
        "overwrite_generated": options.overwrite_generated,
        "version": __version__,
        "remote_keys": list(remote_keys),
    }


class InputsDigest:
    """doit `uptodate`: the task is up to date while its inputs and options are as last time.

    The inputs are compared by a digest of every path with its size, mtime and inode (and of
    our own package's files, `keys.code_stamps_digest`), worked
    out only when doit asks (not for `doit list` or another task). A `file_dep` on ten thousand
    trails would do the same at several times the cost (doit stats, records and re-saves each
    dependency on every run), and would miss a deleted or renamed trail; a digest of the path
    list notices those. Content that did not change behind a new mtime costs one pipeline run,
    which re-reads nothing else (the pipeline's own state compares content hashes).
    """

    KEY = "trailblaze-inputs"
    OUTPUTS = "trailblaze-outputs"

    def __init__(
        self,
        paths: list[str],
        options: dict[str, Any],
        found: Scan | None = None,
        layout: Layout | None = None,
    ) -> None:
        self.paths = paths
        self.options = json.dumps(options, sort_keys=True)
        self.found = found
        self.layout = layout
        """Where the last run recorded what its compilers read beyond `paths` (None: nothing)."""
        self.stats: dict[str, os.stat_result | None] = {}
        """What `digest` saw, for the pipeline: it need not stat every trail a second time."""
        self._digest: str | None = None
        self._reads: list[str] = []
        """The reads `digest` covered: those the run before recorded."""

    def __repr__(self) -> str:
        # What `doit info` says when this is why a task would run.
        return (
            f"its inputs ({len(self.paths)} files: trails, manifests, tool files) or options "
            "changed since it last ran"
        )

    def digest(self) -> str:
        """Worked out once per process: `check:run` and `check` ask for it, and the verdict
        must be recorded against the inputs the run checked."""
        if self._digest is None:
            self._digest = self._compute()
        return self._digest

    def _compute(self) -> str:
        # Our own code too, as the command line's no-op key has it: a checkout edited without
        # a new version number must not repeat a verdict the old code gave. And the files the
        # compilers read besides the inputs, as the last run recorded them: a run that reads
        # others records them, so the next digest differs from the one saved with it.
        self._reads = self._recorded()
        return stamps_digest(self._header(), [*self.paths, *self._reads], self.stats)

    def _header(self) -> str:
        return f"{self.options}\0{code_stamps_digest()}"

    def _recorded(self) -> list[str]:
        if self.layout is None or not self.layout.store.exists():
            return []
        with Store.open(self.layout) as store:
            return recorded_paths(store)

    def saved(self) -> str:
        """The digest to save once the task ran: `digest` when the run recorded the reads it
        covered; else the same over the reads the run recorded, stamped as `stats` has them
        from before the run (the check adds those it could tell as they were then), or, when
        one is not there, `digest` again: the next run differs from it and checks again."""
        current = self.digest()
        reads = self._recorded()
        if reads == self._reads or any(path not in self.stats for path in reads):
            return current
        paths = [*self.paths, *reads]
        if any(path not in self.stats for path in paths):
            return current
        return stamped_digest(self._header(), [(path, self.stats[path]) for path in paths])

    def outputs(self) -> list[str]:
        """`outputs_state` now (nothing without a scan)."""
        return outputs_state(self.found) if self.found is not None else []

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        current = self.digest()
        now = self.outputs()
        # Saved once the task has run: the generated files as it left them, and the files its
        # compilers read as it recorded them.
        task.value_savers.append(lambda: {self.KEY: self.saved(), self.OUTPUTS: self.outputs()})
        return bool(values.get(self.KEY) == current and values.get(self.OUTPUTS) == now)


def last_run_complete(layout: Layout) -> Callable[[], bool]:
    """An uptodate check: False when the last run could not check everything (infra problems).

    doit would otherwise remember a run whose type check could not run as a success and skip
    the next one: a cached pass for a run that did not really check. Findings do not make it
    run again: they are in the recorded report, which `check` shows every time. A
    recorded report that is gone makes it run too: doit checks that the task's targets exist,
    and the outcome vouches for the report it was recorded with.
    """

    def check() -> bool:
        outcome = recorded_outcome(layout)
        return outcome is not None and outcome.complete

    return Described(
        check,
        "no complete run is recorded (none yet, or the last one could not check everything)",
    )


class Described:
    """A doit `uptodate` check that says in words why its task would run: `doit info` shows
    a check by its repr."""

    def __init__(self, check: Callable[[], bool], why: str) -> None:
        self.check = check
        self.why = why

    def __call__(self) -> bool:
        return self.check()

    def __repr__(self) -> str:
        return self.why


class ReportVerdict:
    """doit `uptodate` of `check`: the inputs and the recorded report are as when it last
    passed, the recorded run was complete and clean, and no other format was asked for. Also
    its title: the one-line summary an up-to-date run shows.

    The report is compared by stamp rather than as a `file_dep`: before the first run there is
    none, and `doit info` would call that an error instead of saying the task will run.
    """

    KEY = "trailblaze-report"

    def __init__(self, inputs: InputsDigest, layout: Layout) -> None:
        self.inputs = inputs
        self.layout = layout
        self.fresh = False
        self.summary = ""

    def __repr__(self) -> str:
        return (
            "the recorded report is not one of a clean, complete run of these inputs (findings "
            "stand, an input changed, or another --format or --output was asked for)"
        )

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        options = task.options or {}
        try:
            report: str | None = stamp_of(os.stat(self.layout.report))
        except OSError:
            report = None
        task.value_savers.append(lambda: {self.KEY: report})
        unchanged = self.inputs(task, values)
        outcome = recorded_outcome(self.layout)
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


class EveryVerdict:
    """doit `uptodate` of a monorepo's `check`: every workspace's `ReportVerdict` at once.

    Each verdict saves its values under its workspace's name (their keys would collide in one
    task), and every one is asked, so that all are saved when the task succeeds. The title
    is the workspaces' one-line summaries.
    """

    def __init__(self, verdicts: list[tuple[str, ReportVerdict]]) -> None:
        self.verdicts = verdicts
        self.fresh = False

    def __repr__(self) -> str:
        return (
            f"the recorded report of one of its {len(self.verdicts)} workspaces is not one of a "
            "clean, complete run of its inputs"
        )

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        fresh = True
        for name, verdict in self.verdicts:
            key = f"workspace:{name}"
            mine = _Values(task.options)
            saved = values.get(key)
            fresh = verdict(mine, saved if isinstance(saved, dict) else {}) and fresh
            task.value_savers.append(lambda key=key, mine=mine: {key: mine.saved()})
        self.fresh = fresh
        return fresh

    def title(self, task: Any) -> str:
        if not self.fresh:
            return str(task.name)
        summaries = "; ".join(f"{name}: {v.summary}" for name, v in self.verdicts if v.summary)
        return f"{task.name}: up to date, {summaries}" if summaries else f"{task.name}: up to date"


class _Values:
    """The part of a doit task an `uptodate` callable uses, for one workspace's values."""

    def __init__(self, options: dict[str, Any] | None) -> None:
        self.options = options
        self.value_savers: list[Callable[[], dict[str, Any]]] = []

    def saved(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for saver in self.value_savers:
            out.update(saver())
        return out
