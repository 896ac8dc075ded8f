"""The remote result cache against a real server: nginx (WebDAV) started by the tests as a
Bazel HTTP cache on loopback, and a fault-injecting proxy in front of it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.nginx import NginxCache
from tests.conftest import ROOT, isolate_env, run_python, toolchain_cache, write_tree
from tests.faultproxy import FaultProxy, refused_url
from tests.mutations import mutated
from trailblaze.check.run import run_check
from trailblaze.finding import Finding, position_in_range
from trailblaze.options import REMOTE_READ_ONLY_ENV as READ_ONLY_ENV
from trailblaze.options import CheckOptions
from trailblaze.report.record import Report
from trailblaze.state.keys import content_digest
from trailblaze.state.remote import (
    HEADER_ENV,
    TIMEOUT_ENV,
    HttpCache,
    RemoteConfig,
    RemoteConfigError,
    RemoteFault,
    RemoteResults,
    _canonical,
)
from trailblaze.toolchain.compilers import TOOLCHAIN_DIR_ENV, Compiler
from trailblaze.workspace import find_workspace

BROKEN_TRAIL = """
config:
  target: notes
trail:
  - step: Search for a list
    recording:
      android-phone:
        - scrollUntilTextIsVisible:
            text: [5, 6]
"""
"""One type finding (a list for a string), so that findings travel through the cache."""


def clone(where: Path) -> Path:
    """A fresh copy of the bundled workspace, with one trail that has a type finding."""
    shutil.copytree(ROOT / "trailmaps", where / "trailmaps")
    write_tree(where, {"trailmaps/notes/trails/broken.trail.yaml": BROKEN_TRAIL})
    return where


def check(root: Path, remote: str | None = None, *, read_only: bool = False) -> Report:
    options = CheckOptions(remote_cache=remote, remote_read_only=read_only)
    return run_check(find_workspace(root, explicit=True), options)


def comparable(report: Report) -> dict[str, Any]:
    """The JSON report without the one field that names the clone's directory."""
    data = report.to_json()
    data.pop("workspace")
    return data


