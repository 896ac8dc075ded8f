"""Documents validated clean are remembered between checks; nothing invalid slips through."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import write_tree
from trailblaze import __version__
from trailblaze.check.run import run_check
from trailblaze.options import CheckOptions
from trailblaze.state.scratch import Layout
from trailblaze.state.store import Store
from trailblaze.workspace import find_workspace
from trailblaze.yaml.node import load
from trailblaze.yaml.schema import VALID, ValidMemo, check, remembering

SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "additionalProperties": False,
}


def messages(root: Path) -> list[str]:
    report = run_check(find_workspace(root, explicit=True), CheckOptions(typecheck=False))
    return [f"{f.path}:{f.line}:{f.column}: {f.message}" for f in report.findings]


def test_a_manifest_made_invalid_after_a_clean_run_is_reported(compact_ws: Path) -> None:
    manifest = compact_ws / "trailmaps/app/trailmap.yaml"
    assert messages(compact_ws) == []
    with Store.open(compact_ws / ".trailblaze") as store:
        assert store.get(VALID, key=__version__)
    manifest.write_text(manifest.read_text() + "tagets: []\n")
    assert messages(compact_ws) == [
        "trailmaps/app/trailmap.yaml:4:1: unknown key 'tagets' (did you mean 'target'?)"
    ]
    manifest.write_text(manifest.read_text().replace("tagets: []\n", ""))
    assert messages(compact_ws) == []
    db = sqlite3.connect(Layout(compact_ws / ".trailblaze").store)
    with db:  # a damaged memo only costs a validation
        db.execute("UPDATE memos SET value = '{garbage' WHERE kind = ?", (VALID.name,))
    db.close()
    assert messages(compact_ws) == []


def test_the_memo_tells_documents_apart_by_type_not_only_text(tmp_path: Path) -> None:
    with Store.open(tmp_path) as memo:
        with remembering(memo):
            assert check(load("n: 1\n"), SCHEMA) == []
        memo.commit()
        with Store.open(tmp_path) as again:
            assert len(ValidMemo(again).known) == 1
        with remembering(memo):
            issues = check(load("n: '1'\n"), SCHEMA)  # the same text as a string: still invalid
            assert [i.message for i in issues] == [
                "expected an integer, found the quoted string '1'"
            ]
            assert check(load("n: 1\n"), SCHEMA) == []


SCRIPT = """
import sys
from pathlib import Path
from trailblaze.check.run import run_check
from trailblaze.options import CheckOptions
from trailblaze.workspace import find_workspace
report = run_check(find_workspace(Path(sys.argv[1]), explicit=True), CheckOptions(typecheck=False))
assert report.exit_code == 0, report.findings
print("jsonschema" in sys.modules)
"""


def test_a_workspace_seen_before_is_checked_without_importing_jsonschema(
    compact_ws: Path,
) -> None:
    write_tree(compact_ws, {"trailmaps/app/trails/a.trail.yaml": "trail:\n  - step: a\n"})

    def imported() -> str:
        result = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(compact_ws)],
            capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        return result.stdout.strip()

    assert imported() == "True"
    assert imported() == "False"


def test_a_key_named_document_is_not_the_document() -> None:
    schema = {
        "type": "object",
        "required": ["id"],
        "properties": {"document": {"type": "object", "required": ["x"]}},
    }
    assert [i.message for i in check(load("document: {}\n"), schema)] == [
        "missing required key 'id' in the document",
        "missing required key 'x' in 'document'",
    ]


def test_a_schema_is_serialised_once_per_object() -> None:
    from trailblaze.yaml import schema as schemavalidation  # noqa: PLC0415

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    first = schemavalidation._schema_text(schema)
    schemavalidation._SCHEMA_TEXTS[id(schema)] = (schema, first[0], "pinned")
    assert schemavalidation._schema_text(schema) == (first[0], "pinned")  # not worked out again
    assert schemavalidation._schema_text(dict(schema)) == first  # an equal schema digests the same
    del schemavalidation._SCHEMA_TEXTS[id(schema)]
