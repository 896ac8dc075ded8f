"""The language server sees a change to a file the compiler reads beyond the check's inputs.

A scripted tool may take its input type from a file that is neither a manifest nor a tool file:
`tools/build/`, a declaration file outside the workspace, a package in the workspace's
`node_modules` (`tests/check/typegate/test_reads.py` has every kind). The server keeps its
workspace phase (surfaces, declarations, a warm compiler) while the stamps of the inputs and of
those reads hold; no client reports an edit to such a file (its watchers cover the trailmaps
only, and a package or a file outside the workspace is no file of the editor's). Each file is
changed on disk here so that the open trail's call no longer type-checks, without any notice:
the next edit of the trail must publish the compiler's finding, and the fix must clear it,
whether the server made the phase's preparation itself or took it from the state store of an
earlier `trailblaze check`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import trailblaze.lsp.session
from bench.lspclient import Client
from tests.check.typegate.test_reads import (
    BAD,
    FINDING,
    GOOD,
    KINDS,
    PASS,
    RECORDING,
    TRAIL,
    Imported,
    cli,
    edit,
    verdict,
    workspace,
)
from tests.conftest import isolate_env
from tests.lsp.test_server import _env
from trailblaze.check.phase import WorkspacePhase
from trailblaze.check.run import run_check
from trailblaze.check.typegate.preparation import Prepared
from trailblaze.cli.scope import FILES_SCRATCH
from trailblaze.lsp.session import Session
from trailblaze.state.reads import recorded_reads
from trailblaze.state.scratch import Layout
from trailblaze.state.store import Store
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import find_workspace

pytestmark = pytest.mark.tsc

BY_NAME = {kind.name: kind for kind in KINDS}
READS = [BY_NAME[name] for name in ("tools-build", "file-outside-workspace", "workspace-package")]
"""A file beside the tools the tool walk skips, one outside the workspace, and a package."""

CODE, LINE, COLUMN = FINDING
DIAGNOSTIC = (CODE, {"line": LINE - 1, "character": COLUMN - 1})
"""The finding as the server publishes it (0-based)."""


def _root(tmp_path: Path, kind: Imported) -> Path:
    # A directory of its own above the workspace: the kinds that read outside it write there.
    return tmp_path / kind.name / "ws"


def _check_file(ws: Path, kind: Imported) -> None:
    """`trailblaze check FILE` of the trail, as the author ran it before opening the editor:
    the file scope's state store (the server's) records what its compiles read. Twice: a
    compile that read a file the run did not know before leaves no memo (its key did not
    cover it); the second run's, keyed by the recorded reads, are what the server takes."""
    for _ in range(2):
        assert verdict(cli(ws, str(ws / TRAIL))) == PASS
    with Store.open(Layout(ws / ".trailblaze" / FILES_SCRATCH)) as store:
        assert str(kind.file(ws)) in recorded_reads(store)


@contextmanager
def _session(ws: Path) -> Iterator[Session]:
    session = Session(find_workspace(ws, explicit=True))
    try:
        yield session
    finally:
        session.close()


def _findings(session: Session, ws: Path, text: str) -> list[tuple[str, int, int]]:
    found = session.check(ws / TRAIL, text).findings
    return [(f.code, f.line, f.column) for f in found]


def _phase(session: Session) -> WorkspacePhase:
    phase = session._phase
    assert phase is not None
    return phase


def _prepared(session: Session) -> Prepared:
    prepared = _phase(session).prepared
    assert isinstance(prepared, Prepared)
    return prepared