@pytest.fixture(scope="module")
def local(tsc: Compiler, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report of a purely local check: what every run with a remote must equal."""
    with pytest.MonkeyPatch.context() as env:
        for name in list(os.environ):
            if name.startswith("TRAILBLAZE_"):
                env.delenv(name)
        env.setenv(TOOLCHAIN_DIR_ENV, str(toolchain_cache()))
        report = check(clone(tmp_path_factory.mktemp("local")))
    data = comparable(report)
    assert data["exit_code"] == 1
    assert [f["code"] for f in data["findings"] if f["kind"] == "type"] == ["TS2322"]
    assert data["summary"]["type_checked"] == 11
    return data


def warm(server: NginxCache, where: Path) -> dict[str, bytes]:
    """Fill the remote from one clone; the entries it stored."""
    report = check(clone(where), server.url)
    assert report.stats["remote_stored"] == 11
    assert report.stats["compiler_runs"] >= 1
    return server.entries()


@pytest.fixture(scope="module")
def warmed(
    nginx: NginxCache, local: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, bytes]:
    """What `warm` stores, checked once per module; `filled` puts it back for each test."""
    nginx.clear()
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)
        return warm(nginx, tmp_path_factory.mktemp("warm") / "main")


@pytest.fixture
def filled(server: NginxCache, warmed: dict[str, bytes]) -> dict[str, bytes]:
    """The remote as `warm` leaves it (what an earlier test changed there is gone)."""
    for name, data in warmed.items():
        (server.store / name).parent.mkdir(parents=True, exist_ok=True)
        (server.store / name).write_bytes(data)
    assert server.entries() == warmed
    return dict(warmed)


# -- the protocol, against nginx --------------------------------------------------------------


def test_ac_and_cas_round_trip_through_nginx(server: NginxCache) -> None:
    config = RemoteConfig.resolve(server.url)
    assert config is not None
    cache = HttpCache(config)
    key = "ab" * 32
    assert cache.get_ac(key) is None
    cache.put_ac(key, b"entry")
    assert cache.get_ac(key) == b"entry"
    digest = cache.put_cas(b"some bytes")
    assert cache.get_cas(digest) == b"some bytes"
    assert sorted(server.entries()) == [f"ac/{key}", f"cas/{digest}"]
    cache.close()


def test_a_cas_body_that_does_not_match_its_key_is_a_fault(server: NginxCache) -> None:
    config = RemoteConfig.resolve(server.url)
    assert config is not None
    cache = HttpCache(config)
    wrong = "cd" * 32
    (server.store / "cas").mkdir(parents=True, exist_ok=True)
    (server.store / "cas" / wrong).write_bytes(b"not what the key says")
    with pytest.raises(RemoteFault, match=r"does not match its digest"):
        cache.get_cas(wrong)
    cache.close()


def test_the_auth_header_comes_from_the_environment(tmp_path: Path) -> None:
    with NginxCache(tmp_path, require_header=("Authorization", "Bearer s3cret")) as guarded:
        key = "ef" * 32
        anonymous = RemoteConfig.resolve(guarded.url, env={})
        assert anonymous is not None
        refused = HttpCache(anonymous)
        with pytest.raises(RemoteFault, match=r"PUT ac/efefefefefef… answered HTTP 401"):
            refused.put_ac(key, b"x")
        refused.close()
        config = RemoteConfig.resolve(guarded.url, env={HEADER_ENV: "Authorization=Bearer s3cret"})
        assert config is not None
        cache = HttpCache(config)
        cache.put_ac(key, b"x")
        assert cache.get_ac(key) == b"x"
        cache.close()


def test_settings_that_cannot_work_are_refused_with_a_message() -> None:
    with pytest.raises(RemoteConfigError) as bad_url:
        RemoteConfig.resolve("ftp://cache.example/x", env={})
    assert str(bad_url.value) == (
        "remote cache URL 'ftp://cache.example/x' is not http(s)://HOST[:PORT][/PATH]"
    )
    with pytest.raises(RemoteConfigError, match=r"^remote cache URL 'http://\*\*\*@\*\*\*' is not"):
        RemoteConfig.resolve("http://u:pw@h:x/", env={})
    # A password with an unencoded `/`: the host would be `u`, the rest of the password its
    # path. Refused, and nothing of the password shown.
    with pytest.raises(RemoteConfigError) as after_host:
        RemoteConfig.resolve("http://u/p:w/ord@cache.example/ci", env={})
    assert str(after_host.value) == (
        "remote cache URL 'http://***@cache.example/ci' has an '@' after its host: "
        "percent-encode a '/', '?', '#' or '@' in its user or password (%2F, %3F, %23, %40)"
    )
    # urlsplit's ValueError was a traceback
    for url, shown in (("http://[::1", "http://***"), ("http://[nope]/x", "http://[nope]/x")):
        with pytest.raises(RemoteConfigError) as bad_host:
            RemoteConfig.resolve(url, env={})
        assert (
            str(bad_host.value) == f"remote cache URL '{shown}' is not http(s)://HOST[:PORT][/PATH]"
        )
    with pytest.raises(RemoteConfigError) as bad_header:
        RemoteConfig.resolve("http://h/", env={HEADER_ENV: "Bearer s3cret"})
    assert str(bad_header.value) == (
        f"{HEADER_ENV} must be NAME=VALUE with a valid header name "
        "(its value is not shown: it may hold a secret)"
    )
    config = RemoteConfig.resolve(
        "http://user:p%40ss@h:8080/base/", env={TIMEOUT_ENV: "250", "X": "1"}
    )
    assert config == RemoteConfig(
        base="http://h:8080/base",
        headers=(("Authorization", "Basic dXNlcjpwQHNz"),),
        timeout=0.25,
    )
    assert RemoteConfig.resolve(None, env={}) is None
    for value in ("nan", "inf", "abc"):  # nan and inf were tracebacks at the socket
        config = RemoteConfig.resolve("http://h/", env={TIMEOUT_ENV: value})
        assert config is not None
        assert config.timeout == 5.0


# -- the check with a remote cache --------------------------------------------------------------


@pytest.mark.tsc
def test_a_fresh_clone_with_a_warm_remote_runs_no_compiler(
    server: NginxCache, tmp_path: Path, local: dict[str, Any]
) -> None:
    first = check(clone(tmp_path / "ci-1"), server.url)
    assert comparable(first) == local
    assert first.stats["remote_stored"] == 11
    assert first.stats["remote_hits"] == 0
    fresh = check(clone(tmp_path / "ci-2"), server.url)
    assert comparable(fresh) == local
    assert fresh.stats["compiler_runs"] == 0
    assert fresh.stats["files_compiled"] == []
    assert fresh.stats["remote_hits"] == 11
    assert fresh.stats["remote_bytes_read"] > 0
    assert fresh.stats["remote_stored"] == 0


@pytest.mark.tsc
def test_read_only_reads_and_never_writes(
    server: NginxCache, tmp_path: Path, local: dict[str, Any]
) -> None:
    report = check(clone(tmp_path / "pr"), server.url, read_only=True)
    assert comparable(report) == local
    assert server.entries() == {}
    entries = warm(server, tmp_path / "main")
    again = check(clone(tmp_path / "pr-2"), server.url, read_only=True)
    assert comparable(again) == local
    assert again.stats["remote_hits"] == 11
    assert server.entries() == entries


EXPECTED_FAULT = {
    "refused": r"connection refused",
    "500": r"answered HTTP 500",
    "delay": r"no answer within 0\.3 s",
    "truncate": r"the body was cut short after (\d+) of (\d+) bytes",
    "alter": r"does not match its digest",
}


@pytest.mark.tsc
@pytest.mark.parametrize("fault", sorted(EXPECTED_FAULT))
def test_a_network_fault_falls_back_to_local_work_with_one_warning(
    fault: str,
    *,
    server: NginxCache,
    filled: dict[str, bytes],
    tmp_path: Path,
    local: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    entries = filled
    capsys.readouterr()
    monkeypatch.setenv(TIMEOUT_ENV, "300")
    with FaultProxy(server.url, delay=3.0) as proxy:
        proxy.mode = "pass" if fault == "refused" else fault
        url = refused_url() if fault == "refused" else proxy.url
        ws = clone(tmp_path / "ci")
        start = time.monotonic()
        report = check(ws, url)
        elapsed = time.monotonic() - start
    warnings = capsys.readouterr().err.splitlines()
    assert comparable(report) == local
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"trailblaze: warning: remote cache {url}: ")
    assert warnings[0].endswith("; working locally for the rest of this run")
    assert re.search(EXPECTED_FAULT[fault], warnings[0]), warnings[0]
    assert report.stats["remote_fault"] is not None
    assert report.stats["compiler_runs"] >= 1  # the verdicts were worked out locally
    assert elapsed < 60
    # Nothing poisoned is kept: not in the remote, and not in the local cache, whose next run
    # (without the remote) reports exactly the same.
    assert server.entries() == entries
    assert comparable(check(ws)) == local


@pytest.mark.tsc
def test_a_failing_write_warns_once_and_the_check_stands(
    server: NginxCache,
    tmp_path: Path,
    local: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FaultProxy(server.url) as proxy:
        proxy.mode = "pass"
        ws = clone(tmp_path / "ci")
        # Misses pass through; the first PUT meets a 500.
        original = proxy._handle

        def fail_puts(handler: Any, method: str) -> None:
            proxy.mode = "500" if method == "PUT" else "pass"
            original(handler, method)

        proxy._handle = fail_puts  # type: ignore[method-assign]
        report = check(ws, proxy.url)
    warnings = capsys.readouterr().err.splitlines()
    assert comparable(report) == local
    assert len(warnings) == 1, warnings
    assert "answered HTTP 500" in warnings[0]
    assert server.entries() == {}


@pytest.mark.tsc
def test_an_entry_stored_under_another_key_is_not_trusted(
    server: NginxCache,
    filled: dict[str, bytes],
    tmp_path: Path,
    local: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Swap the bodies of two entries (each is valid, with a matching digest): the one holding
    # the broken trail's finding now sits under another trail's key.
    ac = server.store / "ac"
    holding = next(p for p in ac.iterdir() if b"TS2322" in p.read_bytes())
    other = next(p for p in ac.iterdir() if p != holding)
    holding_bytes, other_bytes = holding.read_bytes(), other.read_bytes()
    holding.write_bytes(other_bytes)
    other.write_bytes(holding_bytes)
    report = check(clone(tmp_path / "ci"), server.url)
    assert comparable(report) == local
    assert "was stored for another key" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["ac", "cas"])
def test_json_nested_past_the_parser_is_a_miss_not_a_traceback(
    where: str,
    *,
    server: NginxCache,
    filled: dict[str, bytes],
    tmp_path: Path,
    local: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An entry or a body of 100,000 nested arrays: a RecursionError in the JSON parser before,
    a traceback; now the remote's one warning, and the check done here."""
    deep = b"[" * 100_000 + b"]" * 100_000
    for path in (server.store / "ac").iterdir():
        if where == "ac":
            path.write_bytes(deep)
        else:  # each entry names a body of its own: its findings, nested too deep
            entry = json.loads(path.read_bytes())
            digest = hashlib.sha256(deep).hexdigest()
            (server.store / "cas").mkdir(exist_ok=True)
            (server.store / "cas" / digest).write_bytes(deep)
            entry.pop("findings", None)
            entry["sha256"] = digest
            path.write_bytes(json.dumps(entry).encode())
    capsys.readouterr()
    report = check(clone(tmp_path / "ci"), server.url)
    assert comparable(report) == local
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.count("warning") == 1
    assert "is not JSON (cut short or altered)" in err


# -- the command line -------------------------------------------------------------------------


@pytest.mark.tsc
@pytest.mark.parametrize("value", ["yes", "ON", " True "])
def test_read_only_yes_through_the_cli_writes_nothing(
    value: str, server: NginxCache, tmp_path: Path, local: dict[str, Any]
) -> None:
    # `=yes` used to mean "off": a pull-request build wrote its verdicts to the shared cache.
    ws = clone(tmp_path / "pr")
    env = {"TRAILBLAZE_REMOTE_CACHE": server.url, "TRAILBLAZE_REMOTE_CACHE_READ_ONLY": value}
    done = run_python(ws, "-m", "trailblaze", "check", "--format", "json", env=env)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["summary"] == local["summary"]
    assert server.entries() == {}
    bad = run_python(ws, "-m", "trailblaze", "check", env={**env, READ_ONLY_ENV: "y"})
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == (
        f"trailblaze check: {READ_ONLY_ENV}='y' is not a switch: "
        "use 1/0, true/false, yes/no or on/off (any case)\n"
    )
    assert server.entries() == {}


@pytest.mark.tsc
def test_cli_remote_cache_options(tsc: Compiler, server: NginxCache, tmp_path: Path) -> None:
    ws = clone(tmp_path / "ws")
    bad = run_python(ws, "-m", "trailblaze", "check", "--remote-cache", "cache.example")
    assert bad.returncode == 2
    assert bad.stderr == (
        "trailblaze check: remote cache URL 'cache.example' is not http(s)://HOST[:PORT][/PATH]\n"
    )
    down = run_python(
        ws,
        "-m",
        "trailblaze",
        "check",
        "--format",
        "json",
        "--remote-cache-read-only",
        env={"TRAILBLAZE_REMOTE_CACHE": refused_url()},
    )
    assert down.returncode == 1, down.stderr
    assert json.loads(down.stdout)["summary"]["findings"] == 1
    assert down.stderr.count("warning: remote cache") == 1
    assert "connection refused" in down.stderr


def test_results_client_counts_and_disables_after_a_fault() -> None:
    config = RemoteConfig.resolve(refused_url(), env={})
    assert config is not None
    messages: list[str] = []
    results = RemoteResults(config, messages.append)
    assert results.fetch([("00" * 32, "a"), ("11" * 32, "b")]) == {}
    assert results.fetch([("22" * 32, "c")]) == {}
    results.store([("33" * 32, [])])
    results.close()
    assert len(messages) == 1
    assert messages[0].endswith("connection refused; working locally for the rest of this run")
    assert results.stats()["remote_stored"] == 0


@pytest.mark.tsc
def test_doit_check_uses_the_remote_cache_from_the_environment(
    tsc: Compiler, server: NginxCache, tmp_path: Path
) -> None:
    ws = clone(tmp_path / "ws")
    write_tree(ws, {"dodo.py": "from trailblaze.doit_tasks import DOIT_CONFIG, task_check\n"})
    bad = run_python(ws, "-m", "doit", "check", env={"TRAILBLAZE_REMOTE_CACHE": "nope://x"})
    assert bad.returncode == 2
    assert "trailblaze check: remote cache URL 'nope://x' is not http(s)://HOST[:PORT][/PATH]" in (
        bad.stdout + bad.stderr
    )
    assert server.entries() == {}
    done = run_python(ws, "-m", "doit", "check", env={"TRAILBLAZE_REMOTE_CACHE": server.url})
    assert done.returncode == 1, done.stdout + done.stderr
    entries = server.entries()
    # Each trail's verdict, the whole run's entry, its generated files' and its trail rows'
    # (`runs/rows.py`).
    assert len([k for k in entries if k.startswith("ac/")]) == 11 + 3, sorted(entries)


# -- hostile entries (hypothesis) -----------------------------------------------------------------

HOSTILE_KEY = "ab" * 32
HOSTILE_TRAIL = "trailmaps/notes/trails/broken.trail.yaml"
HOSTILE_FINDINGS = [
    Finding(
        "type", HOSTILE_TRAIL, 9, 19, "Type 'number[]' is not assignable to type 'string'.",
        code="TS2322", tool="scrollUntilTextIsVisible", step=1, trailmap="notes",
    ).to_json(),
    Finding("warning", HOSTILE_TRAIL, 3, 5, "a quoted number", code="quoted-number").to_json(),
]  # fmt: skip


@settings(
    max_examples=200,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_hostile_trail_entries_are_a_miss_or_this_trail_s_findings(
    server: NginxCache, data: st.DataObject
) -> None:
    """A trail's verdict entry served by the cache with anything in it (the digest made to
    match, as a hostile cache would): a miss with one warning, or findings of that very trail,
    each a whole finding at a line and column in range; never a traceback."""
    entry = {"format": 1, "key": HOSTILE_KEY, "findings": HOSTILE_FINDINGS}
    hostile = data.draw(mutated(entry))
    if isinstance(hostile, dict) and isinstance(hostile.get("findings"), list | dict):
        hostile["sha256"] = content_digest(_canonical(hostile["findings"]))
    raw = json.dumps(hostile)
    if data.draw(st.booleans()):
        raw = raw[:-3]  # cut short
    (server.store / "ac").mkdir(exist_ok=True)
    (server.store / "ac" / HOSTILE_KEY).write_bytes(raw.encode("utf-8", "surrogatepass"))
    warned: list[str] = []
    config = RemoteConfig.resolve(server.url, env={})
    assert config is not None
    remote = RemoteResults(config, warned.append)
    try:
        found = remote.fetch([(HOSTILE_KEY, HOSTILE_TRAIL)])
    finally:
        remote.close()
    if not found:
        assert len(warned) == 1
        return
    assert warned == []
    for item in found[HOSTILE_KEY]:
        finding = Finding.from_json(item)
        assert finding.path == HOSTILE_TRAIL
        assert finding.kind in ("type", "warning")
        assert position_in_range(finding.line, finding.column)
