"""One run of the type gate over a workspace's trails, fed while they are still being parsed.

The check offers every eligible trail as soon as its parse outcome is known. A trail whose last
result still holds (same generated text, surface, compiler and generator) costs nothing; one
whose key is in the result cache costs a lookup; the others become compiler jobs. Jobs are
compiled in batches by a background thread as soon as a batch is full, so the compiler runs
while the workers go on parsing; one batch at a time bounds memory.

Everything the compiler needs before the first batch (the compiler itself, the scripted
tools' declarations, the module surfaces and their strict check) is prepared when the first
trail is offered: a workspace without recordings never installs or starts a compiler.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trailblaze import __version__
from trailblaze.batch import Parsed
from trailblaze.cache import ResultCache, cache_dir, digest
from trailblaze.catalog import Catalog
from trailblaze.codegen import GENERATOR_VERSION
from trailblaze.finding import Finding
from trailblaze.fsutil import file_stamp, write_if_changed
from trailblaze.options import CheckOptions
from trailblaze.remote import RemoteConfig, RemoteConfigError, RemoteResults, result_key
from trailblaze.resolve import Resolution
from trailblaze.sdk import sdk_type_names
from trailblaze.state import TrailRecord
from trailblaze.surface import model_digest
from trailblaze.toolchain import Compiler, ToolchainError, find_compiler
from trailblaze.tooldefs import RelPath
from trailblaze.typegate import (
    BATCH_SIZE,
    COMPILER_OPTIONS,
    Declarations,
    GateResult,
    Job,
    Layout,
    check_surfaces,
    compile_jobs,
    emit_declarations,
    infra_finding,
    module_surface,
    remove_orphans,
    timeout_seconds,
)

Phase = Callable[[str], Any]
"""`phase(name)` returns a context manager timing that part of the run."""


@dataclass
class Outcome:
    failed: set[str] = field(default_factory=set)
    infra: list[Finding] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    """Findings that are not about one trail (errors in scripted tool modules)."""
    stats: dict[str, Any] = field(
        default_factory=lambda: {
            "compiler_runs": 0,
            "files_compiled": [],
            "cache_hits": 0,
            "decl_runs": 0,
        }
    )


class TypeCheck:
    def __init__(
        self,
        root: Path,
        layout: Layout,
        options: CheckOptions,
        catalog: Catalog,
        targets: Mapping[str, Resolution],
        exempt: Mapping[str, str],
        records: dict[str, TrailRecord],
        phase: Phase,
    ) -> None:
        self.root = root
        self.layout = layout
        self.options = options
        self.catalog = catalog
        self.targets = targets
        self.exempt = exempt
        self.records = records
        self.phase = phase
        self.outcome = Outcome()
        self.offered: set[str] = set()
        self.stale: list[str] = []
        """Trails whose outcome came from the state but whose module must be generated again."""
        self._prepared = False
        self._compiler: Compiler | None = None
        self._toolchain_error: str | None = None
        self._broken: dict[str, str] = {}
        self._surface_keys: dict[str, str] = {}
        self._base_key = ""
        self._cache: ResultCache | None = None
        self._pending: list[Job] = []
        self._jobs: list[Job] = []
        self._batches: list[Future[GateResult]] = []
        self._compiling = ThreadPoolExecutor(1, thread_name_prefix="tsc")
        self._timeout = timeout_seconds()
        self._remote: RemoteResults | None = None
        self._remote_keys: dict[str, str] = {}
        """Trail path -> the remote cache's key of its verdict (only with a remote cache)."""
        self._storing = ThreadPoolExecutor(1, thread_name_prefix="remote-store")
        self._stores: list[Future[None]] = []

    # -- preparing ------------------------------------------------------------------------------

    def _prepare(self) -> None:
        if self._prepared:
            return
        self._prepared = True
        try:
            self._compiler = find_compiler(install=self.options.install)
        except ToolchainError as exc:
            self._toolchain_error = f"type check could not run: {exc}"
            return
        compiler = self._compiler
        tools_dirs: dict[str, Path] = {}
        for resolution in self.targets.values():
            for entry in resolution.entries:
                if entry.module is not None and entry.kind == "module":
                    tools = _tools_root(entry.module)
                    tools_dirs.setdefault(tools.parent.name, tools)
        with self.phase("declarations"):
            decls = emit_declarations(
                tools_dirs, compiler, self.layout, RelPath(self.root), timeout=self._timeout
            )
        self.outcome.stats["decl_runs"] = decls.runs
        for finding in decls.findings:
            if finding.kind == "infra":
                self.outcome.infra.append(finding)
            else:
                self.outcome.findings.append(
                    finding.with_(fatal=finding.trailmap not in self.exempt)
                )
        self._module_surfaces(decls)
        self._base_key = digest(compiler.identity, GENERATOR_VERSION, _json(COMPILER_OPTIONS))
        with self.phase("surface check"):
            self._broken = self._check_surfaces(compiler)
        self._cache = ResultCache(cache_dir(self.layout.scratch))
        self._remote = _remote(self.options)

    def _module_surfaces(self, decls: Declarations) -> None:
        """Write each target's module surface and key it; unchanged ones are not rendered.

        A memo maps what a surface is rendered from (the model, the declaration files its
        modules resolved to) to a digest of its text, trusted while the file is as written.
        """
        memo_path = self.layout.root / "module-surfaces.json"
        try:
            memo = json.loads(memo_path.read_text("utf-8"))
            if not isinstance(memo, dict):
                memo = {}
        except (OSError, ValueError):
            memo = {}
        names = sdk_type_names(self.catalog)
        fresh: dict[str, Any] = {}
        for trailmap in sorted(self.targets):
            resolution = self.targets[trailmap]
            refs = sorted(
                str(decls.decls.get(e.module, f"missing:{e.module}"))
                for e in resolution.entries
                if e.module is not None
            )
            key = digest(
                model_digest(resolution), json.dumps(refs), str(self.layout.root), *sorted(names)
            )
            path = self.layout.surface(trailmap)
            entry = memo.get(trailmap)
            stamp = file_stamp(path)
            if (
                isinstance(entry, dict)
                and entry.get("key") == key
                and isinstance(entry.get("text"), str)
                and stamp is not None
                and entry.get("stamp") == stamp
            ):
                text_digest = entry["text"]
            else:
                text = module_surface(resolution, self.layout, decls.decls, names)
                write_if_changed(path, text)
                text_digest = digest(text)
                stamp = file_stamp(path)
            fresh[trailmap] = {"key": key, "text": text_digest, "stamp": stamp}
            self._surface_keys[trailmap] = digest(text_digest, decls.identity, self.catalog.version)
        if fresh != memo:
            write_if_changed(memo_path, _json(fresh))

    def _check_surfaces(self, compiler: Compiler) -> dict[str, str]:
        """Check the module surfaces that changed since their last clean check; the broken ones."""
        memo = self.layout.root / "surfaces-checked.json"
        try:
            checked: dict[str, str] = json.loads(memo.read_text("utf-8"))
        except (OSError, ValueError):
            checked = {}
        wanted = {t: digest(self._base_key, key) for t, key in self._surface_keys.items()}
        todo = {t: self.layout.surface(t) for t, key in wanted.items() if checked.get(t) != key}
        broken = check_surfaces(todo, compiler, self.layout, timeout=self._timeout)
        for trailmap in todo:
            if trailmap in broken:
                checked.pop(trailmap, None)
            else:
                checked[trailmap] = wanted[trailmap]
        if todo:
            write_if_changed(memo, json.dumps(checked, sort_keys=True))
        return broken

    # -- offering trails ------------------------------------------------------------------------

    def offer(self, rel: str, parsed: Parsed | None = None) -> None:
        """An eligible trail, with its freshly generated module when it was parsed this run."""
        self._prepare()
        record = self.records[rel]
        target = record.target
        assert target is not None
        self.offered.add(rel)
        if self._toolchain_error is not None or target in self._broken:
            reason = self._toolchain_error or f"type check could not run: {self._broken[target]}"
            self._fail(rel, reason, "toolchain" if self._toolchain_error else "typegate")
            return
        surface_key = self._surface_keys[target]
        if parsed is None:
            if (
                record.key is not None
                and record.surface_key == surface_key
                and record.base_key == self._base_key
            ):
                self.outcome.stats["cache_hits"] += 1
                return
            self.stale.append(rel)
            return
        assert parsed.module is not None
        assert parsed.lines is not None
        assert self._cache is not None
        key = digest(self._base_key, surface_key, parsed.module)
        cached = self._cache.get(key)
        if cached is not None:
            self.outcome.stats["cache_hits"] += 1
            self.records[rel] = record.with_result(
                key, [Finding.from_json(f) for f in cached], surface_key, self._base_key
            )
            return
        self.records[rel] = record.with_result(None, (), surface_key, self._base_key)
        job = Job(rel, target, self.layout.trail_file(rel), parsed.lines, key)
        if self._remote is not None:
            self._remote_keys[rel] = result_key(
                compiler_version=self._compiler.version if self._compiler else "",
                generator_version=GENERATOR_VERSION,
                product_version=__version__,
                compiler_options=COMPILER_OPTIONS,
                surface=surface_key,
                module=parsed.module,
                lines=parsed.lines,
            )
        self._pending.append(job)
        if len(self._pending) >= BATCH_SIZE:
            self._submit()

    def _fail(self, rel: str, reason: str, code: str) -> None:
        self.outcome.failed.add(rel)
        self.records[rel] = self.records[rel].with_result(None, ())
        self.outcome.infra.append(infra_finding(rel, reason, self.records[rel].target, code))

    def _submit(self, *, parsing: bool = True) -> None:
        """Compile the pending jobs in the background; `parsing`: the workers still need the cores."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        assert self._compiler is not None
        self._jobs.extend(batch)
        self._batches.append(self._compiling.submit(self._compile, batch, parsing))

    def _compile(self, batch: list[Job], parsing: bool) -> GateResult:
        """One batch: what the remote cache holds, then the compiler for the rest (in the
        background thread, so the remote is asked while the workers parse)."""
        assert self._compiler is not None
        remote = self._remote
        hits: dict[str, list[Finding]] = {}
        if remote is not None:
            wanted = [(self._remote_keys[job.path], job.path) for job in batch]
            found = remote.fetch(wanted)
            for job in batch:
                entry = found.get(self._remote_keys[job.path])
                if entry is not None:
                    hits[job.path] = [Finding.from_json(f) for f in entry]
            batch = [job for job in batch if job.path not in hits]
        result = (
            compile_jobs(
                batch, self._compiler, self.layout, timeout=self._timeout, single_threaded=parsing
            )
            if batch
            else GateResult()
        )
        if remote is not None and batch:
            # Only verdicts the compiler really produced; a trail whose check could not
            # complete has none in `result.findings`.
            proven = [
                (self._remote_keys[job.path], [f.to_json() for f in result.findings[job.path]])
                for job in batch
                if job.path in result.findings and job.path not in result.failed
            ]
            self._stores.append(self._storing.submit(remote.store, proven))
        result.findings.update(hits)
        return result

    # -- finishing ------------------------------------------------------------------------------

    def finish(self, keep_generated: AbstractSet[str], trails_changed: bool) -> Outcome:
        """Compile what is left, wait for every batch, and record the results."""
        self._submit(parsing=False)
        results: list[GateResult] = []
        with self.phase("compile"):
            try:
                results = [future.result() for future in self._batches]
            finally:
                self._compiling.shutdown(wait=True)
        outcome = self.outcome
        by_path = {job.path: job for job in self._jobs}
        stored: list[tuple[str, list[dict[str, Any]]]] = []
        for result in results:
            outcome.failed |= result.failed
            outcome.infra.extend(result.infra)
            outcome.stats["compiler_runs"] += result.compiler_runs
            outcome.stats["files_compiled"].extend(result.files_compiled)
            for path, findings in result.findings.items():
                job = by_path[path]
                stored.append((job.key, [f.to_json() for f in findings]))
                self.records[path] = self.records[path].with_result(
                    job.key, findings, self._surface_keys[job.trailmap], self._base_key
                )
        # A job with neither a result nor a failure was not checked: never a silent pass.
        for job in self._jobs:
            if job.path not in outcome.failed and not any(job.path in r.findings for r in results):
                self._fail(
                    job.path, "type check could not run: the compiler gave no result", "typegate"
                )
        if self._cache is not None:
            self._cache.put_many(stored)
            self._cache.close()
        self._finish_remote()
        # The modules on disk are those of the last run's trails: only a change in that set
        # (or a state that was lost, which reads as "every trail is new") leaves orphans.
        outcome.stats["removed"] = (
            remove_orphans(self.layout, keep_generated) if trails_changed else 0
        )
        return outcome

    def _finish_remote(self) -> None:
        self._storing.shutdown(wait=True)
        for future in self._stores:
            future.result()
        if self._remote is not None:
            self._remote.close()
            self.outcome.stats.update(self._remote.stats())


def _remote(options: CheckOptions) -> RemoteResults | None:
    """The remote cache the options name, or None (none named, or a setting that cannot work:
    the CLI and the doit task refuse those before the check starts)."""
    if not options.remote_cache:
        return None
    try:
        config = RemoteConfig.resolve(options.remote_cache, read_only=options.remote_read_only)
    except RemoteConfigError:
        return None
    return None if config is None else RemoteResults(config)


def _tools_root(module: Path) -> Path:
    """The `tools/` directory a scripted tool module lives in (the trailmap is its parent)."""
    for parent in module.parents:
        if parent.name == "tools":
            return parent
    return module.parent


def _json(data: Any) -> str:
    return json.dumps(data, indent=1, sort_keys=True, default=str) + "\n"
