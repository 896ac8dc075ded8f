"""Shared fixtures: isolated environment, workspace builders, paths to test data."""

from __future__ import annotations

import fcntl
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from bench.nginx import NginxCache
from trailblaze.toolchain.compilers import (
    TOOLCHAIN_DIR_ENV,
    TS_VERSION,
    TSC_ENV,
    Compiler,
    find_compiler,
    install_library,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
CORPUS = DATA / "corpus"


@pytest.fixture(scope="session", autouse=True)
def _clean_session_env() -> Iterator[None]:
    """`_clean_env` for the whole session, from its start: a fixture of a module's or the
    session's scope is made before any test's own `_clean_env`, and would otherwise run its
    checks with the caller's environment (on a fresh clone: no toolchain directory set, so a
    compiler and zod looked for in the user's cache, where nothing is installed)."""
    with pytest.MonkeyPatch.context() as patch:
        isolate_env(patch)
        yield


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's TRAILBLAZE_* settings, CI or colour preferences.

    The compiler comes from the per-checkout test cache (or the configured one), so checks run
    by tests find the same tsc the `tsc` fixture installed.
    """
    isolate_env(monkeypatch)


class OpenedDatabases:
    """Every sqlite3 connection opened in this process during one test (through
    `sqlite3.connect`: ours, doit's, a test's), with where it was opened."""

    def __init__(self) -> None:
        self.opened: list[tuple[sqlite3.Connection, str]] = []

    def connect(self, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        db: sqlite3.Connection = _sqlite3_connect(*args, **kwargs)
        here = traceback.extract_stack()[:-1]
        ours = [f for f in here if f.filename.startswith(str(ROOT)) and "/.venv" not in f.filename]
        self.opened.append((db, "".join(traceback.format_list(ours[-8:]))))
        return db

    def still_open(self) -> list[str]:
        """Where each connection that was not closed was opened."""
        where = []
        for db, opened_at in self.opened:
            try:
                db.total_changes  # noqa: B018 - raises on a closed connection, from any thread
            except sqlite3.ProgrammingError:
                continue
            where.append(opened_at)
        return where


_sqlite3_connect = sqlite3.connect


@pytest.fixture(autouse=True)
def opened_databases() -> Iterator[OpenedDatabases]:
    """A test fails when it leaves a sqlite3 connection open, whoever opened it.

    Python 3.13 warns (`ResourceWarning: unclosed database`) when a connection is collected
    without being closed, and a connection sits in a reference cycle (its statement cache), so
    it is collected at some later garbage collection, often at the end of the session, where
    the warning fails the whole run and names no test. This holds every test to it on every
    Python, when the test ends, and says where the connection was opened. A test can ask for
    the fixture to look earlier (`still_open()`).
    """
    databases = OpenedDatabases()
    with pytest.MonkeyPatch.context() as patch:  # not `monkeypatch`: its undo is the test's
        patch.setattr(sqlite3, "connect", databases.connect)
        yield databases
    leaked = databases.still_open()
    for db, _ in databases.opened:
        db.close()  # one failure here, not a warning at some later collection
    if leaked:
        pytest.fail(
            f"{len(leaked)} sqlite3 connection(s) left open, opened at:\n" + "\n".join(leaked),
            pytrace=False,
        )


def isolate_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `_clean_env` does, for fixtures of a wider scope (`pytest.MonkeyPatch.context()`)."""
    for name in list(os.environ):
        if name.startswith("TRAILBLAZE_") and name not in (TSC_ENV, TOOLCHAIN_DIR_ENV):
            monkeypatch.delenv(name)
    # CI makes a type check that could not run fatal by default: tests choose that themselves.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(TOOLCHAIN_DIR_ENV, str(toolchain_cache()))
    # The user cache (the kept phase's secret, `state/kept.py`) is the checkout's, not the
    # home of whoever runs the suite.
    monkeypatch.setenv("XDG_CACHE_HOME", str(ROOT / ".cache" / "xdg"))
    monkeypatch.setenv("NO_COLOR", "1")
    # Python itself caches the bytecode of a workspace's `dodo.py` in `__pycache__/` when doit
    # imports it: a file of Python's, not ours, that the tests which snapshot a workspace to
    # prove we wrote nothing else would see, or not, by the caller's environment.
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")


def toolchain_cache() -> Path:
    configured = os.environ.get(TOOLCHAIN_DIR_ENV, "").strip()
    return Path(configured) if configured else ROOT / ".cache" / "toolchain"


def run_python(
    cwd: Path,
    *argv: str,
    env: Mapping[str, str] | None = None,
    trailblaze_env: bool = True,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`python *argv` in `cwd` in a child process: text output captured, any exit status returned.

    The child inherits this process's environment, as `_clean_env` left it (the test session's
    toolchain directory included), plus `NO_COLOR=1` and `env`. `trailblaze_env=False` drops
    every `TRAILBLAZE_*` variable, the toolchain directory too, before `env` is applied.
    """
    full = {
        k: v for k, v in os.environ.items() if trailblaze_env or not k.startswith("TRAILBLAZE_")
    }
    full["NO_COLOR"] = "1"
    full.update(env or {})
    return subprocess.run(
        [sys.executable, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=full,
        check=False,
        timeout=timeout,
    )


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Create files under `root`; text is dedented so tests can indent YAML naturally."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
    return root


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


MINIMAL_MANIFEST = """\
id: {id}
target:
  display_name: {id}
"""


@pytest.fixture
def repo_workspace() -> Iterator[None]:
    """Holds a lock while a test checks or replays this checkout's own workspace.

    Such a run writes into the checkout's `.trailblaze/` (its state, its compiled scripted
    tools, which one test sees gone afterwards): under `pytest -n 2` (`.ci/run`) these tests
    run one at a time, whichever worker has them.
    """
    lock = ROOT / ".cache" / "repo-workspace.lock"
    lock.parent.mkdir(exist_ok=True)
    with lock.open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


REPO_WORKSPACE = pytest.mark.usefixtures("repo_workspace")
"""The mark of a test that checks or replays this checkout's own workspace (`repo_workspace`)."""


