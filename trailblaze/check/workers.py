"""Parsing and generating many trails at once, on every core when it pays.

A cold check of thousands of trails is dominated by Python work (YAML composing, the parse
gate, code generation). It is spread over worker processes (forked, so the read-only context
is inherited, not pickled), in chunks; small batches stay in the calling process, where
starting workers would cost more than it saves.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from trailblaze.check.rows import TrailRecord
from trailblaze.finding import Finding
from trailblaze.fsutil import Stamp
from trailblaze.generate.codegen import generate
from trailblaze.generate.linetable import Lines
from trailblaze.state.gcpause import gc_off_for_good, gc_paused
from trailblaze.state.keys import digest
from trailblaze.state.scratch import Layout, write_module
from trailblaze.trail.model import ParseOutcome
from trailblaze.trail.parse import file_error, parse_trail
from trailblaze.trail.runif import runif_findings
from trailblaze.yaml.node import YamlError, decode
from trailblaze.yaml.text import unreadable

PARALLEL_MIN = 256
"""Below this many trails, one process is faster than starting workers."""
CHUNK = 64


class Context(msgspec.Struct, frozen=True):
    """Everything a worker needs, set before the workers fork."""

    strict: bool
    schemas: Mapping[str, Mapping[str, Mapping[str, Any] | None]]
    """Per type-check target: tool name to input JSON Schema. Trails of other targets are only parsed."""
    defs: Mapping[str, Any]
    layout: Layout
    shipped_runif: frozenset[str] = frozenset()
    """The targets whose trailmap ships its own `runIf` (`resolution.ships_runif`): their
    trails' `runIf` calls are ordinary calls, and our runIf grammar does not apply."""


class Item(msgspec.Struct, frozen=True):
    """A trail file for a parse worker: its path, stamp and bytes, or where to read them."""

    path: str
    stamp: Stamp | None
    content: str
    """The digest of `data`; empty when `file` is to be read."""
    data: bytes | None
    file: str | None = None
    """The file to read when `data` is None: read by the worker (a new trail of a large
    parse), so that ten thousand reads are not made one by one before the first parse."""


class Parsed(msgspec.Struct, frozen=True):
    """A trail as a parse worker hands it back."""

    record: TrailRecord
    module: str | None = None
    """Digest of the generated module (already written), None when none was generated. The
    text stays in the process that wrote it: sending it back cost more than hashing it."""
    lines: Lines | None = None
    """Its line table; from a worker process, still encoded (`linetable.Lines`)."""
    lints: tuple[Finding, ...] = ()
    """What the generator found about values it converted (`quoted-number`): part of the
    trail's type result."""


class _Sent(msgspec.Struct, frozen=True, array_like=True):
    """A `Parsed` as a worker process sends it: the line table encoded on its own, so that
    the main process decodes it only if it needs it."""

    record: TrailRecord
    module: str | None
    lines: msgspec.Raw
    """The line table, encoded (`_NONE` for none: msgspec takes a `Raw` alone, not in a union)."""
    lints: tuple[Finding, ...]


_NONE = msgspec.Raw(msgspec.msgpack.encode(None))


def parse_bytes(rel: str, data: bytes, *, strict: bool) -> ParseOutcome:
    try:
        text = decode(data)
    except YamlError as exc:
        return file_error(rel, exc)
    return parse_trail(rel, text, strict=strict)


def unreadable_record(path: str, error: YamlError, *, strict: bool) -> TrailRecord:
    """The record of a trail file that could not be read (no stamp, no content: the next run
    looks at it again), in the main process or in the worker that read it."""
    return TrailRecord.from_outcome(
        path=path, stamp=None, content="", outcome=file_error(path, error), runif=[], strict=strict
    )


