"""One verdict: the editor's JSON Schema and `trailblaze check` agree on every trail.

Over the upstream corpus sample (tests/data/corpus) and seeded mutations of a real trail, the
verdict of jsonschema with the generated `trail.schema.json` (on the document as an editor's
YAML 1.2 reader sees it) is compared with the check's (no fatal finding in the file).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML

from tests.conftest import CORPUS, run_python, write_tree
from trailblaze.check.run import run_check
from trailblaze.generate.editorschema import as_checked
from trailblaze.options import CheckOptions
from trailblaze.report.record import Report
from trailblaze.workspace import find_workspace, is_trail_name

pytestmark = pytest.mark.usefixtures("tsc")

SAMPLE = "xyz.block.trailblaze.examples.sampleapp"
TAPS = (
    CORPUS
    / "head/examples/android-sample-app/trails/android-ondevice-accessibility/taps/tap-interactions/trail.yaml"
)
_TARGET = re.compile(r"^\s*-?\s*target:\s*['\"]?([A-Za-z0-9_.\-]+)", re.MULTILINE)

# (name, line to change, old text, new text); None line: the whole document is the new text.
MUTATIONS: list[tuple[str, int | None, str, str]] = [
    ("quoted-boolean", 62, "longPress: true", "longPress: 'true'"),
    ("dropped-required-argument", 12, "appId: xyz.block.trailblaze.examples.sampleapp", ""),
    ("misspelled-tool", 18, "tapOnElementBySelector:", "tapOnElementBySelectr:"),
    ("unknown-argument", 61, "reason:", "reasn:"),
    ("unknown-selector-field", 55, "textRegex: A11y Tap", "textRegx: A11y Tap"),
    ("number-for-boolean", 85, "isChecked: true", "isChecked: 1"),
    ("plain-number-for-string", 55, "textRegex: A11y Tap", "textRegex: 12345"),
    ("plain-boolean-for-string", 55, "textRegex: A11y Tap", "textRegex: true"),
    ("null-for-string", 55, "textRegex: A11y Tap", "textRegex: ~"),
    ("list-for-string", 55, "textRegex: A11y Tap", "textRegex: [a, b]"),
    ("lowercase-enum", 12, "sampleapp", "sampleapp\n        launchMode: force_restart"),
    ("enum-of-no-case", 12, "sampleapp", "sampleapp\n        launchMode: sideways"),
    ("quoted-number", 18, "- tap", "- wait: {timeToWaitInSeconds: '3'}\n        - tap"),
    ("quoted-word-for-number", 18, "- tap", "- wait: {timeToWaitInSeconds: 'x'}\n        - tap"),
    ("padded-quoted-number", 18, "- tap", "- wait: {timeToWaitInSeconds: '03'}\n        - tap"),
    ("leading-zero-integer", 18, "- tap", "- wait: {timeToWaitInSeconds: 007}\n        - tap"),
    ("stepless", None, "", f"config:\n  id: stepless\n  target: {SAMPLE}\ntrail: []\n"),
    ("bare-empty-trail", None, "", "trail: []\n"),
    (
        "trailhead-without-steps",
        None,
        "",
        f"config:\n  target: {SAMPLE}\ntrailhead:\n  step: go\ntrail: []\n",
    ),
]
EXPRESSIBLE = {
    # The one listed limit the corpus and mutations reach (editorschema.EXPRESSIBLE_LIMITS):
    # a plain 007 is the text "007" for the check, the number 7 for the editor.
    "mutations/leading-zero-integer.trail.yaml": "leading-zero integer",
}


def _editor_view(text: str) -> object:
    """The document as yaml-language-server reads it: YAML 1.2, values without quote style."""
    return YAML(typ="safe", pure=True).load(text)


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bool, bool]]:
    """Each trail's (check verdict, schema verdict): True when it passes."""
    ws = tmp_path_factory.mktemp("one-verdict")
    targets: set[str] = {SAMPLE}
    placed: dict[str, str] = {}
    for path in sorted(CORPUS.rglob("*")):
        if not path.is_file() or not is_trail_name(path.name) or path.suffix != ".yaml":
            continue
        text = path.read_text("utf-8")
        match = _TARGET.search(text)
        if match is None:
            continue  # no target: no schema to judge it with
        target = match.group(1)
        targets.add(target)
        name = path.relative_to(CORPUS).as_posix().replace("/", "__").removesuffix(".yaml")
        rel = f"trailmaps/{target}/trails/corpus/{name}.trail.yaml"
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, ws / rel)
        placed[rel] = target
    lines = TAPS.read_text("utf-8").splitlines(keepends=True)
    for name, line, old, new in MUTATIONS:
        if line is None:
            text = new
        else:
            changed = list(lines)
            assert old in changed[line - 1], (name, changed[line - 1])
            changed[line - 1] = changed[line - 1].replace(old, new)
            text = "".join(changed)
        rel = f"trailmaps/{SAMPLE}/trails/mutations/{name}.trail.yaml"
        write_tree(ws, {rel: text})
        placed[rel] = SAMPLE
    for target in targets:
        write_tree(
            ws,
            {f"trailmaps/{target}/trailmap.yaml": f"id: {target}\ntarget:\n  display_name: x\n"},
        )
    report: Report = run_check(find_workspace(ws, explicit=True), CheckOptions())
    assert [f.text for f in report.findings if f.kind == "infra"] == []
    failing = {f.path for f in report.fatal_findings}
    validators = {
        target: Draft202012Validator(
            json.loads((ws / f"trailmaps/{target}/tools/trail.schema.json").read_text("utf-8"))
        )
        for target in targets
    }
    verdicts = {}
    for rel, target in placed.items():
        document = _editor_view((ws / rel).read_text("utf-8"))
        short = rel.split("/trails/", 1)[1]
        verdicts[short] = (rel not in failing, validators[target].is_valid(document))
    return verdicts


