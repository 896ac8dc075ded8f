"""The trail JSON Schema in a real editor server: `yaml-language-server` over LSP.

The server is the npm package (pinned), installed by the test session into the toolchain cache
like the compiler, and run with Node over stdio JSON-RPC the way an editor runs it: `initialize`,
`workspace/didChangeConfiguration`, `textDocument/didOpen`, then its
`textDocument/publishDiagnostics`. The schema is what `trailblaze surfaces` writes to
`tools/trail.schema.json`, and the editor is pointed at it exactly as docs/editors.md says: its
modeline (one server, no settings) and its `yaml.schemas` setting (another server), both read
from that page so it cannot drift from what works.

The trails are the seeded workspace's (`tests/data/seeded/`, trailmap `shop`): a good trail has no
diagnostic and is matched to our schema (asked of the server, so an empty list cannot mean
"no schema"), and a bad trail has each diagnostic where `trailblaze check` puts its finding.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.conftest import DATA, ROOT, isolate_env, toolchain_cache
from tests.golden import GOLDEN_DIR
from trailblaze.cli.main import main
from trailblaze.toolchain.compilers import ToolchainError
from trailblaze.toolchain.npm import install_npm_tool
from trailblaze.toolchain.proc import run

pytestmark = pytest.mark.slow

# 1.25 is the newest release whose package supports the Node this project's machines have (20);
# 2.x requires Node 22.13.
VERSION = "1.25.0"
WAIT = 60.0
"""Seconds to wait for one answer: the server starts in about 3 s on a loaded machine."""

EDITORS_PAGE = ROOT / "docs" / "editors.md"
SEEDED_SHOP = DATA / "seeded" / "trailmaps" / "shop"
GOOD = "trailmaps/shop/trails/browse.trail.yaml"
BAD = "trailmaps/shop/trails/checkout.trail.yaml"
# What the server says about the bad trail: (line, character) 0-based, as LSP counts them.
BAD_DIAGNOSTICS = [
    ((24, 33), 'Incorrect type. Expected "integer".'),  # timeToWaitInSeconds: soon
    ((28, 16), "Property textRegx is not allowed."),  # the misspelled selector key
]


def _server_script(directory: Path) -> Path:
    return directory / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"


def _probe(directory: Path) -> None:
    script = _server_script(directory)
    if not script.is_file():
        raise ToolchainError(f"{script}: missing")
    result = run(["node", str(script), "--version"], timeout=60)
    if not result.ok or result.stdout.strip() != VERSION:
        raise ToolchainError(f"{script} --version: exit {result.returncode}: {result.stderr}")


@pytest.fixture(scope="session")
def yaml_language_server() -> Path:
    directory = install_npm_tool(
        f"yaml-language-server-{VERSION}",
        [f"yaml-language-server@{VERSION}"],
        probe=_probe,
        base=toolchain_cache(),
    )
    return _server_script(directory)


def documented_modeline() -> str:
    """The modeline line of the editors page's yaml example."""
    [line] = re.findall(r"^# yaml-language-server: \$schema=\S+$", EDITORS_PAGE.read_text(), re.M)
    return str(line)


def documented_settings() -> dict[str, Any]:
    """The editors page's `.vscode/settings.json` example, as the editor sends it to the server."""
    blocks = re.findall(r"```json\n(.*?)```", EDITORS_PAGE.read_text(), re.S)
    [settings] = [json.loads(b) for b in blocks if '"yaml.schemas"' in b]
    assert isinstance(settings, dict)
    return {"yaml": {"schemas": settings["yaml.schemas"]}}


