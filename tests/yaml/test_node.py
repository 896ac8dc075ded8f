from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from ruamel.yaml.error import MarkedYAMLError

from trailblaze.yaml.node import (
    MAX_DEPTH,
    YamlError,
    YMap,
    YScalar,
    YSeq,
    _yaml_error,
    decode,
    has_c_extension,
    load,
    read_text,
)


def scalar(text: str) -> YScalar:
    root = load(f"k: {text}\n")
    assert isinstance(root, YMap)
    node = root.get("k")
    assert isinstance(node, YScalar)
    return node


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5", 5),
        ("-4", -4),
        ("0", 0),
        ("3.5", 3.5),
        ("1e3", 1000.0),
        ("true", True),
        ("False", False),
        ("null", None),
        ("~", None),
        ("", None),
        ("7:30", "7:30"),  # YAML 1.2: no sexagesimal numbers
        ("0007", "0007"),  # leading zeros would not survive as a number
        ("007.5", "007.5"),
        ("yes", "yes"),  # YAML 1.1 booleans are strings in 1.2
        ("on", "on"),
        ("1_000", "1_000"),
        ("0x1F", 31),
        ("hello world", "hello world"),
        ("'5'", "5"),
        ('"true"', "true"),
        ("'null'", "null"),
        ('"7:30"', "7:30"),
        ("!!str 5", "5"),
    ],
)
def test_scalar_resolution_follows_yaml_1_2_core_and_quotes(text: str, expected: object) -> None:
    node = scalar(text)
    assert node.value == expected
    assert type(node.value) is type(expected)


def test_infinity_and_nan_are_floats() -> None:
    assert scalar(".inf").value == math.inf
    value = scalar(".nan").value
    assert isinstance(value, float)
    assert math.isnan(value)


def test_quote_style_and_source_text_are_kept() -> None:
    root = load("a: '5'\nb: \"x\"\nc: 5\nd: |\n  two\n  lines\n")
    assert isinstance(root, YMap)
    styles = {k.text: (v.style, v.text) for k, v in root if isinstance(v, YScalar)}
    assert styles == {"a": ("'", "5"), "b": ('"', "x"), "c": ("", "5"), "d": ("|", "two\nlines\n")}
    a = root.get("a")
    assert isinstance(a, YScalar)
    assert a.quoted
    assert (a.line, a.column) == (1, 4)


def test_positions_are_one_based_for_nested_nodes() -> None:
    root = load("trail:\n  - step: go\n    recording: {}\n")
    assert isinstance(root, YMap)
    trail = root.get("trail")
    assert isinstance(trail, YSeq)
    first = trail.items[0]
    assert isinstance(first, YMap)
    assert (first.line, first.column) == (2, 5)
    key = first.key_node("recording")
    assert key is not None
    assert (key.line, key.column) == (3, 5)


def test_c_extension_is_used_when_installed() -> None:
    pytest.importorskip("_ruamel_yaml")
    assert has_c_extension()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the reference's own waypoint example: an ISO time in a flow mapping
        (
            "example: { file: items.android.example.json, capturedAt: 2026-06-27T08:45:09Z }\n",
            {
                "example": {
                    "file": "items.android.example.json",
                    "capturedAt": "2026-06-27T08:45:09Z",
                }
            },
        ),
        ("- tapOnElementWithText: {text: 10:30}\n", [{"tapOnElementWithText": {"text": "10:30"}}]),
        ("times: [08:45, 'x']\n", {"times": ["08:45", "x"]}),
    ],
)
def test_a_colon_inside_a_plain_scalar_of_a_flow_collection_is_text(
    text: str, expected: object
) -> None:
    """libyaml refuses these ("found unexpected ':'"); YAML 1.2 and the reference read them."""
    node = load(text)
    assert node is not None
    assert node.to_python() == expected
    assert node == load(text, pure=True)


def test_a_document_both_parsers_refuse_keeps_the_c_parser_s_error() -> None:
    with pytest.raises(YamlError) as info:
        load("a: {b: [1, 2}\n")
    assert info.value.message.startswith("invalid YAML: ")
    assert info.value.line == 1


def test_duplicate_key_is_an_error_at_the_second_key() -> None:
    with pytest.raises(YamlError) as info:
        load("a: 1\nb: 2\na: 3\n")
    assert (info.value.message, info.value.line, info.value.column) == (
        "duplicate key 'a' (first defined at line 1)",
        3,
        1,
    )


def test_invalid_yaml_is_located() -> None:
    with pytest.raises(YamlError) as info:
        load("a: [1, 2\nb: 3\n")
    assert info.value.message.startswith("invalid YAML: ")
    assert info.value.line == 2


def test_two_documents_are_refused() -> None:
    with pytest.raises(YamlError) as info:
        load("a: 1\n---\nb: 2\n")
    assert info.value.message == "invalid YAML: more than one YAML document ('---') in one file"


