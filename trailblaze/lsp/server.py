"""The language server: documents in, diagnostics, completion, hover and definition out.

Built on pygls. Each open trail is checked when it opens and after every change, in one worker
thread (the check's state store is not shared across threads), which publishes the diagnostics
itself (`_check_and_publish`: no hop back to the event loop before the answer); while a check
runs, further changes of that document only mark it, and the newest text is checked next, so a
burst of keystrokes costs one check after the running one, never a queue. Nothing is debounced: every
change that is not overtaken by a newer one is answered as soon as its check is done.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from lsprotocol import types
from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from trailblaze import __version__
from trailblaze.errors import TrailblazeError
from trailblaze.finding import Finding
from trailblaze.lsp.cursor import ArgumentSlot, ToolSlot, Word, slot_at, word_at
from trailblaze.lsp.positions import character_of, finding_span
from trailblaze.lsp.session import Session
from trailblaze.lsp.toolinfo import Tool
from trailblaze.state.gcpause import keep_out_of_the_way
from trailblaze.workspace import (
    PROJECT_CONFIG_NAME,
    Workspace,
    WorkspaceError,
    find_workspace,
    is_project_config,
    is_trail_name,
)
from trailblaze.yaml import lean

SOURCE = "trailblaze"
log = logging.getLogger(__name__)
T = TypeVar("T")


def is_trail(path: Path, text: str) -> bool:
    """A document the check would take for a trail (by its name, as the workspace scan does)."""
    name = path.name
    if name == PROJECT_CONFIG_NAME:
        return not is_project_config(text)
    return is_trail_name(name)


def diagnostic(finding: Finding, lines: list[str]) -> types.Diagnostic:
    span = finding_span(lines, finding.line, finding.column)
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=span.line, character=span.start),
            end=types.Position(line=span.end_line, character=span.end),
        ),
        message=finding.message,
        severity=(
            types.DiagnosticSeverity.Error if finding.fatal else types.DiagnosticSeverity.Warning
        ),
        code=finding.code or finding.kind,
        source=SOURCE,
        data={"kind": finding.kind, "key_path": finding.key_path, "fatal": finding.fatal},
    )


class _PipeInput:
    """pygls's reader interface on an asyncio stream: a message is read by the event loop
    itself. (pygls reads each header line and body in a worker thread, three hops between
    threads per message; on a busy machine each may wait for a core.)"""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream

    async def readline(self) -> bytes:
        try:
            return await self.stream.readline()
        except ValueError:  # a header line past the stream's limit (64 KiB): not a client's
            log.error("the client sent a header line longer than 64 KiB: the server stops")
            return b""

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self.stream.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""  # the client closed the stream mid-message: the loop ends


class _Writer(StdoutWriter):
    """pygls's writer, one message at a time: the check thread publishes diagnostics while the
    event loop answers requests."""

    def __init__(self, stdout: BinaryIO) -> None:
        super().__init__(stdout)
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            super().write(data)


class TrailServer(LanguageServer):
    def _start_io_async(
        self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
    ) -> None:
        """pygls's own (2.1.1), with the client's messages read on the event loop
        (`_PipeInput`) when standard input is a pipe or a socket, as an editor's is."""
        self._stop_event = threading.Event()
        source = stdin or sys.stdin.buffer
        self.protocol.set_writer(_Writer(stdout or sys.stdout.buffer))

        async def main() -> None:
            stop = self._stop_event
            assert stop is not None
            reader: Any
            try:
                stream = asyncio.StreamReader()
                await asyncio.get_running_loop().connect_read_pipe(
                    lambda: asyncio.StreamReaderProtocol(stream), source
                )
                reader = _PipeInput(stream)
            except (OSError, ValueError):  # a regular file: read as pygls reads it
                reader = StdinAsyncReader(source, self.thread_pool)
            await run_async(
                stop_event=stop,
                reader=reader,
                protocol=self.protocol,
                logger=log,
                error_handler=self.report_server_error,
            )

        try:
            asyncio.run(main())
        except BrokenPipeError:
            log.error("the client closed the connection: the server stops")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def __init__(self) -> None:
        super().__init__("trailblaze", __version__)
        self.sessions: dict[Path, Session] = {}
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trailblaze-check")
        self._running: set[str] = set()
        self._dirty: set[str] = set()
        self._published: dict[str, set[str]] = {}
        """Per trail document, the other files its last diagnostics went to (a manifest)."""
        self._found: dict[str, Session | None] = {}
        """Per directory of a document, the session of its workspace (`session_for`)."""
        self._publishing = threading.Lock()
        """Held while a check's diagnostics are published (on the check thread) or a closed
        document's withdrawn (on the event loop): `_published` changes under it."""

    # -- the warm sessions ------------------------------------------------------------------

    def session_for(self, path: Path) -> Session | None:
        """The session of the workspace a document belongs to. Found once per directory: the
        search walks up from the document, a few file system calls per level, on every edit;
        it is made again after the client reports a changed input (`refresh`: a manifest, a
        tool, a `pyproject.toml`) and when a document is opened."""
        where = str(path.parent)
        if where in self._found:
            return self._found[where]
        try:
            session: Session | None = self._session(find_workspace(path.parent))
        except WorkspaceError:
            session = None
        self._found[where] = session
        return session

    def _session(self, ws: Workspace) -> Session:
        found = self.sessions.get(ws.root)
        if found is None:
            found = self.sessions[ws.root] = Session(ws)
        return found

    async def in_worker(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.worker, fn, *args)

    # -- diagnostics ---------------------------------------------------------------------------

    async def diagnose(self, uri: str) -> None:
        if uri in self._running:
            self._dirty.add(uri)
            return
        self._running.add(uri)
        try:
            while True:
                self._dirty.discard(uri)
                await self._diagnose_once(uri)
                if uri not in self._dirty:
                    return
        finally:
            self._running.discard(uri)

    async def _diagnose_once(self, uri: str) -> None:
        document = self.workspace.get_text_document(uri)
        fs_path = to_fs_path(uri)
        if fs_path is None:
            return
        path = Path(fs_path)
        text = document.source
        if not is_trail(path, text):
            return
        session = self.session_for(path)
        if session is None:
            self.window_log_message(
                types.LogMessageParams(
                    types.MessageType.Warning,
                    f"trailblaze: {path}: no workspace found; this file is not checked",
                )
            )
            return
        phases = session.phases_made
        try:
            await self.in_worker(
                self._check_and_publish, uri, path, text, session, document.version
            )
        except TrailblazeError as exc:
            # A user error (bad settings, say): shown, as the command line prints it.
            self.window_show_message(
                types.ShowMessageParams(types.MessageType.Error, f"trailblaze: {exc}")
            )
            return
        if session.phases_made != phases:
            # A new warm workspace: kept for many edits, out of the collector's way from now.
            await self.in_worker(keep_out_of_the_way)

    def _check_and_publish(
        self, uri: str, path: Path, text: str, session: Session, version: int | None
    ) -> None:
        """On the check thread: the check, and its diagnostics published from there, unless a
        newer text came meanwhile (it is checked next). Not handed back to the event loop
        first: on a busy machine that wake waited for a core before every answer."""
        verdict = session.check(path, text)
        with self._publishing:
            if self.workspace.get_text_document(uri).version == version:
                self.publish(uri, path, text, session, verdict.findings, version=version)

    def publish(
        self,
        uri: str,
        path: Path,
        text: str,
        session: Session,
        findings: Iterable[Finding],
        *,
        version: int | None,
    ) -> None:
        by_file: dict[str, list[Finding]] = {}
        real: dict[str, str] = {}  # per finding path (most are the trail's own): one realpath
        for finding in findings:
            file = real.get(finding.path)
            if file is None:
                file = real[finding.path] = os.path.realpath(session.absolute(finding))
            by_file.setdefault(file, []).append(finding)
        own = os.path.realpath(path)
        mine = by_file.pop(own, [])
        lines = text.splitlines()
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, version=version, diagnostics=[diagnostic(f, lines) for f in mine]
            )
        )
        others: set[str] = set()
        for file, found in by_file.items():
            other_uri = from_fs_path(file) or file
            others.add(other_uri)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=other_uri,
                    diagnostics=[diagnostic(f, self._lines_of(other_uri, file)) for f in found],
                )
            )
        for gone in self._published.get(uri, set()) - others:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=gone, diagnostics=[])
            )
        self._published[uri] = others

    def _lines_of(self, uri: str, file: str) -> list[str]:
        document = self.workspace.text_documents.get(uri)
        if document is not None:
            source: str = document.source
            return source.splitlines()
        try:
            return Path(file).read_text("utf-8", errors="replace").splitlines()
        except OSError:
            return []

    async def refresh(self, paths: Iterable[Path]) -> None:
        """Inputs of the check changed (a tool, a manifest): each session they belong to drops
        its verdicts, and every open trail of it is checked again."""
        self._found.clear()
        touched = False
        for path in paths:
            for root, session in self.sessions.items():
                if path.resolve().is_relative_to(root.resolve()):
                    await self.in_worker(session.refresh)
                    touched = True
        if touched:
            for uri in list(self.workspace.text_documents):
                await self.diagnose(uri)

    # -- the trail's tools ------------------------------------------------------------------

    async def tools_at(self, uri: str) -> tuple[list[str], dict[str, Tool]] | None:
        fs_path = to_fs_path(uri)
        if fs_path is None:
            return None
        path = Path(fs_path)
        session = self.session_for(path)
        if session is None:
            return None
        text = self.workspace.get_text_document(uri).source

        def lookup() -> dict[str, Tool] | None:
            model = session.model()
            target = model.target_of(path, text)
            return dict(model.tools(target)) if target is not None else None

        tools = await self.in_worker(lookup)
        if tools is None:
            return None
        return text.splitlines(), tools


server = TrailServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: TrailServer, params: types.DidOpenTextDocumentParams) -> None:
    ls._found.clear()  # its workspace is looked for again
    await ls.diagnose(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: TrailServer, params: types.DidChangeTextDocumentParams) -> None:
    await ls.diagnose(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: TrailServer, params: types.DidSaveTextDocumentParams) -> None:
    fs_path = to_fs_path(params.text_document.uri)
    if fs_path is not None and not is_trail_name(Path(fs_path).name):
        await ls.refresh([Path(fs_path)])  # a tool or a manifest the editor saved


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: TrailServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    with ls._publishing:
        for other in ls._published.pop(uri, set()):
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=other, diagnostics=[])
            )
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched(ls: TrailServer, params: types.DidChangeWatchedFilesParams) -> None:
    paths = [Path(p) for p in (to_fs_path(c.uri) for c in params.changes) if p is not None]
    await ls.refresh(p for p in paths if not is_trail_name(p.name))


@server.feature(types.INITIALIZED)
def initialized(ls: TrailServer, params: types.InitializedParams) -> None:
    watched = ls.client_capabilities.workspace
    dynamic = (
        watched is not None
        and watched.did_change_watched_files is not None
        and watched.did_change_watched_files.dynamic_registration
    )
    if dynamic:
        # Tools and manifests: an edit to one refreshes the verdicts that depend on it.
        ls.client_register_capability(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id="trailblaze-inputs",
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=[
                                types.FileSystemWatcher(glob_pattern="**/trailmap.yaml"),
                                types.FileSystemWatcher(glob_pattern="**/tools/**"),
                                types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                            ]
                        ),
                    )
                ]
            )
        )