class LanguageServer:
    """One `yaml-language-server --stdio` child, driven as an editor drives it."""

    def __init__(self, script: Path, root: Path, settings: dict[str, Any]) -> None:
        # No schema store: the server must not go to the network, and only our schema counts.
        yaml = {"validate": True, "schemaStore": {"enable": False}, **settings.get("yaml", {})}
        self.settings: dict[str, Any] = {"yaml": yaml}
        self.process = subprocess.Popen(
            ["node", str(script), "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=root,
            start_new_session=True,
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[bytes] = []
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        self.threads = [
            threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True),
        ]
        for thread in self.threads:
            thread.start()
        self.next_id = 0
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {
                    "workspace": {"configuration": True, "didChangeConfiguration": {}},
                    "textDocument": {"publishDiagnostics": {}},
                },
            },
        )
        self.notify("initialized", {})
        self.notify("workspace/didChangeConfiguration", {"settings": self.settings})

    # -- the wire: Content-Length framed JSON-RPC ---------------------------------------------

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = None
            while (line := stream.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if line == b"" or length is None:
                self.messages.put(None)
                return
            self.messages.put(json.loads(stream.read(length)))

    def _drain(self, stream: IO[bytes]) -> None:
        self.stderr.extend(stream)

    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
        self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        wanted = self.next_id
        self._send({"id": wanted, "method": method, "params": params})
        answer = self._until(lambda m: m.get("id") == wanted and "method" not in m, method)
        assert "error" not in answer, answer
        return answer.get("result")

    def _until(self, done: Any, what: str) -> dict[str, Any]:
        """Serve the server's own requests and record diagnostics until `done(message)`."""
        deadline = time.monotonic() + WAIT
        while True:
            try:
                message = self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"yaml-language-server: no answer to {what} in {WAIT:.0f} s")
            if message is None:
                err = b"".join(self.stderr).decode("utf-8", "replace")
                pytest.fail(f"yaml-language-server exited while waiting for {what}:\n{err}")
            if message.get("method") == "textDocument/publishDiagnostics":
                params = message["params"]
                self.diagnostics[params["uri"]] = params["diagnostics"]
            elif "id" in message and "method" in message:
                self._answer(message)
            if done(message):
                return message

    def _answer(self, message: dict[str, Any]) -> None:
        result: Any = None
        if message["method"] == "workspace/configuration":
            # The server asks for several sections ('yaml', 'http', '[yaml]', 'editor').
            result = [self.settings.get(i.get("section", "")) for i in message["params"]["items"]]
        self._send({"id": message["id"], "result": result})

    # -- what a test asks -----------------------------------------------------------------------

    def open(self, path: Path, text: str) -> list[dict[str, Any]]:
        """Open a document and wait for the diagnostics the server publishes for it."""
        uri = path.as_uri()
        self.diagnostics.pop(uri, None)
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}},
        )
        self._until(lambda _: uri in self.diagnostics, f"the diagnostics of {path.name}")
        return self.diagnostics[uri]

    def schemas(self, path: Path) -> list[str]:
        """The URIs of the schemas the server applies to an open document."""
        return [s["uri"] for s in self.request("yaml/get/jsonSchema", path.as_uri()) or []]

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                self.request("shutdown", None)
                self.notify("exit", None)
                self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            for thread in self.threads:
                thread.join(timeout=10)
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seeded `shop` trailmap with the surfaces `trailblaze surfaces` writes for it."""
    root = tmp_path_factory.mktemp("lsp") / "ws"
    shutil.copytree(SEEDED_SHOP, root / "trailmaps" / "shop")
    with pytest.MonkeyPatch.context() as mp:
        isolate_env(mp)
        assert main(["surfaces", str(root)]) == 0
    assert (root / "trailmaps/shop/tools/trail.schema.json").is_file()
    return root


def _server(script: Path, root: Path, settings: dict[str, Any]) -> Iterator[LanguageServer]:
    server = LanguageServer(script, root, settings)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def modeline_server(yaml_language_server: Path, workspace: Path) -> Iterator[LanguageServer]:
    """A server with no schema settings: only a document's modeline can give it one."""
    yield from _server(yaml_language_server, workspace, {})


@pytest.fixture(scope="module")
def settings_server(yaml_language_server: Path, workspace: Path) -> Iterator[LanguageServer]:
    yield from _server(yaml_language_server, workspace, documented_settings())


def found(
    diagnostics: list[dict[str, Any]], *, shift: int = 0
) -> list[tuple[tuple[int, int], str]]:
    return sorted(
        ((d["range"]["start"]["line"] - shift, d["range"]["start"]["character"]), d["message"])
        for d in diagnostics
    )


