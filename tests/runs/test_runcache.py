"""A whole check answered by one run entry of the remote cache, against nginx (WebDAV) on
loopback and the fault proxy: hit, miss, a partial hit, faults, read-only, altered bodies."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.nginx import NginxCache
from tests.conftest import ROOT, isolate_env, write_tree
from tests.faultproxy import FaultProxy, refused_url
from tests.mutations import mutated
from tests.state.test_remote import BROKEN_TRAIL
from trailblaze import fsutil
from trailblaze.check.run import last_stats
from trailblaze.cli.main import main
from trailblaze.finding import Finding, position_in_range
from trailblaze.generate import artifacts, sdk
from trailblaze.generate.sdk import OURS_LABEL
from trailblaze.options import CheckOptions
from trailblaze.report.record import REASON_INFRA, Report, TrailStatus
from trailblaze.runs.runcache import (
    ENTRY_POINT_GROUP,
    OUR_BANNER,
    RunCache,
    RunInputs,
    index_key,
    proven,
    run_inputs,
)
from trailblaze.runs.runcache.keys import stat_inputs
from trailblaze.state.remote import TIMEOUT_ENV
from trailblaze.toolchain.compilers import TSC_ENV, Compiler
from trailblaze.toolmodel import sources
from trailblaze.toolmodel.sources import check_inputs
from trailblaze.workspace import GENERATED_TOOL_FILES, find_workspace, owned_by, scan

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


def output(ws: Path) -> Path:
    """Where `cli` writes the report of the workspace: beside it, `<ws>.json`."""
    return ws.with_name(f"{ws.name}.json")


def cli(ws: Path, *extra: str) -> int:
    """`trailblaze check --format json --output <ws>.json` in the workspace, in this process."""
    argv = ["check", "--workspace", str(ws), "--path-base", str(ws), "--format", "json"]
    return main([*argv, "--output", str(output(ws)), *extra])


def shown(ws: Path) -> dict[str, Any]:
    """The workspace's last JSON report without the two fields that name the clone's directory."""
    data: dict[str, Any] = json.loads(output(ws).read_text("utf-8"))
    data.pop("workspace")
    data.pop("path_base", None)
    return data


def stats(ws: Path) -> dict[str, Any]:
    """The counters of the workspace's last check."""
    return last_stats(ws / ".trailblaze")


def entry_inputs(root: Path, options: CheckOptions | None = None) -> RunInputs:
    """The inputs of the workspace's run entry (there is one: the workspace can have one)."""
    ws = find_workspace(root, explicit=True)
    inputs = run_inputs(ws, scan(ws), options or CheckOptions())
    assert inputs is not None
    return inputs


def generated(ws: Path) -> dict[str, bytes]:
    """Every file a check generates into the workspace (the trailmaps' surfaces, .gitignore)."""
    return {
        str(p.relative_to(ws)): p.read_bytes()
        for p in sorted((ws / "trailmaps").rglob("*"))
        if p.is_file() and (p.name in GENERATED_TOOL_FILES or p.name == ".gitignore")
    }


def run_entries(server: NginxCache, *, rows: bool = False) -> dict[str, bytes]:
    """The entries that are run entries (a CAS body that is compressed, not a trail's JSON);
    `rows`: those of the runs' trail rows instead (`runs/rows.py`)."""
    entries = server.entries()
    out = {}
    for name, data in entries.items():
        if name.startswith("ac/"):
            entry = json.loads(data)
            body = entries.get(f"cas/{entry.get('sha256')}")
            # A shard index, and the entry naming the files a run generates (with their body).
            ours = isinstance(entry.get("count"), int) or "files_sha256" in entry
            if (ours and not rows) or _is_run_body(body, rows):
                out[name] = data
        elif _is_run_body(data, rows):
            out[name] = data
    return out


