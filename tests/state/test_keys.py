"""The one place that computes digests: its encoding, its helpers, and "our own code"."""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import shutil
from pathlib import Path

import pytest

import trailblaze
from tests.conftest import ROOT, run_python
from tests.test_rooms import modules_importing, package_copy
from trailblaze.state.keys import (
    code_content_digest,
    code_stamps_digest,
    content_digest,
    digest,
    digest_of,
    file_digest,
    mac,
    mac_matches,
    package_files,
    stamped_digest,
    stamps_digest,
)
from trailblaze.toolchain.compilers import Compiler


def test_no_two_part_lists_share_a_digest() -> None:
    lists = [
        ("ab", "c"), ("a", "bc"), ("abc",), ("abc", ""), ("", "abc"), (), ("",), ("", ""),
        ("a\0b",), ("a", "b"), ("a\nb",),
    ]  # fmt: skip
    assert len({digest(*parts) for parts in lists}) == len(lists)


def test_the_encoding_is_length_prefixed_utf8() -> None:
    # Written out independently: a change of encoding turns every cache cold, so it is pinned.
    expected = hashlib.sha256()
    for data in (b"key", b"\x00\xff", "é".encode()):
        expected.update(len(data).to_bytes(8, "little") + data)
    assert digest("key", b"\x00\xff", "é") == expected.hexdigest()
    parts: list[str | bytes] = ["key", b"\x00\xff", "é"]
    assert digest_of(iter(parts)) == expected.hexdigest()
    # Text and its UTF-8 bytes are one part; a name that is not UTF-8 (its bytes as surrogates,
    # as `os` gives it) is another string, so it is another key.
    assert digest("é") == digest("é".encode())
    assert digest(os.fsdecode(b"\xc3\xa9")) == digest("é")
    assert digest(os.fsdecode(b"\xe9")) != digest("é")
    assert digest("\udcc3\udca9") != digest("é")  # `surrogateescape` would make them one


def _framed(*parts: bytes) -> bytes:
    return b"".join(len(p).to_bytes(8, "little") + p for p in parts)


def test_a_mac_is_the_hmac_of_the_length_prefixed_parts() -> None:
    secret = b"s" * 32
    tag = mac(secret, "ab", b"c")
    assert tag == hmac.new(secret, _framed(b"ab", b"c"), hashlib.sha256).digest()
    assert mac_matches(secret, tag, "ab", b"c")
    assert not mac_matches(secret, tag, "a", "bc")  # framed: no two part lists collide
    assert not mac_matches(b"t" * 32, tag, "ab", b"c")


def test_a_content_digest_is_the_sha256_a_cas_address_is() -> None:
    assert content_digest(b"body") == hashlib.sha256(b"body").hexdigest()


def test_a_file_digest_is_its_content_or_why_it_has_none(tmp_path: Path) -> None:
    path = tmp_path / "trail.yaml"
    path.write_bytes(b"- tap: {}\n")
    found, st = file_digest(str(path))
    assert found == content_digest(b"- tap: {}\n")
    assert st is not None
    assert st.st_size == 10
    assert file_digest(str(tmp_path / "gone.yaml")) == ("missing", None)
    found, st = file_digest(str(tmp_path))  # a directory named like a trail
    assert found == f"unreadable:{errno.EISDIR}"
    assert st is not None


