"""`trailblaze lsp` over stdio, driven by our own client (`client.py`).

The diagnostics of an open trail are `trailblaze check --format json FILE`'s findings for the
same text: the same codes, messages and severities, at the same places (in LSP units: 0-based
lines, UTF-16 columns), from the editor's unsaved text, whatever the file on disk holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.lspclient import Client, uri_of
from tests.cases import TRAILS_DIR, Case, build_workspace, discover
from tests.conftest import dedent, run_python, toolchain_cache
from tests.lsp.trails import INPUT_TEXT, PICKS
from trailblaze.toolchain.compilers import TOOLCHAIN_DIR_ENV, TSC_ENV, Compiler

pytestmark = pytest.mark.tsc

ALL = discover()


def _chosen() -> list[Case]:
    """One trail case per area whose cases have type-gate findings, and one of each area of
    the other gates (parse, runIf, argument tokens, warnings, quoting), wide characters too."""
    picked: dict[str, Case] = {}
    for case in ALL:
        if not case.path.endswith(".trail.yaml") or not case.path.startswith(TRAILS_DIR):
            continue
        area = case.path.split("/")[3]
        kinds = {e.kind for e in case.expected}
        if area not in picked and (
            "type" in kinds or (area in ("parse", "runif", "args", "warnings") and kinds)
        ):
            picked[area] = case
    picked["wide"] = next(
        c for c in ALL if c.name == "args/token-after-a-wide-character.trail.yaml"
    )
    return sorted(picked.values(), key=lambda c: c.path)


CHOSEN = _chosen()
MANIFEST_CASE = next(c for c in ALL if c.name.startswith("manifest/dependency-unknown/"))

WIDE = dedent(
    """
    config:
      target: cases
    trail:
      - step: Type ✓ and 😀
        recording:
          android:
            - inputText: {text: "😀😀 é", txt: 1}
            - cases_pickDate: {day: "😀", month: MAR}
    """
)
"""Findings after characters of two UTF-16 units, on the lines they are found."""

CLEAN = "config:\n  target: cases\ntrail: []\n"


@pytest.fixture(scope="module")
def workspace(tsc: Compiler, tmp_path_factory: pytest.TempPathFactory) -> Path:
    del tsc  # installed: the server and the command use it
    root = build_workspace(tmp_path_factory.mktemp("lsp") / "ws", [*CHOSEN, MANIFEST_CASE])
    (root / TRAILS_DIR / "wide.trail.yaml").write_text(CLEAN, "utf-8")
    return root


@pytest.fixture(scope="module")
def client(workspace: Path) -> Iterator[Client]:
    server = Client(workspace, env=_env())
    server.initialize(workspace)
    yield server
    server.close()


def _env() -> dict[str, str]:
    """The test session's environment as `isolate_env` makes it, for the server's process
    (started by a module-wide fixture, before a test's own environment is cleaned)."""
    keep = (TSC_ENV, TOOLCHAIN_DIR_ENV)
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "CI" and (not k.startswith("TRAILBLAZE_") or k in keep)
    }
    env[TOOLCHAIN_DIR_ENV] = str(toolchain_cache())
    env["NO_COLOR"] = "1"
    return env


def _utf16(line: str, column: int) -> int:
    return len(line[: column - 1].encode("utf-16-le")) // 2


