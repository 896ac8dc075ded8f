"""The whole-run remote entry in a monorepo: every workspace of a root `dodo.py` (`doit check`,
`doit check:<workspace>`, `doit -n 3 check`) and `trailblaze check --all` is answered by its own
run entry, against nginx (WebDAV) on loopback and the fault proxy."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from bench.nginx import NginxCache
from tests.conftest import isolate_env, run_python, write_tree
from tests.faultproxy import FaultProxy, refused_url
from tests.runs.test_monorepo import TRAIL, monorepo
from tests.runs.test_runcache import EDITED, clone, generated, run_entries
from tests.state.test_remote import BROKEN_TRAIL
from trailblaze.check.run import last_stats
from trailblaze.options import REMOTE_ENV, REMOTE_READ_ONLY_ENV
from trailblaze.runs.monorepo import find_monorepo
from trailblaze.runs.rows import ROWS_FORMAT, decode_rows, encode_rows, rows_key
from trailblaze.state.remote import TIMEOUT_ENV
from trailblaze.toolchain.compilers import Compiler

NAMES = ("apps/notes", "apps/shop", "legacy")
NOTES_TRAIL = "apps/notes/trailmaps/notes/trails/pin.trail.yaml"
WARNING = "trailblaze: warning: remote cache "
FIXED = BROKEN_TRAIL.replace("[5, 6]", '"Shopping"')
"""`EDITED` (the bundled workspace's trail with a type finding) without it."""
FINDINGS = 1
"""`doit check` with findings in a workspace (every workspace is still checked and shown)."""


def fresh(where: Path) -> Path:
    """A fresh clone of a monorepo with three workspaces: `apps/shop` the bundled one (scripted
    tools, a type finding, a rejected trail), `apps/notes` compact and `legacy` in
    Trailblaze's layout; no scratch directories, no generated surfaces."""
    root = monorepo(where, configured=True)
    shutil.rmtree(root / "apps/shop")
    clone(root / "apps/shop")
    return root


def doit(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_python(root, "-m", "doit", *args, env=env)


def check_all(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`trailblaze check --all --format json` at the monorepo's root."""
    return run_python(root, "-m", "trailblaze", "check", "--all", "--format", "json", *args)


def scratch(root: Path) -> dict[str, Path]:
    mono = find_monorepo(root)
    return {mono.name(ws): ws.scratch for ws in mono.workspaces}


def reports(root: Path) -> dict[str, dict[str, Any]]:
    """Each workspace's `report.json` as `doit check` wrote it, without the fields that name the
    clone's directory or the run's wall time; a workspace not checked has none."""
    out = {}
    for name, where in scratch(root).items():
        if not (where / "report.json").exists():
            continue  # not checked
        data: dict[str, Any] = json.loads((where / "report.json").read_text("utf-8"))
        data.pop("workspace")
        data.pop("seconds")
        out[name] = data
    return out


def files(root: Path) -> dict[str, dict[str, bytes]]:
    """The files each workspace's check generated into its trailmaps."""
    mono = find_monorepo(root)
    return {mono.name(ws): generated(ws.trailmaps_dir.parent) for ws in mono.workspaces}


def shop_trails(root: Path) -> list[str]:
    return [t["path"] for t in reports(root)["apps/shop"]["trails"]]


def stats(root: Path) -> dict[str, dict[str, Any]]:
    return {name: last_stats(where) for name, where in scratch(root).items()}


def ran(output: str) -> list[str]:
    """The `check:<workspace>:run` tasks doit ran (`.  name`), not those it skipped."""
    return sorted(
        line[3:].strip()
        for line in output.splitlines()
        if line.startswith(".  check") and line.endswith(":run")
    )


def merged(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """A merged JSON report without the fields that name the clone's directory."""
    data: dict[str, Any] = json.loads(result.stdout)
    data.pop("workspace")
    data.pop("path_base")
    return data


@pytest.fixture(scope="module")
def cold(tsc: Compiler, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A purely local `doit check` of a fresh clone, then `check --all`: what every
    run with a remote must equal."""
    root = fresh(tmp_path_factory.mktemp("cold") / "repo")
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)  # a module fixture: the per-test clean environment is not on yet
        done = doit(root, "check")
        cli = check_all(root)
    assert done.returncode == FINDINGS, done.stdout + done.stderr
    assert ran(done.stdout) == [f"check:{name}:run" for name in NAMES]
    assert done.stderr.count("warning") == 0, done.stderr
    assert cli.returncode == 1, cli.stderr
    found = reports(root)
    assert [found[name]["summary"]["type_checked"] for name in NAMES] == [1, 11, 1]
    return {"out": done.stdout, "reports": found, "files": files(root), "merged": merged(cli)}


@pytest.fixture(scope="module")
def ci_run(
    nginx: NginxCache, cold: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, bytes]:
    """The remote after one CI run of the monorepo (`doit check` in a fresh clone): its
    entries, a run entry for each workspace among them. Made once; `filled` puts it back."""
    nginx.clear()
    root = fresh(tmp_path_factory.mktemp("fill") / "repo")
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)
        done = doit(root, "check", **{REMOTE_ENV: nginx.url})
    assert done.returncode == FINDINGS, done.stdout + done.stderr
    assert reports(root) == cold["reports"]
    assert {name: s["remote_run"] for name, s in stats(root).items()} == dict.fromkeys(
        NAMES, "stored"
    )
    # Per workspace its run entry and the entry of its trail rows (`runs/rows.py`).
    entries = nginx.entries()
    for found in stats(root).values():
        assert f"ac/{found['remote_run_key']}" in entries
        assert f"ac/{rows_key(found['remote_run_key'])}" in entries
        assert found["remote_rows_stored"] is True
    # Each workspace's run entry and the entry naming the files its run generated.
    assert len([k for k in run_entries(nginx) if k.startswith("ac/")]) == 2 * len(NAMES)
    assert len([k for k in run_entries(nginx, rows=True) if k.startswith("ac/")]) == len(NAMES)
    return entries


@pytest.fixture
def filled(server: NginxCache, ci_run: dict[str, bytes]) -> dict[str, bytes]:
    """The remote as `ci_run` left it (what a test changed there is gone)."""
    for name, data in ci_run.items():
        path = server.store / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    assert server.entries() == ci_run
    return ci_run


@pytest.fixture(scope="module")
def fixed_report(tsc: Compiler, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report of a purely local `doit check:apps/shop` of a fresh clone with `EDITED`
    fixed: what a check of that edit must give."""
    root = fresh(tmp_path_factory.mktemp("edited") / "repo")
    write_tree(root, {f"apps/shop/{EDITED}": FIXED})
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)
        done = doit(root, "check:apps/shop")
    assert done.returncode == 1, done.stdout + done.stderr  # the rejected trail
    return reports(root)["apps/shop"]


def assert_hits(root: Path, names: tuple[str, ...] = NAMES) -> None:
    """Each workspace answered by its run entry: nothing parsed, generated or compiled."""
    for name, found in stats(root).items():
        if name not in names:
            continue
        assert found["remote_run"] == "hit", (name, found)
        assert found["compiler_runs"] == 0, name
        assert found["trails_parsed"] == 0, name
        # The generated files' entry and body, the run's entry and body.
        assert found["remote_requests"] == 4, name
        assert not (scratch(root)[name] / "typegate").exists(), name


# -- doit check --------------------------------------------------------------------------------


@pytest.mark.tsc
def test_doit_check_answers_every_workspace_by_its_run_entry(
    server: NginxCache,
    filled: dict[str, bytes],
    cold: dict[str, Any],
    fixed_report: dict[str, Any],
    tmp_path: Path,
) -> None:
    remote = {REMOTE_ENV: server.url}
    root = fresh(tmp_path / "ci")
    done = doit(root, "check", **remote)
    assert done.returncode == FINDINGS, done.stdout + done.stderr
    assert_hits(root)
    # What doit wrote and printed is a local run's, and so are the surfaces an editor reads.
    assert reports(root) == cold["reports"]
    assert done.stdout == cold["out"]
    assert done.stderr == ""
    assert files(root) == cold["files"]
    assert server.entries() == filled  # a hit stores nothing

    # doit's state is right: nothing changed is a local no-op that never asks the remote.
    again = doit(root, "check", **{REMOTE_ENV: refused_url()})
    assert again.returncode == FINDINGS, again.stdout + again.stderr  # the findings still stand
    assert ran(again.stdout) == []
    # The one report of every workspace, shown again from what was recorded.
    assert again.stdout.partition(".  check\n")[2] == done.stdout.partition(".  check\n")[2]
    assert again.stderr == ""
    assert reports(root) == cold["reports"]

    # An edit checks that workspace again: its run entry misses, the trail rows of the run
    # that answered the hit come back from the remote, and only the edited trail is parsed
    # and compiled. The report is what a local check of the edited clone gives.
    write_tree(root, {f"apps/shop/{EDITED}": FIXED})
    edited = doit(root, "check", **remote)
    assert edited.returncode == FINDINGS, edited.stdout + edited.stderr
    assert edited.stderr == ""
    assert ran(edited.stdout) == ["check:apps/shop:run"]
    shop = stats(root)["apps/shop"]
    assert shop["remote_run"] == "stored"
    assert shop["remote_rows_restored"] == len(cold["reports"]["apps/shop"]["trails"])
    assert shop["remote_rows_requests"] == 2 + 2  # its rows' entry and body; then stored
    assert shop["trails_parsed"] == 1
    assert shop["files_compiled"] == [EDITED]
    assert shop["compiler_runs"] == 1
    assert reports(root) == {**cold["reports"], "apps/shop": fixed_report}


@pytest.mark.tsc
def test_one_workspace_alone_and_all_in_parallel_read_their_own_entries(
    server: NginxCache, filled: dict[str, bytes], cold: dict[str, Any], tmp_path: Path
) -> None:
    remote = {REMOTE_ENV: server.url}
    alone = fresh(tmp_path / "alone")
    done = doit(alone, "check:apps/notes", **remote)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ran(done.stdout) == ["check:apps/notes:run"]
    assert_hits(alone, ("apps/notes",))
    assert reports(alone) == {"apps/notes": cold["reports"]["apps/notes"]}

    parallel = fresh(tmp_path / "parallel")
    done = doit(parallel, "-n", "3", "check", **remote)
    assert done.returncode == FINDINGS, done.stdout + done.stderr
    assert ran(done.stdout) == [f"check:{name}:run" for name in NAMES]
    assert_hits(parallel)
    assert reports(parallel) == cold["reports"]
    assert files(parallel) == cold["files"]
    assert server.entries() == filled


@pytest.mark.tsc
def test_read_only_doit_check_reads_the_run_entries_and_stores_nothing(
    server: NginxCache, filled: dict[str, bytes], cold: dict[str, Any], tmp_path: Path
) -> None:
    remote = {REMOTE_ENV: server.url, REMOTE_READ_ONLY_ENV: "1"}
    root = fresh(tmp_path / "pr")
    done = doit(root, "check", **remote)
    assert done.returncode == FINDINGS, done.stdout + done.stderr
    assert_hits(root)
    assert reports(root) == cold["reports"]
    # A pull request that edits a workspace misses its run entry, works locally (the other
    # trails' verdicts still come from the remote) and stores nothing.
    edited = fresh(tmp_path / "pr-edited")
    write_tree(edited, {NOTES_TRAIL: TRAIL.format(id="notes", text="[1]")})
    done = doit(edited, "check", **remote)
    assert done.returncode == FINDINGS, done.stdout + done.stderr
    assert stats(edited)["apps/notes"]["remote_run"] == "miss"
    assert stats(edited)["apps/notes"]["compiler_runs"] == 1
    assert_hits(edited, ("apps/shop", "legacy"))
    assert server.entries() == filled


FAULTS = {
    # name: (proxy mode, the paths it hits, what the one warning says)
    "refused": ("pass", None, r"connection refused"),
    "truncated-body": ("truncate", "/cas/", r"cut short after \d+ of \d+ bytes"),
}


@pytest.mark.tsc
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_falls_back_to_local_work_with_one_warning_for_the_whole_run(
    fault: str,
    *,
    server: NginxCache,
    filled: dict[str, bytes],
    cold: dict[str, Any],
    tmp_path: Path,
) -> None:
    mode, only, expected = FAULTS[fault]
    root = fresh(tmp_path / "ci")
    with FaultProxy(server.url) as proxy:
        proxy.mode = mode
        proxy.only = only
        url = refused_url() if fault == "refused" else proxy.url
        done = doit(root, "check", **{REMOTE_ENV: url, TIMEOUT_ENV: "2000"})
    assert done.returncode == FINDINGS, done.stdout + done.stderr
    if fault != "refused":
        # The first workspace's entry, then its body, cut short; the rest of the run never
        # asks the remote again.
        assert [path.split("/")[-2] for _, path in proxy.requests] == ["ac", "cas"]
    [warning] = [line for line in done.stderr.splitlines() if "warning" in line]
    assert warning.startswith(f"{WARNING}{url}: ")
    assert warning.endswith("; working locally for the rest of this run")
    assert re.search(expected, warning), warning
    # The same report and output as a local run; every workspace worked out locally.
    assert reports(root) == cold["reports"]
    assert done.stdout == cold["out"]
    assert files(root) == cold["files"]
    assert all(s["compiler_runs"] >= 1 for s in stats(root).values())
    assert server.entries() == filled  # nothing poisoned is kept


@pytest.mark.tsc
def test_a_remote_that_is_down_is_one_warning_for_doit_s_parallel_workers_too(
    cold: dict[str, Any], tmp_path: Path
) -> None:
    # `doit -n 3`: each workspace's check in a worker process of its own, each meeting the
    # refused connection. It used to be one warning per worker.
    root = fresh(tmp_path / "ci")
    url = refused_url()
    done = doit(root, "-n", "3", "check", **{REMOTE_ENV: url})
    assert done.returncode == FINDINGS, done.stdout + done.stderr
    [warning] = [line for line in done.stderr.splitlines() if "warning" in line]
    assert warning.startswith(f"{WARNING}{url}: ")
    assert "connection refused" in warning
    assert reports(root) == cold["reports"]
    assert all(s["compiler_runs"] >= 1 for s in stats(root).values())
    # The marker the first worker made is gone with the run.
    assert not list(
        Path(os.environ.get("TMPDIR") or "/tmp").glob(f"trailblaze-warned-{os.getuid()}-*")
    )


def _replace_rows(server: NginxCache, key: str, change: Any, *, trails: list[str]) -> None:
    """Store a well-formed rows entry (digests right) whose rows or modules `change` rewrote
    (`change(rows, modules)`, the modules as bytes), or whose body it replaced (its result)."""
    ac = server.store / "ac" / key
    entry = json.loads(ac.read_bytes())
    assert entry["format"] == ROWS_FORMAT
    rows, texts = decode_rows(
        (server.store / "cas" / entry["sha256"]).read_bytes(), frozenset(trails)
    )
    assert len(rows) == len(trails)  # what the run stored: every row
    assert texts  # and its modules
    shared = [list(row) for row in rows]
    modules = {path: text.encode() for path, text in texts.items()}
    data = change(shared, modules) or encode_rows(shared, modules)
    digest = hashlib.sha256(data).hexdigest()
    (server.store / "cas" / digest).write_bytes(data)
    entry["sha256"] = digest
    ac.write_bytes(json.dumps(entry).encode())


def _torn(rows: list[list[Any]], modules: dict[str, bytes]) -> bytes:
    """A body whose modules' lengths do not add up to the bytes after its JSON line."""
    return zlib.compress(zlib.decompress(encode_rows(rows, modules)) + b"x")


EVIL = "../../../../evil.trail.yaml"
ROW_FAULTS = {
    # name: what the one warning says
    "altered-body": r"does not match its digest",
    "torn-modules": r"trail rows under ac/\w+… are not usable: bytes after the last module",
    "not-utf8-module": r"trail rows under ac/\w+… are not usable: the module of \S+ is not UTF-8",
    "foreign-trail": r"trail rows under ac/\w+… are not usable: a row that is not one of",
    "bad-findings": r"trail rows under ac/\w+… are not usable: a row's findings",
    "bad-tool-names": r"trail rows under ac/\w+… are not usable: a row's findings .*tool names",
    "foreign-module": r"trail rows under ac/\w+… are not usable: a module that is not",
}


@pytest.mark.tsc
@pytest.mark.parametrize("fault", sorted(ROW_FAULTS))
def test_trail_rows_that_are_not_what_they_claim_are_not_used(
    fault: str,
    *,
    server: NginxCache,
    filled: dict[str, bytes],
    fixed_report: dict[str, Any],
    tmp_path: Path,
) -> None:
    root = fresh(tmp_path / "ci")
    done = doit(root, "check:apps/shop", **{REMOTE_ENV: server.url})
    assert done.returncode == 1, done.stdout + done.stderr
    assert_hits(root, ("apps/shop",))
    rows = rows_key(stats(root)["apps/shop"]["remote_run_key"])
    change = {
        "foreign-trail": lambda rows, _: rows[0].__setitem__(0, "../evil.yaml"),
        "bad-findings": lambda rows, _: rows[0].__setitem__(11, '{"a": 1}'),
        # What tells whether a trail may reach the host: a row must not hide it.
        "bad-tool-names": lambda rows, _: rows[0].__setitem__(10, '{"a": 1}'),
        "foreign-module": lambda _, modules: modules.__setitem__(EVIL, b"evil\n"),
        "torn-modules": _torn,
        "not-utf8-module": lambda _, modules: modules.update(
            dict.fromkeys(list(modules)[:1], b"\xff\xfe")
        ),
    }.get(fault)
    if change is not None:
        _replace_rows(server, rows, change, trails=shop_trails(root))
    write_tree(root, {f"apps/shop/{EDITED}": FIXED})
    with FaultProxy(server.url) as proxy:
        proxy.mode = "alter" if fault == "altered-body" else "pass"
        proxy.only = "/cas/"
        url = proxy.url
        done = doit(root, "check:apps/shop", **{REMOTE_ENV: url})
    assert done.returncode == 1, done.stdout + done.stderr
    [warning] = [line for line in done.stderr.splitlines() if "warning" in line]
    assert warning.startswith(f"{WARNING}{url}: ")
    assert re.search(ROW_FAULTS[fault], warning), warning
    # Worked out locally, every trail parsed: the same report as a local check.
    shop = stats(root)["apps/shop"]
    assert shop["trails_parsed"] == len(shop_trails(root))
    assert shop["remote_rows_restored"] == 0
    assert not list(tmp_path.rglob("evil*"))
    assert reports(root)["apps/shop"] == fixed_report


@pytest.mark.tsc
def test_the_rows_a_ci_trailblaze_check_stored_serve_a_developer_s_doit_check(
    server: NginxCache, fixed_report: dict[str, Any], tmp_path: Path
) -> None:
    ci = fresh(tmp_path / "ci")
    done = run_python(ci / "apps/shop", "-m", "trailblaze", "check", "--remote-cache", server.url)
    assert done.returncode == 1, done.stdout + done.stderr
    assert stats(ci)["apps/shop"]["remote_rows_stored"] is True
    # A developer's clone: the hit, then an edit, which gets the CI run's trail rows.
    dev = fresh(tmp_path / "dev")
    done = doit(dev, "check:apps/shop", **{REMOTE_ENV: server.url})
    assert done.returncode == 1, done.stdout + done.stderr
    assert_hits(dev, ("apps/shop",))
    write_tree(dev, {f"apps/shop/{EDITED}": FIXED})
    done = doit(dev, "check:apps/shop", **{REMOTE_ENV: server.url})
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == ""
    shop = stats(dev)["apps/shop"]
    assert shop["remote_rows_restored"] == len(fixed_report["trails"])
    assert shop["trails_parsed"] == 1
    assert shop["files_compiled"] == [EDITED]
    assert reports(dev)["apps/shop"] == fixed_report


# -- trailblaze check --all --------------------------------------------------------------------


@pytest.mark.tsc
def test_check_all_answers_every_workspace_by_its_run_entry_in_one_report(
    server: NginxCache, filled: dict[str, bytes], cold: dict[str, Any], tmp_path: Path
) -> None:
    # The entries `doit check` stored answer the command line too: the same key.
    root = fresh(tmp_path / "ci")
    done = check_all(root, "--remote-cache", server.url)
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    assert merged(done) == cold["merged"]
    assert_hits(root)
    assert files(root) == cold["files"]
    assert server.entries() == filled

    down = fresh(tmp_path / "down")
    url = refused_url()
    done = check_all(down, "--remote-cache", url)
    assert done.returncode == 1, done.stderr
    [warning] = [line for line in done.stderr.splitlines() if "warning" in line]
    assert warning.startswith(f"{WARNING}{url}: ")
    assert "connection refused" in warning
    assert merged(done) == cold["merged"]
    assert all(s["compiler_runs"] >= 1 for s in stats(down).values())
