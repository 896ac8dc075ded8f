"""The parse stage: every trail's record, from the state when its file is unchanged, else parsed.

An unchanged stamp costs one `stat`; a changed stamp with unchanged content costs a read and a
hash; only changed content is parsed (in worker processes when there is much of it, `batch`),
and the module of a trail whose target is type-checked is generated as it is parsed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from trailblaze.check.context import CheckContext
from trailblaze.check.discover import Stats
from trailblaze.check.resolve import Targets
from trailblaze.check.rows import TrailRecord, stamp_of
from trailblaze.check.workers import (
    Context,
    Item,
    Parsed,
    Started,
    process_many,
    start_many,
    unreadable_record,
)
from trailblaze.state.keys import digest
from trailblaze.toolmodel.resolution import ships_runif
from trailblaze.workspace import shown_path
from trailblaze.yaml.node import MAX_FILE_BYTES, YamlError
from trailblaze.yaml.text import too_big, unreadable

OnParsed = Callable[[list[Parsed]], None]
"""Sees each chunk of freshly parsed trails (their modules already written) as it arrives."""


class Trails(msgspec.Struct, frozen=True):
    """What the parse stage gives back: every trail's record, in scan order."""

    records: dict[str, TrailRecord]
    real_paths: dict[str, str]
    """The file of each trail whose report path is not its file name (`shown_path`)."""


class Begun:
    """A parse stage looked at (`Parser.begin`): the records so far, the trails to parse, and
    the workers already parsing them, if started."""

    def __init__(
        self, records: dict[str, TrailRecord], items: list[Item], started: Started | None
    ) -> None:
        self.records = records
        self.items = items
        self._started = started

    def take(self) -> Started | None:
        """The started workers, for `Parser.finish` to collect (once)."""
        started, self._started = self._started, None
        return started

    def close(self) -> None:
        """Stop the workers when `finish` did not take them (a run that ends otherwise)."""
        started = self.take()
        if started is not None:
            started.close()


Schemas = dict[str, dict[str, Any]]
"""Per target, each tool's input schema (None: it has none)."""
_OF_TARGETS: list[tuple[Targets, bool, Schemas, frozenset[str]]] = []
"""The last `_of_targets`: an editor's runs share one `Targets` (`check.phase`)."""


def _of_targets(targets: Targets, *, typecheck: bool) -> tuple[Schemas, frozenset[str]]:
    """Each target's tools' input schemas (none without the type gate) and the targets whose
    runIf is the shipped one, for `targets`: made again only for another `Targets`."""
    for kept, checked, schemas, shipped in _OF_TARGETS:
        if kept is targets and checked == typecheck:
            return schemas, shipped
    schemas = (
        {
            target: {e.name: e.input_schema for e in resolution.entries}
            for target, resolution in targets.resolutions.items()
        }
        if typecheck
        else {}
    )
    shipped = frozenset(
        target for target, resolution in targets.resolutions.items() if ships_runif(resolution)
    )
    _OF_TARGETS[:] = [(targets, typecheck, schemas, shipped)]
    return schemas, shipped