@pytest.mark.parametrize("after_cli", [False, True], ids=["own-compiles", "after-cli"])
@pytest.mark.parametrize("kind", READS, ids=[kind.name for kind in READS])
def test_an_imported_type_changed_on_disk_is_seen_by_the_next_edit(
    tsc: Compiler,
    kind: Imported,
    after_cli: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    isolate_env(monkeypatch)
    ws = workspace(_root(tmp_path, kind), kind)
    if after_cli:
        _check_file(ws, kind)
    with _session(ws) as session:
        assert _findings(session, ws, RECORDING) == []
        prepared = _prepared(session)
        assert str(kind.file(ws)) in _phase(session).stamp_paths()
        # After the command line, the declarations and the surface check were its memos:
        # the reads are the ones its run recorded, no compile of the server's told them.
        assert prepared.reads.reused is after_cli
        assert (prepared.declarations.runs == 0) is after_cli
        made = session.phases_made

        edit(ws, kind, BAD)  # no `refresh`: nobody tells the session
        assert _findings(session, ws, RECORDING + "\n") == [FINDING]
        assert session.phases_made == made + 1
        edit(ws, kind, GOOD)
        assert _findings(session, ws, RECORDING + "\n\n") == []
        assert session.phases_made == made + 2
        # Nothing changed since: the phase stays, and the text checked last is answered again.
        assert _findings(session, ws, RECORDING + "#\n") == []
        again = session.check(ws / TRAIL, RECORDING + "\n\n")
        assert (again.findings, again.compiled) == ((), False)
        assert session.phases_made == made + 2


def test_an_imported_type_changed_while_the_check_ran_is_seen_by_the_next_edit(
    tsc: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The author saves the imported file after the compiler read it, before the check ends:
    the phase was made from the old type, so the next edit must not keep it."""
    isolate_env(monkeypatch)
    kind = BY_NAME["tools-build"]
    ws = workspace(_root(tmp_path, kind), kind)
    real = run_check
    saves = [BAD]

    def saved_meanwhile(*args: Any, **kwargs: Any) -> Any:
        report = real(*args, **kwargs)
        if saves:
            edit(ws, kind, saves.pop())
        return report

    monkeypatch.setattr(trailblaze.lsp.session, "run_check", saved_meanwhile)
    with _session(ws) as session:
        assert _findings(session, ws, RECORDING) == []  # as the compiler read it
        assert _findings(session, ws, RECORDING + "\n") == [FINDING]


@pytest.fixture
def served(tsc: Compiler) -> Iterator[list[Client]]:
    del tsc  # installed: the server uses it
    clients: list[Client] = []
    yield clients
    for client in clients:
        client.close()


@pytest.mark.parametrize(
    ("kind", "after_cli"),
    [(BY_NAME["tools-build"], False), (BY_NAME["workspace-package"], True)],
    ids=["tools-build", "workspace-package-after-cli"],
)
def test_the_server_publishes_the_finding_of_an_imported_type_changed_without_notice(
    served: list[Client], kind: Imported, after_cli: bool, tmp_path: Path
) -> None:
    ws = workspace(_root(tmp_path, kind), kind)
    if after_cli:
        _check_file(ws, kind)
    client = Client(ws, env=_env())
    served.append(client)
    client.initialize(ws)
    uri = client.open(ws / TRAIL, RECORDING)
    assert client.wait_diagnostics(uri) == [], client.log()

    edit(ws, kind, BAD)  # no didSave, no didChangeWatchedFiles
    client.change(uri, RECORDING + "\n")
    changed = client.wait_diagnostics(uri)
    assert [(d["code"], d["range"]["start"]) for d in changed] == [DIAGNOSTIC], client.log()
    assert changed[0]["message"] == "Type 'boolean' is not assignable to type 'string'."

    edit(ws, kind, GOOD)
    client.change(uri, RECORDING + "\n\n")
    assert client.wait_diagnostics(uri) == [], client.log()


def test_a_read_the_first_compile_could_not_tell_is_told_before_the_next_phases_compiles(
    tsc: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file stamped as changing while the compile ran (here: dated ahead of the clock) may
    not be what the compile read: its phase is not kept, and the next one tells it first."""
    isolate_env(monkeypatch)
    kind = BY_NAME["tools-build"]
    ws = workspace(_root(tmp_path, kind), kind)
    ahead = time.time_ns() + 60 * 10**9
    os.utime(kind.file(ws), ns=(ahead, ahead))
    with _session(ws) as session:
        assert _findings(session, ws, RECORDING) == []
        assert _prepared(session).reads.covered is False
        assert _findings(session, ws, RECORDING + "\n") == []
        assert session.phases_made == 2
        assert _prepared(session).reads.covered is True
        assert _findings(session, ws, RECORDING + "\n\n") == []
        assert session.phases_made == 2