@server.feature(
    types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["-", " "])
)
async def completion(ls: TrailServer, params: types.CompletionParams) -> types.CompletionList:
    empty = types.CompletionList(is_incomplete=False, items=[])
    found = await ls.tools_at(params.text_document.uri)
    if found is None:
        return empty
    lines, tools = found
    row = params.position.line
    character = character_of(lines[row], params.position.character) if row < len(lines) else 0
    slot = slot_at(lines, row, character, tools)
    if isinstance(slot, ToolSlot):
        items = [
            types.CompletionItem(
                label=tool.name,
                kind=types.CompletionItemKind.Function,
                detail=tool.signature(),
                documentation=tool.description,
                insert_text=f"{tool.name}:",
            )
            for tool in sorted(tools.values(), key=lambda t: t.name)
            if tool.name.startswith(slot.prefix)
        ]
        return types.CompletionList(is_incomplete=False, items=items)
    if isinstance(slot, ArgumentSlot):
        arguments = tools[slot.tool].arguments or ()
        items = [
            types.CompletionItem(
                label=argument.name,
                kind=types.CompletionItemKind.Property,
                detail=f"{argument.name}{'' if argument.required else '?'}: {argument.type}",
                documentation=argument.description,
                insert_text=f"{argument.name}: ",
            )
            for argument in arguments
            if argument.name.startswith(slot.prefix) and argument.name not in slot.present
        ]
        return types.CompletionList(is_incomplete=False, items=items)
    return empty