class Parser:
    """The parse stage of one check; `regenerate` serves the type gate's stale trails after it."""

    def __init__(self, ctx: CheckContext, targets: Targets) -> None:
        self.ctx = ctx
        options = ctx.options
        schemas, self.shipped_runif = _of_targets(targets, typecheck=options.typecheck)
        self.context = Context(
            strict=options.strict,
            schemas=schemas,
            defs=ctx.catalog.defs,
            layout=ctx.layout,
            shipped_runif=self.shipped_runif,
        )
        self.parsed = 0
        self.files_read = 0
        self.real_paths: dict[str, str] = {}

    def trails(
        self,
        paths: Sequence[str],
        *,
        old: Mapping[str, TrailRecord],
        stats: Stats,
        on_parsed: OnParsed,
        on_count: Callable[[int], None] | None = None,
    ) -> Trails:
        """The parse stage: a record of every trail in `paths`, in scan order. `on_count` is
        told how many trails `on_parsed` will see, before the first of them."""
        return self.finish(self.begin(paths, old=old, stats=stats), on_parsed, on_count)

    def begin(
        self,
        paths: Sequence[str],
        *,
        old: Mapping[str, TrailRecord],
        stats: Stats,
        start: bool = False,
    ) -> Begun:
        """The first half of `trails`: every trail looked at, the unchanged ones' records taken
        and the others listed; with `start`, worker processes already parsing them (when there
        are enough for workers) while the caller does something else. Given to `finish`, or
        closed (`Begun.close`) on a path that does not get there."""
        out: dict[str, TrailRecord] = {}
        to_parse: list[Item] = []
        ws = self.ctx.ws
        strict = self.ctx.options.strict
        shipped = self.shipped_runif
        prefix = str(ws.root) + os.sep
        texts = self.ctx.texts
        for path in paths:
            # String slicing, not Path: this loop runs for every trail on every check.
            rel = (
                shown_path(path[len(prefix) :].replace(os.sep, "/"))
                if path.startswith(prefix)
                else ws.rel(Path(path))
            )
            if rel != path[len(prefix) :]:
                self.real_paths[rel] = path
            previous = old.get(rel)
            if previous is not None and previous.runif_shipped != (previous.target in shipped):
                # Whose runIf the trail's target has changed: its record was made with the
                # other grammar (its runIf findings, its calls), so the trail is parsed again.
                previous = None
            given = texts.get(path)
            if given is not None:
                # An editor's buffer: its bytes, whatever the file on disk holds (or if none).
                content = digest(given)
                if (
                    previous is not None
                    and previous.content == content
                    and previous.strict == strict
                ):
                    out[rel] = previous
                    continue
                to_parse.append(Item(path=rel, stamp=None, content=content, data=given))
                out[rel] = previous  # type: ignore[assignment]  # replaced when parsed
                continue
            st: os.stat_result | None
            if path in stats:
                st = stats[path]
            else:
                try:
                    st = os.stat(path)
                except OSError:
                    st = None
            is_dir = st is not None and stat.S_ISDIR(st.st_mode)
            stamp = stamp_of(st) if st is not None and not is_dir else None
            if (
                previous is not None
                and stamp is not None
                and previous.stamp == stamp
                and previous.strict == strict
            ):
                out[rel] = previous
                continue
            if previous is None and st is not None and not is_dir and st.st_size <= MAX_FILE_BYTES:
                # A new trail: read by the worker that parses it (its bytes are not needed here
                # to decide anything), so that the parse starts before ten thousand reads end.
                to_parse.append(Item(path=rel, stamp=stamp, content="", data=None, file=path))
                self.files_read += 1
                out[rel] = None  # type: ignore[assignment]  # holds its place; replaced when parsed
                continue
            try:
                if is_dir:
                    raise YamlError("is a directory, not a file")
                if st is not None and st.st_size > MAX_FILE_BYTES:
                    raise too_big(st.st_size)
                with open(path, "rb") as handle:
                    data = handle.read()
                self.files_read += 1
            except (YamlError, OSError) as exc:
                error = exc if isinstance(exc, YamlError) else unreadable(exc)
                out[rel] = unreadable_record(rel, error, strict=strict)
                continue
            content = digest(data)
            if previous is not None and previous.content == content and previous.strict == strict:
                out[rel] = previous.restamp(stamp)
                continue
            to_parse.append(Item(path=rel, stamp=stamp, content=content, data=data))
            out[rel] = previous  # type: ignore[assignment]  # holds its place; replaced when parsed

        started = start_many(to_parse, self.context) if start and to_parse else None
        return Begun(out, to_parse, started)

    def finish(
        self,
        begun: Begun,
        on_parsed: OnParsed,
        on_count: Callable[[int], None] | None = None,
    ) -> Trails:
        """The second half of `trails`: the listed trails parsed (or their workers' results
        taken), each chunk shown to `on_parsed`."""
        out = begun.records

        def arrived(chunk: list[Parsed]) -> None:
            for parsed in chunk:
                out[parsed.record.path] = parsed.record
            on_parsed(chunk)

        if on_count is not None:
            on_count(len(begun.items))
        self._process(begun.items, "parsing", arrived, started=begun.take())
        return Trails(records=out, real_paths=dict(self.real_paths))

    def regenerate(self, paths: list[str], records: Mapping[str, TrailRecord]) -> list[Parsed]:
        """Generate again the modules of trails whose outcome came from the state (their
        surface changed, or their last check could not complete)."""
        items = []
        root = self.ctx.ws.root
        for rel in paths:
            file = self.real_paths.get(rel) or str(root / rel)
            given = self.ctx.texts.get(file)
            data = given if given is not None else Path(file).read_bytes()
            self.files_read += 1
            record = records[rel]
            items.append(Item(path=rel, stamp=record.stamp, content=record.content, data=data))
        return self._process(items, "generating")

    def _process(
        self,
        items: list[Item],
        phase: str,
        on_chunk: OnParsed | None = None,
        *,
        started: Started | None = None,
    ) -> list[Parsed]:
        if not items:
            return []
        progress = self.ctx.progress
        self.parsed += len(items)
        if progress is not None:
            progress.start(phase, len(items))
        advance = progress.advance if progress else None
        results = (
            started.collect(progress=advance, on_chunk=on_chunk)
            if started is not None
            else process_many(items, self.context, progress=advance, on_chunk=on_chunk)
        )
        if progress is not None:
            progress.stop()
        return results

    def stats(self) -> dict[str, Any]:
        """Trails parsed (or generated again) and files read this run, regenerating included."""
        return {"trails_parsed": self.parsed, "files_read": self.files_read}
