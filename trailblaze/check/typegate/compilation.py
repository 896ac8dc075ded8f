"""Batches of generated trail modules, each through one proven compiler run."""

from __future__ import annotations

import msgspec

from trailblaze.check.typegate.jobs import GateResult, Job
from trailblaze.check.typegate.mapping import map_diagnostics
from trailblaze.check.typegate.mapping import show as _show
from trailblaze.check.typegate.proof import Diagnostic, compile_listed
from trailblaze.check.typegate.proof import abs_path as _abs
from trailblaze.check.typegate.settings import BATCH_SIZE, COMPILER_OPTIONS
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolchain.proc import ProcError, ProcTimeout


class Compiling(msgspec.Struct, frozen=True):
    """How every compiler run of one `compile_jobs` is made."""

    compiler: Compiler
    layout: Layout
    timeout: float
    extra: tuple[str, ...] = ()
    """Compiler arguments beyond the program (`--singleThreaded`)."""


class CompilerRun(msgspec.Struct, frozen=True):
    """What one proven compiler run said: its diagnostics, or why it could not run."""

    diagnostics: tuple[Diagnostic, ...] = ()
    error: str | None = None
    """Why nothing it said counts (a timeout, a crash, an unproven run); None when it ran."""


def compile_jobs(
    jobs: list[Job],
    compiler: Compiler,
    layout: Layout,
    *,
    timeout: float,
    single_threaded: bool = False,
) -> GateResult:
    """Compile every job (cache misses), in bounded batches, and map what tsc says.

    `single_threaded` (TypeScript 7 only) when the cores are busy with something else, such as
    the parse workers of a cold check: the native compiler's parallel checkers then cost twice
    the CPU time (each builds its own view of the shared surfaces) for no gain in wall time.
    """
    result = GateResult()
    extra = ("--singleThreaded",) if single_threaded and compiler.native else ()
    how = Compiling(compiler=compiler, layout=layout, timeout=timeout, extra=extra)
    for start in range(0, len(jobs), BATCH_SIZE):
        _compile_batch(jobs[start : start + BATCH_SIZE], how, result)
    return result


def _compile_batch(batch: list[Job], how: Compiling, result: GateResult) -> None:
    layout = how.layout
    pending = list(batch)
    for _attempt in range(3):
        if not pending:
            return
        run = _run_tsc(pending, how, result)
        if run.error is not None:
            result.fail(pending, run.error)
            return
        diagnostics = run.diagnostics
        by_file = {_abs(job.file): job for job in pending}
        syntax = [d for d in diagnostics if d.code.startswith("TS1")]
        if syntax:
            # A syntax error hides every semantic error of the program: take out the files that
            # have one (our generator wrote invalid code: infrastructure) and compile the rest.
            broken = {by_file[d.file].path for d in syntax if d.file in by_file}
            if not broken:
                result.fail(
                    pending,
                    f"syntax error outside the generated trails: {_show(syntax[0], layout)}",
                )
                return
            for job in pending:
                if job.path in broken:
                    first = next(d for d in syntax if d.file == _abs(job.file))
                    result.fail([job], f"generated code does not parse: {_show(first, layout)}")
            pending = [job for job in pending if job.path not in broken]
            continue
        map_diagnostics(pending, diagnostics, layout, result)
        return
    # Still syntax errors after every attempt: what is left was not checked.
    result.fail(pending, "the compiler kept reporting syntax errors")


def _run_tsc(jobs: list[Job], how: Compiling, result: GateResult) -> CompilerRun:
    result.compiler_runs += 1
    result.files_compiled.extend(job.path for job in jobs)
    try:
        compiled = compile_listed(
            [job.file for job in jobs],
            COMPILER_OPTIONS,
            how.compiler,
            how.layout.root,
            timeout=how.timeout,
            prefix="tsconfig.",
            extra=how.extra,
        )
    except ProcTimeout as exc:
        return CompilerRun(error=f"tsc timed out after {exc.timeout:.0f} s")
    except ProcError as exc:  # Unproven included
        return CompilerRun(error=f"tsc could not run: {exc}")
    result.listed.update(compiled.listed)
    return CompilerRun(diagnostics=tuple(compiled.diagnostics))
