"""A warm compiler for the type gate: TypeScript 7's language server, kept open between runs.

A new `tsc` process per compile costs its start and the load of the program (the surfaces, our
SDK, the libraries) every time, some 100 ms; the same compiler kept open as a language server
(`tsc --lsp --stdio`) checks an edited module in a few. `WarmCompiler` is a `BatchCompile`
(`check.phase`) for a caller that checks again and again (the language server's session): each
job's generated module is opened in it (or changed, when it was open) and its diagnostics
pulled (`textDocument/diagnostic`).

The verdict stays proven, as the command line's is (`proof.py`), by what the same answer holds:

- the module as sent ends with three canary lines of our own: one assigns a string to a
  literal type made of two fresh random words (its error must come back, with both words, on
  its line: the answer is about this very text, and the checker checked it); one assigns
  `string | undefined` to `string` (an error under `strict` only) and one calls
  `Array.prototype.findLast` (an error with the gate's `lib: ES2022` only, not with the
  compiler's defaults): the module was compiled with the gate's options, in the project of the
  `tsconfig.json` written beside it, not in an inferred project;
- every other diagnostic is mapped as the command line maps it (`mapping.py`): an import that
  does not resolve is a diagnostic like any, so a call is never checked against `any` unseen,
  and a syntax error takes its module out as "generated code does not parse".

Anything else (no answer within the timeout, a compiler that ended, an answer without both
canaries) fails the batch with its reason: its trails are reported not type-checked, never
passed, and the compiler is started again for the next run. A warm compiler does not list the
files it read, so none of its verdicts is put in the result cache (`GateResult.unlisted`).

A compiler older than TypeScript 7 has no such server: its batches go to `compile_jobs`.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from trailblaze.check.typegate.compilation import compile_jobs
from trailblaze.check.typegate.jobs import GateResult, Job
from trailblaze.check.typegate.mapping import map_diagnostics
from trailblaze.check.typegate.mapping import show as _show
from trailblaze.check.typegate.preparation import Prepared
from trailblaze.check.typegate.proof import Diagnostic
from trailblaze.check.typegate.proof import abs_path as _abs
from trailblaze.check.typegate.settings import COMPILER_OPTIONS, timeout_seconds
from trailblaze.check.typegate.tsserver import (
    TsServer,
    WarmError,
    check_text,
    start_server,
)
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolchain.proc import ProcError

WARM_TIMEOUT = 30.0
"""The longest a warm compile may take (less when the type gate's own timeout is shorter): the
editor waits for it. A compiler that takes longer is killed and started again."""
TSCONFIG = "tsconfig.json"
"""The project the warm compiler finds for the generated modules (beside them)."""
GOGC = "400"
"""The Go collector's target for the warm compiler (unless the environment sets `GOGC`): each
edit builds a new checker, and at Go's default (100) the collections took about a seventh of
the compiler's CPU per edit and doubled its 95th percentile; its heap stays near 100 MB
(measured at 10,000 trails: 52 MB at the default)."""


class WarmCompiler:
    """The type gate's compiler for one layout, kept open between runs (see the module
    docstring). A call compiles on the calling thread, one call at a time: the compiler dies
    with the thread that started it (`proc.spawn`), so it is started again when a call comes
    from another thread (the language server makes every call from its one check thread, which
    lives as long as the server). No hop to a thread of its own: on a busy machine each wake of
    another thread may wait for a core, on every edit."""

    def __init__(self, layout: Layout, *, timeout: float | None = None) -> None:
        self.layout = layout
        self.timeout = min(timeout if timeout is not None else timeout_seconds(), WARM_TIMEOUT)
        self.starts = 0
        """How many compiler processes it started (one, unless one died or was stopped)."""
        self._server: TsServer | None = None
        self._lock = threading.Lock()
        self._quiet = True
        """Whether the compiler is asked not to log (until one refuses it)."""

    def __call__(self, jobs: list[Job], prepared: Prepared) -> GateResult:
        with self._lock:
            return self._compile(jobs, prepared.compiler)

    def restart(self) -> None:
        """Stop the compiler (its inputs changed on disk): the next call starts another."""
        with self._lock:
            self._stop()

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    def _compile(self, jobs: list[Job], compiler: Compiler) -> GateResult:
        if not compiler.native:
            return compile_jobs(jobs, compiler, self.layout, timeout=self.timeout)
        result = GateResult(unlisted=True)
        result.compiler_runs += 1
        result.files_compiled.extend(job.path for job in jobs)
        deadline = time.monotonic() + self.timeout
        checked: list[Job] = []
        diagnostics: list[Diagnostic] = []
        for job in jobs:
            try:
                found = self._check(job, compiler, deadline)
            except TimeoutError:
                self._stop()
                result.fail(
                    [j for j in jobs if j not in checked],
                    f"the warm compiler gave no answer within {self.timeout:g} s",
                )
                break
            except (WarmError, ProcError, OSError) as exc:
                self._stop()
                result.fail([j for j in jobs if j not in checked], str(exc))
                break
            syntax = [d for d in found if d.code.startswith("TS1")]
            if syntax:
                result.fail(
                    [job], f"generated code does not parse: {_show(syntax[0], self.layout)}"
                )
                checked.append(job)
                continue
            checked.append(job)
            diagnostics.extend(found)
        proven = [job for job in checked if job.path not in result.failed]
        if proven:
            map_diagnostics(proven, diagnostics, self.layout, result)
        return result

    def _server_for(self, compiler: Compiler) -> TsServer:
        server = self._server
        if server is not None and (
            server.compiler != compiler
            or server.thread is not threading.current_thread()
            or server.process.poll() is not None
        ):
            self._stop()
            server = None
        if server is None:
            root = self.layout.root
            root.mkdir(parents=True, exist_ok=True)
            config = {"compilerOptions": COMPILER_OPTIONS, "include": ["trails/**/*.ts"]}
            _write_if_changed(root / TSCONFIG, json.dumps(config, indent=1) + "\n")
            try:
                server = self._start(compiler, root, quiet=self._quiet)
            except (WarmError, ProcError, OSError):
                if not self._quiet:
                    raise
                # A compiler that refuses the quiet option (another 7.x) ends or says so at
                # once: started again without it. (One that stalls would stall without it.)
                self._stop()
                self._quiet = False
                server = self._start(compiler, root, quiet=False)
        return server

    def _start(self, compiler: Compiler, root: Path, *, quiet: bool) -> TsServer:
        self.starts += 1  # a process started, whether it answers or not
        deadline = time.monotonic() + self.timeout
        self._server = start_server(compiler, root, quiet=quiet, deadline=deadline, gogc=GOGC)
        return self._server

    def _check(self, job: Job, compiler: Compiler, deadline: float) -> list[Diagnostic]:
        """The job's module checked in the warm compiler: its diagnostics, once proven."""
        server = self._server_for(compiler)
        file = _abs(job.file)
        return check_text(server, file.as_uri(), file, file.read_text("utf-8"), deadline)


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text("utf-8") == text:
            return
    except OSError:
        pass
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(text, "utf-8")
    os.replace(partial, path)
