"""A compiler started before the run knows it needs one: for a check of a few edited trails.

A check of one edited trail in a large workspace (`check.narrow`) spends most of its time
before the compile (the pipeline's import, the last check's record read) and then starts one
`tsc` that loads the same program every time: the ES library, our SDK and zod, some 140 files
parsed and bound for one module of a few dozen lines. `PrimedCompiler` starts TypeScript 7's
language server (`tsserver.py`) on a thread of its own as soon as a command knows its no-op
key missed, and has it load that program while the pipeline imports, on the other core. When
the run's type gate then has a few modules to compile, each is checked in the loaded program in
a few milliseconds instead of a new process's fifty.

Where the modules are checked. The program's project is the `tsconfig.json` written in the type
gate's directory (`Layout.root`) with the gate's compiler options as they are, listing only
placeholder modules of ours: `primed/trail.ts`, `primed/_/trail.ts`, ..., one per directory
depth below that directory. A trail's generated module is checked as the placeholder of its own
depth (its text sent to the server, nothing written): its relative import of its surface
resolves to the same file, and every type the compiler prints names other modules by the same
relative paths as it would from the module's own place. The first placeholder imports our SDK,
so that loading it loads the library, the SDK and zod; the surfaces are loaded by the first
module that imports one (a few milliseconds).

The verdict is proven as the warm compiler's is (`tsserver.check_text`: the canaries). Anything
the primed compiler cannot prove (it did not start, died, answered late or without its
canaries, a syntax error in a module, a module deeper than the placeholders, more modules than
it takes) is given back to the caller, who compiles the batch with a new process as before: a
primed compile only ever saves time, and the report is the one the command gives without it.

What it read. A language server does not list the files of its program as `tsc --listFiles`
does, and the run's keys must cover every file a verdict depends on (`reads.py`). The program
here is our placeholders (files of ours in the type gate's directory, which are never reads,
as a batch's canary is not) and the closure of each module's one import: its trailmap's
surface, the declarations it imports, our SDK, the library. That closure is what every earlier
compile of the trailmap's modules listed, and the reads among it are the ones the preparation
told before this run and stamps now (`ReadFiles.unchanged`). So a primed result lists nothing
new: its verdicts are keyed, cached and recorded as a compile's that listed those files. What
no stamp sees is the same for both: a file that appears where module resolution looked and
found nothing before; only a compile that lists its files sees it, and the next full check's
do.

Forks while the pipeline imports. The server's thread starts its process while the main thread
imports the pipeline. A module that registers fork hooks (`os.register_at_fork`) while another
thread is between a fork's hooks makes CPython run an after-fork hook whose before-fork hook
never ran: importing `concurrent.futures.thread` then (the type gate's thread pools) printed
"Exception ignored ... release unlocked lock" with a traceback. So this module imports it
first, before any thread of it exists; `tests/check/typegate/test_primed.py` checks that the
pipeline's import registers no fork hook after this one's.
"""

from __future__ import annotations

import concurrent.futures.thread  # noqa: F401 - its fork hooks, before our threads (above)
import json
import queue
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

from trailblaze.check.typegate.proof import Diagnostic
from trailblaze.check.typegate.proof import abs_path as _abs
from trailblaze.check.typegate.settings import COMPILER_OPTIONS, timeout_seconds
from trailblaze.check.typegate.tsserver import (
    TsServer,
    check_text,
    initialize,
)
from trailblaze.errors import TrailblazeError
from trailblaze.options import CheckOptions
from trailblaze.state.scratch import Layout, write_scratch
from trailblaze.toolchain.compilers import Compiler, find_compiler

if TYPE_CHECKING:
    from trailblaze.check.typegate.jobs import GateResult, Job

PRIMED_DIR = "primed"
"""The placeholders' directory, in the type gate's directory."""
PROJECT = "tsconfig.json"
"""The primed program's project, in the type gate's directory (the one a server finds)."""
MAX_DEPTH = 16
"""Placeholders for modules this many directories deep below the type gate's directory: a
deeper one is compiled as before."""
MAX_JOBS = 16
"""The most modules of one batch it checks (one at a time): a larger batch, a check of many
edited trails, goes to one new compiler process as before."""
PRIMED_TIMEOUT = 10.0
"""The longest a primed compile may take (less when the type gate's own timeout is shorter):
past it the batch is compiled as before, so a compiler whose server stalls costs a run this much
more, never a verdict."""
LOAD_WAIT = 0.5
"""The longest a batch waits for the server to finish loading (it normally has, some 0.1 s
after its start, long before the first module is generated): about what a new compiler
process takes for the batch."""
PROCESSORS = 2
"""The primed server's GOMAXPROCS (`_load`)."""
_PRIMER = 'import type {} from "@trailblaze/scripting";\nexport {};\n'
"""The first placeholder's text while the program loads: our SDK, and zod through it."""
_PLACEHOLDER = "export {};\n"
_STOP = None


