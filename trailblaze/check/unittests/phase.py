"""The unit-test stage: every trailmap's `*.test.ts` run with bun, cached per test file.

As the reference runs them (`TrailmapUnitTestRunner`): a trailmap whose `tools/` holds a
`*.test.ts` has its test files run by `bun test`, with `tools/` as the working directory (bun
finds the tsconfig `paths` mapping `@trailblaze/scripting` there), under
`TRAILBLAZE_TEST_TIMEOUT_MS` per bun run (default 5 minutes, at least 1). Unlike the reference,
a file runs only when the key of its inputs (`inputs.Graph`, bun, our runtime, the environment
passed on) has no passing result in the cache (`state.testresults`), and the files to run are
spread over bun runs in parallel, one per core.

Results are findings: a failing test is a fatal `test` finding at its file and line; a file
that did not load or whose run crashed or timed out is one too, and is never cached; tests
that could not run at all (no bun) are one `infra` finding per trailmap: not a pass (exit 3
under `--require-typecheck`).
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from trailblaze import codes
from trailblaze.check.context import CheckContext
from trailblaze.check.discover import Discovery
from trailblaze.check.typegate.declarations import sdk_choices
from trailblaze.errors import TrailblazeError
from trailblaze.finding import Finding
from trailblaze.generate.sdk import EXTRACTED, override_tsconfig, runtime_identity
from trailblaze.options import LOCATION_ENV, TEST_ENV, env_milliseconds, unit_test_env
from trailblaze.report.record import UnitTest
from trailblaze.state.keys import digest
from trailblaze.state.scratch import write_scratch
from trailblaze.state.signing import trust_scope
from trailblaze.toolchain import proc
from trailblaze.toolchain.bun import Bun, find_bun

if TYPE_CHECKING:
    from trailblaze.state.testresults import CaseResult

TIMEOUT_ENV = "TRAILBLAZE_TEST_TIMEOUT_MS"
DEFAULT_TIMEOUT = 300.0
MIN_TIMEOUT = 60.0
TEST_NAME = ".test.ts"
"""A trailmap with a file of this name in `tools/` has its tests run (the reference's rule)."""
_BUN_TEST_FILE = (".test.", "_test.", ".spec.", "_spec.")
_BUN_TEST_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_MAX_FILES_PER_RUN = 200
_FALLBACK = {
    "compilerOptions": {"target": "ES2022", "module": "ESNext", "moduleResolution": "Bundler"}
}
_OUTPUT_LIMIT = 2000


class TestOutcome(msgspec.Struct, frozen=True):
    """What the stage gives the report."""

    __test__ = False

    tests: tuple[UnitTest, ...] = ()
    findings: tuple[Finding, ...] = ()
    stats: dict[str, Any] = msgspec.field(default_factory=dict)
    reads: dict[str, tuple[str, os.stat_result | None]] = msgspec.field(default_factory=dict)


class _Suite(msgspec.Struct, frozen=True):
    """A trailmap's unit tests, ready for bun."""

    trailmap: str
    tools: Path
    files: tuple[Path, ...]
    tsconfig: Path | None
    """`--tsconfig-override` for bun (the tools' SDK mapping does not resolve), else None."""


class _Run(msgspec.Struct):
    """The test files of a suite that run this time, with their result keys."""

    suite: _Suite
    files: list[Path]
    keys: dict[Path, str]


def timeout_seconds(env: Mapping[str, str] | None = None) -> float:
    return env_milliseconds(TIMEOUT_ENV, DEFAULT_TIMEOUT, floor=MIN_TIMEOUT, env=env)


def bun_env(env: Mapping[str, str] | None = None) -> tuple[dict[str, str], str]:
    """The environment bun runs with, and the digest of what of it is part of the keys."""
    environ = os.environ if env is None else env
    passed = {k: environ[k] for k in (*LOCATION_ENV, *TEST_ENV) if k in environ}
    passed.update({"NO_COLOR": "1", "FORCE_COLOR": "0"})
    keyed = unit_test_env(environ)
    return passed, digest("trailblaze-test-env", *(f"{k}={v}" for k, v in keyed))


def is_test_file(name: str) -> bool:
    """Whether `bun test` runs a file of this name."""
    return name.endswith(_BUN_TEST_SUFFIXES) and any(m in name for m in _BUN_TEST_FILE)


def unit_test_files(tools: Path) -> list[Path]:
    """The test files of a `tools/` directory bun would run, when one is a `*.test.ts`."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(tools):
        dirnames[:] = sorted(d for d in dirnames if d != "node_modules" and not d.startswith("."))
        found.extend(Path(dirpath) / n for n in sorted(filenames) if is_test_file(n))
    return found if any(p.name.endswith(TEST_NAME) for p in found) else []


def run_unit_tests(ctx: CheckContext, discovery: Discovery) -> TestOutcome:
    """The stage (see the module docstring)."""
    options = ctx.options
    if not options.tests or (options.shard is not None and options.shard[0] != 1):
        return TestOutcome()  # with shards, the first one runs the tests
    with ctx.timer.phase("tests"):
        return _run(ctx, discovery)


def _run(ctx: CheckContext, discovery: Discovery) -> TestOutcome:
    ids = {path.resolve(): tid for tid, path in discovery.manifests.dirs.items()}
    suites: list[_Suite] = []
    tools_dirs: dict[str, Path] = {}
    for trailmap in discovery.whole.trailmaps:
        tools = trailmap.path / "tools"
        files = unit_test_files(tools) if tools.is_dir() else []
        if files:
            tid = ids.get(trailmap.path.resolve(), trailmap.dir_name)
            tools_dirs[tid] = tools
            suites.append(_Suite(tid, tools, tuple(files), None))
    if not suites:
        return TestOutcome()
    # What keys, runs and caches the tests is loaded only when a trailmap has some: a check of
    # a workspace without any never needs it.
    from trailblaze.check.unittests.inputs import Graph  # noqa: PLC0415 - tests to run
    from trailblaze.state.testresults import (  # noqa: PLC0415
        CACHED_STATUSES,
        RemoteTests,
        TestResults,
        result_key,
    )

    ws = ctx.ws
    rel = ws.rel
    try:
        bun = find_bun(install=ctx.options.install)
    except TrailblazeError as exc:
        return TestOutcome(findings=tuple(_not_run(s, rel, str(exc)) for s in suites))
    runtime = runtime_identity()
    choices = sdk_choices(tools_dirs, layout=ctx.layout, root=ws.root, ours=runtime)
    sdk: dict[Path, str] = {}
    for index, suite in enumerate(suites):
        choice = choices[suite.trailmap]
        # A bundle the reference CLI extracted may hold declarations alone: nothing to run.
        ours = choice.own or (
            choice.label.endswith(EXTRACTED) and not _has_runtime(ctx.layout.sdk_dir / "dist")
        )
        sdk[suite.tools] = runtime if ours else choice.identity
        if choice.override or (ours and not choice.own):
            suites[index] = _Suite(
                suite.trailmap, suite.tools, suite.files, _test_tsconfig(ctx, suite)
            )
    env, env_key = bun_env()
    graph = Graph(ws.root, sdk)
    # Results live on in the local cache under the keys that vouched for them (as the type
    # gate's: `signing.trust_scope`), never reused under others.
    scope = trust_scope(ws.remote_keys)
    local = (lambda key: digest(scope, key)) if scope else (lambda key: key)
    cache = TestResults(ctx.layout.test_results(), ours=ctx.layout.scratch)
    remote = RemoteTests.open(
        ctx.options.remote_cache,
        read_only=ctx.options.remote_read_only,
        public_keys=ws.remote_keys,
    )
    tests: list[UnitTest] = []
    findings: list[Finding] = []
    runs: list[_Run] = []
    cached_files = 0
    stats: dict[str, Any] = {}
    try:
        misses: list[tuple[_Suite, Path, str]] = []
        for suite in suites:
            for file in suite.files:
                key = result_key(
                    file=rel(file),
                    inputs=graph.key(file, suite.tools),
                    bun=bun.identity,
                    runtime=sdk[suite.tools],
                    env=env_key,
                )
                hit = None if ctx.options.rerun_tests else cache.get(local(key))
                if hit is None:
                    misses.append((suite, file, key))
                else:
                    cached_files += 1
                    tests.extend(_tests(suite, rel(file), hit, cached=True))
        shared: dict[str, list[CaseResult]] = {}
        if remote is not None and misses and not ctx.options.rerun_tests:
            shared = remote.fetch([key for _, _, key in misses])
            cache.put_many([(local(key), cases) for key, cases in shared.items()])
        for suite in suites:
            todo = [(f, k) for s, f, k in misses if s is suite and k not in shared]
            for s, file, key in misses:
                if s is suite and key in shared:
                    cached_files += 1
                    tests.extend(_tests(suite, rel(file), shared[key], cached=True))
            keys = dict(todo)
            runs.extend(_Run(suite, chunk, keys) for chunk in _chunks([f for f, _ in todo]))
        timeout = timeout_seconds()
        workers = max(1, min(len(runs), os.cpu_count() or 1))
        stored: list[tuple[str, Sequence[CaseResult]]] = []
        if runs:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                results = list(pool.map(lambda r: _bun_test(bun, r, env, timeout, rel), runs))
            for run, (by_file, problems) in zip(runs, results, strict=True):
                findings.extend(problems)
                for file in run.files:
                    cases = by_file.get(file)
                    if cases is None:
                        continue
                    tests.extend(_tests(run.suite, rel(file), cases, cached=False))
                    findings.extend(_failures(run.suite, rel(file), cases))
                    if all(c.status in CACHED_STATUSES for c in cases):
                        stored.append((run.keys[file], cases))
        cache.put_many([(local(key), cases) for key, cases in stored])
        if remote is not None:
            remote.store(stored)
    finally:
        cache.close()
        if remote is not None:
            stats.update(remote.close())
    count = sum(len(s.files) for s in suites)
    stats.update(
        {
            "test_files": count,
            "test_files_run": count - cached_files,
            "test_files_cached": cached_files,
            "bun_runs": len(runs),
        }
    )
    return TestOutcome(tuple(tests), tuple(findings), stats, graph.read)


def _has_runtime(dist: Path) -> bool:
    """Whether an SDK's `dist/` holds something bun can run for `@trailblaze/scripting`."""
    return any((dist / f"index{suffix}").is_file() for suffix in (".js", ".mjs", ".cjs", ".ts"))


def _chunks(files: list[Path]) -> list[list[Path]]:
    """The files of one trailmap to run, in about as many bun runs as there are cores."""
    if not files:
        return []
    per_run = min(_MAX_FILES_PER_RUN, max(1, math.ceil(len(files) / (os.cpu_count() or 1))))
    return [files[i : i + per_run] for i in range(0, len(files), per_run)]


def _test_tsconfig(ctx: CheckContext, suite: _Suite) -> Path:
    """A tsconfig sending `@trailblaze/scripting` to our SDK, extending the trailmap's own
    (or, when that one cannot be read, with the module settings a generated one has)."""
    target = ctx.layout.tests_tsconfig(suite.trailmap)
    text = override_tsconfig(suite.tools / "tsconfig.json", ctx.layout.own_sdk_dir, _FALLBACK)
    write_scratch(target, text, ctx.layout.scratch)
    return target


def _bun_test(
    bun: Bun,
    run: _Run,
    env: Mapping[str, str],
    timeout: float,
    rel: Any,
) -> tuple[dict[Path, list[CaseResult]], list[Finding]]:
    """One `bun test` over some files of one trailmap: their cases, and what went wrong."""
    from trailblaze.check.unittests.junit import JunitError, read_junit  # noqa: PLC0415 - a run

    suite = run.suite
    scratch = Path(tempfile.mkdtemp(prefix="trailblaze-bun-"))
    try:
        report = scratch / "junit.xml"
        argv = [str(bun.path), "test", "--no-install"]
        if suite.tsconfig is not None:
            argv.append(f"--tsconfig-override={suite.tsconfig}")
        argv += ["--reporter=junit", f"--reporter-outfile={report}"]
        argv += ["./" + os.path.relpath(f, suite.tools) for f in run.files]
        try:
            result = proc.run(argv, cwd=suite.tools, env=env, timeout=timeout, merge_stderr=True)
        except proc.ProcTimeout:
            message = (
                f"bun test did not finish within {timeout * 1000:.0f}ms and was stopped; set "
                f"{TIMEOUT_ENV} if the suite is known to be slow"
            )
            return {}, [
                _file_finding(suite, rel(f), message, code=codes.TEST_TIMEOUT) for f in run.files
            ]
        except proc.ProcError as exc:
            message = f"bun could not be started: {exc}"
            return {}, [
                _file_finding(suite, rel(f), message, code=codes.TEST_ERROR) for f in run.files
            ]
        try:
            by_file = read_junit(report, suite.tools) if report.exists() else {}
        except JunitError as exc:
            by_file = {}
            output = f"{exc}; {result.stdout}"
        else:
            output = result.stdout
        by_file = {Path(os.path.normpath(p)): c for p, c in by_file.items()}
        missing = [f for f in run.files if Path(os.path.normpath(f)) not in by_file]
        problems: list[Finding] = []
        if missing and not result.ok:
            if len(run.files) > 1:
                # Which of them did not load? Each again on its own (rare: a broken file).
                for file in missing:
                    alone, found = _bun_test(bun, _Run(suite, [file], run.keys), env, timeout, rel)
                    by_file.update(alone)
                    problems.extend(found)
            else:
                message = f"the test file did not run to its end: {_excerpt(output)}"
                problems.append(
                    _file_finding(suite, rel(missing[0]), message, code=codes.TEST_ERROR)
                )
        elif missing:
            for file in missing:
                by_file[Path(os.path.normpath(file))] = []  # no tests in it: a pass
        elif not result.ok and not any(
            c.status == "failed" for f in run.files for c in by_file.get(f, [])
        ):
            # Every test passed, yet bun failed: an error between tests, say.
            message = f"bun test failed outside any test: {_excerpt(output)}"
            for file in run.files:
                problems.append(_file_finding(suite, rel(file), message, code=codes.TEST_ERROR))
                by_file.pop(Path(os.path.normpath(file)), None)
        return {
            f: by_file[Path(os.path.normpath(f))]
            for f in run.files
            if Path(os.path.normpath(f)) in by_file
        }, problems
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _excerpt(output: str) -> str:
    lines = [line.rstrip() for line in output.splitlines()]
    errors = [
        line.strip()
        for line in lines
        if line.lstrip().startswith(("error:", "Error:", "SyntaxError", "TypeError"))
    ]
    text = (
        " | ".join(errors) if errors else " | ".join(line.strip() for line in lines if line.strip())
    )
    return text if len(text) <= _OUTPUT_LIMIT else text[: _OUTPUT_LIMIT - 3] + "..."


def _tests(
    suite: _Suite, path: str, cases: Sequence[CaseResult], *, cached: bool
) -> list[UnitTest]:
    return [
        UnitTest(
            path=path,
            trailmap=suite.trailmap,
            name=c.name,
            line=c.line,
            status=c.status,
            duration=c.duration,
            cached=cached,
        )
        for c in cases
    ]


def _failures(suite: _Suite, path: str, cases: Sequence[CaseResult]) -> list[Finding]:
    return [
        Finding(
            "test",
            path,
            c.line,
            c.column,
            f"{c.name}: {c.message}",
            code=codes.TEST_FAILED,
            trailmap=suite.trailmap,
        )
        for c in cases
        if c.status == "failed"
    ]


def _file_finding(suite: _Suite, path: str, message: str, *, code: str) -> Finding:
    return Finding("test", path, 1, 1, message, code=code, trailmap=suite.trailmap)


def _not_run(suite: _Suite, rel: Any, why: str) -> Finding:
    count = len(suite.files)
    return Finding(
        "infra",
        rel(suite.tools),
        1,
        1,
        f"{count} unit test file{'s' if count != 1 else ''} of trailmap '{suite.trailmap}' not "
        f"run: {why}",
        code=codes.TESTS_NOT_RUN,
        fatal=False,
        trailmap=suite.trailmap,
    )