def _is_run_body(data: bytes | None, rows: bool) -> bool:
    if data is None:
        return False
    try:
        head = zlib.decompress(data).partition(b"\n")[0]
    except zlib.error:
        return False
    try:
        is_rows = "rows" in json.loads(head)
    except (ValueError, TypeError):
        is_rows = False  # the files' body: their bytes one after the other
    return is_rows == rows


@pytest.fixture(scope="module")
def local(tsc: Compiler, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A purely local check of a clone: its report and the files it generated."""
    ws = clone(tmp_path_factory.mktemp("local") / "ws")
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)  # a module fixture: the per-test clean environment (no CI) is not on yet
        assert cli(ws) == 1
    report = shown(ws)
    assert report["summary"]["type_checked"] == 11
    assert report["summary"]["rejected"] == 1
    return {"report": report, "files": generated(ws)}


@pytest.fixture(scope="module")
def stored(
    nginx: NginxCache, local: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, bytes]:
    """What one CI run (a fresh clone checked with the remote) stored: its entries, by name.

    Checked once per module; each test gets them back in its emptied remote (`filled`).
    """
    nginx.clear()
    fill = clone(tmp_path_factory.mktemp("fill") / "ws")
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)
        assert cli(fill, "--remote-cache", nginx.url) == 1
    assert shown(fill) == local["report"]
    assert run_entries(nginx), "the proven run was not stored"
    assert len(run_entries(nginx, rows=True)) == 2, "nor its trail rows (an entry, a body)"
    return nginx.entries()


@pytest.fixture
def filled(server: NginxCache, stored: dict[str, bytes]) -> dict[str, bytes]:
    """The remote after one CI run (a fresh clone checked with it): its entries."""
    for name, value in stored.items():
        (server.store / name).parent.mkdir(parents=True, exist_ok=True)
        (server.store / name).write_bytes(value)
    assert server.entries() == stored
    return dict(stored)


@pytest.fixture
def ci(tmp_path: Path) -> Path:
    """A fresh clone, as a CI job checks it out."""
    return clone(tmp_path / "ci")


# -- hit, miss, partial ------------------------------------------------------------------------


@pytest.mark.tsc
def test_a_fresh_clone_is_answered_by_one_run_entry(
    server: NginxCache,
    filled: dict[str, bytes],
    local: dict[str, Any],
    ci: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli(ci, "--remote-cache", server.url) == 1
    assert shown(ci) == local["report"]
    counts = stats(ci)
    assert counts["remote_run"] == "hit"
    assert counts["compiler_runs"] == 0
    assert counts["trails_parsed"] == 0
    # The files' entry and body (fetched and written while the trails are read), the run's
    # entry and body.
    assert counts["remote_requests"] == 4
    assert counts["remote_bytes_read"] == sum(len(v) for v in run_entries(server).values())
    # The trail rows stored beside them are not fetched: only the run after a hit that misses
    # wants them.
    assert counts["remote_rows_requests"] == 0
    # The surfaces an editor reads are there, as a local check writes them.
    assert generated(ci) == local["files"]
    assert (ci / "trailmaps/notes/.gitignore").read_bytes() == local["files"][
        "trailmaps/notes/.gitignore"
    ]
    # Nothing was generated, parsed or compiled: no type-gate modules in the scratch directory.
    assert not (ci / ".trailblaze" / "typegate").exists()
    assert server.entries() == filled
    # The next run is a local no-op: it never asks the remote (here: nothing listening).
    first = output(ci).read_bytes()
    output(ci).unlink()  # the next run writes its own
    assert cli(ci, "--remote-cache", refused_url()) == 1
    assert output(ci).read_bytes() == first
    assert "warning" not in capsys.readouterr().err


@pytest.mark.tsc
def test_a_run_entry_without_its_files_entry_is_a_hit_that_writes_its_own_files(
    server: NginxCache, filled: dict[str, bytes], local: dict[str, Any], ci: Path
) -> None:
    (server.store / "ac" / entry_inputs(ci).generated).unlink()  # evicted, or an older store
    assert cli(ci, "--remote-cache", server.url) == 1
    assert shown(ci) == local["report"]
    assert stats(ci)["remote_run"] == "hit"
    # The files' entry (a miss), the run's entry, its body and the files' body it names.
    assert stats(ci)["remote_requests"] == 4
    assert generated(ci) == local["files"]


@pytest.mark.tsc
def test_an_edited_trail_misses_the_run_and_reuses_every_other_verdict(
    server: NginxCache,
    filled: dict[str, bytes],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fixed = BROKEN_TRAIL.replace("[5, 6]", '"Shopping"')
    reference, ws, again = (
        write_tree(clone(tmp_path / name), {EDITED: fixed}) for name in ("reference", "ci", "ci-2")
    )
    assert cli(reference) == 1  # the rejected trail
    assert cli(ws, "--remote-cache", server.url) == 1  # the rejected trail
    assert shown(ws) == shown(reference)
    # The generated files' entry matched (the trailmaps are unchanged) and its files were
    # written before the run missed: they are what the check generates.
    assert generated(ws) == generated(reference)
    counts = stats(ws)
    assert counts["remote_run"] == "stored"
    assert counts["files_compiled"] == [EDITED]  # only the edited trail
    assert counts["remote_hits"] == 10
    # A fresh clone's checked run is recorded too: the next one is a local no-op (nothing
    # listening there: no warning).
    first = output(ws).read_bytes()
    assert cli(ws, "--remote-cache", refused_url()) == 1
    assert output(ws).read_bytes() == first
    assert "warning" not in capsys.readouterr().err
    # A second clone with the same edit is answered by the entry that run stored.
    assert cli(again, "--remote-cache", server.url) == 1  # the rejected trail
    assert stats(again)["remote_run"] == "hit"
    assert shown(again) == shown(reference)


@pytest.mark.tsc
def test_the_run_after_a_hit_parses_only_the_edited_trail(
    server: NginxCache, filled: dict[str, bytes], ci: Path, tmp_path: Path
) -> None:
    # The CI run that filled the remote stored its trail rows; the hit leaves them unfetched,
    # the edit after it fetches them (an entry, a body) and parses and compiles one trail.
    fixed = BROKEN_TRAIL.replace("[5, 6]", '"Shopping"')
    reference = write_tree(clone(tmp_path / "reference"), {EDITED: fixed})
    assert cli(reference) == 1  # the rejected trail
    assert cli(ci, "--remote-cache", server.url) == 1
    assert stats(ci)["remote_run"] == "hit"
    write_tree(ci, {EDITED: fixed})
    assert cli(ci, "--remote-cache", server.url) == 1
    assert shown(ci) == shown(reference)
    counts = stats(ci)
    assert counts["remote_run"] == "stored"
    assert counts["remote_rows_restored"] == len(shown(ci)["trails"])
    assert counts["trails_parsed"] == 1
    assert counts["files_compiled"] == [EDITED]
    assert counts["remote_rows_requests"] == 2 + 2  # its rows' entry and body; then stored
    assert len(run_entries(server, rows=True)) == 2 * 2  # the CI run's, and this one's


@pytest.mark.tsc
def test_an_unsharded_clone_puts_the_run_together_from_the_shards_entries(
    server: NginxCache, local: dict[str, Any], ci: Path, tmp_path: Path
) -> None:
    for k in (1, 2):
        shard = clone(tmp_path / f"shard-{k}")
        assert cli(shard, "--shard", f"{k}/2", "--remote-cache", server.url) in (0, 1)
        assert stats(shard)["remote_run"] == "stored"
        # No trail rows: the unsharded run after them wants the whole run's, never a shard's.
        assert stats(shard)["remote_rows_stored"] is False
    assert run_entries(server, rows=True) == {}
    assert cli(ci, "--remote-cache", server.url) == 1
    assert shown(ci) == local["report"]
    counts = stats(ci)
    assert counts["remote_run"] == "hit"
    assert counts["compiler_runs"] == 0
    # The files' entry and the body the shards share, its own entry (a miss), the shard
    # index, each shard's entry and body.
    assert counts["remote_requests"] == 8
    assert generated(ci) == local["files"]
    # A shard of a fresh clone is answered by its own entry.
    again = clone(tmp_path / "shard-again")
    assert cli(again, "--shard", "2/2", "--remote-cache", server.url) in (0, 1)
    assert stats(again)["remote_run"] == "hit"
    assert shown(again) == shown(tmp_path / "shard-2")


@pytest.mark.tsc
def test_a_hit_adds_the_check_s_lines_to_a_gitignore_of_its_own(
    server: NginxCache, filled: dict[str, bytes], ci: Path
) -> None:
    write_tree(ci, {"trailmaps/notes/.gitignore": "*.log\n"})
    assert cli(ci, "--remote-cache", server.url) == 1
    assert stats(ci)["remote_run"] == "hit"
    assert (ci / "trailmaps/notes/.gitignore").read_text() == artifacts.updated_gitignore("*.log\n")


@pytest.mark.tsc
def test_a_hit_never_writes_its_files_through_a_link_out_of_the_workspace(
    server: NginxCache, filled: dict[str, bytes], ci: Path, tmp_path: Path
) -> None:
    # The clone's `tools/` is a link to a directory outside it: the hit's files are not ours
    # to write there, so the hit is given up and the check says why, at each file.
    victim = tmp_path / "victim"
    shutil.move(ci / "trailmaps/notes/tools", victim)
    (ci / "trailmaps/notes/tools").symlink_to(victim, target_is_directory=True)
    before = {p: p.read_bytes() for p in victim.rglob("*") if p.is_file()}
    assert cli(ci, "--remote-cache", server.url) == 1
    assert stats(ci)["remote_run"] != "hit"
    assert {p: p.read_bytes() for p in victim.rglob("*") if p.is_file()} == before
    messages = [f["message"] for f in shown(ci)["findings"] if f["kind"] == "manifest"]
    assert any("outside the workspace (a symbolic link): not written" in m for m in messages)


@pytest.mark.tsc
def test_a_hit_never_writes_over_a_surface_the_reference_generated(
    server: NginxCache, filled: dict[str, bytes], local: dict[str, Any], ci: Path
) -> None:
    # The clone commits the reference's surface (its banner): the hit's files are not ours to
    # write over it, so the check runs, leaves it alone and says so.
    theirs = "// GENERATED BY TRAILBLAZE DAEMON. DO NOT EDIT.\nexport {};\n"
    write_tree(ci, {"trailmaps/notes/tools/trailblaze-client.d.ts": theirs})

    def notes() -> dict[str, bytes]:
        return {k: v for k, v in generated(ci).items() if k.startswith("trailmaps/notes/")}

    before = notes()
    assert cli(ci, "--remote-cache", server.url) == 1
    assert stats(ci)["remote_run"] != "hit"
    assert notes() == before  # theirs, and the committed .gitignore, untouched
    found = shown(ci)["findings"]
    assert [f["code"] for f in found if f["code"] == "generated-left-alone"] == [
        "generated-left-alone"
    ]
    assert [f for f in found if f["code"] != "generated-left-alone"] == local["report"]["findings"]


@pytest.mark.tsc
def test_no_write_takes_no_run_entry_and_writes_nothing(
    server: NginxCache, filled: dict[str, bytes], local: dict[str, Any], ci: Path
) -> None:
    # A run entry writes the generated files into tools/: a run that writes none checks.
    before = generated(ci)  # the clone's committed .gitignore
    assert cli(ci, "--remote-cache", server.url, "--no-write") == 1
    assert stats(ci).get("remote_run") != "hit"
    assert shown(ci) == local["report"]
    assert generated(ci) == before


# -- read-only ---------------------------------------------------------------------------------


@pytest.mark.tsc
def test_a_hit_whose_files_cannot_be_written_is_checked_as_a_local_run_is(
    server: NginxCache,
    filled: dict[str, bytes],
    local: dict[str, Any],
    ci: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The disk refuses one of the hit's files (written while the entry is checked, in a thread
    # of its own): the hit is given up and the check runs, as it would without the remote.
    refused = ci / "trailmaps/notes/tools/trail.schema.json"
    real = fsutil.write_if_changed

    def refuse(path: Path, data: bytes | str) -> bool:
        if path == refused:
            raise OSError(28, "No space left on device")
        return real(path, data)

    monkeypatch.setattr("trailblaze.runs.runcache.entries.write_if_changed", refuse)
    assert cli(ci, "--remote-cache", server.url) == 1
    assert shown(ci) == local["report"]
    assert stats(ci)["remote_run"] != "hit"
    assert stats(ci)["trails_parsed"] > 0  # the check ran
    assert generated(ci) == local["files"]


@pytest.mark.tsc
def test_read_only_reads_the_run_entry_and_never_writes(
    server: NginxCache, local: dict[str, Any], tmp_path: Path
) -> None:
    pr, main, pr_again = (clone(tmp_path / name) for name in ("pr", "main", "pr-2"))
    assert cli(pr, "--remote-cache", server.url, "--remote-cache-read-only") == 1
    assert shown(pr) == local["report"]
    assert server.entries() == {}
    assert cli(main, "--remote-cache", server.url) == 1
    entries = server.entries()
    assert cli(pr_again, "--remote-cache", server.url, "--remote-cache-read-only") == 1
    assert stats(pr_again)["remote_run"] == "hit"
    assert shown(pr_again) == local["report"]
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
    ci: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mode, only, expected = FAULTS[fault]
    capsys.readouterr()
    monkeypatch.setenv(TIMEOUT_ENV, "300")
    with FaultProxy(server.url, delay=3.0) as proxy:
        proxy.mode = mode
        proxy.only = only
        url = refused_url() if fault == "refused" else proxy.url
        assert cli(ci, "--remote-cache", url) == 1
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert shown(ci) == local["report"]
    assert generated(ci) == local["files"]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"trailblaze: warning: remote cache {url}: ")
    assert warnings[0].endswith("; working locally for the rest of this run")
    assert re.search(expected, warnings[0]), warnings[0]
    assert stats(ci)["compiler_runs"] >= 1  # worked out locally
    # Nothing poisoned is kept: the remote is as it was, and the clone's next run, without
    # the remote, reports exactly the same.
    assert server.entries() == filled
    assert cli(ci) == 1
    assert shown(ci) == local["report"]


@pytest.mark.tsc
@pytest.mark.parametrize(("sharded", "mode"), [(False, "alter"), (True, "truncate"), (True, "500")])
def test_a_fault_on_the_run_s_body_after_its_files_were_written_falls_back(
    sharded: bool,
    mode: str,
    *,
    server: NginxCache,
    local: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The files' entry and body are served as stored (their files written while the trails
    # are read); then the run's own body (or the second shard's, fetched side by side with
    # the first's) is not.
    if sharded:
        for k in (1, 2):
            shard = clone(tmp_path / f"shard-{k}")
            assert cli(shard, "--shard", f"{k}/2", "--remote-cache", server.url) in (0, 1)
    else:
        assert cli(clone(tmp_path / "first"), "--remote-cache", server.url) == 1
    filled = server.entries()
    ci = clone(tmp_path / "ci")
    inputs = entry_inputs(ci)
    key = inputs.shard_key(2, 2) if sharded else inputs.key
    target = json.loads(filled[f"ac/{key}"])["sha256"]
    capsys.readouterr()
    monkeypatch.setenv(TIMEOUT_ENV, "3000")
    with FaultProxy(server.url) as proxy:
        proxy.mode = mode
        proxy.only = f"/cas/{target}"
        assert cli(ci, "--remote-cache", proxy.url) == 1
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warnings) == 1, warnings
    assert f"cas/{target[:12]}" in warnings[0]
    assert shown(ci) == local["report"]
    assert generated(ci) == local["files"]
    assert stats(ci)["compiler_runs"] >= 1  # worked out locally
    assert server.entries() == filled
    assert cli(ci) == 1
    assert shown(ci) == local["report"]


def _replace_body(server: NginxCache, key: str, change: Any) -> None:
    """Store a well-formed run entry (digests right) whose body `change` rewrote."""
    ac = server.store / "ac" / key
    entry = json.loads(ac.read_bytes())
    body = json.loads(zlib.decompress((server.store / "cas" / entry["sha256"]).read_bytes()))
    if change is None:  # nested past what a JSON parser follows
        data = zlib.compress(b"[" * 100_000 + b"]" * 100_000)
    else:
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
        # A small body naming a huge file: refused before a byte is inflated.
        ("huge-lengths", "more than the 256 MiB a body may inflate to"),
        ("foreign-trail", "names trails this workspace does not have"),
        ("missing-trail", "does not cover every trail"),
        ("inconsistent-status", "is not usable"),
        ("other-key", "was stored for another key"),
        # Findings from the remote name a trail or tool file of this workspace, at a line and
        # column that are numbers in range (a code frame is never read from elsewhere).
        (
            "finding-elsewhere",
            "a finding about '/etc/passwd', not a trail or tool file of this workspace",
        ),
        ("finding-outside", "a finding about '../../etc/passwd', not a trail or tool file"),
        ("finding-line-text", "finding field 'line'"),
        ("finding-huge-column", "a finding's line or column out of range"),
        ("deep-entry", "a run entry is not JSON"),
        ("deep-body", "the body is not a compressed run entry"),
        # The entry naming the generated files, which a run fetches and writes first.
        ("files-foreign-file", "would write files that no check writes"),
        ("files-wrong-lengths", "inflates to other than"),
        ("files-huge-lengths", "more than the 256 MiB a body may inflate to"),
        ("files-other-split", "otherwise than the run entry"),
        ("files-other-key", "was stored for another key"),
        ("files-not-json", "is not JSON"),
    ],
)
def test_an_entry_that_is_not_what_it_claims_is_not_trusted(
    case: str,
    expected: str,
    *,
    server: NginxCache,
    filled: dict[str, bytes],
    local: dict[str, Any],
    ci: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = entry_inputs(ci).key
    named = server.store / "ac" / entry_inputs(ci).generated
    files = json.loads(named.read_bytes())
    if case == "files-foreign-file":
        files["files"][0][0] = "../evil.txt"
        named.write_bytes(json.dumps(files).encode())
    elif case in ("files-wrong-lengths", "files-huge-lengths"):
        files["files"][0][1] = 1 << 40 if "huge" in case else files["files"][0][1] + 1
        named.write_bytes(json.dumps(files).encode())
    elif case == "files-other-split":  # the same body cut elsewhere: other files' bytes
        files["files"][0][1] += 1
        files["files"][1][1] -= 1
        named.write_bytes(json.dumps(files).encode())
    elif case == "files-other-key":
        named.write_bytes(json.dumps({**files, "key": "1" * 64}).encode())
    elif case == "files-not-json":
        named.write_bytes(named.read_bytes()[:-7])
    elif case == "foreign-file":
        named.unlink()  # evicted: the files are the run entry's to name
        _replace_body(server, key, lambda body: body["files"][0].__setitem__(0, "../evil.txt"))
    elif case in ("wrong-lengths", "huge-lengths"):
        named.unlink()
        length = (lambda n: 1 << 40) if "huge" in case else (lambda n: n + 1)
        _replace_body(
            server, key, lambda body: body["files"][0].__setitem__(1, length(body["files"][0][1]))
        )
    elif case == "foreign-trail":
        _replace_body(
            server, key, lambda body: _trails(body)[0].update(path="elsewhere.trail.yaml")
        )
    elif case == "missing-trail":
        _replace_body(server, key, lambda body: _trails(body).pop())
    elif case == "inconsistent-status":
        _replace_body(server, key, lambda body: _checked(body).update(reason="no target"))
    elif case.startswith("finding-"):
        change = {
            "finding-elsewhere": {"path": "/etc/passwd"},
            "finding-outside": {"path": "../../etc/passwd"},
            "finding-line-text": {"line": "12"},
            "finding-huge-column": {"column": 10**12},
        }[case]
        _replace_body(server, key, lambda body: body["report"]["findings"][0].update(change))
    elif case == "deep-entry":
        (server.store / "ac" / key).write_bytes(b"[" * 100_000)
    elif case == "deep-body":
        _replace_body(server, key, None)
    else:
        entry = json.loads((server.store / "ac" / key).read_bytes())
        entry["key"] = "1" * 64
        (server.store / "ac" / key).write_bytes(json.dumps(entry).encode())
    capsys.readouterr()
    assert cli(ci, "--remote-cache", server.url) == 1
    err = capsys.readouterr().err
    assert shown(ci) == local["report"]
    assert err.count("warning: remote cache") == 1, err
    assert expected in err
    assert not (tmp_path / "evil.txt").exists()
    assert not (ci / "evil.txt").exists()
    assert generated(ci) == local["files"]


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
    server: NginxCache, tsc: Compiler, ci: Path
) -> None:
    options = CheckOptions(remote_cache=server.url)
    ws = find_workspace(ci, explicit=True)
    cache = RunCache(options, ws, entry_inputs(ci, options))
    report = _report(CHECKED)
    write_tree(ws.root, {EDITED: BROKEN_TRAIL + "\n# edited meanwhile\n"})
    cache.store(report)
    cache.close()
    assert server.entries() == {}


@pytest.mark.tsc
def test_a_hand_written_tsconfig_keeps_the_workspace_to_per_trail_entries(
    server: NginxCache, ci: Path
) -> None:
    write_tree(ci, {"trailmaps/notes/tools/tsconfig.json": '{"compilerOptions": {}}\n'})
    ws = find_workspace(ci, explicit=True)
    assert run_inputs(ws, scan(ws), CheckOptions()) is None
    assert cli(ci, "--remote-cache", server.url) == 1
    assert server.entries()  # the trails' verdicts
    assert run_entries(server) == {}


# -- the key -------------------------------------------------------------------------------------


@pytest.mark.tsc
def test_the_key_covers_every_input_and_nothing_local(
    tsc: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def key(root: Path, options: CheckOptions | None = None) -> str:
        return entry_inputs(root, options).key

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
    whole, first, second = (entry_inputs(ws, CheckOptions(shard=s)) for s in (None, (1, 2), (2, 2)))
    assert first.layout == second.layout == whole.layout
    assert first.entry_key == whole.shard_key(1, 2) != base
    assert second.entry_key == whole.shard_key(2, 2) != first.entry_key
    assert index_key(whole.layout) not in (base, first.entry_key, second.entry_key)
    assert set(first.contents) | set(second.contents) == set(whole.trails)
    assert not set(first.contents) & set(second.contents)
    other = next(iter(second.contents))
    original = (ws / other).read_text("utf-8")
    (ws / other).write_text(original.replace(":", ";", 1))  # another shard's trail, same size
    assert entry_inputs(ws, CheckOptions(shard=(1, 2))).entry_key == first.entry_key
    assert entry_inputs(ws, CheckOptions(shard=(2, 2))).entry_key != second.entry_key
    (ws / other).write_text(original)
    # Every input: a trail's content, a tool file, a manifest, the options, the compiler.
    changed = []
    edits = {
        EDITED: BROKEN_TRAIL + "\n",
        "trailmaps/notes/tools/notes_clearSearch.tool.yaml": None,
        # a waypoint file: the check validates it, its findings are part of the verdict
        "trailmaps/notes/waypoints/notes_home.waypoint.yaml": "id: notes/home\nios: []\n",
        "trailmaps/notes/trailmap.yaml": None,
        "trailmaps/notes/.gitignore": b"\xff not UTF-8\n",  # the check warns about it
    }
    for rel, text in edits.items():
        path = ws / rel
        path.parent.mkdir(exist_ok=True)
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
    # The host programs its recordings may run: a report with or without their findings.
    write_tree(ws, {"pyproject.toml": '[tool.trailblaze]\nallow-host-programs = ["adb"]\n'})
    changed.append(key(ws))
    (ws / "pyproject.toml").unlink()
    changed.append(key(ws, CheckOptions(strict=False)))
    changed.append(key(ws, CheckOptions(typecheck=False)))
    fake = tmp_path / "tsc"
    fake.write_text(f"#!/bin/sh\nexec {tsc.path} \"$@\" | sed 's/Version .*/Version 9.9.9/'\n")
    fake.chmod(0o755)
    monkeypatch.setenv(TSC_ENV, str(fake))
    changed.append(key(ws))
    assert len({base, *changed}) == len(changed) + 1


def test_the_shortcuts_agree_with_the_modules_they_stand_in_for(tmp_path: Path) -> None:
    ws = find_workspace(clone(tmp_path / "ws"), explicit=True)
    found = scan(ws)
    seen: dict[str, os.stat_result | None] = {}
    stat_inputs(found, seen, ws.targets_dir)
    assert list(seen) == check_inputs(found, ws.targets_dir)
    assert ENTRY_POINT_GROUP == sources.ENTRY_POINT_GROUP
    assert artifacts.TSCONFIG_BANNER.startswith(OUR_BANNER + ".")
    assert artifacts.is_generated_tsconfig(artifacts.TSCONFIG_BANNER)
    assert sdk.SDK_BANNER.startswith(OUR_BANNER)


# -- hostile run entries (hypothesis) -------------------------------------------------------------


@pytest.mark.tsc
@settings(
    max_examples=15,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_hostile_run_entries_are_a_miss_or_a_report_of_this_workspace(
    *,
    data: st.DataObject,
    server: NginxCache,
    filled: dict[str, bytes],
    local: dict[str, Any],
    ci: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The report of a run entry with anything in it (its digests made to match, as a hostile
    cache would store it), through `trailblaze check --remote-cache`: a miss with one warning
    and the report checked here, or a report whose findings name this workspace's trails and
    tool files at lines and columns in range; never a traceback."""
    key = entry_inputs(ci).key
    for name, value in filled.items():  # the entries as the honest run stored them
        (server.store / name).write_bytes(value)
    shutil.rmtree(ci / ".trailblaze", ignore_errors=True)
    hostile = data.draw(mutated(json.loads(_body_of(server, key))["report"]))
    _replace_body(server, key, lambda body: body.update(report=hostile))
    capsys.readouterr()
    code = cli(ci, "--remote-cache", server.url)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    report = shown(ci)
    if stats(ci).get("remote_run") != "hit":
        assert (code, report) == (1, local["report"])
        assert err.count("warning: remote cache") == 1, err
        return
    ws = find_workspace(ci, explicit=True)
    owned = owned_by(ws, scan(ws))
    assert code == report["exit_code"]
    for finding in report["findings"]:
        assert owned.names(finding["path"]), finding
        assert position_in_range(finding["line"], finding["column"])


def _body_of(server: NginxCache, key: str) -> bytes:
    entry = json.loads((server.store / "ac" / key).read_bytes())
    return zlib.decompress((server.store / "cas" / entry["sha256"]).read_bytes())
