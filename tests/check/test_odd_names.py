"""Any file name the OS allows: the trail is checked like every other, its generated module has
a safe derived name, the report shows its real name escaped, and no name turns the gate off."""

from __future__ import annotations

import os
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import write_tree
from trailblaze.check.run import run_check
from trailblaze.options import CheckOptions
from trailblaze.report.formats import render
from trailblaze.report.record import Report
from trailblaze.state.scratch import generated_name
from trailblaze.workspace import find_workspace, shown_path

pytestmark = pytest.mark.usefixtures("tsc")

TRAIL = b"config: {target: app}\ntrail:\n  - step: s\n    recording:\n      android:\n        - tapOnPointt: {x: 1, y: 2}\n"
SAFE = re.compile(r"[A-Za-z0-9 ._@+=,~/-]+")
ISSUE_NAMES = [
    b"bad\xff\xfe.trail.yaml",
    b"back\\slash.trail.yaml",
    b"new\nline.trail.yaml",
    "u\u2028sep.trail.yaml".encode(),
    b"p(1,2).trail.yaml",
    b"ctl\x1b[31m.trail.yaml",
    b'quote"s.trail.yaml',
    b"-leading dash and spaces .trail.yaml",
]


def workspace(root: Path, names: list[bytes]) -> Path:
    write_tree(root, {"trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: app\n"})
    trails = os.fsencode(root / "trailmaps/app/trails")
    os.makedirs(trails, exist_ok=True)
    for name in [b"good.trail.yaml", *names]:
        with open(trails + b"/" + name, "wb") as handle:
            handle.write(TRAIL)
    return root


def shown(name: bytes) -> str:
    return shown_path(f"trailmaps/app/trails/{os.fsdecode(name)}")


def assert_checked_like_the_others(root: Path, names: list[bytes]) -> Report:
    report = run_check(find_workspace(root, explicit=True), CheckOptions(require_typecheck=True))
    expected = sorted(shown(n) for n in [b"good.trail.yaml", *names])
    assert sorted(t.path for t in report.trails) == expected
    assert {t.status for t in report.trails} == {"type-checked"}
    assert report.infra_findings == []
    assert sorted((f.path, f.line, f.code) for f in report.fatal_findings) == [
        (path, 6, "TS2551") for path in expected
    ]
    assert report.exit_code == 1
    generated = root / ".trailblaze/typegate/trails"
    for path in generated.rglob("*.ts"):
        assert SAFE.fullmatch(path.relative_to(generated).as_posix()), path
    for fmt in ("text", "json", "sarif", "junit", "github"):
        if fmt != "text":
            out = render(report, fmt)
            out.encode("utf-8")
    ElementTree.fromstring(render(report, "junit").encode("utf-8"))
    return report


def test_the_names_that_switched_the_gate_off_are_checked_like_any_other(tmp_path: Path) -> None:
    root = workspace(tmp_path, ISSUE_NAMES)
    report = assert_checked_like_the_others(root, ISSUE_NAMES)
    paths = {t.path for t in report.trails}
    assert "trailmaps/app/trails/bad\\xff\\xfe.trail.yaml" in paths
    assert "trailmaps/app/trails/new\nline.trail.yaml" in paths  # JSON escapes it; text shows \x0a
    again = run_check(find_workspace(root, explicit=True), CheckOptions())
    assert again.findings == report.findings  # from the state and the cache, the same


def test_generated_names_are_kept_when_plain_and_derived_otherwise() -> None:
    assert generated_name("trailmaps/app/a b/x.trail.yaml") == "trailmaps/app/a b/x.trail.yaml.ts"
    derived = generated_name("trailmaps/app/p(1,2)\n.trail.yaml")
    assert re.fullmatch(r"trailmaps/app/p_1,2__\.trail\.yaml\.[0-9a-f]{12}\.ts", derived)
    assert generated_name("a\nb.trail.yaml") != generated_name("a\rb.trail.yaml")
    # The compiler refuses two files whose names differ only in case, on any disk.
    upper = generated_name("trailmaps/App/x.trail.yaml")
    assert re.fullmatch(r"trailmaps/app/x\.trail\.yaml\.[0-9a-f]{12}\.ts", upper)
    assert upper.lower() != generated_name("trailmaps/app/x.trail.yaml").lower()


NAME = st.binary(min_size=1, max_size=40).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")
)


@settings(
    max_examples=6,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(NAME.map(lambda b: b + b".trail.yaml"), min_size=1, max_size=4, unique=True))
def test_any_name_the_os_allows(
    tmp_path_factory: pytest.TempPathFactory, names: list[bytes]
) -> None:
    names = [n for n in names if n != b"good.trail.yaml"]
    root = workspace(tmp_path_factory.mktemp("ws"), names)
    assert_checked_like_the_others(root, names)
