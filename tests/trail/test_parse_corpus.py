"""The real upstream corpus (copied into tests/data/corpus) through the strict parse gate."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import CORPUS
from trailblaze.trail.parse import parse_trail
from trailblaze.workspace import PROJECT_CONFIG_NAME, is_project_config, is_trail_name
from trailblaze.yaml.node import read_text

REJECTED_DIR = "history/c2d541b76462/examples/android-sample-app/trails/android-host"


def corpus_trails() -> list[Path]:
    found = []
    for path in sorted(CORPUS.rglob("*")):
        if not path.is_file() or not is_trail_name(path.name):
            continue
        if path.name == PROJECT_CONFIG_NAME and is_project_config(path.read_text()):
            continue
        found.append(path)
    return found


def test_every_corpus_trail_parses_strictly_except_the_ten_app_key_files() -> None:
    trails = corpus_trails()
    rejected: dict[str, list[str]] = {}
    formats = {"unified": 0, "legacy": 0}
    for path in trails:
        rel = path.relative_to(CORPUS).as_posix()
        outcome = parse_trail(rel, read_text(path))
        if outcome.trail is None:
            rejected[rel] = [f.text for f in outcome.findings]
        else:
            assert outcome.findings == (), rel
            formats[outcome.trail.format] += 1
    assert len(trails) == 212
    assert formats == {"unified": 66, "legacy": 136}
    assert sorted(rejected) == sorted(
        p.relative_to(CORPUS).as_posix() for p in (CORPUS / REJECTED_DIR).rglob("*.yaml")
    )
    assert len(rejected) == 10
    for rel, texts in rejected.items():
        assert texts == [f"{rel}:3:5: [0].config: unknown key 'app'"]