@pytest.fixture
def compact_ws(tmp_path: Path) -> Path:
    """An empty compact-layout workspace with one target trailmap `app`."""
    write_tree(tmp_path, {"trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app")})
    return tmp_path


@pytest.fixture(scope="session")
def tsc() -> Compiler:
    """TypeScript 7.0.2 (or the `TRAILBLAZE_TSC` override), installed through npm on first use.

    Into a per-checkout cache, `.cache/toolchain`, so the first session downloads it and later
    ones reuse it; `TRAILBLAZE_TOOLCHAIN_DIR` chooses another cache (CI can keep one across runs).
    With it zod, whose declarations the SDK's re-export pulls into every program: a test that
    compiles the surfaces itself must not depend on some earlier check having installed it.
    """
    install_library("zod", base=toolchain_cache())
    return find_compiler(TS_VERSION, install=True, base=toolchain_cache())


@pytest.fixture(scope="module")
def nginx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NginxCache]:
    """nginx on loopback (WebDAV) as a real remote cache: one per test module that asks for it."""
    with NginxCache(tmp_path_factory.mktemp("nginx")) as server:
        yield server


@pytest.fixture
def server(nginx: NginxCache) -> NginxCache:
    """The module's nginx, emptied for each test."""
    nginx.clear()
    return nginx


def pytest_configure(config: pytest.Config) -> None:
    # A suite started in the background of a non-interactive shell (`pytest &`) inherits SIGINT
    # ignored, and so would every child: a Python that starts with it ignored never raises
    # KeyboardInterrupt, and the ^C tests would see a program that cannot be interrupted. A
    # handler of our own is reset to the default in a child, as a terminal's process has it.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
