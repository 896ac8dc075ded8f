"""Every URL we show is redacted, whatever it holds: `redaction.redacted_url`, and the outputs of
`trailblaze check` given hostile remote-cache URLs (stderr, the text, JSON and SARIF reports)."""

from __future__ import annotations

import dataclasses
import logging
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from bench.nginx import free_port
from tests.conftest import write_tree
from trailblaze.cli.main import main
from trailblaze.finding import Finding, Location
from trailblaze.redaction import Secrets, redacted_url

MARK = "Zq"
"""Every secret starts and ends with it, and holds it between any two of its pieces: a shown
piece of a secret longer than one separator shows it. No host, path or message of ours holds it."""

HOSTILE = "/?#@:%&=;, \t\\'\"[]"
_piece = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(alphabet="abcXYZ0123456789-._~", min_size=1, max_size=4),
    st.sampled_from(["%2F", "%40", "%3F", "%23", "%3A", "%25"]),
)
secrets = st.lists(_piece, max_size=6).map(lambda pieces: MARK + MARK.join(pieces) + MARK)


def encodings(secret: str) -> st.SearchStrategy[str]:
    """The secret as a user may write it: as is, percent-encoded, or encoded but for some
    separators."""
    return st.sampled_from(
        [secret, quote(secret, safe=""), quote(secret, safe="/?#@"), quote(secret, safe=":@")]
    )


@st.composite
def hostile_urls(draw: st.DrawFn, host: str = "cache.example:8080") -> str:
    """A URL holding a secret wherever one is put: in its user, its password (with or without
    the `@`, or with it percent-encoded), its query or its fragment."""
    secret = draw(secrets.flatmap(encodings))
    scheme = draw(st.sampled_from(["http://", "https://", "HTTP://", ""]))
    path = draw(st.sampled_from(["", "/", "/cache", "/a/b/"]))
    shape = draw(
        st.sampled_from(["password", "user", "no-at", "encoded-at", "query", "fragment", "both"])
    )
    if shape == "password":
        return f"{scheme}ci:{secret}@{host}{path}"
    if shape == "user":
        return f"{scheme}{secret}@{host}{path}"
    if shape == "no-at":
        # Its `@` left out; an `@` of the secret (or `%40`) would make it a user and a host
        # (`ci:Zq@Zq` is the host `Zq`), so it has none.
        return f"{scheme}ci:{secret.replace('@', '').replace('%40', '')}{path}"
    if shape == "encoded-at":
        return f"{scheme}ci:{secret}%40{host}{path}"
    if shape == "query":
        return f"{scheme}{host}{path}?token={secret}&x=1"
    if shape == "fragment":
        return f"{scheme}{host}{path}#{secret}"
    return f"{scheme}{secret}:{secret}@{host}{path}?{secret}#{secret}"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://cache.example:8080/ci/", "http://cache.example:8080/ci/"),
        ("https://user:pw@cache.example/ci", "https://***@cache.example/ci"),
        ("http://user:pa/ss@cache.example/", "http://***@cache.example/"),
        ("http://user:p@ss@cache.example/", "http://***@cache.example/"),
        ("http://user:p%40ss@cache.example/", "http://***@cache.example/"),
        ("http://cache.example/ci?token=abc", "http://cache.example/ci?***"),
        ("http://cache.example/ci#abc", "http://cache.example/ci#***"),
        # A user part with a `?` or `#` in it, a query with an `@`, a password without its
        # `@`: nothing of it can be told from a host, so nothing after the scheme is shown.
        ("http://cache.example/ci?q=a@b", "http://***"),
        ("http://tok?en@cache.example/", "http://***"),
        ("http://user:pa?ss@cache.example/", "http://***"),
        ("http://user:pa#ss@cache.example/", "http://***"),
        ("http://user:secret/ci", "http://***"),
        ("http://user:secret%40cache.example/", "http://***@cache.example/"),
        ("http://cache.example/a%40b", "http://***@b"),
        ("http://[::1]:8080/c", "http://[::1]:8080/c"),
        ("cache.example", "cache.example"),
        ("user:secret@cache.example", "***@cache.example"),
        ("", ""),
    ],
)
def test_known_shapes(url: str, shown: str) -> None:
    assert redacted_url(url) == shown


@settings(max_examples=500)
@given(hostile_urls())
@example("http://ci:Zq/Zq@cache.example:8080/")
@example("http://ci:Zq?Zq@cache.example:8080/")
@example("http://ci:Zq#Zq@cache.example:8080/")
@example("http://ci:Zq@Zq@cache.example:8080/")
def test_no_piece_of_a_secret_is_ever_shown(url: str) -> None:
    shown = redacted_url(url)
    assert MARK not in shown
    assert redacted_url(shown) == shown  # what is shown is safe to show again


