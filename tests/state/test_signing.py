"""Signatures of remote-cache entries (`state/signing.py`): sealing, opening, the keys'
settings, and the round trip through a real cache (nginx on loopback, through the command
line): a trusted writer, a read-only verifier, forged entries refused, a key rotated, and no
pass served unsigned repeated once keys are configured."""

from __future__ import annotations

import base64
import json
import os
import re
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.nginx import NginxCache
from tests.conftest import run_python, write_tree
from tests.mutations import mutated
from tests.runs.test_runcache import EDITED, cli, clone, entry_inputs, local, shown, stats
from tests.state.test_remote import BROKEN_TRAIL, HOSTILE_FINDINGS, HOSTILE_KEY
from trailblaze.cli.main import main
from trailblaze.state.keys import content_digest
from trailblaze.state.remote import RemoteConfig, RemoteFault, decoded_entry, sealed_entry
from trailblaze.state.signing import (
    SIGNING_KEY_ENV,
    SIGNING_KEY_FILE_ENV,
    SigningError,
    Trust,
    Unverified,
    new_private_key,
    public_key_text,
)
from trailblaze.workspace import WorkspaceError, find_workspace

__all__ = ["local"]  # the module fixture: a purely local check of a clone

KEY = "ab" * 32
OTHER = "cd" * 32
SIGNER = new_private_key()


def seed() -> bytes:
    return new_private_key()[1]


def test_a_sealed_entry_opens_under_its_key_and_public_key() -> None:
    mine = seed()
    writer = Trust((public_key_text(mine),), mine)
    sealed = writer.seal(KEY, b'{"format":1}')
    assert sealed.startswith(b'{"format":1}\ned25519 ')
    reader = Trust((public_key_text(mine),))
    assert reader.open(KEY, sealed) == b'{"format":1}'
    # Without public keys an entry is read as before: its signature dropped, unchecked.
    assert Trust().open(KEY, sealed) == b'{"format":1}'
    assert Trust().open(KEY, b'{"format":1}') == b'{"format":1}'


def test_what_a_reader_with_keys_refuses() -> None:
    mine, theirs = seed(), seed()
    reader = Trust((public_key_text(mine),))
    sealed = Trust((), mine).seal(KEY, b'{"pass":true}')
    refusals = {
        "unsigned": (KEY, b'{"pass":true}'),
        "another key": (KEY, Trust((), theirs).seal(KEY, b'{"pass":true}')),
        "altered": (KEY, sealed.replace(b"true", b"fals")),
        "moved": (OTHER, sealed),
        "garbled": (KEY, sealed[:-8] + b"AAAAAAA="),
        "no id": (KEY, b'{"pass":true}\ned25519 zz AAAA'),
    }
    messages = {}
    for name, (key, raw) in refusals.items():
        with pytest.raises(Unverified) as caught:
            reader.open(key, raw)
        messages[name] = str(caught.value)
    where = f"the entry under ac/{KEY[:12]}…"
    theirs_id = Trust((), theirs).seal(KEY, b"x").split(b" ")[1].decode()
    assert messages == {
        "unsigned": f"{where} is not signed (remote-cache-public-keys asks for a signature)",
        "another key": f"{where} is signed by a key not in remote-cache-public-keys (key id {theirs_id})",
        "altered": f"the signature of {where} does not verify (forged or altered)",
        "moved": f"the signature of the entry under ac/{OTHER[:12]}… does not verify (forged or altered)",
        "garbled": f"the signature of {where} does not verify (forged or altered)",
        "no id": f"{where} carries a signature line that cannot be read",
    }


def test_decoded_entry_turns_a_refusal_into_the_remote_s_one_fault() -> None:
    mine = seed()
    writer = Trust((public_key_text(mine),), mine)
    raw = sealed_entry({"format": 1, "key": KEY}, KEY, writer)
    assert decoded_entry(raw, KEY, 1, "an entry", Trust(writer.public)) == {"format": 1, "key": KEY}
    with pytest.raises(RemoteFault, match="is not signed"):
        decoded_entry(b'{"format":1,"key":"' + KEY.encode() + b'"}', KEY, 1, "an entry", writer)
    with pytest.raises(RemoteFault, match="is not JSON"):
        decoded_entry(b"[" * 100_000, KEY, 1, "an entry")  # RecursionError in the parser


