"""A run entry's record of what its compilers read beyond the inputs, as a reader takes it: a
name no writer gives is a fault (warned about, the check runs), anything standing at a named
place is told without blocking, and a file not as recorded is a miss."""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.nginx import NginxCache
from tests.check.typegate.test_reads import GOOD, KINDS, PASS, backdate, cli, verdict, workspace
from trailblaze.check.run import last_stats
from trailblaze.runs.runcache import entries
from trailblaze.state.keys import content_digest
from trailblaze.toolchain.compilers import Compiler

PACKAGE = next(kind for kind in KINDS if kind.name == "workspace-package")


def forge(server: NginxCache, change: Callable[[dict[str, Any]], None]) -> None:
    """Every run entry's body rewritten by `change` (as a cache operator could), its CAS
    address and the entry naming it made to match: only the reader's own checks are left."""
    store = server.store
    for entry_path in sorted((store / "ac").iterdir()):
        entry = json.loads(entry_path.read_bytes())
        body_path = store / "cas" / str(entry.get("sha256"))
        if not body_path.is_file():
            continue
        try:
            body = json.loads(zlib.decompress(body_path.read_bytes()))
        except (zlib.error, ValueError):
            continue  # the files' body
        if "report" not in body:
            continue  # the trail rows' body
        change(body)
        data = zlib.compress(json.dumps(body).encode())
        digest = content_digest(data)
        (store / "cas" / digest).write_bytes(data)
        entry["sha256"] = digest
        entry_path.write_bytes(json.dumps(entry).encode())


@pytest.fixture
def stored(tsc: Compiler, server: NginxCache, tmp_path: Path) -> NginxCache:
    """The remote after a writer's proven run of a workspace that reads a package's types."""
    writer = workspace(tmp_path / "writer", PACKAGE)
    assert verdict(cli(writer, "--remote-cache", server.url)) == PASS
    assert last_stats(writer / ".trailblaze")["remote_run"] == "stored"
    return server


def fresh(tmp_path: Path, name: str) -> Path:
    ws = workspace(tmp_path / name, PACKAGE, GOOD)
    backdate(ws)
    return ws


@pytest.mark.tsc
def test_the_entry_names_the_package_the_compiler_read_and_a_clone_takes_it(
    stored: NginxCache, tmp_path: Path
) -> None:
    names: list[dict[str, str]] = []
    forge(stored, lambda body: names.append(dict(body["reads"])))
    assert [sorted(n) for n in names] == [
        ["node_modules/@app/types/index.d.ts", "node_modules/@app/types/package.json"]
    ]
    ws = fresh(tmp_path, "clone")
    assert verdict(cli(ws, "--remote-cache", stored.url)) == PASS
    assert last_stats(ws / ".trailblaze")["remote_run"] == "hit"


@pytest.mark.tsc
@pytest.mark.parametrize(
    "name", ["../outside.d.ts", "node_modules/../../x.d.ts", "", "a//b.d.ts", "./x.d.ts"]
)
def test_a_read_no_writer_names_is_a_fault_and_the_check_runs(
    name: str, stored: NginxCache, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forge(stored, lambda body: body["reads"].update({name: "0" * 64}))
    ws = fresh(tmp_path, "clone")
    assert verdict(cli(ws, "--remote-cache", stored.url)) == PASS
    assert last_stats(ws / ".trailblaze").get("remote_run") != "hit"
    assert last_stats(ws / ".trailblaze")["compiler_runs"] == 1, "the check ran"
    err = capsys.readouterr().err
    assert err.count("warning") == 1, err
    assert "names a file read outside any place a check reads" in err


@pytest.mark.tsc
def test_a_read_that_is_no_file_here_is_a_miss_and_never_blocks(
    stored: NginxCache, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    forge(stored, lambda body: body["reads"].update({str(fifo): "0" * 64, "/dev/zero": "0"}))
    ws = fresh(tmp_path, "clone")
    assert verdict(cli(ws, "--remote-cache", stored.url)) == PASS
    counts = last_stats(ws / ".trailblaze")
    assert (counts["remote_run"], counts["remote_run_reads"]) == ("stored", "changed")
    assert "warning" not in capsys.readouterr().err


@pytest.mark.tsc
@pytest.mark.parametrize(
    "damage",
    [
        lambda body: body.pop("reads"),
        lambda body: body.update(reads=["node_modules/x.d.ts"]),
        lambda body: body.update(reads={"node_modules/x.d.ts": 5}),
    ],
    ids=["none", "a-list", "a-number"],
)
def test_a_malformed_record_of_reads_is_a_fault(
    damage: Callable[[dict[str, Any]], None],
    stored: NginxCache,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    forge(stored, damage)
    ws = fresh(tmp_path, "clone")
    assert verdict(cli(ws, "--remote-cache", stored.url)) == PASS
    assert last_stats(ws / ".trailblaze").get("remote_run") != "hit"
    assert last_stats(ws / ".trailblaze")["compiler_runs"] == 1, "the check ran"
    err = capsys.readouterr().err
    assert err.count("warning") == 1, err
    assert "is not usable" in err


@pytest.mark.tsc
def test_an_entry_naming_more_to_read_than_the_budget_is_a_miss_read_no_further(
    stored: NginxCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An entry from a hostile writer may name large files with their true digests: the reader
    # hashes up to READS_BYTES of them, and past it takes the entry as a miss (the check runs).
    monkeypatch.setattr(entries, "READS_BYTES", 64)
    big = [tmp_path / f"big-{n}.d.ts" for n in range(3)]
    for path in big:
        path.write_bytes(b"x" * 40)
    forge(
        stored, lambda body: body["reads"].update({str(p): content_digest(b"x" * 40) for p in big})
    )
    ws = fresh(tmp_path, "clone")
    assert verdict(cli(ws, "--remote-cache", stored.url)) == PASS
    counts = last_stats(ws / ".trailblaze")
    # Not taken: the run checked (its trail's verdict from the per-trail rows, whose keys hold
    # the reads it really made) and stored its own entry.
    assert (counts["remote_run"], counts["remote_run_reads"]) == ("stored", "too-large")
