"""The remote cache's bounds against hostile servers on loopback (`bench/hostile.py`).

Each case runs `trailblaze check --remote-cache URL` on a fresh clone, as CI would, and checks
what its user sees (the report a local run gives, one warning naming the bound, no traceback)
and what it cost: its wall time within the bound plus slack, and its peak resident memory
(`os.wait4`) within the body limit of a run against a remote that refuses at once.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest

from bench.hostile import ESCAPES, HostileHttp, Measured, measure, zlib_bomb
from tests.conftest import ROOT
from tests.faultproxy import refused_url
from trailblaze.options import DISABLE_ENV
from trailblaze.state.remote import (
    HEADER_ENV,
    TIMEOUT_ENV,
    HttpCache,
    RemoteConfig,
    RemoteConfigError,
    RemoteFault,
)
from trailblaze.state.transport import (
    BUDGET_ENV,
    DEADLINE_ENV,
    MAX_MB_ENV,
    Budget,
    Inflated,
    TransportFault,
    inflate_within,
    run_budget,
)

DEADLINE = 2.0
BUDGET = 2.5
LIMIT_MIB = 16
SLACK = 5.0
"""Seconds a loaded 2-core machine may add to a bound (the check itself takes about 1.5 s)."""
MEMORY_SLACK_MIB = 3 * LIMIT_MIB + 16
"""What a run may hold past the baseline: the body limit, once as read and once as inflated,
and a copy of it, plus noise."""
pytestmark = pytest.mark.usefixtures("tsc")
"""The checks below reach the remote cache for the type gate's verdicts: without a compiler they
would ask it nothing, whatever this module's order in the run."""

SETTINGS = {DEADLINE_ENV: str(int(DEADLINE * 1000)), MAX_MB_ENV: str(LIMIT_MIB)}
WARNING = "trailblaze: warning: remote cache "

EXPECTED = {
    "trickle": r"GET ac/\w+…: no complete answer within 2\.0 s, however it came "
    rf"\(the deadline of one request, {DEADLINE_ENV}\)",
    "endless": rf"the answer's body goes on past the 16 MiB a body may have \({MAX_MB_ENV}\)",
    "chunked": rf"the answer's body goes on past the 16 MiB a body may have \({MAX_MB_ENV}\)",
    "huge": r"the answer claims 4000000000000 bytes, more than the 16 MiB a body may have",
    "bomb": r"the body inflates to more than the 16 MiB a body may inflate to",
    "bomb-files": r"the files entry is not usable: names 1099511627776 bytes of files, more than "
    r"the 16 MiB a body may inflate to",
    "escapes": r"BadStatusLine: \\x1b\]0;owned\\x07\\x1b\[2J\\x1b\[31mHTTP/9 weird",
    "slow": rf"this run's 2\.5 s for the remote cache are spent \({BUDGET_ENV}\)",
}
BOUND = {"trickle": DEADLINE, "slow": BUDGET}
"""The seconds each case may hold the check (the others are refused at once)."""


def fresh_clone(where: Path) -> Path:
    shutil.copytree(ROOT / "trailmaps", where / "trailmaps")
    return where


def check(ws: Path, url: str, **env: str) -> Measured:
    import os  # noqa: PLC0415

    full = {**os.environ, "NO_COLOR": "1", DISABLE_ENV: "1", **env}
    argv = [sys.executable, "-m", "trailblaze", "check", "--remote-cache", url]
    return measure(argv, cwd=ws, env=full, timeout=90)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Measured:
    """The same check against a remote that refuses at once: its time, memory and report."""
    ws = fresh_clone(tmp_path_factory.mktemp("baseline"))
    ran = check(ws, refused_url(), **SETTINGS)
    assert ran.code == 0, ran.stderr
    assert "connection refused" in ran.stderr
    return ran