def test_empty_document_is_none() -> None:
    assert load("") is None
    assert load("# only a comment\n") is None


def test_not_utf8_points_at_the_byte() -> None:
    with pytest.raises(YamlError) as info:
        decode(b"a: 1\nb: caf\xe9\n")
    assert (info.value.message, info.value.line, info.value.column) == (
        "not UTF-8: byte 0xe9 cannot be decoded",
        2,
        7,
    )


def test_binary_file_is_refused() -> None:
    with pytest.raises(YamlError) as info:
        decode(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert info.value.message == "binary file (contains a NUL byte)"
    assert info.value.line == 3


def test_oversized_file_is_refused_without_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.trail.yaml"
    with big.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    with pytest.raises(YamlError) as info:
        read_text(big)
    assert info.value.message == "file is 50.0 MiB; files over 5 MiB are not read"


def test_alias_bomb_is_bounded() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    with pytest.raises(YamlError) as info:
        load("\n".join(lines) + "\n")
    assert info.value.message == (
        "document expands to more than 200000 nodes (anchors and aliases?)"
    )


def test_small_aliases_are_expanded() -> None:
    root = load("a: &x {k: 1}\nb: *x\n")
    assert isinstance(root, YMap)
    assert root.to_python() == {"a": {"k": 1}, "b": {"k": 1}}


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_deep_nesting_is_refused_before_composing(depth: int) -> None:
    with pytest.raises(YamlError) as info:
        load("[" * depth + "]" * depth)
    assert info.value.message == f"nesting deeper than {MAX_DEPTH} levels"
    assert (info.value.line, info.value.column) == (1, MAX_DEPTH + 1)


def test_deep_block_nesting_is_refused() -> None:
    text = "".join("  " * i + f"k{i}:\n" for i in range(100)) + "  " * 100 + "leaf\n"
    with pytest.raises(YamlError) as info:
        load(text)
    assert info.value.message == f"nesting deeper than {MAX_DEPTH} levels"


def test_directory_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "x.trail.yaml").mkdir()
    with pytest.raises(YamlError) as info:
        read_text(tmp_path / "x.trail.yaml")
    assert info.value.message == "is a directory, not a file"


def test_dangling_symlink_is_unreadable(tmp_path: Path) -> None:
    link = tmp_path / "gone.trail.yaml"
    link.symlink_to(tmp_path / "missing.yaml")
    with pytest.raises(YamlError) as info:
        read_text(link)
    assert info.value.message == "cannot read file: No such file or directory"


def test_unreadable_file(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        path = tmp_path / "secret.trail.yaml"
        path.write_text("trail: []\n")
        path.chmod(0)
        with pytest.raises(YamlError) as info:
            read_text(path)
        assert info.value.message == "cannot read file: Permission denied"
        return
    # Root reads files whatever their mode: read in a child that drops to `nobody` once
    # trailblaze is imported (the interpreter lives under /root, which `nobody` cannot enter).
    # pytest's tmp_path sits in a root-only directory, so use one `nobody` can traverse, and
    # read a readable file next to the secret first: only the file's mode refuses the read.
    child = """
import os, sys
from pathlib import Path
from trailblaze.yaml.node import YamlError, read_text
os.setgroups([])
os.setgid(65534)
os.setuid(65534)
readable, secret = map(Path, sys.argv[1:])
print(repr(read_text(readable)))
try:
    read_text(secret)
except YamlError as exc:
    print(exc.message)
"""
    with tempfile.TemporaryDirectory() as shared:
        directory = Path(shared)
        directory.chmod(0o755)
        readable = directory / "open.trail.yaml"
        readable.write_text("trail: []\n")
        readable.chmod(0o644)
        path = directory / "secret.trail.yaml"
        path.write_text("trail: []\n")
        path.chmod(0)
        done = subprocess.run(
            [sys.executable, "-c", child, str(readable), str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        repr("trail: []\n"),
        "cannot read file: Permission denied",
    ]


def test_merge_keys_and_complex_keys_are_refused() -> None:
    with pytest.raises(YamlError, match="merge keys"):
        load("a: &a {x: 1}\nb:\n  <<: *a\n")
    with pytest.raises(YamlError, match="mapping keys must be plain text"):
        load("? [a, b]\n: 1\n")


def test_custom_tags_are_refused() -> None:
    with pytest.raises(YamlError) as info:
        load("a: !python/object 1\n")
    assert info.value.message == "unsupported tag '!python/object'"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !!seq {b: 1}\n", "1:4: tag '!!seq' does not fit a mapping"),
        ("a: !!str [1]\n", "1:4: tag '!!str' does not fit a list"),
        ("a:\n  - !!map x\n", "2:5: tag '!!map' does not fit a scalar"),
    ],
)
def test_a_core_tag_must_fit_its_node(text: str, message: str) -> None:
    with pytest.raises(YamlError) as info:
        load(text)
    assert f"{info.value.line}:{info.value.column}: {info.value.message}" == message


