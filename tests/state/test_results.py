"""The result cache's values and keys: every finding survives, anything else is a miss."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trailblaze.finding import Finding
from trailblaze.state.results import LocalResults, ResultKey, decode_result, encode_result

FULL = Finding(
    "type",
    "trails/a.trail.yaml",
    6,
    44,
    "Type 'string' is not assignable to type 'boolean'.",
    key_path="trail[0].recording.android[0].login.remember",
    code="TS2322",
    fatal=False,
    step=1,
    classifier="android",
    tool="login",
    trailmap="app",
    position="runIf.then[0]",
    property="remember",
)
KEY = ResultKey(trail="t" * 64, surface="s" * 64, compiler="7.0.2:123", options="o" * 64)


def test_every_field_of_a_finding_round_trips() -> None:
    # A field added to Finding must be known to the decoder (else every cached verdict with a
    # finding would be a miss): this fails until it is.
    assert all(getattr(FULL, f.name) != f.default for f in msgspec.structs.fields(Finding)), (
        "give FULL a non-default value for every field"
    )
    assert decode_result(encode_result([FULL])) == [FULL]
    assert decode_result(encode_result([])) == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.builds(
            Finding,
            kind=st.sampled_from(["type", "parse", "infra", "warning"]),
            path=st.text(),
            line=st.integers(1, 10**6),
            column=st.integers(1, 10**4),
            message=st.text(),
            code=st.text(max_size=8),
            fatal=st.booleans(),
            step=st.none() | st.integers(1, 500),
            tool=st.none() | st.text(max_size=12),
        ),
        max_size=4,
    )
)
def test_a_verdict_is_stored_as_the_canonical_json_of_the_standard_library(
    findings: list[Finding],
) -> None:
    # Written by orjson (most verdicts empty, `[]`): the bytes json.dumps writes, so the local
    # and the remote cache keep what every earlier version stored and signed.
    data = [f.to_json() for f in findings]
    try:
        expected = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        canonical = expected.encode()
    except UnicodeEncodeError:  # a lone surrogate: refused before, refused now
        with pytest.raises(UnicodeEncodeError):
            encode_result(findings)
        return
    assert encode_result(findings) == canonical


def test_a_value_that_is_not_a_verdict_is_none() -> None:
    good = json.loads(encode_result([FULL]))[0]
    for bad in (
        b"not json",
        b'{"a": 1}',
        json.dumps([{**good, "line": "6"}]).encode(),
        json.dumps([{**good, "fatal": 1}]).encode(),
        json.dumps([{**good, "kind": "nonsense"}]).encode(),
        json.dumps([{**good, "unknown": 1}]).encode(),
        json.dumps([{k: v for k, v in good.items() if k != "path"}]).encode(),
    ):
        assert decode_result(bad) is None, bad


def test_the_key_changes_with_every_part_and_holds_no_path() -> None:
    digests = {KEY.digest}
    for name in ("trail", "surface", "compiler", "options", "format"):
        digests.add(dataclasses.replace(KEY, **{name: "x"}).digest)
    assert len(digests) == 6


def test_local_results_store_and_find_verdicts(tmp_path: Path) -> None:
    cache = LocalResults(tmp_path / "cache" / "results.sqlite3")
    assert cache.get(KEY) is None
    cache.put_many([(KEY, [FULL])])
    cache.close()
    again = LocalResults(tmp_path / "cache" / "results.sqlite3")
    assert again.get(KEY) == [FULL]
    assert (tmp_path / "cache" / "CACHEDIR.TAG").is_file()
    again.close()