def prime(scratch: Path, options: CheckOptions) -> PrimedCompiler | None:
    """A compiler started now, before the pipeline loads, for a run of the workspace whose
    scratch directory is `scratch` that may compile only a few edited trails; None when the run
    cannot be one (no type gate, a shard, no record of a complete check to narrow from) or no
    compiler is found (the run itself says why)."""
    if not options.typecheck or options.shard is not None:
        return None
    layout = Layout(scratch)
    if not layout.last_run.exists():
        return None
    try:
        compiler = find_compiler()
    except TrailblazeError:
        return None
    timeout = min(timeout_seconds(), PRIMED_TIMEOUT)
    return PrimedCompiler.start(compiler, layout, timeout=timeout)


def placeholder(root: Path, depth: int) -> Path:
    """The placeholder module `depth` directories below `root` (1: `primed/trail.ts`)."""
    return root.joinpath(PRIMED_DIR, *(["_"] * (depth - 1)), "trail.ts")


class PrimedCompiler:
    """One language server started now, for the type gate's compiles later (module docstring).

    `start` returns at once; the server starts and loads its program on a thread of its own,
    which it lives as long as (`proc.spawn`). `__call__` gives a batch's result, or None when
    the caller is to compile the batch as before. `close` stops the server; until it is called
    the thread waits for batches.
    """

    def __init__(self, compiler: Compiler, layout: Layout, *, timeout: float) -> None:
        self.compiler = compiler
        self.layout = layout
        self.timeout = timeout
        self.declined: str | None = None
        """Why the last batch was given back, if it was (for the run's stats and tests)."""
        self.checked = 0
        """How many modules it checked with a proven answer."""
        self._batches: queue.SimpleQueue[tuple[list[Job], Future[GateResult | None]] | None] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None
        self._server: TsServer | None = None
        self.pid: int | None = None
        """The server's process id once started (it may have ended since)."""
        self._failed: str | None = None
        self._loaded = threading.Event()
        """Set once the server loaded its program, or failed to."""
        self._lock = threading.Lock()
        self._starting: TsServer | None = None
        self._closed = False

    @classmethod
    def start(cls, compiler: Compiler, layout: Layout, *, timeout: float) -> PrimedCompiler | None:
        """A primed compiler for `layout`'s type gate, loading now; None when `compiler` has no
        language server (before TypeScript 7)."""
        if not compiler.native:
            return None
        primed = cls(compiler, layout, timeout=timeout)
        thread = threading.Thread(target=primed._serve, name="primed-tsc", daemon=True)
        primed._thread = thread
        thread.start()
        return primed

    def __call__(self, jobs: list[Job], compiler: Compiler) -> GateResult | None:
        """The batch checked in the loaded program; None: compile it as before (`declined`)."""
        reason = self._refusal(jobs, compiler)
        if reason is None and not self._loaded.wait(LOAD_WAIT):
            # Slower than a new compiler would be (a busy machine, a server that stalls): the
            # batch does not wait for it.
            reason = f"not loaded within {LOAD_WAIT:g} s"
        if reason is not None:
            self.declined = reason
            return None
        done: Future[GateResult | None] = Future()
        self._batches.put((jobs, done))
        try:
            # The thread answers within the deadline it sets itself, or stops the server.
            return done.result(timeout=self.timeout + 5.0)
        except TimeoutError:
            self.declined = f"no answer within {self.timeout:g} s"
            self.close()
            return None

    def close(self) -> None:
        """Stop the server (its thread ends, and the server with it). A server still loading is
        killed now: its thread, waiting for it, is not left waiting until its deadline."""
        with self._lock:
            self._closed = True
            starting = self._starting
        if starting is not None and not self._loaded.is_set():
            starting.process.kill()
        self._batches.put(_STOP)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for its thread to end (after `close`); whether it did."""
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def _refusal(self, jobs: list[Job], compiler: Compiler) -> str | None:
        if self._closed:
            return "closed"  # a batch queued behind the stop would never be answered
        if compiler != self.compiler:
            return "another compiler"
        if not jobs or len(jobs) > MAX_JOBS:
            return f"{len(jobs)} modules"
        if self._thread is None or not self._thread.is_alive():
            return self._failed or "stopped"
        for job in jobs:
            depth = self._depth(job)
            if depth is None or depth < 1:
                return f"{job.path}: its module is not below the type gate's directory"
            if depth > MAX_DEPTH:
                return f"{job.path}: its module is {depth} directories deep"
        return None

    def _depth(self, job: Job) -> int | None:
        try:
            rel = _abs(job.file).relative_to(_abs(self.layout.root))
        except ValueError:
            return None
        return len(rel.parts) - 1

    # -- its thread -----------------------------------------------------------------------------

    def _serve(self) -> None:
        try:
            self._server = self._load()
        except Exception as exc:  # the caller compiles as before; `declined` says why
            self._failed = f"did not start: {str(exc) or type(exc).__name__}"
        self._loaded.set()
        try:
            while True:
                item = self._batches.get()
                if item is _STOP:
                    return
                jobs, done = item
                if self._server is None:
                    self.declined = self._failed
                    done.set_result(None)
                    continue
                try:
                    done.set_result(self._check(self._server, jobs))
                except Exception as exc:  # the caller compiles as before; `declined` says why
                    self.declined = f"failed: {str(exc) or type(exc).__name__}"
                    self._stop()
                    done.set_result(None)
        finally:
            self._stop()

    def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
            self._failed = self._failed or "stopped"

    def _load(self) -> TsServer:
        root = self.layout.root
        scratch = self.layout.scratch
        docs = [placeholder(root, depth) for depth in range(1, MAX_DEPTH + 1)]
        for doc in docs:
            write_scratch(doc, _PLACEHOLDER, scratch)
        project = {
            "compilerOptions": COMPILER_OPTIONS,
            "files": [doc.relative_to(root).as_posix() for doc in docs],
        }
        write_scratch(root / PROJECT, json.dumps(project, indent=1) + "\n", scratch)
        deadline = time.monotonic() + self.timeout
        # Two of the runtime's processors, not one: the pipeline loads on the other core while
        # the program loads, but when the edited modules come the main thread only waits for
        # them. With one, each of the first three checks after the load took 20-30 ms (the
        # collector and the server's own goroutines share that one processor with the check);
        # with two, the first took 9-14 ms and the next ones 3-4 ms (10,000 trails).
        server = TsServer(self.compiler, root, cores=PROCESSORS)
        self.pid = server.process.pid
        with self._lock:
            self._starting = server
            closed = self._closed
        if closed:  # closed while it started: `close` saw no server to stop
            server.close()
        try:
            initialize(server, quiet=True, deadline=deadline)
            first = docs[0].as_uri()
            # The primer's own diagnostics are of no interest: asking for them makes the
            # server load the program now, not when the first module comes.
            server.show(first, _PRIMER)
            server.request("textDocument/diagnostic", {"textDocument": {"uri": first}}, deadline)
        except BaseException:
            server.close()
            raise
        return server

    def _check(self, server: TsServer, jobs: list[Job]) -> GateResult | None:
        from trailblaze.check.typegate.jobs import GateResult  # noqa: PLC0415 - loaded by then
        from trailblaze.check.typegate.mapping import map_diagnostics  # noqa: PLC0415

        deadline = time.monotonic() + self.timeout
        diagnostics: list[Diagnostic] = []
        for job in jobs:
            depth = self._depth(job)
            assert depth is not None  # `_refusal`
            file = _abs(job.file)
            found = check_text(
                server,
                placeholder(self.layout.root, depth).as_uri(),
                file,
                file.read_text("utf-8"),
                deadline,
            )
            if any(d.code.startswith("TS1") for d in found):
                # A syntax error: the compile as before takes the module out with its reason.
                self.declined = f"{job.path}: a syntax error"
                return None
            diagnostics.extend(found)
        result = GateResult()  # nothing listed beyond the known reads: see the module docstring
        result.compiler_runs += 1
        result.files_compiled.extend(job.path for job in jobs)
        map_diagnostics(jobs, diagnostics, self.layout, result)
        self.checked += len(jobs)
        self.declined = None
        return result