def test_a_key_is_named_by_its_text() -> None:
    # `true`, `~` and `0x1` resolve to other values, but a key is looked up, reported and
    # emitted as written; `1` and '1' are one key, as they would be in JSON.
    node = load("true: 1\n~: 2\n0x1: 3\n")
    assert isinstance(node, YMap)
    assert node.keys() == ["true", "~", "0x1"]
    assert node.to_python() == {"true": 1, "~": 2, "0x1": 3}
    assert node.get("true") is not None
    with pytest.raises(YamlError, match="duplicate key '1'"):
        load("1: a\n'1': b\n")


def test_pure_python_composer_gives_the_same_nodes() -> None:
    # Without ruamel.yaml.clib the pure-Python composer runs; both must agree node for node.
    text = "a: '5'\nb:\n  - 1\n  - 0007\n  - 7:30\n  - ~\nc:\n  d: !!str 5\n  e: |\n    x\n"
    assert load(text, pure=True) == load(text)


@pytest.mark.parametrize("depth", [0, 40])
def test_a_reader_error_is_a_yaml_error_however_deep_the_document(depth: int) -> None:
    # A document deep enough to be walked before composing (the depth guard) used to let
    # ruamel's ReaderError (not a MarkedYAMLError) escape instead of a located YamlError.
    text = "[" * depth + "a: \x01" + "]" * depth
    with pytest.raises(YamlError) as info:
        load(text)
    assert info.value.message.startswith(
        "invalid YAML: unacceptable character #x0001: control characters are not allowed"
    )
    assert (info.value.line, info.value.column) == (1, 1)


def test_a_marked_error_without_a_problem_still_says_something() -> None:
    error = _yaml_error(MarkedYAMLError())
    assert (error.message, error.line, error.column) == ("invalid YAML: invalid YAML", 1, 1)


def test_oversized_bytes_are_refused_with_the_file_message() -> None:
    with pytest.raises(YamlError) as info:
        decode(b"x" * (3 * 1024 * 1024), max_bytes=2 * 1024 * 1024)
    assert info.value.message == "file is 3.0 MiB; files over 2 MiB are not read"


def test_merge_keys_only_when_asked_own_keys_first_then_the_first_source() -> None:
    text = "a: &a {x: 1, y: 2}\nb: &b {y: 3, z: 4}\nc: {<<: [*a, *b], x: 0}\n"
    with pytest.raises(YamlError, match="merge keys"):
        load(text)
    root = load(text, merge_keys=True)
    assert isinstance(root, YMap)
    merged = root.get("c")
    assert isinstance(merged, YMap)
    assert merged.to_python() == {"x": 0, "y": 2, "z": 4}
    y = merged.get("y")
    assert isinstance(y, YScalar)
    assert (y.line, y.column) == (1, 17)  # where the anchored mapping wrote it


@pytest.mark.parametrize("text", ["a: &a [1]\nb: {<<: *a}\n", "b: {<<: [x]}\n"])
def test_a_merge_key_takes_mappings(text: str) -> None:
    with pytest.raises(YamlError) as info:
        load(text, merge_keys=True)
    assert info.value.message == "a merge key ('<<') takes a mapping or a list of mappings"


def test_a_plain_scalar_outside_the_maybe_not_text_firsts_is_its_text() -> None:
    """`MAYBE_NOT_TEXT` lets the composer skip `resolve_plain`: every plain scalar whose first
    character is not in it must resolve to its own text."""
    from trailblaze.yaml.plain import MAYBE_NOT_TEXT, resolve_plain  # noqa: PLC0415

    samples = ["", "~", "null", "NULL", "true", "False", "0", "-1", "+2", ".5", ".inf", ".NaN"]
    samples += ["007", "0x1F", "0o17", "1e3", "7:30", "١٢", "٣.5", "²", "Ⅻ", "yes", "no", "on"]
    samples += [chr(c) + tail for c in range(0x20, 0x180) for tail in ("", "1", "rue")]
    for text in samples:
        if text[:1] not in MAYBE_NOT_TEXT:
            assert resolve_plain(text) == text, text
    # And the composer agrees with `resolve_plain` on every plain scalar among them.
    for text in samples:
        try:
            node = load(f"k: {text}\n")
        except YamlError:
            continue  # not a plain scalar of a block mapping (an indicator, a control character)
        assert isinstance(node, YMap)
        value = node.get("k")
        if isinstance(value, YScalar) and value.text == text and not value.quoted:
            expected = resolve_plain(text)
            if isinstance(expected, float) and math.isnan(expected):
                assert isinstance(value.value, float)
                assert math.isnan(value.value)
            else:
                assert value.value == expected, text
                assert type(value.value) is type(expected), text