def _read(item: Item) -> Item | YamlError:
    """The item with its bytes and their digest, or why the file cannot be read."""
    assert item.file is not None
    try:
        with open(item.file, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return unreadable(exc)
    return Item(path=item.path, stamp=item.stamp, content=digest(data), data=data)


def process(item: Item, ctx: Context) -> Parsed:
    """Parse one trail; generate its module when its target is type-checked."""
    if item.data is None:
        read = _read(item)
        if isinstance(read, YamlError):
            return Parsed(record=unreadable_record(item.path, read, strict=ctx.strict))
        item = read
    assert item.data is not None
    outcome = parse_bytes(item.path, item.data, strict=ctx.strict)
    trail = outcome.trail
    ours = trail is None or trail.config.target not in ctx.shipped_runif
    runif, branches = runif_findings(trail, ours=ours) if trail is not None else ([], ())
    record = TrailRecord.from_outcome(
        path=item.path,
        stamp=item.stamp,
        content=item.content,
        outcome=outcome,
        runif=runif,
        strict=ctx.strict,
        branches=branches,
        runif_shipped=not ours,
    )
    target = trail.config.target if trail is not None else None
    if trail is None or target is None or target not in ctx.schemas or record.calls == 0:
        return Parsed(record=record)
    generated = generate(
        trail,
        ctx.layout.surface_import(item.path, target),
        ctx.schemas[target],
        ctx.defs,
        ours=ours,
    )
    # Each worker writes what it generated: creating a file waits on the disk, and the waits
    # overlap with the other workers' parsing.
    write_module(ctx.layout.trail_file(item.path), generated.text, ctx.layout.scratch)
    # The module's key covers the trail's content too: the line table (YAML lines and columns)
    # is not in the generated text, and a result must not outlive the positions it points at.
    module = digest(generated.text, item.content)
    return Parsed(record=record, module=module, lines=generated.rows, lints=generated.lints)


_WORKER: dict[str, Context] = {}
"""The context of a worker process, installed once by `_init` when it starts."""


def _init(ctx: Context, parent: int) -> None:
    _WORKER["ctx"] = ctx
    threading.Thread(target=_watch, args=(parent,), name="parent-watch", daemon=True).start()
    # Parsing allocates many small, long-lived objects: the cyclic collector would scan them
    # again and again (it doubles the time per trail) and finds nothing to free.
    gc_off_for_good()
    # A worker composes nothing but trails, one at a time: it may compose in one pass.
    from trailblaze.yaml import lean  # noqa: PLC0415 - a worker's; the main process composes as usual

    lean.enable()


PARENT_POLL = 0.1
"""Seconds between a worker's looks at its parent."""


def _watch(parent: int) -> None:
    """End this worker as soon as its parent is gone, however the parent died.

    A parent killed with SIGKILL closes nothing: the worker would wait on its task pipe forever
    (its own copy of the write end keeps it open). When the parent dies the worker is adopted
    by another process, so its parent id changes; that is checked, not a signal that a thread
    of the parent may trigger by ending (`PR_SET_PDEATHSIG` fires when the forking thread exits).
    """
    while os.getppid() == parent:
        time.sleep(PARENT_POLL)
    os._exit(1)


def _work(items: list[Item]) -> bytes:
    """A chunk's results, encoded by msgspec against their types: a third of the cost of
    pickling them, here and in the process that reads them (`_decode`)."""
    ctx = _WORKER["ctx"]
    encode = _ENCODER.encode
    sent = []
    for item in items:
        parsed = process(item, ctx)
        sent.append(
            _Sent(parsed.record, parsed.module, msgspec.Raw(encode(parsed.lines)), parsed.lints)
        )
    return encode(sent)


_ENCODER = msgspec.msgpack.Encoder()


@functools.cache
def _decoder() -> msgspec.msgpack.Decoder[list[_Sent]]:
    """Made on first use: not on a one-edit check's path, which parses without workers."""
    return msgspec.msgpack.Decoder(list[_Sent])


def _decode(chunk: bytes) -> list[Parsed]:
    return [
        Parsed(s.record, s.module, None if s.lines == _NONE else s.lines, s.lints)
        for s in _decoder().decode(chunk)
    ]


def _workers() -> int:
    """Worker processes: one per core (measured: more did not help on 2 cores), or TRAILBLAZE_JOBS."""
    override = os.environ.get("TRAILBLAZE_JOBS", "").strip()
    if override.isdigit() and int(override) > 0:
        return int(override)
    return min(os.cpu_count() or 1, 8)


def _can_fork() -> bool:
    """Whether worker processes can be forked here. multiprocessing is imported only when the
    parse is large enough for workers: not for the trail or two of an edit."""
    import multiprocessing  # noqa: PLC0415

    return "fork" in multiprocessing.get_all_start_methods()


def process_many(
    items: Sequence[Item],
    ctx: Context,
    *,
    progress: Callable[[int], None] | None = None,
    on_chunk: Callable[[list[Parsed]], None] | None = None,
) -> list[Parsed]:
    """`process` for every item, in order; in worker processes when there are many.

    `on_chunk` sees the results as they arrive (their modules already written), so the caller
    can start compiling while the rest is parsed.
    """
    started = start_many(items, ctx)
    if started is not None:
        return started.collect(progress=progress, on_chunk=on_chunk)
    out = []
    with gc_paused():
        for i, item in enumerate(items):
            out.append(process(item, ctx))
            if progress is not None and i % CHUNK == CHUNK - 1:
                progress(CHUNK)
    if on_chunk is not None:
        on_chunk(out)
    return out


def start_many(items: Sequence[Item], ctx: Context) -> Started | None:
    """Worker processes parsing `items` from now on, their results taken by `collect`; None
    when there are too few for workers (or no fork here): `process_many` parses them itself.

    The caller does other work meanwhile (a cold check writes its surfaces), and closes what
    it started on every path (`Started.close`), collected or not.
    """
    chunks = [list(items[i : i + CHUNK]) for i in range(0, len(items), CHUNK)]
    # At most one worker per chunk: a fork pool starts every worker at once, so a large
    # TRAILBLAZE_JOBS would fork that many processes for nothing (or exhaust the machine).
    # (Not asked for a few trails: the core count costs a read of /sys on every edit.)
    workers = min(_workers(), len(chunks)) if len(items) >= PARALLEL_MIN else 1
    if workers < 2 or not _can_fork():
        return None
    return Started(chunks, ctx, workers)


class Started:
    """Worker processes at work on chunks of items (`start_many`)."""

    def __init__(self, chunks: list[list[Item]], ctx: Context, workers: int) -> None:
        import multiprocessing  # noqa: PLC0415 - see `_can_fork`
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

        fork = multiprocessing.get_context("fork")  # the context is inherited, not pickled
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            workers, mp_context=fork, initializer=_init, initargs=(ctx, os.getpid())
        )
        try:
            self._results = self._pool.map(_work, chunks)
        except BaseException:
            self.close()
            raise

    def collect(
        self,
        *,
        progress: Callable[[int], None] | None = None,
        on_chunk: Callable[[list[Parsed]], None] | None = None,
    ) -> list[Parsed]:
        """Every item's result, in order, each chunk shown to `on_chunk` as it arrives; the
        workers are gone when it returns (or raises)."""
        results: list[Parsed] = []
        try:
            with gc_paused():
                for encoded in self._results:
                    chunk_result = _decode(encoded)
                    results.extend(chunk_result)
                    if on_chunk is not None:
                        on_chunk(chunk_result)
                    if progress is not None:
                        progress(len(chunk_result))
        finally:
            self.close()
        return results

    def close(self) -> None:
        """Stop the workers (what they have not started is dropped) and wait for them: no
        worker writes a module after this returns. Idempotent."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