def test_the_signing_key_comes_from_the_environment_in_either_form(tmp_path: Path) -> None:
    pem, mine = new_private_key()
    public = public_key_text(mine)
    key_file = tmp_path / "signing.pem"
    key_file.write_bytes(pem)
    inline = "ed25519-private:" + base64.b64encode(mine).decode()
    for env in ({SIGNING_KEY_FILE_ENV: str(key_file)}, {SIGNING_KEY_ENV: inline}):
        trust = Trust.resolve([public], env)
        assert trust.signs
        assert trust.verifies
        assert trust.secret == mine
        assert "secret" not in repr(trust)
        assert inline not in repr(trust)
    # Signing without public keys (readers that do not check yet, during a roll-out).
    assert Trust.resolve([], {SIGNING_KEY_ENV: inline}).signs
    # A reader with public keys and no signing key never writes: unsigned entries would only
    # push signed ones out of the cache.
    config = RemoteConfig.resolve("http://cache.example/", env={}, public_keys=[public])
    assert config is not None
    assert config.read_only
    assert config.trust.verifies
    assert not config.trust.signs


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({SIGNING_KEY_ENV: "hunter2"}, f"{SIGNING_KEY_ENV}: not an Ed25519 private key (PEM, or 'ed25519-private:' and its seed in base64)"),
        ({SIGNING_KEY_ENV: "ed25519-private:AAAA"}, f"{SIGNING_KEY_ENV}: not 'ed25519-private:' and 32 bytes in base64"),
        ({SIGNING_KEY_ENV: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"}, f"{SIGNING_KEY_ENV}: not an unencrypted PEM private key (ValueError)"),
        ({SIGNING_KEY_FILE_ENV: "/nonexistent/key.pem"}, f"{SIGNING_KEY_FILE_ENV}: cannot read /nonexistent/key.pem: No such file or directory"),
        ({SIGNING_KEY_ENV: "x", SIGNING_KEY_FILE_ENV: "y"}, f"set {SIGNING_KEY_ENV} or {SIGNING_KEY_FILE_ENV}, not both"),
    ],
)  # fmt: skip
def test_a_signing_key_that_cannot_be_used_is_a_usage_error_that_never_shows_it(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(SigningError) as caught:
        Trust.resolve([], env)
    assert str(caught.value) == message
    assert caught.value.exit_code == 2


def test_a_signing_key_readers_would_refuse_is_a_usage_error() -> None:
    mine, theirs = seed(), seed()
    inline = "ed25519-private:" + base64.b64encode(mine).decode()
    with pytest.raises(SigningError) as caught:
        Trust.resolve([public_key_text(theirs)], {SIGNING_KEY_ENV: inline})
    assert str(caught.value) == (
        f"the signing key ({SIGNING_KEY_ENV}) is not one of remote-cache-public-keys in "
        f"pyproject.toml: readers would refuse what it signs; add its public key, "
        f"{public_key_text(mine)}"
    )


def test_public_keys_are_checked_where_they_are_configured(tmp_path: Path) -> None:
    public = public_key_text(seed())
    write_tree(
        tmp_path / "ws",
        {
            "trailmaps/app/trailmap.yaml": "id: app\n",
            "pyproject.toml": f'[tool.trailblaze]\nremote-cache-public-keys = ["{public}", "{public}"]\n',
        },
    )
    assert find_workspace(tmp_path / "ws", explicit=True).remote_keys == (public,)
    for bad in ('"ed25519:short"', f'"{public[:-2]}B="', '"rsa:AAAA"', "1"):
        write_tree(
            tmp_path / "bad",
            {
                "trailmaps/app/trailmap.yaml": "id: app\n",
                "pyproject.toml": f"[tool.trailblaze]\nremote-cache-public-keys = [{bad}]\n",
            },
        )
        with pytest.raises(WorkspaceError) as caught:
            find_workspace(tmp_path / "bad", explicit=True)
        assert str(caught.value) == (
            f"{tmp_path / 'bad' / 'pyproject.toml'}:2:1: [tool.trailblaze] "
            "remote-cache-public-keys must be a list of public keys, each 'ed25519:' and the "
            "key's 32 bytes in base64 (`trailblaze signing-key FILE` prints one)"
        )


def test_signing_key_command_makes_a_private_file_and_prints_the_public_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key_file = tmp_path / "keys" / "signing.pem"
    key_file.parent.mkdir()
    assert main(["signing-key", str(key_file)]) == 0
    made = capsys.readouterr()
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    assert key_file.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert made.out.startswith('remote-cache-public-keys = ["ed25519:')
    assert f"wrote a new signing key to {key_file}" in made.err
    # Asked again: the same key's public key, the file untouched.
    before = key_file.read_bytes()
    assert main(["signing-key", str(key_file)]) == 0
    assert capsys.readouterr().out == made.out
    assert key_file.read_bytes() == before
    # The line it prints is what pyproject.toml takes, and the key signs for it.
    public = made.out.split('"')[1]
    trust = Trust.resolve([public], {SIGNING_KEY_FILE_ENV: str(key_file)})
    assert trust.open(KEY, trust.seal(KEY, b"{}")) == b"{}"
    # Not a key: a usage error, the file's content never shown.
    write_tree(tmp_path, {"notes.txt": "my password is hunter2\n"})
    done = run_python(tmp_path, "-m", "trailblaze", "signing-key", "notes.txt")
    assert done.returncode == 2
    assert done.stderr == (
        "trailblaze signing-key: notes.txt: not an Ed25519 private key (PEM, or "
        "'ed25519-private:' and its seed in base64)\n"
    )
    assert main(["signing-key", os.devnull + "/nope"]) == 2


@settings(max_examples=200, database=None, deadline=None)
@given(data=st.data())
def test_a_signed_entry_changed_in_any_way_is_refused(data: st.DataObject) -> None:
    """With public keys, an entry is read only as its writer signed it: any change to its
    payload, its signature line or the key it sits under is a `RemoteFault`."""
    secret = SIGNER[1]
    writer = Trust((public_key_text(secret),), secret)
    reader = Trust(writer.public)
    entry = {"format": 1, "key": HOSTILE_KEY, "findings": HOSTILE_FINDINGS}
    raw = sealed_entry(entry, HOSTILE_KEY, writer)
    payload, _, line = raw.rpartition(b"\n")
    how = data.draw(st.sampled_from(["payload", "signature", "bytes", "unsigned"]))
    if how == "payload":
        changed = json.dumps(data.draw(mutated(entry)), separators=(",", ":")).encode()
        forged = changed + b"\n" + line
    elif how == "signature":
        forged = payload + b"\n" + data.draw(st.binary(max_size=120))
    elif how == "bytes":
        at = data.draw(st.integers(0, len(raw) - 1))
        forged = raw[:at] + data.draw(st.binary(min_size=1, max_size=4)) + raw[at + 1 :]
    else:
        forged = json.dumps(data.draw(mutated(entry))).encode()
    try:
        opened = decoded_entry(forged, HOSTILE_KEY, 1, "an entry", reader)
    except RemoteFault:
        return
    # Accepted: only when what it says is what was signed.
    assert opened == entry


# -- the round trip through a real cache: nginx (WebDAV) on loopback --------------------------

FIXED = BROKEN_TRAIL.replace("[5, 6]", '"Shopping"')


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, tuple[Path, str, str]]:
    """Two signing keys, `a` and `b`: each its PEM file, its public key and its key id."""
    made = {}
    for name in ("a", "b"):
        pem, secret = new_private_key()
        path = tmp_path / f"{name}.pem"
        path.write_bytes(pem)
        ident = signer(Trust((), secret).seal(KEY, b"{}"))
        assert ident is not None
        made[name] = (path, public_key_text(secret), ident)
    return made


