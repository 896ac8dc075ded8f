"""Shards and `report merge`: the merged report of every shard equals one unsharded run's."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench.generate import Spec, generate
from tests.conftest import ROOT, run_python, write_tree
from trailblaze.check.run import run_check
from trailblaze.check.shard import Shard, ShardError, load_report, merge, split
from trailblaze.options import CheckOptions
from trailblaze.report.formats import render
from trailblaze.report.record import Report
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import find_workspace


def check(root: Path, shard: tuple[int, int] | None = None) -> Report:
    return run_check(find_workspace(root, explicit=True), CheckOptions(shard=shard))


def sharded(root: Path, count: int) -> list[dict[str, Any]]:
    return [check(root, (k, count)).to_json() for k in range(1, count + 1)]


def merged(reports: list[dict[str, Any]]) -> dict[str, Any]:
    return merge([(Path(f"shard-{i}.json"), r) for i, r in enumerate(reports)]).to_json()


def untimed(text: str) -> str:
    return re.sub(r' time="[0-9.]+"', "", text)


def test_the_split_is_deterministic_complete_and_balanced_by_bytes() -> None:
    sizes = {f"t/{i:03}.trail.yaml": 100 + (i * 37) % 900 for i in range(200)}
    shards = split(sizes, 4)
    assert shards == split(sizes, 4)
    assert sorted(p for shard in shards for p in shard) == sorted(sizes)
    loads = [sum(sizes[p] for p in shard) for shard in shards]
    assert max(loads) - min(loads) <= max(sizes.values())
    # The same files in another order make the same shards (each listed in the given order).
    again = split(dict(sorted(sizes.items(), reverse=True)), 4)
    assert [sorted(s) for s in again] == [sorted(s) for s in shards]
    assert split({}, 3) == [[], [], []]
    assert split({"a": 1}, 3) == [["a"], [], []]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3", "--shard '3': expected K/N, e.g. 2/4"),
        ("0/4", "--shard '0/4': K must be between 1 and N (N at least 1)"),
        ("5/4", "--shard '5/4': K must be between 1 and N (N at least 1)"),
        ("1/0", "--shard '1/0': K must be between 1 and N (N at least 1)"),
        # range(N) in the split: this one hung the check
        ("1/99999999999999999999", "--shard '1/99999999999999999999': N must be at most 10,000"),
    ],
)
def test_bad_shard_values_say_what_is_expected(text: str, message: str) -> None:
    with pytest.raises(ShardError) as caught:
        Shard.parse(text)
    assert str(caught.value) == message


@pytest.mark.tsc
def test_bundled_workspace_sharded_and_merged_equals_one_run(tsc: Compiler, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps")
    whole = check(ws).to_json()
    # The bundled workspace repeats one runIf branch across two trails: only the merge can see it.
    assert [f["code"] for f in whole["findings"]] == ["runif-repeated"]
    for count in (2, 3):
        parts = sharded(ws, count)
        assert sum(len(p["trails"]) for p in parts) == len(whole["trails"])
        assert merged(parts) == whole
    assert check(ws).to_json() == whole  # the shards left the state of a whole run intact


@pytest.mark.tsc
def test_generated_workspace_with_planted_errors_merges_to_the_unsharded_report(
    tsc: Compiler, tmp_path: Path
) -> None:
    ws = tmp_path / "gen"
    generate(ws, Spec(trails=80, seed=3, error_rate=0.2))
    whole = check(ws).to_json()
    assert whole["exit_code"] == 1
    assert whole["summary"]["findings"] >= 5
    parts = sharded(ws, 4)
    assert all(p["trails"] for p in parts)
    assert merged(parts) == whole
    for fmt in ("sarif", "junit", "github"):
        report = merge([(Path(str(i)), p) for i, p in enumerate(parts)])
        # JUnit's `time` is each run's own wall time: everything else is equal.
        assert untimed(render(report, fmt)) == untimed(render(check(ws), fmt))


def test_trails_without_a_surface_are_counted_over_all_shards(tmp_path: Path) -> None:
    trail = "config:\n  target: app\ntrail:\n  - step: Tap\n    recording:\n      android:\n        - pressBack: {}\n"
    write_tree(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": "id: app\nbogus: 1\n",
            **{f"trailmaps/app/trails/t{i}.trail.yaml": trail for i in range(5)},
        },
    )
    whole = check(tmp_path).to_json()
    [no_surface] = [f for f in whole["findings"] if f["code"] == "no-surface"]
    assert no_surface["message"].startswith("5 trail(s) target 'app'")
    assert merged(sharded(tmp_path, 3)) == whole


def test_merge_refuses_shards_of_different_runs_and_malformed_shard_sections(
    tmp_path: Path,
) -> None:
    trail = "config:\n  target: app\ntrail:\n  - step: {}\n"
    manifest = {"trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: app\n"}
    one = write_tree(
        tmp_path / "one",
        {**manifest, **{f"trailmaps/app/t{i}.trail.yaml": trail.format(i) for i in range(4)}},
    )
    other = write_tree(
        tmp_path / "other",
        {**manifest, **{f"trailmaps/app/u{i}.trail.yaml": trail.format(i) for i in range(5)}},
    )
    first = check(one, (1, 2)).to_json()
    assert merged([first, check(one, (2, 2)).to_json()]) == check(one).to_json()
    not_one_run = (
        "the reports are not the shards of one run: their trails are not one workspace's scan, "
        "each trail once (shards of different workspaces, or of different commits?)"
    )
    with pytest.raises(ShardError) as caught:
        merged([first, check(other, (2, 2)).to_json()])  # was merged into a wrong report
    assert str(caught.value) == not_one_run
    write_tree(one, {"trailmaps/app/t9.trail.yaml": trail.format(9)})  # a later commit
    with pytest.raises(ShardError) as caught:
        merged([first, check(one, (2, 2)).to_json()])
    assert str(caught.value) == not_one_run

    # KeyError, ValueError and a hang (range of a huge count) before; RecursionError in json.
    for name, section, shown in (
        ("empty", {}, '{"index": null, "count": null, "total": null}'),
        ("text", {**first["shard"], "count": "x"}, '{"index": 1, "count": "x", "total": 4}'),
        ("huge", {**first["shard"], "count": 10**12}, '{"index": 1, "count": 1000000000000, "total": 4}'),
        ("outside", {**first["shard"], "positions": [7]}, '{"index": 1, "count": 2, "total": 4}'),
    ):  # fmt: skip
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({**first, "shard": section}))
        with pytest.raises(ShardError) as caught:
            load_report(path)
        assert str(caught.value) == (
            f"{path}: a malformed shard section (index, count, total, positions): {shown}"
        )
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    with pytest.raises(ShardError, match=r"deep\.json: not a JSON report \(maximum recursion"):
        load_report(deep)


@pytest.mark.tsc
def test_cli_shard_and_merge(tsc: Compiler, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps")
    files = []
    for k in (1, 2):
        out = tmp_path / f"shard-{k}.json"
        result = run_python(
            ws, "-m", "trailblaze", "check", "--shard", f"{k}/2", "--format", "json",
            "--output", str(out),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        files.append(str(out))
    whole = run_python(ws, "-m", "trailblaze", "check", "--format", "sarif")
    joined = run_python(ws, "-m", "trailblaze", "report", "merge", *files, "--format", "sarif")
    assert joined.returncode == 0, joined.stderr
    assert joined.stdout == whole.stdout
    text = run_python(ws, "-m", "trailblaze", "report", "merge", *files, "--format", "text")
    assert text.returncode == 0
    assert "runIf branch is recorded in 2 trails" in text.stdout

    lonely = run_python(ws, "-m", "trailblaze", "report", "merge", files[0])
    assert lonely.returncode == 2
    assert lonely.stderr == "trailblaze report merge: shard(s) 2/2 missing from the merge\n"
    twice = run_python(ws, "-m", "trailblaze", "report", "merge", files[0], files[0])
    assert twice.stderr == (
        f"trailblaze report merge: {files[0]} and {files[0]} are both shard 1/2\n"
    )
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(check(ws).to_json()), "utf-8")
    refused = run_python(ws, "-m", "trailblaze", "report", "merge", str(plain))
    assert refused.returncode == 2
    assert refused.stderr == (
        f"trailblaze report merge: {plain}: not the report of a shard "
        "(run `trailblaze check --shard K/N`)\n"
    )
    bad = run_python(ws, "-m", "trailblaze", "check", "--shard", "2/1")
    assert bad.returncode == 2
    assert (
        bad.stderr == "trailblaze check: --shard '2/1': K must be between 1 and N (N at least 1)\n"
    )