def _expected(workspace: Path, path: Path, text: str) -> list[tuple[Any, ...]]:
    """`trailblaze check --format json FILE` for `text`, as LSP diagnostics' essentials."""
    path.write_text(text, "utf-8")
    done = run_python(
        workspace, "-m", "trailblaze", "check", "--format", "json", str(path), env=_env()
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    lines = text.splitlines()
    out = []
    for finding in report["findings"]:
        assert Path(workspace, finding["path"]).resolve() == path.resolve(), finding
        line = finding["line"]
        character = _utf16(lines[line - 1], finding["column"]) if 0 < line <= len(lines) else 0
        out.append(
            (max(line - 1, 0), character, finding["code"], finding["message"], finding["fatal"])
        )
    return sorted(out)


def _got(diagnostics: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted(
        (
            d["range"]["start"]["line"],
            d["range"]["start"]["character"],
            d["code"],
            d["message"],
            d["severity"] == 1,
        )
        for d in diagnostics
    )


@pytest.mark.parametrize("case", CHOSEN, ids=[c.name for c in CHOSEN])
def test_diagnostics_are_the_checks_findings(client: Client, workspace: Path, case: Case) -> None:
    path = workspace / case.path
    text = case.source.read_text("utf-8")
    # The file on disk holds a clean trail: the diagnostics are the buffer's.
    path.write_text(CLEAN, "utf-8")
    uri = client.open(path, text)
    diagnostics = client.wait_diagnostics(uri)
    expected = _expected(workspace, path, text)
    assert expected, f"{case.name}: the check gives no finding; the case is no test"
    assert _got(diagnostics) == expected, client.log()
    assert {d["source"] for d in diagnostics} == {"trailblaze"}


def test_columns_are_utf16_units(client: Client, workspace: Path) -> None:
    path = workspace / TRAILS_DIR / "wide.trail.yaml"
    uri = client.open(path, WIDE)
    got = _got(client.wait_diagnostics(uri))
    expected = _expected(workspace, path, WIDE)
    assert got == expected, client.log()
    lines = WIDE.splitlines()
    # `txt` after two emoji: its code-point column and its UTF-16 column differ by two.
    line = next(i for i, text in enumerate(lines) if "txt" in text)
    txt = next(d for d in got if d[0] == line)
    assert txt[1] == _utf16(lines[line], lines[line].index("txt") + 1)
    assert txt[1] == lines[line].index("txt") + 2
    assert {d[2] for d in got} >= {"TS2561", "TS2322"}, got


def test_a_finding_in_the_trailmaps_manifest_goes_to_the_manifest(
    client: Client, workspace: Path
) -> None:
    path = workspace / TRAILS_DIR / "of-a-broken-trailmap.trail.yaml"
    text = "config:\n  target: dependency-unknown\ntrail: []\n"
    manifest = workspace / MANIFEST_CASE.path
    uri = client.open(path, text)
    assert client.wait_diagnostics(uri) == []
    on_manifest = client.wait_diagnostics(uri_of(manifest))
    path.write_text(text, "utf-8")
    done = run_python(
        workspace, "-m", "trailblaze", "check", "--format", "json", str(path), env=_env()
    )
    findings = json.loads(done.stdout)["findings"]
    assert [Path(workspace, f["path"]) for f in findings] == [manifest]
    lines = manifest.read_text("utf-8").splitlines()
    assert _got(on_manifest) == sorted(
        (
            f["line"] - 1,
            _utf16(lines[f["line"] - 1], f["column"]),
            f["code"],
            f["message"],
            f["fatal"],
        )
        for f in findings
    )
    assert [d["code"] for d in on_manifest] == ["unknown-dependency"]
    # Closed, the trail's diagnostics and those it gave its manifest are withdrawn.
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.wait_diagnostics(uri_of(manifest)) == []


def test_an_edit_changes_the_diagnostics(client: Client, workspace: Path) -> None:
    path = workspace / TRAILS_DIR / "edited.trail.yaml"
    bad = INPUT_TEXT.replace("text: Ann", "txt: Ann")
    path.write_text(bad, "utf-8")
    uri = client.open(path)
    first = client.wait_diagnostics(uri)
    assert [(d["code"], d["range"]["start"]) for d in first] == [
        ("TS2561", {"line": 7, "character": 12})
    ]
    client.change(uri, bad.replace("txt", "text"))
    assert client.wait_diagnostics(uri) == []
    client.change(uri, bad.replace("txt: Ann", "text: Ann\n            hideKeyboardAfter: maybe"))
    again = client.wait_diagnostics(uri)
    assert [(d["code"], d["range"]["start"]) for d in again] == [
        ("TS2322", {"line": 8, "character": 31})  # at the value
    ], again
    assert again[0]["message"] == "Type 'string' is not assignable to type 'boolean | undefined'."
    # Back to a text already checked: the same verdict, given again.
    client.change(uri, bad)
    assert client.wait_diagnostics(uri) == first
    assert path.read_text("utf-8") == bad  # the buffer never reaches the file


def test_a_burst_of_edits_ends_with_the_last_texts_diagnostics(
    client: Client, workspace: Path
) -> None:
    """Edits sent faster than they are checked: the texts overtaken are not answered after a
    newer one, and the last publish is the last text's verdict, for its version."""
    path = workspace / TRAILS_DIR / "burst.trail.yaml"
    text = INPUT_TEXT.replace("text: Ann", "text: NAME")
    path.write_text(text.replace("NAME", "Ann"), "utf-8")
    uri = client.open(path)
    assert client.wait_diagnostics(uri) == []
    before = len(client.notifications)
    names = [f'"Burst {n}"' for n in range(11)] + ["[11]"]
    for name in names:
        client.change(uri, text.replace("NAME", name))
    last = client.wait_publish(uri)
    assert last["params"]["version"] == len(names) + 1
    final = text.replace("NAME", names[-1])
    assert _got(last["params"]["diagnostics"]) == _expected(workspace, path, final)
    assert [d["code"] for d in last["params"]["diagnostics"]] == ["TS2322"]
    published = [
        m["params"]["version"]
        for m in client.notifications[before:]
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    ]
    assert published == sorted(published), published  # never an older text after a newer
    assert published[-1] == len(names) + 1


def test_a_text_far_larger_than_the_readers_buffer_is_read_whole(
    client: Client, workspace: Path
) -> None:
    """The event loop's reader pauses its pipe past 128 KiB of unread input: a document of
    a megabyte still arrives whole, and its last line is checked."""
    path = workspace / TRAILS_DIR / "long.trail.yaml"
    filler = "".join(f"# {'x' * 70} {n}\n" for n in range(14_000))
    text = f"config:\n  target: cases\ntrail: []\n{filler}bogus: 1\n"
    assert len(text) > 1_000_000
    path.write_text(CLEAN, "utf-8")
    uri = client.open(path, text)
    found = client.wait_diagnostics(uri)
    assert [(d["code"], d["range"]["start"]["line"]) for d in found] == [
        ("unknown-key", text.count("\n") - 1)
    ], found
    assert path.read_text("utf-8") == CLEAN


def test_a_tool_edit_refreshes_the_trails_that_call_it(client: Client, workspace: Path) -> None:
    tool = workspace / "trailmaps/cases/tools/cases_pickDate.ts"
    source = tool.read_text("utf-8")
    path = workspace / TRAILS_DIR / "picks.trail.yaml"
    path.write_text(PICKS, "utf-8")
    uri = client.open(path)
    assert client.wait_diagnostics(uri) == []
    try:
        tool.write_text(source.replace("  day: number;", "  day: string;"), "utf-8")
        client.notify(
            "workspace/didChangeWatchedFiles", {"changes": [{"uri": uri_of(tool), "type": 2}]}
        )
        # No edit of the trail: the notice alone checks it again.
        changed = client.wait_diagnostics(uri)
        assert [(d["code"], d["range"]["start"]["line"]) for d in changed] == [("TS2322", 7)]
    finally:
        tool.write_text(source, "utf-8")
        client.notify(
            "workspace/didChangeWatchedFiles", {"changes": [{"uri": uri_of(tool), "type": 2}]}
        )
    assert client.wait_diagnostics(uri) == []


def _position(text: str, marker: str) -> tuple[str, dict[str, int]]:
    """`text` without `marker`, and the marker's LSP position."""
    before = text[: text.index(marker)]
    line = before.count("\n")
    column = before.split("\n")[-1]
    return text.replace(marker, ""), {
        "line": line,
        "character": len(column.encode("utf-16-le")) // 2,
    }


def test_completion_of_tool_names_and_argument_keys(client: Client, workspace: Path) -> None:
    path = workspace / TRAILS_DIR / "typing.trail.yaml"
    template = dedent(
        """
        config:
          target: cases
        trail:
          - step: Pick a date
            recording:
              android:
                - cases_pi<TOOL>
                - inputText:
                    <ARG>
                - cases_pickDate:
                    day: 3
                    <PICK>
        """
    )
    path.write_text("", "utf-8")
    text, tool_at = _position(template.replace("<ARG>", "").replace("<PICK>", ""), "<TOOL>")
    uri = client.open(path, text)
    client.wait_diagnostics(uri)
    found = client.request(
        "textDocument/completion", {"textDocument": {"uri": uri}, "position": tool_at}
    )
    assert [item["label"] for item in found["items"]] == ["cases_pickDate"]
    assert (
        found["items"][0]["detail"]
        == 'cases_pickDate(day: number, month: "JAN" | "FEB" | "MAR" | "APR" | "MAY" | "JUN" | "JUL" | "AUG" | "SEP" | "OCT" | "NOV" | "DEC", note?: string)'
    )

    text, arg_at = _position(template.replace("<TOOL>", "").replace("<PICK>", ""), "<ARG>")
    client.change(uri, text)
    found = client.request(
        "textDocument/completion", {"textDocument": {"uri": uri}, "position": arg_at}
    )
    labels = [item["label"] for item in found["items"]]
    assert labels == ["text", "reasoning", "hideKeyboardAfter"]
    assert found["items"][0]["detail"] == "text: string"

    text, pick_at = _position(template.replace("<TOOL>", "").replace("<ARG>", ""), "<PICK>")
    client.change(uri, text)
    found = client.request(
        "textDocument/completion", {"textDocument": {"uri": uri}, "position": pick_at}
    )
    # A scripted tool's keys, as its TypeScript module types them; `day` is there already.
    assert [item["label"] for item in found["items"]] == ["month", "note"]


def test_hover_shows_a_tools_description_and_arguments(client: Client, workspace: Path) -> None:
    path = workspace / TRAILS_DIR / "hover.trail.yaml"
    text, at = _position(
        dedent(
            """
            config:
              target: cases
            trail:
              - step: Type ✓
                recording:
                  android:
                    - input<HERE>Text:
                        text: Ann
            """
        ),
        "<HERE>",
    )
    path.write_text(text, "utf-8")
    uri = client.open(path)
    client.wait_diagnostics(uri)
    found = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": at})
    value = found["contents"]["value"]
    assert value.startswith(
        "```ts\ninputText(text: string, reasoning?: string, hideKeyboardAfter?: boolean)\n```"
    )
    assert "Types the given text into whichever field has focus." in value
    line = text.splitlines()[at["line"]]
    assert found["range"]["start"] == {"line": at["line"], "character": line.index("inputText")}

    text_at = {"line": at["line"] + 1, "character": line.index("inputText") + 3}
    found = client.request(
        "textDocument/hover", {"textDocument": {"uri": uri}, "position": text_at}
    )
    assert found["contents"]["value"].startswith("```ts\ntext: string\n```")


def test_definition_of_a_scripted_tool_is_its_export(client: Client, workspace: Path) -> None:
    path = workspace / TRAILS_DIR / "definition.trail.yaml"
    text, at = _position(
        dedent(
            """
            config:
              target: cases
            trail:
              - step: Pick
                recording:
                  android:
                    - cases_pick<HERE>Date:
                        day: 3
                        month: MAR
            """
        ),
        "<HERE>",
    )
    path.write_text(text, "utf-8")
    uri = client.open(path)
    client.wait_diagnostics(uri)
    found = client.request(
        "textDocument/definition", {"textDocument": {"uri": uri}, "position": at}
    )
    tool = workspace / "trailmaps/cases/tools/cases_pickDate.ts"
    export = next(
        i
        for i, line in enumerate(tool.read_text("utf-8").splitlines())
        if line.startswith("export const cases_pickDate")
    )
    assert found["uri"] == uri_of(tool)
    assert found["range"]["start"] == {"line": export, "character": 0}
    # A framework tool has no source to go to.
    framework_at = {"line": at["line"] + 10, "character": 0}
    assert (
        client.request(
            "textDocument/definition", {"textDocument": {"uri": uri}, "position": framework_at}
        )
        is None
    )


def test_without_pygls_the_command_says_how_to_install_it(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow"
    (shadow / "pygls").mkdir(parents=True)
    (shadow / "pygls" / "__init__.py").write_text(
        "raise ImportError(\"No module named 'pygls'\")\n", "utf-8"
    )
    done = run_python(
        tmp_path,
        "-m",
        "trailblaze",
        "lsp",
        env={**_env(), "PYTHONPATH": str(shadow)},
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "trailblaze lsp: lsp needs pygls (No module named 'pygls'); "
        "install it with: pip install 'trailblaze-doit[lsp]'"
    )


def test_messages_from_a_file_on_standard_input_are_answered(tmp_path: Path) -> None:
    """An editor's pipe is read by the event loop; a regular file (which an event loop cannot
    wait on) is read as pygls reads it, and answered the same."""
    messages: list[dict[str, Any]] = [
        {"id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}},
        {"method": "initialized", "params": {}},
        {"id": 2, "method": "shutdown", "params": None},
        {"method": "exit", "params": None},
    ]
    wire = tmp_path / "in.jsonrpc"
    with wire.open("wb") as out:
        for message in messages:
            body = json.dumps({"jsonrpc": "2.0", **message}).encode()
            out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    with wire.open("rb") as given:
        done = subprocess.run(
            [sys.executable, "-m", "trailblaze", "lsp"],
            stdin=given,
            capture_output=True,
            cwd=tmp_path,
            env=_env(),
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(body) for body in re_split_bodies(done.stdout)]
    by_id = {a["id"]: a for a in answers if "id" in a}
    assert by_id[1]["result"]["serverInfo"]["name"] == "trailblaze"
    assert "completionProvider" in by_id[1]["result"]["capabilities"]
    assert by_id[2]["result"] is None


def re_split_bodies(stream: bytes) -> list[bytes]:
    """The bodies of the messages in `stream` (each after its `Content-Length` header)."""
    bodies = []
    while stream:
        head, _, rest = stream.partition(b"\r\n\r\n")
        fields = dict(line.split(b":", 1) for line in head.split(b"\r\n"))
        length = int(fields[b"Content-Length"])
        bodies.append(rest[:length])
        stream = rest[length:]
    return bodies


def test_a_header_line_past_the_readers_limit_stops_the_server_with_a_reason(
    tmp_path: Path,
) -> None:
    """Not a client's message: the server says why it stops, and stops, without a traceback."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    ).encode()
    sent = b"X-Padding: " + b"x" * 100_000 + b"\r\n"
    sent += b"Content-Length: %d\r\n\r\n" % len(body) + body
    done = subprocess.run(
        [sys.executable, "-m", "trailblaze", "lsp"],
        input=sent,  # through a pipe: read on the event loop
        capture_output=True,
        cwd=tmp_path,
        env=_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert b"header line longer than 64 KiB" in done.stderr
    assert b"Traceback" not in done.stderr
