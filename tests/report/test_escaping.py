"""Clean output: control characters from the input never reach a terminal or a CI log raw, and
the JUnit and SARIF documents stay well-formed whatever the findings hold."""

from __future__ import annotations

import datetime
import io
import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trailblaze.finding import Finding
from trailblaze.report.console import render_report, report_console
from trailblaze.report.escaping import json_bytes, json_text, printable, xml_text
from trailblaze.report.formats import render
from trailblaze.report.record import Report, TrailStatus

RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\ud800-\udfff]")
ANY_TEXT = st.text(st.characters(), max_size=30)  # lone surrogates included


def report_with(path: str, message: str, tool: str) -> Report:
    return Report(
        workspace="/ws",
        trailmaps=("app",),
        trails=(TrailStatus(path, "app", "type-checked", calls=1),),
        findings=(
            Finding("type", path, 3, 5, message, code="TS2322", tool=tool, step=1, trailmap="app"),
            Finding("infra", path, 1, 1, message, code="typegate", fatal=False),
        ),
    )


def test_escapes_read_as_the_character_they_stand_for() -> None:
    assert printable("a\x1b[31mb\nc\u2028d\u202ee\udcff\tf") == (
        "a\\x1b[31mb\\x0ac\\u2028d\\u202ee\\udcff\tf"
    )
    assert printable("one\ntwo\x07", newlines=True) == "one\ntwo\\x07"
    assert xml_text("a\x00b\x1bc\ud800d\ufffee\tf\ng") == "a\\x00b\\x1bc\\ud800d\\ufffee\tf\ng"
    assert json_text(["\udcff"]) == '["\\udcff"]'


@settings(max_examples=150, database=None, deadline=None)
@given(path=ANY_TEXT, message=ANY_TEXT, tool=ANY_TEXT)
def test_every_output_is_clean_and_well_formed(path: str, message: str, tool: str) -> None:
    report = report_with(f"trailmaps/app/{path}.trail.yaml", message, tool)
    for fmt in ("github", "text"):
        if fmt == "text":
            out = io.StringIO()
            render_report(report_console(out, color=False), report, Path("/nonexistent"))
            text = out.getvalue()
        else:
            text = render(report, fmt)
        text.encode("utf-8")
        assert not RAW_CONTROL.search(text), (fmt, text)
    github = render(report, "github").splitlines()
    assert len(github) == 2  # one line per finding, whatever the message holds
    suite = ElementTree.fromstring(render(report, "junit").encode("utf-8"))
    [case] = suite.iter("testcase")
    assert case.get("name") == xml_text(f"trailmaps/app/{path}.trail.yaml")
    for fmt in ("sarif", "json"):
        document = json.loads(render(report, fmt).encode("utf-8"))
        assert document


def test_a_control_character_in_a_finding_used_to_break_the_junit_document() -> None:
    report = report_with("trailmaps/app/ctl\x1b[31m.trail.yaml", "bell\x07", "t\x00")
    suite = ElementTree.fromstring(render(report, "junit").encode("utf-8"))
    [case] = suite.iter("testcase")
    assert case.get("name") == "trailmaps/app/ctl\\x1b[31m.trail.yaml"
    [failure] = case.iter("failure")
    assert failure.text is not None
    assert "bell\\x07" in failure.text


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES, st.sampled_from([1, 2, 4]))
def test_indented_json_is_the_standard_library_s_to_the_byte(value: object, indent: int) -> None:
    # Indented by two, json_text writes through orjson when it writes the same; else json.dumps.
    expected = json.dumps(value, indent=indent, ensure_ascii=False)
    assert json_text(value, indent=indent) == re.sub(
        "[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", expected
    )


_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(max_size=4), min_size=1, max_size=4, unique=True).flatmap(
        lambda keys: st.lists(
            st.fixed_dictionaries(dict.fromkeys(keys, _SCALARS)), min_size=1, max_size=5
        )
    ),
    st.sampled_from([1, 2, 4]),
)
def test_rows_of_the_same_keys_are_the_standard_library_s_to_the_byte(
    rows: list[dict[str, object]], indent: int
) -> None:
    # A report's trails and findings, keys with `%` and strings with a NUL included.
    value = {"trails": rows, "findings": [{"%s": "\x00", "b%": 1.5}] * 2}
    expected = json.dumps(value, indent=indent, ensure_ascii=False)
    assert json_text(value, indent=indent) == re.sub(
        "[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", expected
    )


