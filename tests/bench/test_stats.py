"""The stats helpers bench/run.py and bench/corpus.py share."""

from __future__ import annotations

from pathlib import Path

from bench.generate import Spec, _spec_key
from bench.run import Options, compiled_count, doit_stats, read_stats
from trailblaze.state.store import STATS, Store


def test_stats_of_a_run_and_of_a_skipped_one(tmp_path: Path) -> None:
    assert read_stats(tmp_path) == {}
    with Store.open(tmp_path) as store:
        store.put(STATS, "", {"files_compiled": ["a", "b"], "compiler_runs": 1})
        assert store.commit()
    skipped, stats = doit_stats(tmp_path, ". check:parse\n. check:run\n")
    assert not skipped
    assert compiled_count(stats) == 2
    assert stats["compiler_runs"] == 1
    skipped, stats = doit_stats(tmp_path, "-- check:run\n")
    assert skipped
    assert (compiled_count(stats), stats["compiler_runs"], stats["trails_parsed"]) == (0, 0, 0)
    assert compiled_count({}) is None
    assert compiled_count({}, missing=0) == 0
    assert compiled_count({"files_compiled": 7}) == 7


def test_defaults_and_the_spec_key() -> None:
    assert Options().runs == 5
    assert _spec_key(Spec(100)) == {
        "trails": 100,
        "trailmaps": 0,
        "seed": 7,
        "error_rate": 0.05,
        "mean_calls": 20,
        "targets": 2,
    }