def with_modeline(workspace: Path, trail: str) -> tuple[Path, str]:
    """A copy of `trail` with the editors page's modeline as its first line, in a sibling directory
    of `trails/` (the modeline's path is relative to the trail)."""
    source = workspace / trail
    path = source.parent.parent / "modeline" / source.name
    path.parent.mkdir(exist_ok=True)
    text = documented_modeline() + "\n" + source.read_text("utf-8")
    path.write_text(text, "utf-8")
    return path, text


def test_the_documented_modeline_gives_a_good_trail_no_diagnostic_and_a_bad_one_its_errors(
    modeline_server: LanguageServer, workspace: Path
) -> None:
    schema = (workspace / "trailmaps/shop/tools/trail.schema.json").as_uri()
    good, text = with_modeline(workspace, GOOD)
    assert modeline_server.open(good, text) == []
    assert modeline_server.schemas(good) == [schema]
    bad, text = with_modeline(workspace, BAD)
    assert found(modeline_server.open(bad, text), shift=1) == BAD_DIAGNOSTICS
    assert modeline_server.schemas(bad) == [schema]
    # The control: without the modeline this server has no schema for a trail.
    plain = workspace / GOOD
    assert modeline_server.open(plain, plain.read_text("utf-8")) == []
    assert modeline_server.schemas(plain) == []


def test_the_documented_yaml_schemas_setting_gives_the_same_verdicts(
    settings_server: LanguageServer, workspace: Path
) -> None:
    schema = (workspace / "trailmaps/shop/tools/trail.schema.json").as_uri()
    good = workspace / GOOD
    assert settings_server.open(good, good.read_text("utf-8")) == []
    assert settings_server.schemas(good) == [schema]
    bad = workspace / BAD
    diagnostics = settings_server.open(bad, bad.read_text("utf-8"))
    assert found(diagnostics) == BAD_DIAGNOSTICS
    assert {d["severity"] for d in diagnostics} == {1}  # errors


def test_the_editor_flags_each_trail_where_the_check_does(
    settings_server: LanguageServer, workspace: Path
) -> None:
    """Every seeded trail: the server's diagnostics start where the check's fatal findings do.

    The check's findings are its pinned JSON report (`tests/report/test_golden.py`), 1-based.
    """
    report = json.loads((GOLDEN_DIR / "reports" / "report.json").read_text("utf-8"))
    editor: dict[str, list[tuple[tuple[int, int], str]]] = {}
    check: dict[str, list[tuple[tuple[int, int], str]]] = {}
    for trail in sorted((workspace / "trailmaps/shop/trails").glob("*.trail.yaml")):
        rel = trail.relative_to(workspace).as_posix()
        editor[trail.name] = found(settings_server.open(trail, trail.read_text("utf-8")))
        check[trail.name] = sorted(
            ((f["line"] - 1, f["column"] - 1), f["message"])
            for f in report["findings"]
            if f["path"] == rel and f["fatal"]
        )
    assert len(editor) == 7
    # The one difference, listed in docs/editors.md: a trail of another target under this trailmap's
    # schema is red in the editor; the check counts it as not type-checked ("unknown target").
    assert editor.pop("elsewhere.trail.yaml") == [((1, 10), 'Value must be "shop".')]
    assert check.pop("elsewhere.trail.yaml") == []
    positions = {name: [p for p, _ in found] for name, found in editor.items()}
    assert positions == {name: [p for p, _ in found] for name, found in check.items()}
    assert sum(map(len, positions.values())) == 5


def test_trailblaze_schema_prints_the_schema_surfaces_wrote(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    capsys.readouterr()
    assert main(["schema", "shop"]) == 0
    written = (workspace / "trailmaps/shop/tools/trail.schema.json").read_text("utf-8")
    # The same document to the byte (UTF-8, indented by two: written by orjson in a fraction
    # of a millisecond, where json.dumps took some 3 ms per trailmap of a cold check's start).
    assert capsys.readouterr().out == written
