"""Arbitrary text in every metadata field and argument: the generated TypeScript still parses,
and the verdict is the same as with plain text (the real compiler decides, through the check)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tests.conftest import write_tree
from trailblaze.check.run import run_check
from trailblaze.generate.argvalues import canonical_number
from trailblaze.generate.tsrender import import_path, json_text, ts_comment, ts_key, ts_string
from trailblaze.options import CheckOptions
from trailblaze.workspace import find_workspace

pytestmark = pytest.mark.usefixtures("tsc")

TRAIL = "trailmaps/app/trails/t.trail.yaml"
# Any character a YAML file can carry, control characters, line separators, quotes and
# comment ends included (YAML cannot carry lone surrogates; file names can, see test_names).
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=24)
SPICE = st.sampled_from(["*/", '"', "\\", "\n", "\u2028", "\x1b[31m", "${x}", "`", "</x>", "\x00"])
HOSTILE = st.one_of(TEXT, st.lists(st.one_of(SPICE, TEXT), max_size=4).map("".join))


def yq(text: str) -> str:
    """`text` as a YAML double-quoted scalar, in plain ASCII."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


@settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@example(
    description="*/ x */\n@deprecated",
    prop='a"b\\c */\u2028',
    prop_doc="*/ } x: 1; /*",
    choices=['"*/\u2029', "\x00\x1b[31m"],
    label="*/\r\n\u2028 end",
    value='\\"); client.tools.x(',
    composed_doc="*/",
    param_doc="*/\n",
    trailhead="*/ }; x: 1 /*",
)
@given(
    description=HOSTILE,
    prop=HOSTILE,
    prop_doc=HOSTILE,
    choices=st.lists(HOSTILE, min_size=1, max_size=3, unique=True),
    label=HOSTILE,
    value=HOSTILE,
    composed_doc=HOSTILE,
    param_doc=HOSTILE,
    trailhead=HOSTILE,
)
def test_hostile_metadata_and_arguments_keep_the_verdict(
    *,
    tmp_path_factory: pytest.TempPathFactory,
    description: str,
    prop: str,
    prop_doc: str,
    choices: list[str],
    label: str,
    value: str,
    composed_doc: str,
    param_doc: str,
    trailhead: str,
) -> None:
    assume(prop != "e" and "{{" not in value + choices[0])
    # A quoted canonical integer ("0", "-4") for the integer `n` is the quoted-number warning,
    # not a type finding: the reference converts it at replay.
    assume(canonical_number(value, "integer") is None)
    # A blank description or step is an error of its own: these start with a letter.
    description, composed_doc, label = f"D {description}", f"C {composed_doc}", f"S {label}"
    root = tmp_path_factory.mktemp("ws")
    enum = ", ".join(yq(c) for c in choices)
    write_tree(
        root,
        {
            "trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: app\n  tools: [app_x]\n",
            "trailmaps/app/tools/app_x.yaml": (
                f"name: app_x\ndescription: {yq(description)}\ninputSchema:\n  type: object\n"
                f"  properties:\n    {yq(prop)}: {{type: string, description: {yq(prop_doc)}}}\n"
                f"    e: {{type: string, enum: [{enum}]}}\n  required: [{yq(prop)}]\n"
            ),
            # A trailhead block lives in a *.trailhead.yaml, and names a waypoint id (two or
            # more non-blank segments): the hostile text is kept inside one.
            "trailmaps/app/trailheads/app_y.trailhead.yaml": (
                f"id: app_y\ndescription: {yq(composed_doc)}\nparameters:\n  - name: n\n"
                f"    type: integer\n    description: {yq(param_doc)}\ntools:\n  - hideKeyboard: {{}}\n"
                f"trailhead:\n  to: {yq('app/x' + trailhead.replace('/', '/x'))}\n"
            ),
            TRAIL: (
                f"config: {{target: app}}\ntrail:\n  - step: {yq(label)}\n    recording:\n"
                f"      android:\n"
                f"        - app_x: {{{yq(prop)}: {yq(value)}, e: {yq(choices[0])}}}\n"
                f"        - app_x: {{{yq(prop)}: [1]}}\n"
                f"        - app_xx: {{}}\n"
                f"        - app_y: {{n: 1}}\n"
                f"        - app_y: {{n: {yq(value)}}}\n"
            ),
        },
    )
    report = run_check(find_workspace(root, explicit=True), CheckOptions())
    assert report.infra_findings == []
    assert [(t.status, t.calls) for t in report.trails] == [("type-checked", 5)]
    assert sorted((f.line, f.tool) for f in report.fatal_findings) == [
        (7, "app_x"),
        (8, "app_xx"),
        (10, "app_y"),
    ]


@given(HOSTILE)
def test_each_escape_keeps_its_context(text: str) -> None:
    for escaped in (ts_string(text), ts_comment(text), ts_key(text), import_path(text)):
        escaped.encode("utf-8")  # no lone surrogate survives
        assert not any(c in escaped for c in "\r\n\u2028\u2029")
    assert "*/" not in ts_comment(text)
    assert ts_string(text).startswith('"')
    json_text({text: [text]}).encode("utf-8")


def test_lone_surrogates_are_escaped_with_their_value() -> None:
    name = b"bad\xff.yaml".decode("utf-8", "surrogateescape")
    assert ts_string(name) == '"bad\\udcff.yaml"'
    assert ts_comment(f"a */ b\nc\x1b {name}") == "a * / b c\\x1b bad\\udcff.yaml"
    assert json_text(name) == '"bad\\udcff.yaml"'
