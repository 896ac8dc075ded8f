"""The run entries of one remote cache (`RunCache`: lookup, store, shards put together) and
`cached_run`, which the CLI calls in place of `check.run.run_check`.

A hit never loads the check pipeline: the heavy imports stay inside the functions.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from trailblaze.fsutil import Stamp, stamp_of, write_if_changed
from trailblaze.generate.owners import generated_text, not_ours
from trailblaze.options import CheckOptions
from trailblaze.report.escaping import printable
from trailblaze.report.record import Report
from trailblaze.runs.runcache.body import (
    BadBody,
    Body,
    Outputs,
    decode_body,
    encode_body,
    files_entry,
    inflate,
    proven,
    refused,
    report_of,
)
from trailblaze.runs.runcache.keys import RUN_FORMAT, RunInputs, index_key, run_inputs, stat_inputs
from trailblaze.state.gcpause import gc_paused
from trailblaze.state.scratch import Layout
from trailblaze.state.store import STATS, Store
from trailblaze.workspace import Scan, Workspace

Warn = Callable[[str], None]

READS_BYTES = 256 << 20
"""The most bytes a reader hashes to see whether the files a run entry's compilers read are
here as they were there (a type's declarations are far less): past it the entry is a miss, and
the check runs here. A hostile entry naming large files costs this much and no more."""


def _stderr(message: str) -> None:
    print(f"trailblaze: warning: {message}", file=sys.stderr, flush=True)


class RunCache:
    """The run entries of one remote cache for one check (see the package docstring)."""

    def __init__(
        self,
        options: CheckOptions,
        ws: Workspace,
        inputs: RunInputs | None = None,
        warn: Warn | None = None,
    ) -> None:
        from trailblaze.state.remote import HttpCache, RemoteConfig  # noqa: PLC0415

        config = RemoteConfig.resolve(
            options.remote_cache, read_only=options.remote_read_only, public_keys=ws.remote_keys
        )
        assert config is not None
        self.config = config
        self.http = HttpCache(config)
        self.ws = ws
        self.options = options
        self._inputs = inputs
        self._warn = warn or _stderr
        self.fault: str | None = None
        self.stats: dict[str, Any] = {"remote_run": "miss"}
        if inputs is not None:
            self.begin(inputs)
        self._blobs: dict[str, bytes] = {}
        """The files' bodies fetched in this run, by digest (every shard names the same one)."""
        self._writer: _Writer | None = None
        self._trails: dict[str, list[Any]] = {}
        """Entry key -> the trails of its report as stored (each checked by `report_of`)."""
        self.reads: dict[str, tuple[str, os.stat_result | None]] = {}
        """The files the compilers of the entries taken read beyond the inputs (absolute
        path -> token and `os.stat`), each found as the entry says (`_reads_hold`)."""

    @property
    def inputs(self) -> RunInputs:
        assert self._inputs is not None, "RunCache.begin first"
        return self._inputs

    def begin(self, inputs: RunInputs) -> None:
        """The keys of this run, once `run_inputs` has made them (`surfaces` first)."""
        self._inputs = inputs
        self.stats["remote_run_key"] = inputs.entry_key

    def surfaces(self, key: str, outputs: dict[str, Path], ignores: dict[str, str | None]) -> None:
        """`run_inputs`' `surfaces`: the files a run of these trailmaps generates, fetched by
        their own entry (`ac/<key>`, stored with every run entry) and written in a thread while
        the trails are read for the run's key (the fetching too: on a remote a round trip away
        its two requests would wait for each other and hold the hashing up). On a hit they are
        the run entry's files (the entry names the same body); on a miss the check generates
        the same files. Nothing is written unless their body inflates to the files named and
        their names are outputs; a fault on the way is the run's one warning (`_settle`)."""
        http = self.http
        limit = self.config.max_bytes
        trust = self.config.trust

        def made() -> tuple[Body, Outputs] | None:
            from trailblaze.state.remote import RemoteFault, decoded_entry  # noqa: PLC0415

            raw = http.get_ac(key)
            if raw is None:
                return None
            what = f"the files entry ac/{key[:12]}…"
            try:
                named = files_entry(decoded_entry(raw, key, RUN_FORMAT, what, trust))
            except BadBody as exc:
                raise RemoteFault(f"{what} is not usable: {exc}") from None
            packed = http.get_cas(named.files_sha256)  # checked against its digest
            if packed is None:
                return None  # evicted
            size = sum(length for _, length in named.files)
            files = named.outputs(inflate(packed, size, limit))
            if not _only_outputs(files, outputs):
                raise BadBody("it would write files that no check writes")
            return named, files

        self._writer = _Writer(made, partial(write_outputs, self.ws.root, outputs, ignores))

    def lookup(self) -> Report | None:
        """The report of this run from the remote, its generated files written; None on a
        miss or a fault (which is warned about once)."""
        # Decoding and checking a report of ten thousand trails allocates a few hundred thousand
        # objects, none in a cycle: the collections they set off cost a warm clone about a
        # tenth of its CPU time.
        with gc_paused():
            return self._lookup()

    def _lookup(self) -> Report | None:
        try:
            report = self._found()
        finally:
            self._settle()  # before anything else writes: the check, on a miss
        if report is None or self.fault is not None:
            return None
        self.stats.update(
            remote_run="hit",
            compiler_runs=0,
            files_compiled=[],
            trails_parsed=0,
            remote_requests=self.http.requests,
            remote_bytes_read=self.http.bytes_read,
            remote_bytes_written=0,
        )
        report = dataclasses.replace(report, stats=dict(self.stats))
        _remember_stats(self.ws, report.stats, self.reads)
        return report

    def _found(self) -> Report | None:
        """The run's report, its files written (`lookup`, before the files' thread is joined)."""
        from trailblaze.state.remote import RemoteFault  # noqa: PLC0415

        met = self._writer.fault() if self._writer is not None else None
        if met is not None:  # while the files were fetched (`surfaces`)
            self._fault(met)
        if self.fault is not None:
            return None
        try:
            found = self._fetch(self.inputs.entry_key, whole=self.inputs.shard is None)
            if found is None and self.inputs.shard is None:
                found = self._from_shards()
        except RemoteFault as exc:
            self._fault(str(exc))
            return None
        if found is None:
            return None
        report, files = found
        try:
            self._finish_writing(files)
        except OSError:
            return None  # the check writes them itself, and says what is wrong
        return report

    def _fetch(self, key: str, *, whole: bool) -> tuple[Report, Outputs] | None:
        """The checked report and files of the entry under `ac/<key>`, or None (RemoteFault);
        `whole`: the report must cover every trail of the workspace."""
        found = self._body(key)
        return None if found is None else self._take(key, *found, whole=whole)

    def _body(self, key: str) -> tuple[str, Body] | None:
        """The digest and body of the entry under `ac/<key>`, shape checked, or None (a miss;
        RemoteFault). Any thread may ask (each has its own connection)."""
        from trailblaze.state.remote import RemoteFault  # noqa: PLC0415

        digest_ = self._entry(key)
        if digest_ is None:
            return None
        data = self.http.get_cas(digest_)  # checked against its digest
        if data is None:
            return None  # evicted: a miss
        try:
            return digest_, decode_body(data, key, self.config.max_bytes)
        except ValueError as exc:
            raise RemoteFault(f"the run entry cas/{digest_[:12]}… is not usable: {exc}") from None

    def _take(
        self, key: str, digest_: str, body: Body, *, whole: bool
    ) -> tuple[Report, Outputs] | None:
        """The checked report and files of `body` (the entry under `ac/<key>`), their writing
        begun; None when the files' body is not stored (RemoteFault)."""
        from trailblaze.state.remote import RemoteFault  # noqa: PLC0415

        if not self._reads_hold(body, digest_):
            return None  # a file its compilers read is not as it was here: not this run's
        if self._writer is not None and self._writer.sha256 == body.files_sha256:
            if not self._writer.names(body):
                raise RemoteFault(
                    f"the files entry names the files of cas/{body.files_sha256[:12]}… "
                    "otherwise than the run entry"
                )
            files = self._writer.files  # fetched and inflated while the trails were read
        else:
            named = self._files(body, digest_)
            if named is None:
                return None  # evicted: a miss
            files = named
        try:
            report = report_of(body.report, self.ws, self.options, {})  # every field is checked
        except ValueError as exc:
            raise RemoteFault(f"the run entry cas/{digest_[:12]}… is not usable: {exc}") from None
        problem = refused(report, self.inputs.owned)
        if problem is not None:
            raise RemoteFault(f"the run entry cas/{digest_[:12]}… is not usable: {problem}")
        self._check_trails(report, whole=whole)
        self._trails[key] = body.report["trails"]
        return report, files

    def _reads_hold(self, body: Body, digest_: str) -> bool:
        """Whether every file the entry's compilers read beyond the inputs is here as it was
        there (by token); RemoteFault for a name no writer gives."""
        from trailblaze.state.keys import MISSING  # noqa: PLC0415
        from trailblaze.state.reads import read_token, resolve_read, told  # noqa: PLC0415
        from trailblaze.state.remote import RemoteFault  # noqa: PLC0415

        found: dict[str, tuple[str, os.stat_result | None]] = {}
        left = READS_BYTES
        for name, token in sorted(body.reads.items()):
            path = resolve_read(name, self.ws.root)
            if path is None:
                raise RemoteFault(
                    f"the run entry cas/{digest_[:12]}… names a file read outside any place "
                    "a check reads"
                )
            now, st = read_token(path, limit=left)
            if now != token:
                # Not as it was there, or more to read than any check's compilers read: the
                # entry is not taken, and the check runs here.
                over = now.startswith("large:")
                self.stats["remote_run_reads"] = "too-large" if over else "changed"
                return False
            if st is not None and told(now) and now != MISSING:
                left -= st.st_size
            found[path] = (now, st)
        self.reads.update(found)
        return True

    def _files(self, body: Body, digest_: str) -> Outputs | None:
        """The files `body` names, fetched (once per run) and checked, their writing begun;
        None when their body is not stored (evicted)."""
        from trailblaze.state.remote import RemoteFault  # noqa: PLC0415

        blob = self._blobs.get(body.files_sha256)
        if blob is None:
            packed = self.http.get_cas(body.files_sha256)  # checked against its digest
            if packed is None:
                return None  # evicted: a miss
            size = sum(length for _, length in body.files)
            try:
                blob = self._blobs[body.files_sha256] = inflate(packed, size, self.config.max_bytes)
            except BadBody as exc:
                raise RemoteFault(f"cas/{body.files_sha256[:12]}… is not usable: {exc}") from None
        try:
            files = body.outputs(blob)
        except BadBody as exc:
            raise RemoteFault(f"the run entry cas/{digest_[:12]}… is not usable: {exc}") from None
        self._check_files(files)
        self._write_soon(files)  # while the report is checked
        return files

    def _entry(self, key: str) -> str | None:
        from trailblaze.state.remote import RemoteFault, decoded_entry  # noqa: PLC0415

        raw = self.http.get_ac(key)
        if raw is None:
            return None
        entry = decoded_entry(raw, key, RUN_FORMAT, "a run entry", self.config.trust)
        value = entry.get("sha256")
        if not isinstance(value, str) or len(value) != 64:
            raise RemoteFault("a run entry without a digest")
        return value

    def _check_against_scan(self, report: Report, files: Outputs, *, whole: bool) -> None:
        """Trails that are this workspace's, each once; files that a run of it may write."""
        self._check_trails(report, whole=whole)
        self._check_files(files)

    def _check_trails(self, report: Report, *, whole: bool) -> None:
        from trailblaze.state.remote import RemoteFault  # noqa: PLC0415

        paths = [t.path for t in report.trails]
        mine = frozenset(self.inputs.trails)
        if len(set(paths)) != len(paths) or not mine.issuperset(paths):
            raise RemoteFault("a run entry names trails this workspace does not have")
        if whole and len(paths) != len(mine):
            raise RemoteFault("a run entry does not cover every trail of this workspace")

    def _check_files(self, files: Outputs) -> None:
        from trailblaze.state.remote import RemoteFault  # noqa: PLC0415

        if not _only_outputs(files, self.inputs.outputs):
            raise RemoteFault("a run entry would write files that no check writes")

    def _from_shards(self) -> tuple[Report, Outputs] | None:
        """The whole report put together from a sharded build's entries, or None."""
        where = index_key(self.inputs.layout)
        raw = self.http.get_ac(where)
        if raw is None:
            return None
        from trailblaze.state.remote import RemoteFault, decoded_entry  # noqa: PLC0415

        index = decoded_entry(raw, where, RUN_FORMAT, "a shard index entry", self.config.trust)
        count = index.get("count") if index.get("layout") == self.inputs.layout else None
        if type(count) is not int or not 1 <= count <= 1024:
            raise RemoteFault("a shard index entry is not usable")
        parts = []
        generated: dict[str, bytes] = {}
        ignores: dict[str, tuple[str | None, str]] = {}
        keys = self.inputs.shard_keys(count)
        # Side by side: on a remote a round trip away, one after the other the shards' entries
        # and bodies would cost 2 x count round trips.
        from trailblaze.state.remote import CONNECTIONS  # noqa: PLC0415

        with ThreadPoolExecutor(min(len(keys), CONNECTIONS), "run-entry-fetch") as pool:
            bodies = list(pool.map(self._body, keys))  # the first error, in order, is raised
        for index_, (key, body) in enumerate(zip(keys, bodies, strict=True), start=1):
            found = None if body is None else self._take(key, *body, whole=False)
            if found is None:
                return None  # a shard not stored (yet): the per-trail way
            # The report as `shard.merge` reads it, with the trails as stored (each checked):
            # ten thousand records turned back into JSON cost a warm clone 20 ms.
            data = dataclasses.replace(found[0], trails=()).to_json()
            data["trails"] = self._trails[key]
            # Each shard's entry was found under a key made of this workspace's own trails: they
            # are the shards of this very run.
            data["shard"] = {**(data.get("shard") or {}), "run": self.inputs.key}
            parts.append((Path(f"shard-{index_}"), data))
            generated.update(found[1][0])
            ignores.update(found[1][1])
        from trailblaze.check.shard import ShardError, merge  # noqa: PLC0415

        try:
            merged = merge(parts)
        except ShardError as exc:
            raise RemoteFault(f"the shards' run entries do not merge: {exc}") from None
        report = dataclasses.replace(
            merged, workspace=str(self.ws.root), require_typecheck=self.options.require_typecheck
        )
        self._check_against_scan(report, (generated, ignores), whole=True)
        return report, (generated, ignores)

    def _write_soon(self, files: Outputs) -> None:
        """Start writing the first entry's files (checked, and named by the digest of a body
        stored for this very key) while the rest is fetched and checked: creating a hundred
        files is kernel time, which another thread spends while this one decodes. Every shard's
        entry names the same files; `_finish_writing` writes any other."""
        if self._writer is None or self._writer.empty():
            inputs = self.inputs
            self._writer = _Writer(
                lambda: (None, files),
                partial(write_outputs, self.ws.root, inputs.outputs, inputs.ignores),
            )

    def _finish_writing(self, files: Outputs) -> None:
        """Every file of the hit written (OSError: one could not be)."""
        done: Outputs = ({}, {})
        if self._writer is not None:
            self._writer.join()
            if self._writer.error is not None:
                raise self._writer.error
            done = self._writer.files
        rest = (
            {k: v for k, v in files[0].items() if done[0].get(k) != v},
            {k: v for k, v in files[1].items() if done[1].get(k) != v},
        )
        if rest[0] or rest[1]:
            write_outputs(self.ws.root, self.inputs.outputs, self.inputs.ignores, rest)

    def _settle(self) -> None:
        """The files' thread joined; files it was handed that are not what their entry named
        are a fault (the run entry did not use them, or a miss never asked)."""
        if self._writer is None:
            return
        self._writer.join()
        met = self._writer.fault()
        if met is not None:
            self._fault(met)
        elif self._writer.bad is not None:
            self._fault(f"the files entry is not usable: {self._writer.bad}")

    def store(self, report: Report) -> None:
        """Share a proven run's report (nothing in read-only mode, after a fault, or when an
        input changed while it ran)."""
        if (
            self.config.read_only
            or self.fault is not None
            or not proven(report, self.inputs.owned)  # as a reader will check it
        ):
            return
        if not self.inputs.unchanged():
            return
        from trailblaze.state.remote import RemoteFault, sealed_entry  # noqa: PLC0415

        reads = self._recorded_reads(report)
        if reads is None:
            return
        key = self.inputs.entry_key
        trust = self.config.trust
        body, files, named = encode_body(self.inputs, report, reads)
        try:
            # The bodies first: an entry never points at nothing.
            self.http.put_cas(files)
            value = self.http.put_cas(body)
            entry = {"format": RUN_FORMAT, "key": key, "sha256": value}
            self.http.put_ac(key, sealed_entry(entry, key, trust))
            # What the next run writes first.
            self.http.put_ac(
                self.inputs.generated, sealed_entry(named, self.inputs.generated, trust)
            )
            if self.inputs.shard is not None:
                where = index_key(self.inputs.layout)
                index = {
                    "format": RUN_FORMAT,
                    "key": where,
                    "layout": self.inputs.layout,
                    "count": self.inputs.shard[1],
                }
                self.http.put_ac(where, sealed_entry(index, where, trust))
        except RemoteFault as exc:
            self._fault(str(exc))
            return
        self.stats["remote_run"] = "stored"

    def _recorded_reads(self, report: Report) -> dict[str, str] | None:
        """The files the run's compilers read beyond the inputs, as the entry names them, with
        their tokens; None when one changed since the run told it (the entry is not stored)."""
        if "compile_reads" not in report.stats:
            return {}  # nothing was compiled
        from trailblaze.state.reads import recorded_reads, shown_read  # noqa: PLC0415

        with Store.open(Layout(self.ws.scratch)) as store:
            recorded = recorded_reads(store)
        for path, read in recorded.items():
            try:
                now: Stamp | None = stamp_of(os.stat(path))
            except OSError:
                now = None
            if now != read.stamp:
                return None
        return {shown_read(path, self.ws.root): read.token for path, read in recorded.items()}

    def close(self) -> None:
        self._settle()
        self.http.close()

    def _fault(self, message: str) -> None:
        if self.fault is None:
            self.fault = message
            self._warn(  # a peer's words may be in it: escaped, whoever prints it
                printable(
                    f"remote cache {self.config.shown}: {message}; working locally for the "
                    "rest of this run"
                )
            )


class _Writer:
    """`write` of what `make` gives, in a thread of its own; `join` waits for it.

    `make` returns the files entry they come from (None: the caller's own) and the files, or
    None (nothing to write); what it raises is kept: a `RemoteFault` (`fault`) or a `BadBody`
    (`bad`), nothing written. `error` is what the writing raised (an OSError: a file that
    cannot be written, or a bug)."""

    def __init__(
        self,
        make: Callable[[], tuple[Body | None, Outputs] | None],
        write: Callable[[Outputs], None],
    ) -> None:
        self.files: Outputs = ({}, {})
        """What it writes, once made (nothing when nothing was)."""
        self.bad: BadBody | None = None
        self.error: Exception | None = None
        self._named: Body | None = None
        self._fault: str | None = None
        self._make = make
        self._write = write
        self._made = threading.Event()
        self._thread = threading.Thread(target=self._run, name="run-entry-files", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from trailblaze.state.remote import RemoteFault  # noqa: PLC0415

        try:
            try:
                made = self._make()
                if made is None:
                    return
                self._named, self.files = made
            except RemoteFault as exc:
                self._fault = str(exc)
                return
            except BadBody as exc:
                self.bad = exc
                return
            finally:
                self._made.set()
            self._write(self.files)
        except Exception as exc:  # raised again in the thread that joins
            self.error = exc

    def fault(self) -> str | None:
        """The remote's fault its making met, once it is made."""
        self._made.wait()
        return self._fault

    @property
    def sha256(self) -> str | None:
        """The digest of the files' body a files entry handed it, once made (else None)."""
        self._made.wait()
        return self._named.files_sha256 if self._named is not None else None

    def names(self, body: Body) -> bool:
        """Whether it writes the very files `body` names (the same body, files and lines)."""
        named = self._named
        return (
            named is not None
            and named.files_sha256 == body.files_sha256
            and named.files == body.files
            and named.ignores == body.ignores
        )

    def empty(self) -> bool:
        """Whether it writes nothing and met nothing wrong (no files entry was found)."""
        self._made.wait()
        return self._fault is None and self.bad is None and not any(self.files)

    def join(self) -> None:
        self._thread.join()


def _only_outputs(files: Outputs, outputs: Mapping[str, Path]) -> bool:
    """Whether `files` names only files a run may write (`RunInputs.outputs`)."""
    generated, ignores = files
    return outputs.keys() >= generated.keys() | ignores.keys() and all(
        path.endswith("/.gitignore") for path in ignores
    )


class NotOurs(OSError):
    """A generated file of a remote entry that is not ours to write: what is there is not
    generated, or the way leads out of the workspace, or the entry's bytes are not a generated
    file. The check writes the files itself, and says what is wrong."""


def write_outputs(
    root: Path, outputs: Mapping[str, Path], before: Mapping[str, str | None], files: Outputs
) -> None:
    """What a run wrote, written here: the generated files (`outputs` says where), and each
    `.gitignore` as the run left it when it was as `before` says (else with the lines a check
    adds). Only where `check.surfaces.write_surfaces` would write them (`NotOurs`)."""

    generated, ignores = files
    for tools in sorted({outputs[rel].parent for rel in generated}):
        if not_ours(tools, root, gitignore=False):
            raise NotOurs(f"{tools}: a generated file there is not ours to write")
    for rel, text in sorted(generated.items()):
        if not generated_text(outputs[rel].name, text):
            raise NotOurs(f"{rel}: the entry's bytes are not a generated file")
    inside = os.path.realpath(root) + os.sep
    for rel in sorted(ignores):
        if not os.path.realpath(outputs[rel]).startswith(inside):
            raise NotOurs(f"{rel}: leads out of the workspace")
    for rel, text in sorted(generated.items()):
        write_if_changed(Path(os.path.realpath(outputs[rel])), text)
    for rel, (was, after) in sorted(ignores.items()):
        now = before.get(rel)
        wanted: str | None = after
        if now not in (was, after):
            from trailblaze.generate.artifacts import updated_gitignore  # noqa: PLC0415 - rare

            wanted = updated_gitignore(now)
        if wanted is not None and wanted != now:
            write_if_changed(Path(os.path.realpath(outputs[rel])), wanted)


def _remember_stats(
    ws: Workspace,
    stats: dict[str, Any],
    reads: Mapping[str, tuple[str, os.stat_result | None]] | None = None,
) -> None:
    """What this run did, where the check's own stats go (the benchmark reads them); for a
    hit, the files its entry's compilers read beyond the inputs, as found here: the next run's
    stamp keys cover them (`state.reads`)."""
    with Store.open(Layout(ws.scratch)) as store:
        store.put(STATS, "", stats)
        if reads is not None:
            from trailblaze.state.reads import record_reads  # noqa: PLC0415

            record_reads(store, reads)
        store.commit()


def cached_run(
    ws: Workspace,
    options: CheckOptions,
    *,
    progress: Any = None,
    found: Scan | None = None,
    stats: Mapping[str, os.stat_result | None] | None = None,
    warn: Warn | None = None,
) -> Report:
    """`check.run.run_check`, answered by the remote cache's run entry when it has one (its
    generated files written), else run and shared when proven. After a fault (warned about
    once) the check runs without the remote.

    When `stats` is a dict, the `os.stat` of every input this looks at before the check is
    added to it (what the CLI's no-op key of a fresh clone is made of, `cli.check`)."""

    def pipeline(opts: CheckOptions) -> Report:
        from trailblaze.check.run import run_check  # noqa: PLC0415 - a hit never loads it

        return run_check(ws, opts, progress=progress, found=found, stats=stats)

    if found is None or not options.remote_cache or not options.write:
        # A run entry writes the generated files into tools/: not for a run that writes none.
        return pipeline(options)
    seen = stats if isinstance(stats, dict) else None
    cache = RunCache(options, ws, warn=warn)
    try:
        inputs = run_inputs(ws, found, options, stats, seen=seen, surfaces=cache.surfaces)
        if inputs is None:
            if seen is not None:
                stat_inputs(
                    found, seen, ws.targets_dir
                )  # before the check, as the caller's no-op key needs
            return pipeline(options)
        cache.begin(inputs)
        hit = cache.lookup()
        if hit is not None:
            if seen is not None:
                # Stamped before their tokens were read: the no-op key of what the hit read.
                seen.update((path, st) for path, (_, st) in cache.reads.items())
            return hit
        if cache.fault is not None:
            # One warning per run: the pipeline does not ask the remote again.
            return pipeline(dataclasses.replace(options, remote_cache=None))
        report = pipeline(options)
        cache.store(report)
        _remember_stats(ws, {**report.stats, **cache.stats})
        return report
    finally:
        cache.close()