def signer(raw: bytes) -> str | None:
    """The key id an entry is signed with (None: not signed)."""
    _, sep, last = raw.rpartition(b"\n")
    return last.split(b" ")[1].decode() if sep and last.startswith(b"ed25519 ") else None


def keyed(ws: Path, *public: str) -> Path:
    """`ws` with `remote-cache-public-keys` in its pyproject.toml."""
    listed = ", ".join(f'"{key}"' for key in public)
    return write_tree(
        ws, {"pyproject.toml": f"[tool.trailblaze]\nremote-cache-public-keys = [{listed}]\n"}
    )


def signing_with(monkeypatch: pytest.MonkeyPatch, key: Path | None) -> None:
    if key is None:
        monkeypatch.delenv(SIGNING_KEY_FILE_ENV, raising=False)
    else:
        monkeypatch.setenv(SIGNING_KEY_FILE_ENV, str(key))


def warnings(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if "warning" in line]


@pytest.mark.tsc
def test_signed_entries_round_trip_writer_verifier_and_rotated_key(
    *,
    server: NginxCache,
    local: dict[str, Any],
    keys: dict[str, tuple[Path, str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (a_file, a, a_id), (b_file, b, b_id) = keys["a"], keys["b"]
    # A trusted writer (the main branch's CI) signs every entry it stores.
    signing_with(monkeypatch, a_file)
    writer = keyed(clone(tmp_path / "main"), a)
    assert cli(writer, "--remote-cache", server.url) == 1
    assert shown(writer) == local["report"]
    assert stats(writer)["remote_run"] == "stored"
    stored = server.entries()
    entries = {k: v for k, v in stored.items() if k.startswith("ac/")}
    # Each trail's verdict, the run entry, its files entry and its trail rows.
    assert len(entries) == 11 + 3
    assert {signer(v) for v in entries.values()} == {a_id}

    # A read-only verifier (a pull request's build) needs only the public key.
    signing_with(monkeypatch, None)
    capsys.readouterr()
    reader = keyed(clone(tmp_path / "pr"), a)
    assert cli(reader, "--remote-cache", server.url, "--remote-cache-read-only") == 1
    assert shown(reader) == local["report"]
    assert stats(reader)["remote_run"] == "hit"
    assert stats(reader)["compiler_runs"] == 0
    # Without a signing key a reader never writes, even unasked: its unsigned entries would
    # only push signed ones out. An edit misses the run; the other verdicts verify.
    edited = keyed(write_tree(clone(tmp_path / "edit"), {EDITED: FIXED}), a)
    assert cli(edited, "--remote-cache", server.url) == 1  # the rejected trail
    assert stats(edited)["remote_hits"] == 10
    assert stats(edited)["files_compiled"] == [EDITED]
    assert server.entries() == stored
    assert warnings(capsys) == []

    # The key is rotated: with the old public key removed, its entries miss (one warning) and
    # the check is done here.
    rotated = keyed(clone(tmp_path / "rotated"), b)
    assert cli(rotated, "--remote-cache", server.url) == 1
    assert shown(rotated) == local["report"]
    assert stats(rotated).get("remote_run") != "hit"
    assert stats(rotated)["compiler_runs"] >= 1
    [warning] = warnings(capsys)
    assert warning == (
        f"trailblaze: warning: remote cache {server.url}: the entry under "
        f"ac/{entry_inputs(rotated).generated[:12]}… is signed by a key not in "
        f"remote-cache-public-keys (key id {a_id}); working locally for the rest of this run"
    )
    assert server.entries() == stored

    # With both listed, entries signed with either verify: the new writer's (b) after an edit
    # reuses the old verdicts and stores its own, signed with b.
    signing_with(monkeypatch, b_file)
    both = keyed(write_tree(clone(tmp_path / "both"), {EDITED: FIXED}), a, b)
    assert cli(both, "--remote-cache", server.url) == 1
    assert stats(both)["remote_hits"] == 10
    assert stats(both)["remote_run"] == "stored"
    added = {k: v for k, v in server.entries().items() if k.startswith("ac/") and k not in stored}
    assert added
    assert {signer(v) for v in added.values()} == {b_id}
    signing_with(monkeypatch, None)
    for name, edit in (("both-old", {}), ("both-new", {EDITED: FIXED})):
        ws = keyed(write_tree(clone(tmp_path / name), edit), a, b)
        assert cli(ws, "--remote-cache", server.url, "--remote-cache-read-only") == 1
        assert stats(ws)["remote_run"] == "hit", name
        assert stats(ws)["compiler_runs"] == 0
    assert warnings(capsys) == []


def _payload(raw: bytes) -> bytes:
    return raw.rpartition(b"\n")[0] if signer(raw) is not None else raw


def forge_pass(server: NginxCache, key: str, seal: Any) -> None:
    """Under the run key `key`, a run entry whose report has no finding: a forged pass.
    `seal(key, payload)` makes the stored entry of its payload (unsigned, signed, ...)."""
    ac = server.store / "ac" / key
    entry = json.loads(_payload(ac.read_bytes()))
    body = json.loads(zlib.decompress((server.store / "cas" / entry["sha256"]).read_bytes()))
    body["report"]["findings"] = []
    data = zlib.compress(json.dumps(body).encode())
    digest = content_digest(data)
    (server.store / "cas" / digest).write_bytes(data)
    ac.write_bytes(seal(key, json.dumps({**entry, "sha256": digest}).encode()))


@pytest.mark.tsc
@pytest.mark.parametrize(
    ("forgery", "expected"),
    [
        ("unsigned", "is not signed (remote-cache-public-keys asks for a signature)"),
        ("their-key", "is signed by a key not in remote-cache-public-keys"),
        ("body-swapped", "does not verify (forged or altered)"),
        ("entry-moved", "does not verify (forged or altered)"),
    ],
)
def test_a_forged_pass_is_a_miss_with_one_warning(
    forgery: str,
    expected: str,
    *,
    server: NginxCache,
    local: dict[str, Any],
    keys: dict[str, tuple[Path, str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (a_file, a, _), (b_file, _, _) = keys["a"], keys["b"]
    signing_with(monkeypatch, a_file)
    assert cli(keyed(clone(tmp_path / "main"), a), "--remote-cache", server.url) == 1
    signing_with(monkeypatch, None)
    ci = keyed(clone(tmp_path / "ci"), a)
    inputs = entry_inputs(ci)
    valid = (server.store / "ac" / inputs.key).read_bytes()
    if forgery == "unsigned":  # written by someone without the key
        forge_pass(server, inputs.key, lambda _, payload: payload)
    elif forgery == "their-key":  # signed, with a key readers do not trust
        theirs = Trust.resolve([], {SIGNING_KEY_FILE_ENV: str(b_file)})
        forge_pass(server, inputs.key, theirs.seal)
    elif forgery == "body-swapped":  # a valid entry's signature over another payload
        forge_pass(server, inputs.key, lambda _, payload: payload + valid[len(_payload(valid)) :])
    else:  # a valid signed entry of another key (the files entry), moved to the run's
        moved = (server.store / "ac" / inputs.generated).read_bytes()
        (server.store / "ac" / inputs.key).write_bytes(moved)
    capsys.readouterr()
    assert cli(ci, "--remote-cache", server.url) == 1
    assert shown(ci) == local["report"]  # the findings the forgery dropped are there
    assert stats(ci).get("remote_run") != "hit"
    [warning] = warnings(capsys)
    assert expected in warning
    # The forgery decided nothing locally either: the next run (no remote) says the same.
    assert cli(ci) == 1
    assert shown(ci) == local["report"]


@pytest.mark.tsc
def test_a_pass_served_unsigned_is_not_laundered_once_keys_are_configured(
    *,
    server: NginxCache,
    local: dict[str, Any],
    keys: dict[str, tuple[Path, str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before keys were configured a forged pass was served and recorded (the CLI's no-op, the
    trail rows, the result cache): none of it is repeated once the public keys are listed."""
    _, a, _ = keys["a"]
    assert cli(clone(tmp_path / "main"), "--remote-cache", server.url) == 1  # unsigned entries
    # The whole run: a forged pass under the run key.
    whole = clone(tmp_path / "whole")
    forge_pass(server, entry_inputs(whole).key, lambda _, payload: payload)
    assert cli(whole, "--remote-cache", server.url) == 0  # no keys: the cache is trusted
    assert cli(whole, "--remote-cache", server.url) == 0  # and the no-op repeats it
    keyed(whole, a)
    capsys.readouterr()
    assert cli(whole, "--remote-cache", server.url) == 1
    assert shown(whole) == local["report"]
    assert "is not signed" in warnings(capsys)[0]
    assert cli(whole) == 1  # nor without the remote

    # One trail's verdict: the broken trail's forged as clean (its run entry gone).
    for name in list(server.entries()):
        entry = server.store / name
        if name.startswith("ac/") and b"TS2322" in entry.read_bytes():
            record = json.loads(entry.read_bytes())
            record.update(findings=[], sha256=content_digest(b"[]"))
            entry.write_bytes(json.dumps(record).encode())
        elif name.startswith("ac/") and not re.search(
            b'"(findings|files_sha256)"', entry.read_bytes()
        ):
            entry.unlink()  # the run entries and rows: the per-trail way
    trail = clone(tmp_path / "trail")
    assert cli(trail, "--remote-cache", server.url) == 1  # the rejected trail
    assert "TS2322" not in json.dumps(shown(trail))  # the forged verdict, served
    keyed(trail, a)
    # Offline: the verdicts served live on in the trail rows and the result cache, under no
    # keys; with keys they are not this run's, and every trail is compiled again.
    assert cli(trail) == 1
    assert shown(trail) == local["report"]
    assert len(stats(trail)["files_compiled"]) == 11


@pytest.mark.tsc
def test_doit_does_not_repeat_a_pass_served_unsigned_once_keys_are_configured(
    server: NginxCache,
    keys: dict[str, tuple[Path, str, str]],
    tmp_path: Path,
) -> None:
    _, a, _ = keys["a"]
    assert cli(clone(tmp_path / "main"), "--remote-cache", server.url) == 1
    ws = clone(tmp_path / "ws")
    forge_pass(server, entry_inputs(ws).key, lambda _, payload: payload)
    write_tree(ws, {"dodo.py": "from trailblaze.doit_tasks import DOIT_CONFIG, task_check\n"})
    env = {"TRAILBLAZE_REMOTE_CACHE": server.url}
    served = run_python(ws, "-m", "doit", "check", env=env)
    assert served.returncode == 0, served.stdout + served.stderr
    assert run_python(ws, "-m", "doit", "check", env=env).returncode == 0  # up to date
    keyed(ws, a)
    done = run_python(ws, "-m", "doit", "check", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "TS2322" in done.stdout
    assert "is not signed" in done.stderr