def test_where_orjson_writes_otherwise_the_standard_library_s_text_is_kept() -> None:
    # Each of these orjson writes differently (or refuses): exponent floats (`1e-05` /
    # `0.00001`), NaN and infinities (`null`), integers past 64 bits, keys that are not strings,
    # lone surrogates, types json.dumps refuses; next to them, the plain values it writes alike.
    cases: list[object] = [
        {"seconds": 1e-05, "other": 0.5},
        [9.999999999999999e-05, 0.0001, 1e16, 9999999999999998.0, -0.0, 5e-324],
        {"nan": float("nan"), "inf": [float("inf"), float("-inf")]},
        {"big": 2**64, "small": -(2**63) - 1},
        {1: "int key", "s": [True, None]},
        {"path": "a\udcffb", "rows": [{"x": "\x00\x1f\x7f\u2028"}]},
        ({"tuple": (1, 2)}, [], {}, [[]], [{}]),
        "just a string",
    ]
    for value in cases:
        expected = json.dumps(value, indent=2, ensure_ascii=False)
        expected = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", expected)
        assert json_text(value, indent=2) == expected, value
    for refused in ({"when": datetime.date(2026, 1, 1)}, [Path("x")]):
        with pytest.raises(TypeError):
            json_text(refused, indent=2)  # as json.dumps: not silently written by orjson


def test_a_report_is_written_by_orjson_not_by_json_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    # The speed of every report (ten thousand trails: 4.6 ms, against 45 ms for json.dumps)
    # rests on the plain path taking a report as it is.
    report = report_with("trailmaps/app/a.trail.yaml", "Type 'x' is not \"y\".", "tapOn")
    document = report.to_json(seconds=True)
    expected = json.dumps(document, indent=2, ensure_ascii=False)

    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("json.dumps was called")

    monkeypatch.setattr(json, "dumps", refuse)
    assert json_text(document, indent=2) == expected


_FINITE_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_FINITE_VALUES)
def test_compact_json_reads_back_as_the_standard_library_s(value: object) -> None:
    # doit's report.json: what json.dumps wrote before, as a reader sees it (integer keys
    # become strings, past 64 bits and lone surrogates included), and always valid UTF-8.
    written = json_bytes(value)
    assert json.loads(written.decode("utf-8")) == json.loads(json.dumps(value))


def test_compact_json_has_no_spaces_between_tokens() -> None:
    assert json_bytes({"a": [1, "b c"], "d": None}) == b'{"a":[1,"b c"],"d":null}'
    assert json_bytes({"path": "a\udcffb"}) == b'{"path": "a\\udcffb"}'  # json_text's, escaped


def test_no_module_builds_on_the_json_module_s_internals() -> None:
    # `json.encoder.c_make_encoder` and `encode_basestring` are CPython's, not an API.
    package = Path(__file__).resolve().parents[2] / "trailblaze"
    users = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if "json.encoder" in path.read_text(encoding="utf-8")
    ]
    assert users == []


_BUILT_SCALARS = st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.fixed_dictionaries({"path": st.text(), "calls": _BUILT_SCALARS}), max_size=5),
    _JSON_VALUES,
)
def test_keys_the_caller_built_are_not_walked_and_the_text_is_the_same(
    rows: list[dict[str, object]], other: object
) -> None:
    """`built`: a report's trail statuses, only strings, integers and None, are not walked
    for types orjson writes otherwise; what is beside them still is (an exponent float, NaN,
    a lone surrogate), and the text is json.dumps's to the byte either way."""
    value = {"trails": rows, "seconds": other}
    expected = json.dumps(value, indent=2, ensure_ascii=False)
    expected = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", expected)
    assert json_text(value, indent=2, built=("trails",)) == expected
