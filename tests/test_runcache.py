"""A whole check answered by one run entry of the remote cache, against nginx (WebDAV) on
loopback and the fault proxy: hit, miss, a partial hit, faults, read-only, altered bodies."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.nginx import NginxCache
from tests.conftest import ROOT, isolate_env, write_tree
from tests.faultproxy import FaultProxy, refused_url
from tests.test_remote import BROKEN_TRAIL
from trailblaze import artifacts, bundled, sdk
from trailblaze.check import last_stats
from trailblaze.cli import main
from trailblaze.finding import Finding
from trailblaze.options import CheckOptions
from trailblaze.remote import TIMEOUT_ENV
from trailblaze.report import REASON_INFRA, Report, TrailStatus
from trailblaze.runcache import (
    ENTRY_POINT_GROUP,
    OUR_BANNER,
    RunCache,
    RunInputs,
    index_key,
    proven,
    run_inputs,
)
from trailblaze.sdk import OURS_LABEL
from trailblaze.toolchain import TSC_ENV, Compiler
from trailblaze.workspace import GENERATED_TOOL_FILES, find_workspace, scan

EDITED = "trailmaps/notes/trails/broken.trail.yaml"
REJECTED = "trailmaps/notes/trails/rejected.trail.yaml"
"""A trail the parse gate rejects (an unknown key): its status travels without a reason."""


def clone(where: Path) -> Path:
    """A fresh copy of the bundled workspace as `git clone` gives it: no scratch directory, no
    generated surfaces, one trail with a type finding."""
    shutil.copytree(
        ROOT / "trailmaps",
        where / "trailmaps",
        ignore=shutil.ignore_patterns(".trailblaze", *GENERATED_TOOL_FILES),
    )
    write_tree(where, {EDITED: BROKEN_TRAIL, REJECTED: "config:\n  target: notes\n  colour: red\n"})
    return where


def cli(ws: Path, out: Path, *extra: str) -> int:
    """`trailblaze check --format json --output OUT` in the workspace, in this process."""
    argv = ["check", "--workspace", str(ws), "--path-base", str(ws), "--format", "json"]
    argv += ["--output", str(out)]
    return main([*argv, *extra])


def shown(out: Path) -> dict[str, Any]:
    """A JSON report without the two fields that name the clone's directory."""
    data: dict[str, Any] = json.loads(out.read_text("utf-8"))
    data.pop("workspace")
    data.pop("path_base", None)
    return data


def generated(ws: Path) -> dict[str, bytes]:
    """Every file a check generates into the workspace (the trailmaps' surfaces, .gitignore)."""
    return {
        str(p.relative_to(ws)): p.read_bytes()
        for p in sorted((ws / "trailmaps").rglob("*"))
        if p.is_file() and (p.name in GENERATED_TOOL_FILES or p.name == ".gitignore")
    }


def run_entries(server: NginxCache) -> dict[str, bytes]:
    """The entries that are run entries (a CAS body that is compressed, not a trail's JSON)."""
    entries = server.entries()
    out = {}
    for name, data in entries.items():
        if name.startswith("ac/"):
            entry = json.loads(data)
            if isinstance(entry.get("count"), int) or _is_run_body(
                entries.get(f"cas/{entry.get('sha256')}")
            ):
                out[name] = data
        elif _is_run_body(data):
            out[name] = data
    return out


def _is_run_body(data: bytes | None) -> bool:
    if data is None:
        return False
    try:
        zlib.decompress(data)
    except zlib.error:
        return False
    return True


@pytest.fixture(scope="module")
def nginx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NginxCache]:
    with NginxCache(tmp_path_factory.mktemp("nginx")) as server:
        yield server


@pytest.fixture
def server(nginx: NginxCache) -> NginxCache:
    nginx.clear()
    return nginx


