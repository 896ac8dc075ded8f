"""The benchmark's smoke test: the generator and one run of every measure at the smallest size.

No timing is asserted: what is checked is that the report has its shape and that every measured
run really did its work (the cold run compiled every type-checkable trail, the one-edit run
exactly one, the baseline everything, and all of them found exactly the planted errors).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from bench.compare import MEASURES as COMPARED
from bench.compare import main as compare_main
from bench.generate import ERROR_KINDS, Manifest, Spec, generate, manifest_path
from bench.run import MEASURES, SHARDS, Options, run_benchmark
from tests.conftest import DATA, ROOT, toolchain_cache
from trailblaze.toolchain.compilers import BASELINE_TS_VERSION, Compiler, find_compiler


def test_generator_is_deterministic_and_plants_one_error_per_erroneous_trail(
    tmp_path: Path,
) -> None:
    first = generate(tmp_path / "a", Spec(60, seed=3))
    second = generate(tmp_path / "b", Spec(60, seed=3))
    assert first.to_json() == second.to_json()
    for rel in first.trails:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    assert Manifest.load(manifest_path(tmp_path / "a")).to_json() == first.to_json()

    assert len(first.errors) == 3  # 5% of 60
    assert len({e.trail for e in first.errors}) == 3
    for error in first.errors:
        assert error.kind in ERROR_KINDS
        assert error.trail in first.eligible
        lines = (tmp_path / "a" / error.trail).read_text("utf-8").splitlines()
        # The line of the argument at fault, inside its call (or the call's own line).
        start = max(
            n
            for n, text in enumerate(lines[: error.line], 1)
            if text.lstrip().startswith(f"- {error.tool}:")
        )
        indent = len(lines[start - 1]) - len(lines[start - 1].lstrip())
        assert all(len(t) - len(t.lstrip()) > indent + 2 for t in lines[start : error.line])
    edit = first.edit
    assert (tmp_path / "a" / edit["trail"]).read_text("utf-8").splitlines()[
        edit["line"] - 1
    ] == edit["text"]
    assert {"unified", "legacy"} <= set(first.formats)
    assert sum(len(v) for v in first.by_trailmap.values()) == len(first.eligible)


@pytest.mark.tsc
@pytest.mark.slow
def test_benchmark_runs_every_measure_and_each_really_checks(tmp_path: Path, tsc: Compiler) -> None:
    find_compiler(BASELINE_TS_VERSION, install=True, base=toolchain_cache())
    out = tmp_path / "results"
    results = run_benchmark(
        Options(sizes=(20,), runs=1, out=out, work=tmp_path / "work", warmup=0, verbose=False)
    )
    assert json.loads((out / "results.json").read_text("utf-8")) == json.loads(json.dumps(results))
    assert "| cold |" in (out / "results.md").read_text("utf-8")

    assert set(results["machine"]) >= {"date", "cpu", "cores", "python", "node", "tsc"}
    size = results["sizes"]["20"]
    problems = [p for m in size["measures"].values() for p in m["problems"]]
    assert size["verified"], problems
    # Every measure; the language server's only with `bench/lsp.py` (issue 29's LSP item).
    assert set(size["measures"]) <= set(MEASURES)
    assert set(MEASURES) - set(size["measures"]) <= {"lsp-edit"}
    for measure in size["measures"].values():
        assert measure["runs"] == 1
        assert set(measure["wall"]) == {"median", "min", "max"}
        assert set(measure["cpu"]) == {"median", "min", "max"}
        assert isinstance(measure["maxrss_mib"], float)

    ws = size["workspace"]
    checkable, planted = ws["type_checkable"], ws["planted_errors"]
    assert planted == 1
    checks = {name: m["checks"] for name, m in size["measures"].items()}
    assert checks["cold"]["files_compiled"] == checkable
    assert checks["cold"]["compiler_runs"] >= 1
    assert checks["cold"]["findings"] == planted
    assert checks["no-op"]["files_compiled"] == 0
    assert checks["no-op"]["findings"] == planted
    assert checks["no-op-clean"]["skipped"] is True
    assert checks["one-edit"] == {**checks["one-edit"], "files_compiled": 1, "compiler_runs": 1}
    # The CLI's one edit: the edited trail alone compiled, its report the unedited one's.
    assert checks["cli-one-edit"] == {
        **checks["cli-one-edit"],
        "files_compiled": 1,
        "compiler_runs": 1,
    }
    assert 0 < checks["tool-edit"]["files_compiled"] < checkable
    for name in ("bare-tsc", "bare-tsc-tuned"):
        assert checks[name]["trails"] == checkable
        assert checks[name]["diagnostics"] == planted
    for name in ("baseline-cold", "baseline-edit"):
        assert checks[name]["files_compiled"] == checkable
        assert checks[name]["compiler_runs"] == ws["target_trailmaps"]
        assert checks[name]["findings"] == planted
    assert checks["floor"]["files_statted"] == ws["input_files"]
    # Beyond one machine: the shards' merged report and the warm clone's were compared with the
    # unsharded report (a difference is a problem, and `verified` would be false).
    assert checks["shards-cold"]["files_compiled"] == checkable
    assert sum(checks["shards-cold"]["shard_trails"]) == ws["trails"]
    # The warm clone is answered by the shards' run entries (the generated files' entry and the
    # body the shards share, its own miss, the index, each shard's entry and body), the warm
    # shards each by their own (and the files' entry and body).
    assert checks["warm-clone"]["compiler_runs"] == 0
    assert checks["warm-clone"]["remote_run"] == "hit"
    assert checks["warm-clone"]["remote_requests"] == 4 + 2 * SHARDS
    assert checks["warm-clone"]["remote_bytes_read"] > 0
    assert checks["shards-warm"]["compiler_runs"] == 0
    assert checks["shards-warm"]["remote_runs_hit"] == SHARDS
    assert checks["shards-warm"]["remote_requests"] == 4 * SHARDS
    summary = (out / "results.md").read_text("utf-8")
    assert "## Projection: 100,000 trails over 8 shards" in summary
    # The closing note's figures, at every size: the CLI no-op against the floor, and the warm
    # clone against the CLI no-op with its compiler runs, requests and bytes fetched.
    noop_table = summary.split("## The CLI no-op against the floor", 1)[1].split("##", 1)[0]
    assert "\n| 20 | " in noop_table
    warm_table = summary.split("## A fresh clone with a warm remote cache", 1)[1].split("##", 1)[0]
    warm_row = next(line for line in warm_table.splitlines() if line.startswith("| 20 | "))
    fetched = f"{checks['warm-clone']['remote_bytes_read']:,}"
    assert warm_row.endswith(f"| 0 | 1 of 1 | {4 + 2 * SHARDS} | {fetched} |"), warm_row

    assert set(size["ratios"]) >= {
        "noop_over_floor",
        "edit_over_noop",
        "baseline_edit_over_edit",
        "baseline_cold_over_cold",
        "cold_over_bare",
        "cli_noop_over_floor",
        "cli_edit_over_cli_noop",
        "warm_clone_over_cli_noop",
        "peak_rss_gib",
    }
    assert [(row["measure"], row["target"]) for row in results["targets"]][:6] == [
        ("no-op `doit check` / floor", "≤ 2×"),
        ("one trail edited / no-op, `doit check`", "≤ 2×"),
        ("one trail edited / no-op, `trailblaze check`", "≤ 2×"),
        ("baseline one-edit / our one-edit", "≥ 30×"),
        ("baseline cold / our cold", "≥ 3×"),
        ("our cold / bare compiler", "≤ 1.5×"),
    ]
    # Issue 29's table: every run it names, side by side, with the ratios against the targets.
    table = summary.split("## Side by side (issue 29)", 1)[1].split("\n## ", 1)[0]
    for label in (
        "| cold |",
        "| bare compiler (tsc 7 alone, same modules) |",
        "| **cold / bare compiler** |",
        "| floor (Python importing doit, statting every input) |",
        "| **one edit / no-op, `doit check`** |",
        "| **one edit / no-op, `trailblaze check`** |",
        "| fresh clone, warm remote cache |",
        "| language server, `didChange` to `publishDiagnostics` |",
    ):
        row = next(line for line in table.splitlines() if line.startswith(label))
        assert "–" not in row, row


def test_parse_benchmark_reports_both_composers_and_the_rejected_files(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench.parse import main  # noqa: PLC0415

    assert main([str(DATA / "corpus" / "history" / "c2d541b76462"), "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "C composer" in out
    assert "pure Python" in out
    # The same ten android-host files are rejected by both composers.
    assert out.count("rejected [10]") == 2


@pytest.mark.tsc
def test_corpus_benchmark_times_cold_noop_and_one_edit_with_what_was_compiled(
    tmp_path: Path, tsc: Compiler, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.corpus import main  # noqa: PLC0415

    ws = tmp_path / "bundled"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps")
    out_file = tmp_path / "corpus.json"
    assert main([str(ws), "--runs", "1", "--out", str(out_file)]) == 0
    results = json.loads(out_file.read_text("utf-8"))
    (data,) = results.values()
    assert data["statuses"]["type-checked"] >= 8
    assert data["cold"]["files_compiled"] == [data["statuses"]["type-checked"]]
    assert data["no-op"]["files_compiled"] == [0]
    assert data["no-op"]["trails_parsed"] == [0]
    assert data["one-edit"]["files_compiled"] == [1]
    assert data["one-edit"]["trails_parsed"] == [1]
    assert "| one-edit |" in capsys.readouterr().out


@pytest.mark.tsc
@pytest.mark.slow
def test_compare_measures_two_installs_side_by_side(tmp_path: Path, tsc: Compiler) -> None:
    # This checkout's own venv on both sides: the harness, not a speed, is under test.
    venv = Path(sys.prefix)
    out = tmp_path / "compare.json"
    argv = ["--a", str(venv), "--b", str(venv), "--size", "20", "--runs", "2"]
    assert compare_main([*argv, "--work", str(tmp_path / "work"), "--out", str(out)]) == 0
    result = json.loads(out.read_text("utf-8"))
    assert result["problems"] == []
    assert result["a"]["package"] == result["b"]["package"] == str(ROOT / "trailblaze")
    assert set(result["measures"]) == set(COMPARED)
    for row in result["measures"].values():
        assert len(row["a_walls"]) == len(row["b_walls"]) == 2
        assert row["b_over_a"] == pytest.approx(row["b_median_s"] / row["a_median_s"], rel=1e-2)
    text = out.with_suffix(".md").read_text("utf-8")
    assert "| warm-clone |" in text
    assert "| cli-one-edit |" in text
    assert "| one edit / no-op, `trailblaze check` |" in text
    for row in result["measures"].values():
        assert row["a_cpu_s"] > 0
        assert row["b_cpu_s"] > 0


def test_compare_refuses_a_venv_without_the_package(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="missing"):
        compare_main(["--a", str(tmp_path), "--b", str(tmp_path), "--size", "20", "--runs", "1"])


def test_coldpair_times_two_installs_and_the_bare_compiler_and_compares_their_reports(
    tmp_path: Path, tsc: Compiler
) -> None:
    from bench.coldpair import main as coldpair_main  # noqa: PLC0415

    manifest = generate(tmp_path / "ws", Spec(40, seed=5))
    venv = Path(sys.prefix)
    out = tmp_path / "out"
    assert (
        coldpair_main(
            [
                str(tmp_path / "ws"),
                "--a",
                str(venv),
                "--b",
                str(venv),
                "--runs",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    result = json.loads((out / "coldpair.json").read_text("utf-8"))
    assert result["problems"] == []
    assert set(result["medians"]) == {"A", "B", "bare"}
    assert all(len(result["samples"][side]) == 1 for side in ("A", "B", "bare"))
    assert all(sample["wall"] > 0 for sample in result["samples"]["bare"])
    assert {"B/A", "A/bare", "B/bare", "B/bare paired"} <= set(result["ratios"])
    assert sum(result["phases_b"][0]["batches"]) == len(manifest.eligible)
    # Both installs' reports were kept and are the same bytes.
    assert (out / "report-A-0.json").read_bytes() == (out / "report-B-0.json").read_bytes()
    report = json.loads((out / "report-B-0.json").read_text("utf-8"))
    assert len(report["findings"]) == len(manifest.errors)