def assert_one_warning(ran: Measured, url: str, expected: str) -> str:
    assert "Traceback" not in ran.stderr, ran.stderr
    assert "\x1b" not in ran.stderr + ran.stdout
    warnings = [line for line in ran.stderr.splitlines() if line.startswith(WARNING)]
    assert len(warnings) == 1, ran.stderr
    assert warnings[0].startswith(f"{WARNING}{url}: ")
    assert warnings[0].endswith("; working locally for the rest of this run")
    assert re.search(expected, warnings[0]), warnings[0]
    return warnings[0]


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_a_hostile_remote_costs_a_warning_and_bounded_time_and_memory(
    mode: str, baseline: Measured, tmp_path: Path
) -> None:
    settings = {**SETTINGS, BUDGET_ENV: str(int(BUDGET * 1000))} if mode == "slow" else SETTINGS
    with HostileHttp(mode, pace=1.5 if mode == "slow" else 0.5) as peer:
        ran = check(fresh_clone(tmp_path), peer.url, **settings)
    assert not peer.errors
    print(f"{mode}: {ran.wall:.2f} s, peak {ran.peak_mib:.0f} MiB ({ran.code})")
    assert ran.code == baseline.code, ran.stderr
    assert ran.stdout == baseline.stdout  # the report a run without the remote gives
    assert_one_warning(ran, peer.url, EXPECTED[mode])
    assert ran.wall < baseline.wall + BOUND.get(mode, 0.0) + SLACK
    assert ran.peak_mib < baseline.peak_mib + MEMORY_SLACK_MIB


@pytest.mark.parametrize("mode", ["huge", "endless"])
def test_without_settings_an_action_cache_answer_is_held_to_16_mib(
    mode: str, baseline: Measured, tmp_path: Path
) -> None:
    with HostileHttp(mode) as peer:
        ran = check(fresh_clone(tmp_path), peer.url)
    print(f"{mode} (defaults): {ran.wall:.2f} s, peak {ran.peak_mib:.0f} MiB")
    expected = "more than the 16 MiB" if mode == "huge" else "goes on past the 16 MiB"
    assert_one_warning(ran, peer.url, expected)
    assert ran.wall < baseline.wall + SLACK
    assert ran.peak_mib < baseline.peak_mib + MEMORY_SLACK_MIB


# -- one client, in process ---------------------------------------------------------------------


def test_the_budget_counts_time_with_requests_in_flight_once() -> None:
    budget = Budget(10.0)
    with budget.exchange(5.0, 60.0) as first, budget.exchange(5.0, 60.0) as second:
        time.sleep(0.2)
    spent = 10.0 - budget.left()
    assert 0.2 <= spent < 0.35  # two exchanges side by side hold the run once
    assert first.allowed == pytest.approx(10.0, abs=0.01)
    assert second.allowed == pytest.approx(10.0, abs=0.01)
    time.sleep(0.1)  # no exchange in flight: nothing spent
    assert 10.0 - budget.left() == pytest.approx(spent, abs=0.01)
    short = Budget(0.05)
    with short.exchange(5.0, 60.0) as clock:
        assert clock.by_budget
        assert clock.allowed == pytest.approx(0.05, abs=0.01)
        time.sleep(0.06)
    gone = r"this run's 0\.05 s for the remote cache are spent"
    with pytest.raises(TransportFault, match=gone), short.exchange(5.0, 60.0):
        pass


def test_every_client_of_a_run_shares_its_budget() -> None:
    config = RemoteConfig.resolve("http://127.0.0.1:9/cache", env={})
    assert config is not None
    shared = Budget(1.0)
    with run_budget(shared):
        first, second = HttpCache(config), HttpCache(config)
    assert first.budget is second.budget is shared
    assert HttpCache(config).budget is not shared


def test_a_spent_budget_refuses_at_once() -> None:
    with HostileHttp("slow", pace=1.0) as peer:
        config = RemoteConfig.resolve(peer.url, env={BUDGET_ENV: "300"})
        assert config is not None
        assert config.budget == 0.3
        cache = HttpCache(config)
        start = time.monotonic()
        with pytest.raises(RemoteFault, match=r"this run's 0\.3 s for the remote cache are spent"):
            cache.get_ac("ab" * 32)
        assert 0.3 <= time.monotonic() - start < 0.8
        start = time.monotonic()
        with pytest.raises(RemoteFault, match=r"are spent"):
            cache.get_ac("ab" * 32)
        assert time.monotonic() - start < 0.05
        cache.close()
    assert len(peer.seen) == 1  # the second was never sent