def test_the_editor_schema_and_the_check_agree_on_every_trail(
    compared: dict[str, tuple[bool, bool]],
) -> None:
    disagree = {rel: v for rel, v in compared.items() if v[0] != v[1]}
    print(  # the figures for the record (pytest -s)
        f"one verdict: {len(compared)} files, "
        f"{sum(1 for c, _ in compared.values() if c)} pass the check, "
        f"{sum(1 for _, s in compared.values() if s)} pass the schema, "
        f"{len(disagree)} disagree: {sorted(disagree)}"
    )
    assert sorted(disagree) == sorted(EXPRESSIBLE)
    corpus = [v for rel, v in compared.items() if rel.startswith("corpus/")]
    mutations = [v for rel, v in compared.items() if rel.startswith("mutations/")]
    assert len(corpus) == 99  # the corpus trails that name a target (the rest have no schema)
    assert len(mutations) == len(MUTATIONS)
    # Both verdicts occur, so agreement is not a matter of both accepting everything.
    assert {c for c, _ in corpus} == {True, False}
    assert sum(1 for c, _ in mutations if not c) >= 12


def test_the_seeded_mutations_each_get_the_verdict_they_should(
    compared: dict[str, tuple[bool, bool]],
) -> None:
    passing = {rel.removeprefix("mutations/").removesuffix(".trail.yaml")
               for rel, (check, _) in compared.items() if rel.startswith("mutations/") and check}  # fmt: skip
    assert passing == {
        "plain-number-for-string",
        "plain-boolean-for-string",
        "null-for-string",
        "lowercase-enum",
        "quoted-number",
        "stepless",
    }


def test_widening_follows_the_checks_reading_of_values() -> None:
    assert as_checked({"type": "string"}) == {"type": ["string", "number", "boolean"]}
    assert as_checked({"type": "integer", "description": "d"}) == {
        "description": "d",
        "anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^-?(0|[1-9][0-9]*)$"}],
    }
    enum = as_checked({"type": "string", "enum": ["UP", "FORCE_RESTART"]})
    validator = Draft202012Validator({"$schema": "x", **enum})
    assert [validator.is_valid(v) for v in ("up", "Force_Restart", "UP", "side", 5)] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_trailblaze_schema_prints_the_schema_the_surfaces_write(compact_ws: Path) -> None:
    write_tree(
        compact_ws, {"trailmaps/app/trails/a.trail.yaml": "config: {target: app}\ntrail: []\n"}
    )
    printed = run_python(compact_ws, "-m", "trailblaze", "schema", "app")
    assert printed.returncode == 0, printed.stderr
    schema = json.loads(printed.stdout)
    assert schema["title"] == "Trail of trailmap 'app'"
    assert "tool.swipe" in schema["$defs"]
    assert run_python(compact_ws, "-m", "trailblaze", "schema").stdout == printed.stdout
    missing = run_python(compact_ws, "-m", "trailblaze", "schema", "shop")
    assert (missing.returncode, missing.stderr.strip()) == (
        2,
        f"trailblaze schema: no target trailmap 'shop' in {compact_ws} (targets: app)",
    )