async def _word_under(
    ls: TrailServer, params: types.HoverParams | types.DefinitionParams
) -> tuple[list[str], dict[str, Tool], int, Word] | None:
    """The open trail's lines, its trailmap's tools, the row and the word under the cursor."""
    found = await ls.tools_at(params.text_document.uri)
    if found is None:
        return None
    lines, tools = found
    row = params.position.line
    if row >= len(lines):
        return None
    word = word_at(lines, row, character_of(lines[row], params.position.character))
    return None if word is None else (lines, tools, row, word)


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: TrailServer, params: types.HoverParams) -> types.Hover | None:
    found = await _word_under(ls, params)
    if found is None:
        return None
    lines, tools, row, word = found
    text: str | None = None
    if word.text in tools and (word.is_key or word.parent == "tool"):
        text = hover_text(tools[word.text])
    elif word.is_key and word.parent in tools:
        for argument in tools[word.parent].arguments or ():
            if argument.name == word.text:
                text = f"```ts\n{argument.name}{'' if argument.required else '?'}: {argument.type}\n```"
                if argument.description:
                    text += f"\n\n{argument.description}"
    if text is None:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=_word_range(lines[row], row, word.start, word.end),
    )


def hover_text(tool: Tool) -> str:
    text = f"```ts\n{tool.signature()}\n```"
    if tool.description:
        text += f"\n\n{tool.description}"
    if tool.untyped:
        text += f"\n\n(argument types not shown: {tool.untyped})"
    if tool.definition is not None:
        text += f"\n\nDefined in `{tool.definition[0].name}:{tool.definition[1]}`"
    return text


def _word_range(line: str, row: int, start: int, end: int) -> types.Range:
    from trailblaze.lsp.positions import utf16_units  # noqa: PLC0415

    return types.Range(
        start=types.Position(line=row, character=utf16_units(line[:start])),
        end=types.Position(line=row, character=utf16_units(line[:end])),
    )


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
async def definition(ls: TrailServer, params: types.DefinitionParams) -> types.Location | None:
    found = await _word_under(ls, params)
    if found is None or found[3].text not in found[1]:
        return None
    _, tools, _, word = found
    where = tools[word.text].definition
    if where is None:
        return None
    start = types.Position(line=max(where[1] - 1, 0), character=0)
    return types.Location(
        uri=from_fs_path(str(where[0])) or str(where[0]), range=types.Range(start=start, end=start)
    )


def serve() -> int:
    """Serve one client on stdin and stdout until it exits."""
    # The edited trail is parsed on every keystroke: composed in one pass (`yaml.lean`; some
    # 0.15 ms of a 5 kB trail's 0.8 ms parse).
    lean.enable()
    server.start_io()
    return 0