@pytest.fixture(scope="module")
def local(tsc: Compiler, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A purely local check of a clone: its report and the files it generated."""
    base = tmp_path_factory.mktemp("local")
    ws = clone(base / "ws")
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)  # a module fixture: the per-test clean environment (no CI) is not on yet
        assert cli(ws, base / "report.json") == 1
    report = shown(base / "report.json")
    assert report["summary"]["type_checked"] == 11
    assert report["summary"]["rejected"] == 1
    return {"report": report, "files": generated(ws)}


@pytest.fixture
def filled(server: NginxCache, local: dict[str, Any], tmp_path: Path) -> dict[str, bytes]:
    """The remote after one CI run (a fresh clone checked with it): its entries."""
    out = tmp_path / "fill.json"
    assert cli(clone(tmp_path / "fill"), out, "--remote-cache", server.url) == 1
    assert shown(out) == local["report"]
    assert run_entries(server), "the proven run was not stored"
    return server.entries()


# -- hit, miss, partial ------------------------------------------------------------------------


@pytest.mark.tsc
def test_a_fresh_clone_is_answered_by_one_run_entry(
    server: NginxCache,
    filled: dict[str, bytes],
    local: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ws = clone(tmp_path / "ci")
    out = tmp_path / "ci.json"
    assert cli(ws, out, "--remote-cache", server.url) == 1
    assert shown(out) == local["report"]
    stats = last_stats(ws / ".trailblaze")
    assert stats["remote_run"] == "hit"
    assert stats["compiler_runs"] == 0
    assert stats["trails_parsed"] == 0
    assert stats["remote_requests"] == 3  # one action-cache entry, two CAS bodies
    assert stats["remote_bytes_read"] == sum(len(v) for v in run_entries(server).values())
    # The surfaces an editor reads are there, as a local check writes them.
    assert generated(ws) == local["files"]
    assert (ws / "trailmaps/notes/.gitignore").read_bytes() == local["files"][
        "trailmaps/notes/.gitignore"
    ]
    # Nothing was generated, parsed or compiled: no type-gate modules in the scratch directory.
    assert not (ws / ".trailblaze" / "typegate").exists()
    assert server.entries() == filled
    # The next run is a local no-op: it never asks the remote (here: nothing listening).
    again = tmp_path / "again.json"
    assert cli(ws, again, "--remote-cache", refused_url()) == 1
    assert again.read_bytes() == out.read_bytes()
    assert "warning" not in capsys.readouterr().err


@pytest.mark.tsc
def test_an_edited_trail_misses_the_run_and_reuses_every_other_verdict(
    server: NginxCache, filled: dict[str, bytes], tmp_path: Path
) -> None:
    fixed = BROKEN_TRAIL.replace("[5, 6]", '"Shopping"')
    reference = clone(tmp_path / "reference")
    write_tree(reference, {EDITED: fixed})
    assert cli(reference, tmp_path / "reference.json") == 1  # the rejected trail
    ws = clone(tmp_path / "ci")
    write_tree(ws, {EDITED: fixed})
    out = tmp_path / "ci.json"
    assert cli(ws, out, "--remote-cache", server.url) == 1  # the rejected trail
    assert shown(out) == shown(tmp_path / "reference.json")
    stats = last_stats(ws / ".trailblaze")
    assert stats["remote_run"] == "stored"
    assert stats["files_compiled"] == [EDITED]  # only the edited trail
    assert stats["remote_hits"] == 10
    # A second clone with the same edit is answered by the entry that run stored.
    again = clone(tmp_path / "ci-2")
    write_tree(again, {EDITED: fixed})
    assert (
        cli(again, tmp_path / "ci-2.json", "--remote-cache", server.url) == 1
    )  # the rejected trail
    assert last_stats(again / ".trailblaze")["remote_run"] == "hit"
    assert shown(tmp_path / "ci-2.json") == shown(tmp_path / "reference.json")


@pytest.mark.tsc
def test_an_unsharded_clone_puts_the_run_together_from_the_shards_entries(
    server: NginxCache, local: dict[str, Any], tmp_path: Path
) -> None:
    for k in (1, 2):
        shard = clone(tmp_path / f"shard-{k}")
        code = cli(
            shard, tmp_path / f"shard-{k}.json", "--shard", f"{k}/2", "--remote-cache", server.url
        )
        assert code in (0, 1)
        assert last_stats(shard / ".trailblaze")["remote_run"] == "stored"
    ws = clone(tmp_path / "ci")
    out = tmp_path / "ci.json"
    assert cli(ws, out, "--remote-cache", server.url) == 1
    assert shown(out) == local["report"]
    stats = last_stats(ws / ".trailblaze")
    assert stats["remote_run"] == "hit"
    assert stats["compiler_runs"] == 0
    # Its own entry (a miss), the shard index, each shard's entry and body, and the files'
    # body they share.
    assert stats["remote_requests"] == 7
    assert generated(ws) == local["files"]
    # A shard of a fresh clone is answered by its own entry.
    again = clone(tmp_path / "shard-again")
    assert cli(again, tmp_path / "again.json", "--shard", "2/2", "--remote-cache", server.url) in (
        0,
        1,
    )
    assert last_stats(again / ".trailblaze")["remote_run"] == "hit"
    assert shown(tmp_path / "again.json") == shown(tmp_path / "shard-2.json")


@pytest.mark.tsc
def test_a_hit_adds_the_check_s_lines_to_a_gitignore_of_its_own(
    server: NginxCache, filled: dict[str, bytes], tmp_path: Path
) -> None:
    ws = clone(tmp_path / "ci")
    write_tree(ws, {"trailmaps/notes/.gitignore": "*.log\n"})
    assert cli(ws, tmp_path / "ci.json", "--remote-cache", server.url) == 1
    assert last_stats(ws / ".trailblaze")["remote_run"] == "hit"
    assert (ws / "trailmaps/notes/.gitignore").read_text() == artifacts.updated_gitignore("*.log\n")


# -- read-only ---------------------------------------------------------------------------------


@pytest.mark.tsc
def test_read_only_reads_the_run_entry_and_never_writes(
    server: NginxCache, local: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "pr.json"
    assert (
        cli(clone(tmp_path / "pr"), out, "--remote-cache", server.url, "--remote-cache-read-only")
        == 1
    )
    assert shown(out) == local["report"]
    assert server.entries() == {}
    assert cli(clone(tmp_path / "main"), tmp_path / "main.json", "--remote-cache", server.url) == 1
    entries = server.entries()
    ws = clone(tmp_path / "pr-2")
    assert cli(ws, out, "--remote-cache", server.url, "--remote-cache-read-only") == 1
    assert last_stats(ws / ".trailblaze")["remote_run"] == "hit"
    assert shown(out) == local["report"]
    assert server.entries() == entries


# -- faults ------------------------------------------------------------------------------------

FAULTS = {
    # name: (proxy mode, the paths it hits, what the one warning says)
    "refused": ("pass", None, r"connection refused"),
    "500": ("500", None, r"answered HTTP 500"),
    "delay": ("delay", None, r"no answer within 0\.3 s"),
    "truncated-entry": ("truncate", "/ac/", r"cut short after \d+ of \d+ bytes"),
    "truncated-body": ("truncate", "/cas/", r"cut short after \d+ of \d+ bytes"),
    "altered-body": ("alter", "/cas/", r"does not match its digest"),
    "altered-entry": ("alter", "/ac/", r"does not match its digest|is not JSON"),
}


@pytest.mark.tsc
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_falls_back_to_local_work_with_one_warning(
    fault: str,
    *,
    server: NginxCache,
    filled: dict[str, bytes],
    local: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mode, only, expected = FAULTS[fault]
    capsys.readouterr()
    monkeypatch.setenv(TIMEOUT_ENV, "300")
    ws = clone(tmp_path / "ci")
    out = tmp_path / "ci.json"
    with FaultProxy(server.url, delay=3.0) as proxy:
        proxy.mode = mode
        proxy.only = only
        url = refused_url() if fault == "refused" else proxy.url
        assert cli(ws, out, "--remote-cache", url) == 1
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert shown(out) == local["report"]
    assert generated(ws) == local["files"]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"trailblaze: warning: remote cache {url}: ")
    assert warnings[0].endswith("; working locally for the rest of this run")
    assert re.search(expected, warnings[0]), warnings[0]
    assert last_stats(ws / ".trailblaze")["compiler_runs"] >= 1  # worked out locally
    # Nothing poisoned is kept: the remote is as it was, and the clone's next run, without
    # the remote, reports exactly the same.
    assert server.entries() == filled
    assert cli(ws, out) == 1
    assert shown(out) == local["report"]


def _entry_key(ws: Path) -> str:
    inputs = run_inputs(
        find_workspace(ws, explicit=True), scan(find_workspace(ws, explicit=True)), CheckOptions()
    )
    assert inputs is not None
    return inputs.key


def _replace_body(server: NginxCache, key: str, change: Any) -> None:
    """Store a well-formed run entry (digests right) whose body `change` rewrote."""
    ac = server.store / "ac" / key
    entry = json.loads(ac.read_bytes())
    body = json.loads(zlib.decompress((server.store / "cas" / entry["sha256"]).read_bytes()))
    change(body)
    data = zlib.compress(json.dumps(body).encode())
    digest = hashlib.sha256(data).hexdigest()
    (server.store / "cas" / digest).write_bytes(data)
    entry["sha256"] = digest
    ac.write_bytes(json.dumps(entry).encode())


def _trails(body: dict[str, Any]) -> list[dict[str, Any]]:
    trails: list[dict[str, Any]] = body["report"]["trails"]
    return trails


def _checked(body: dict[str, Any]) -> dict[str, Any]:
    """A type-checked trail of the body (made to claim a reason it was not checked for)."""
    return next(t for t in _trails(body) if t["status"] == "type-checked")


@pytest.mark.tsc
@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("foreign-file", "would write files that no check writes"),
        ("wrong-lengths", "inflates to other than"),
        ("foreign-trail", "names trails this workspace does not have"),
        ("missing-trail", "does not cover every trail"),
        ("inconsistent-status", "is not usable"),
        ("other-key", "was stored for another key"),
    ],
)
def test_an_entry_that_is_not_what_it_claims_is_not_trusted(
    case: str,
    expected: str,
    *,
    server: NginxCache,
    filled: dict[str, bytes],
    local: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ws = clone(tmp_path / "ci")
    key = _entry_key(ws)
    if case == "foreign-file":
        _replace_body(server, key, lambda body: body["files"][0].__setitem__(0, "../evil.txt"))
    elif case == "wrong-lengths":
        _replace_body(server, key, lambda body: body["files"][0].__setitem__(1, 1 << 40))
    elif case == "foreign-trail":
        _replace_body(
            server, key, lambda body: _trails(body)[0].update(path="elsewhere.trail.yaml")
        )
    elif case == "missing-trail":
        _replace_body(server, key, lambda body: _trails(body).pop())
    elif case == "inconsistent-status":
        _replace_body(server, key, lambda body: _checked(body).update(reason="no target"))
    else:
        entry = json.loads((server.store / "ac" / key).read_bytes())
        entry["key"] = "1" * 64
        (server.store / "ac" / key).write_bytes(json.dumps(entry).encode())
    capsys.readouterr()
    out = tmp_path / "ci.json"
    assert cli(ws, out, "--remote-cache", server.url) == 1
    err = capsys.readouterr().err
    assert shown(out) == local["report"]
    assert err.count("warning: remote cache") == 1, err
    assert expected in err
    assert not (tmp_path / "evil.txt").exists()
    assert not (ws / "evil.txt").exists()


# -- what is stored ------------------------------------------------------------------------------


def _report(*trails: TrailStatus, findings: tuple[Finding, ...] = (), **extra: Any) -> Report:
    return Report(workspace="/ws", trailmaps=("app",), trails=trails, findings=findings, **extra)


CHECKED = TrailStatus("a.trail.yaml", "app", "type-checked", None, "app", 3)


def test_only_a_run_that_checked_everything_it_could_is_proven() -> None:
    assert proven(_report(CHECKED, sdks={"app": OURS_LABEL}))
    assert proven(_report(TrailStatus("b.trail.yaml", None, "parsed", "no target", None, 2)))
    infra = Finding("infra", "a.trail.yaml", 1, 1, "type check could not run", fatal=False)
    assert not proven(_report(CHECKED, findings=(infra,)))
    assert not proven(_report(TrailStatus("a.trail.yaml", "app", "parsed", REASON_INFRA, "app", 3)))
    assert not proven(_report(CHECKED, sdks={"app": "workspace SDK node_modules/x"}))
    assert not proven(_report(CHECKED, stats={"remote_fault": "connection refused"}))


@pytest.mark.tsc
def test_an_input_that_changes_while_the_check_runs_is_not_stored(
    server: NginxCache, tsc: Compiler, tmp_path: Path
) -> None:
    ws = find_workspace(clone(tmp_path / "ci"), explicit=True)
    options = CheckOptions(remote_cache=server.url)
    inputs = run_inputs(ws, scan(ws), options)
    assert inputs is not None
    cache = RunCache(options, ws, inputs)
    report = _report(CHECKED)
    write_tree(ws.root, {EDITED: BROKEN_TRAIL + "\n# edited meanwhile\n"})
    cache.store(report)
    cache.close()
    assert server.entries() == {}


@pytest.mark.tsc
def test_a_hand_written_tsconfig_keeps_the_workspace_to_per_trail_entries(
    server: NginxCache, tmp_path: Path
) -> None:
    ws = clone(tmp_path / "ci")
    write_tree(ws, {"trailmaps/notes/tools/tsconfig.json": '{"compilerOptions": {}}\n'})
    assert (
        run_inputs(
            find_workspace(ws, explicit=True),
            scan(find_workspace(ws, explicit=True)),
            CheckOptions(),
        )
        is None
    )
    assert cli(ws, tmp_path / "ci.json", "--remote-cache", server.url) == 1
    assert server.entries()  # the trails' verdicts
    assert run_entries(server) == {}


# -- the key -------------------------------------------------------------------------------------


@pytest.mark.tsc
def test_the_key_covers_every_input_and_nothing_local(
    tsc: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def key(root: Path, options: CheckOptions | None = None) -> str:
        ws = find_workspace(root, explicit=True)
        inputs = run_inputs(ws, scan(ws), options or CheckOptions())
        assert inputs is not None
        return inputs.key

    ws = clone(tmp_path / "a")
    base = key(ws)
    # Nothing local: another directory, other mtimes, generated files present.
    assert key(clone(tmp_path / "elsewhere")) == base
    os.utime(ws / EDITED, (1, 1))
    assert key(ws) == base
    write_tree(ws, {"trailmaps/notes/tools/trailblaze-client.d.ts": "// generated\n"})
    assert key(ws) == base
    write_tree(ws, {"trailmaps/notes/.gitignore": "*.log\n"})  # what the run writes into
    assert key(ws) == base
    (ws / "trailmaps/notes/.gitignore").unlink()

    # A shard's entry is its own: the layout and its own trails, which are all it reads.
    def inputs(options: CheckOptions) -> RunInputs:
        found = run_inputs(
            find_workspace(ws, explicit=True), scan(find_workspace(ws, explicit=True)), options
        )
        assert found is not None
        return found

    whole, first, second = (inputs(CheckOptions(shard=s)) for s in (None, (1, 2), (2, 2)))
    assert first.layout == second.layout == whole.layout
    assert first.entry_key == whole.shard_key(1, 2) != base
    assert second.entry_key == whole.shard_key(2, 2) != first.entry_key
    assert index_key(whole.layout) not in (base, first.entry_key, second.entry_key)
    assert set(first.contents) | set(second.contents) == set(whole.trails)
    assert not set(first.contents) & set(second.contents)
    other = next(iter(second.contents))
    original = (ws / other).read_text("utf-8")
    (ws / other).write_text(original.replace(":", ";", 1))  # another shard's trail, same size
    assert inputs(CheckOptions(shard=(1, 2))).entry_key == first.entry_key
    assert inputs(CheckOptions(shard=(2, 2))).entry_key != second.entry_key
    (ws / other).write_text(original)
    # Every input: a trail's content, a tool file, a manifest, the options, the compiler.
    changed = []
    edits = {
        EDITED: BROKEN_TRAIL + "\n",
        "trailmaps/notes/tools/notes_clearSearch.tool.yaml": None,
        "trailmaps/notes/trailmap.yaml": None,
        "trailmaps/notes/.gitignore": b"\xff not UTF-8\n",  # the check warns about it
    }
    for rel, text in edits.items():
        path = ws / rel
        old = path.read_bytes() if path.exists() else None
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text if text is not None else path.read_text("utf-8") + "\n# edit\n")
        changed.append(key(ws))
        if old is None:
            path.unlink()
        else:
            path.write_bytes(old)
    assert key(ws) == base
    changed.append(key(ws, CheckOptions(strict=False)))
    changed.append(key(ws, CheckOptions(typecheck=False)))
    fake = tmp_path / "tsc"
    fake.write_text(f"#!/bin/sh\nexec {tsc.path} \"$@\" | sed 's/Version .*/Version 9.9.9/'\n")
    fake.chmod(0o755)
    monkeypatch.setenv(TSC_ENV, str(fake))
    changed.append(key(ws))
    assert len({base, *changed}) == len(changed) + 1


def test_the_shortcuts_agree_with_the_modules_they_stand_in_for() -> None:
    assert ENTRY_POINT_GROUP == bundled.ENTRY_POINT_GROUP
    assert artifacts.TSCONFIG_BANNER.startswith(OUR_BANNER + ".")
    assert artifacts.is_generated_tsconfig(artifacts.TSCONFIG_BANNER)
    assert sdk.SDK_BANNER.startswith(OUR_BANNER)