def test_a_stamps_digest_tells_a_touched_file_and_keeps_what_it_saw(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.write_text("a")
    paths = [str(one), str(two)]
    seen: dict[str, os.stat_result | None] = {}
    before = stamps_digest("header", paths, seen)
    assert seen[str(two)] is None
    assert seen[str(one)] == os.stat(one)
    assert stamped_digest("header", [(p, seen[p]) for p in paths]) == before
    assert stamps_digest("other header", paths, {}) != before
    assert stamps_digest("header", [str(two), str(one)], {}) != before  # order counts
    os.utime(one, ns=(0, 0))
    assert stamps_digest("header", paths, {}) != before
    two.write_text("")
    assert stamps_digest("header", paths, {}) != before


def test_the_package_files_are_every_file_but_bytecode(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    for rel in ("a.py", "sub/b.py", "data/x.json", "data/new.kind", "__pycache__/a.cpython.pyc"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / "sub" / "stale.pyc").write_text("")
    found = package_files(str(root))
    assert [rel for rel, _ in found] == ["a.py", "data/new.kind", "data/x.json", "sub/b.py"]
    assert all(path == str(root / rel) for rel, path in found)
    # The real package: modules deep down and the data files both.
    ours = {rel for rel, _ in package_files()}
    assert {"check/typegate/gate.py", "data/catalog.json", "data/scripting/host.cjs"} <= ours
    assert package_files() == package_files(trailblaze.PACKAGE_DIR)


def test_the_code_digests_change_with_any_file_of_the_package(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    (root / "deep" / "er").mkdir(parents=True)
    module = root / "deep" / "er" / "m.py"
    module.write_text("x = 1\n")
    stamps, content = code_stamps_digest(str(root)), code_content_digest(str(root))
    module.write_text("x = 2\n")  # same size: the stamp's mtime (or inode) tells it
    os.utime(module, ns=(1, 1))
    assert code_stamps_digest(str(root)) != stamps
    assert code_content_digest(str(root)) != content


# -- no other module hashes -----------------------------------------------------------------


def test_only_the_keys_module_imports_hashlib() -> None:
    assert modules_importing("hashlib") == ["trailblaze.state.keys"]


@pytest.mark.parametrize(
    "plant",
    [
        ("cli/noop.py", "import hashlib\n"),
        ("state/results.py", "def later():\n    from hashlib import sha256\n"),
        ("errors.py", "import hashlib as h\n"),
    ],
)
def test_a_planted_hashlib_import_is_found(tmp_path: Path, plant: tuple[str, str]) -> None:
    found = modules_importing("hashlib", package_copy(tmp_path, plant))
    module = "trailblaze." + plant[0].removesuffix(".py").replace("/", ".")
    assert found == sorted(["trailblaze.state.keys", module])


# -- "our own code": the package itself, wherever it is ----------------------------------------

KEYS = """\
import json, sys
from pathlib import Path

import trailblaze
from trailblaze.cli.noop import inputs_key
from trailblaze.doit_tasks.uptodate import InputsDigest, options_fingerprint
from trailblaze.toolmodel.sources import check_inputs
from trailblaze.options import CheckOptions
from trailblaze.runs.runcache.keys import run_inputs
from trailblaze.workspace import find_workspace, scan

ws = find_workspace(Path(sys.argv[1]))
found = scan(ws)
noop, _ = inputs_key(found.trail_paths, {"format": "json"})
run = run_inputs(ws, found, CheckOptions())
doit = InputsDigest(check_inputs(found), options_fingerprint(CheckOptions()), found).digest()
print(
    json.dumps({"package": trailblaze.PACKAGE_DIR, "noop": noop, "run": run and run.key, "doit": doit})
)
"""


@pytest.mark.tsc
def test_editing_any_file_of_the_package_changes_the_no_op_run_and_doit_keys(
    tsc: Compiler, tmp_path: Path
) -> None:
    # A checkout of ours (the package and a test beside it) and a workspace to key; each key
    # is worked out by a Python that imports the package from the checkout.
    repo = tmp_path / "repo"
    shutil.copytree(
        ROOT / "trailblaze", repo / "trailblaze", ignore=shutil.ignore_patterns("__pycache__")
    )
    (repo / "tests").mkdir()
    (repo / "tests" / "test_something.py").write_text("def test_it() -> None:\n    pass\n")
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps")

    def keys() -> tuple[str, str, str]:
        done = run_python(
            ws,
            "-c",
            KEYS,
            str(ws),
            env={"PYTHONPATH": str(repo), "PYTHONDONTWRITEBYTECODE": "1"},
        )
        assert done.returncode == 0, done.stderr
        found = json.loads(done.stdout)
        assert found["package"] == str(repo / "trailblaze")  # the copy, not this checkout
        assert found["run"] is not None  # a workspace the run cache can key
        return found["noop"], found["run"], found["doit"]

    first = keys()
    assert keys() == first  # nothing changed, nothing moves
    outside = repo / "tests" / "test_something.py"
    outside.write_text(outside.read_text() + "# edited\n")
    assert keys() == first
    previous = first
    for edited in ("trailblaze/check/typegate/gate.py", "trailblaze/data/catalog.json"):
        path = repo / edited
        path.write_bytes(path.read_bytes() + b"\n")
        now = keys()
        assert now[0] != previous[0], f"editing {edited} left the no-op key as it was"
        assert now[1] != previous[1], f"editing {edited} left the run key as it was"
        assert now[2] != previous[2], f"editing {edited} left doit's up-to-date digest as it was"
        previous = now