@pytest.fixture
def ws(compact_ws: Path) -> Path:
    write_tree(
        compact_ws,
        {
            "trailmaps/app/trails/t.trail.yaml": (
                "config: {target: app}\n"
                "trail:\n"
                "  - step: s\n"
                "    recording:\n"
                "      android:\n"
                "        - inputText: {txt: hello}\n"
            )
        },
    )
    return compact_ws


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    url=hostile_urls(host=f"127.0.0.1:{free_port()}"),
    fmt=st.sampled_from(["text", "json", "sarif", "junit", "github"]),
    through_env=st.booleans(),
)
def test_trailblaze_check_never_shows_a_secret_of_a_remote_cache_url(
    *,
    url: str,
    fmt: str,
    through_env: bool,
    ws: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A refused port: a URL that can be used is asked, fails and is warned about (with the URL);
    # one that cannot is a usage error (with the URL).
    shutil.rmtree(ws / ".trailblaze", ignore_errors=True)
    caplog.clear()
    argv = ["check", str(ws), "--format", fmt]
    with monkeypatch.context() as env:
        if through_env:
            env.setenv("TRAILBLAZE_REMOTE_CACHE", url)
        else:
            argv += ["--remote-cache", url]
        with caplog.at_level(logging.DEBUG):
            code = main(argv)
    out, err = capsys.readouterr()
    said = out + err + caplog.text
    assert code in (1, 2), said  # the trail's finding, or the URL refused
    event(f"exit {code}")
    assert MARK not in said
    if code == 2:
        assert out == ""
        assert err.startswith("trailblaze check: remote cache URL '")
        assert err.count("\n") == 1
    else:
        assert "remote cache " in err  # the refused port was warned about


# -- replay secrets (the end-to-end greps are in tests/replay/test_flags.py) ----------------


def test_secrets_redact_every_form_and_the_longest_first() -> None:
    secrets = Secrets({"a": "x y", "b": "x y z", "c": 'say "hi"', "d": "it's"})
    shown = 'typed x y z then x%sy, \'x y\', {"c": "say \\"hi\\""}, sh -c \'it\'"\'"\'s\''
    assert secrets.redact(shown) == (
        'typed [secret:b] then [secret:a], \'[secret:a]\', {"c": "[secret:c]"}, sh -c [secret:d]'
    )
    # The start of a value that a message cut short.
    assert Secrets({"t": "token-123"}).redact("output: tok…, then token…") == (
        "output: [secret:t]…, then [secret:t]…"
    )
    # A value the marker would show is hidden behind one that does not hold it.
    assert Secrets({"secret": "secret"}).redact("a secret") == "a ***"


@dataclasses.dataclass(frozen=True)
class _Held:
    found: tuple[Finding, ...]
    where: Location


def test_secrets_redact_data_and_log_records(caplog: pytest.LogCaptureFixture) -> None:
    secrets = Secrets({"pw": "Zq-1"})
    assert secrets.redact_data({"a": ("Zq-1", ["x Zq-1"]), "Zq-1": 3}) == {
        "a": ("[secret:pw]", ["x [secret:pw]"]),
        "[secret:pw]": 3,
    }
    # Through the records a trail's result holds: findings and locations (msgspec Structs)
    # inside a dataclass, however deep.
    finding = Finding("infra", "a.trail.yaml", 1, 1, "could not type Zq-1", tool="Zq-1")
    held = _Held(found=(finding,), where=Location("Zq-1.yaml", 2, 3))
    assert secrets.redact_data(held) == _Held(
        found=(finding.with_(message="could not type [secret:pw]", tool="[secret:pw]"),),
        where=Location("[secret:pw].yaml", 2, 3),
    )
    log = logging.getLogger("trailblaze.test")
    with secrets.logging_redacted(), caplog.at_level(logging.INFO):
        log.info("typed %s", "Zq-1")
        try:
            raise ValueError("cannot type Zq-1")
        except ValueError:
            log.exception("failed")
    log.info("after: %s", "Zq-1")  # the run is over: records are as made again
    assert "Zq-1" not in caplog.text.replace("after: Zq-1", "")
    assert "typed [secret:pw]" in caplog.text
    assert "ValueError: cannot type [secret:pw]" in caplog.text
    assert Secrets().redact("Zq-1") == "Zq-1"