def test_a_trickling_answer_meets_the_deadline_not_the_quiet_timeout() -> None:
    with HostileHttp("trickle", pace=0.1) as peer:
        env = {DEADLINE_ENV: "700", TIMEOUT_ENV: "5000"}
        config = RemoteConfig.resolve(peer.url, env=env)
        assert config is not None
        assert (config.deadline, config.timeout) == (0.7, 5.0)
        cache = HttpCache(config)
        start = time.monotonic()
        with pytest.raises(RemoteFault, match=r"no complete answer within 0\.7 s"):
            cache.get_cas("cd" * 32)
        assert 0.7 <= time.monotonic() - start < 1.5
        cache.close()


def test_the_body_limit_holds_for_cas_bodies_and_its_setting() -> None:
    with HostileHttp("endless") as peer:
        config = RemoteConfig.resolve(peer.url, env={MAX_MB_ENV: "1"})
        assert config is not None
        assert config.max_bytes == 1 << 20
        cache = HttpCache(config)
        with pytest.raises(RemoteFault, match=r"goes on past the 1 MiB a body may have"):
            cache.get_cas("cd" * 32)
        cache.close()
    for value in ("0", "-3", "nan", "lots"):
        config = RemoteConfig.resolve("http://h/", env={MAX_MB_ENV: value})
        assert config is not None
        assert config.max_bytes == 256 << 20


def test_non_ascii_settings_are_encoded_or_refused_not_a_traceback() -> None:
    config = RemoteConfig.resolve("http://127.0.0.1:9/caché dir/", env={})
    assert config is not None
    assert config.base == "http://127.0.0.1:9/cach%C3%A9%20dir"
    config = RemoteConfig.resolve("http://bücher.example/cache", env={})
    assert config is not None
    assert config.base == "http://xn--bcher-kva.example/cache"
    with pytest.raises(RemoteConfigError) as bad_host:
        RemoteConfig.resolve("http://a..b\u3002/x", env={})
    assert "is not http(s)://HOST[:PORT][/PATH]" in str(bad_host.value)
    for value in ("Bearer tökén", "Bearer 令牌", "Bearer a\x00b", "Bearer \x1b[2J"):
        with pytest.raises(RemoteConfigError) as bad_value:
            RemoteConfig.resolve("http://h/", env={HEADER_ENV: f"Authorization={value}"})
        assert str(bad_value.value) == (
            f"{HEADER_ENV}: the value of Authorization must be printable ASCII (a character "
            "outside it cannot be sent in an HTTP header)"
        )


def test_a_non_ascii_url_and_header_reach_the_server(tmp_path: Path) -> None:
    with HostileHttp("slow", pace=0.0) as peer:
        config = RemoteConfig.resolve(
            f"http://127.0.0.1:{peer.port}/cachè/", env={HEADER_ENV: "X-Token=a b\tc"}
        )
        assert config is not None
        cache = HttpCache(config)
        assert cache.get_ac("ef" * 32) is None  # the server's 404: a miss
        cache.close()
    assert peer.seen == [f"GET /cach%C3%A8/ac/{'ef' * 32} HTTP/1.1"]


def test_a_status_line_of_escapes_is_shown_escaped() -> None:
    with HostileHttp("escapes") as peer:
        config = RemoteConfig.resolve(peer.url, env={})
        assert config is not None
        cache = HttpCache(config)
        with pytest.raises(RemoteFault) as fault:
            cache.get_ac("ab" * 32)
        cache.close()
    assert ESCAPES not in str(fault.value)
    assert "\\x1b]0;owned\\x07" in str(fault.value)


def test_inflating_holds_the_limit_once_and_tells_a_bomb_from_a_cut() -> None:
    limit = 32 << 20
    tracemalloc.start()
    try:
        bomb = inflate_within(zlib_bomb(), limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert bomb == Inflated(b"", False, True)
    assert peak < 1.25 * limit  # zlib's buffer for max_length=limit peaks at twice the limit
    packed = zlib.compress(b"x" * 3_000_000)
    assert inflate_within(packed, 3_000_000) == Inflated(b"x" * 3_000_000, True, False)
    assert inflate_within(packed, 2_999_999).past
    assert inflate_within(packed[:-20], limit)[1:] == (False, False)  # cut short
    with pytest.raises(zlib.error):
        inflate_within(b"not zlib", limit)
