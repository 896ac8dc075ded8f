"""Shards and `report merge`: the merged report of every shard equals one unsharded run's."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generate import Spec, generate
from tests.conftest import ROOT, run_python, write_tree
from tests.mutations import SECRET, mutated
from trailblaze.check.run import run_check
from trailblaze.check.shard import Shard, ShardError, load_report, merge, split
from trailblaze.finding import Owned
from trailblaze.options import CheckOptions
from trailblaze.report.formats import render
from trailblaze.report.output import as_shown, rendered
from trailblaze.report.record import Report
from trailblaze.runs.runcache.keys import run_identity, with_run_key
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import find_workspace, owned_by, scan


def check(root: Path, shard: tuple[int, int] | None = None) -> Report:
    """A check of `root`, a shard's with the key of its run's inputs, as the CLI makes it."""
    ws = find_workspace(root, explicit=True)
    options = CheckOptions(shard=shard)
    found = scan(ws)
    identity = run_identity(ws, found, options) if shard is not None else None
    report = run_check(ws, options, found=found)
    return with_run_key(report, identity) if identity is not None else report


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
    second = check(one, (2, 2)).to_json()
    assert first["shard"]["run"] == second["shard"]["run"]
    assert merged([first, second]) == check(one).to_json()
    different = (
        "shard-0.json and shard-1.json are shards of different runs: their inputs differ "
        "(another commit, other settings, or another version of trailblaze-doit)"
    )
    with pytest.raises(ShardError) as caught:
        merged([first, check(other, (2, 2)).to_json()])  # was merged into a wrong report
    assert str(caught.value) == different
    # Another commit with the very same trails and sizes (one trail's step renamed): the
    # same split, another run.
    write_tree(one, {"trailmaps/app/t3.trail.yaml": trail.format(9)})
    later = check(one, (2, 2)).to_json()
    assert [t["path"] for t in later["trails"]] == [t["path"] for t in second["trails"]]
    with pytest.raises(ShardError) as caught:
        merged([first, later])
    assert str(caught.value) == different

    # KeyError, ValueError and a hang (range of a huge count) before; RecursionError in json.
    for name, section, shown in (
        ("empty", {}, '{"index": null, "count": null, "total": null}'),
        ("text", {**first["shard"], "count": "x"}, '{"index": 1, "count": "x", "total": 4}'),
        ("huge", {**first["shard"], "count": 10**12}, '{"index": 1, "count": 1000000000000, "total": 4}'),
        ("outside", {**first["shard"], "positions": [7]}, '{"index": 1, "count": 2, "total": 4}'),
        ("nested", {**first["shard"], "count": [[[]]]}, '{"index": 1, "count": "list", "total": 4}'),
    ):  # fmt: skip
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({**first, "shard": section}))
        with pytest.raises(ShardError) as caught:
            load_report(path)
        assert str(caught.value) == (
            f"{path}: a malformed shard section (index, count, total, positions): {shown}"
        )
    unkeyed = tmp_path / "unkeyed.json"
    unkeyed.write_text(json.dumps({**first, "shard": {**first["shard"], "run": None}}))
    with pytest.raises(ShardError) as caught:
        load_report(unkeyed)
    assert str(caught.value) == (
        f"{unkeyed}: the shard's report does not carry the key of its run's inputs (a report "
        "of trail files, or made by another version of trailblaze-doit): check the shards "
        "again with `trailblaze check --shard K/N`"
    )
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    with pytest.raises(ShardError, match=r"deep\.json: not a JSON report \(maximum recursion"):
        load_report(deep)


def test_merge_refuses_overlapping_incomplete_and_malformed_shards(tmp_path: Path) -> None:
    trail = "config:\n  target: app\ntrail:\n  - step: {}\n"
    ws = write_tree(
        tmp_path / "ws",
        {
            "trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: app\n",
            **{f"trailmaps/app/t{i}.trail.yaml": trail.format(i) for i in range(6)},
        },
    )
    first, second, third = sharded(ws, 3)

    def refused(parts: list[dict[str, Any]]) -> str:
        with pytest.raises(ShardError) as caught:
            merged(parts)
        return str(caught.value)

    # The second shard repeats a trail of the first (a shard's report copied into another's).
    overlapping = json.loads(json.dumps(second))
    overlapping["trails"].append(first["trails"][0])
    overlapping["shard"]["positions"].append(first["shard"]["positions"][0])
    assert refused([first, overlapping, third]) == (
        f"shard-0.json and shard-1.json both report trail "
        f"{first['shard']['positions'][0] + 1} of 6: shards of one run never overlap"
    )
    # ... or under another position.
    moved = json.loads(json.dumps(second))
    moved["trails"][0] = first["trails"][0]
    assert refused([first, moved, third]) == (
        f"shard-0.json and shard-1.json both report trail {first['trails'][0]['path']!r}: "
        "shards of one run never overlap"
    )
    # A shard whose report lost a trail: the set is incomplete.
    short = json.loads(json.dumps(third))
    short["trails"].pop()
    short["shard"]["positions"].pop()
    assert refused([first, second, short]) == (
        "the shards report 5 of the run's 6 trails: a shard's report is incomplete"
    )
    # A finding whose line is not a number, or is out of range, or names a file elsewhere.
    finding = {
        "kind": "type", "path": first["trails"][0]["path"], "line": 1, "column": 1,
        "message": "m", "code": "TS2322", "fatal": True,
    }  # fmt: skip
    for change, message in (
        ({"line": "12"}, "a malformed finding (finding field 'line')"),
        ({"line": 1.5}, "a malformed finding (finding field 'line')"),
        ({"line": True}, "a malformed finding (finding field 'line')"),
        ({"column": 10**30}, "a malformed finding (a finding's line or column out of range)"),
        ({"line": 0}, "a malformed finding (a finding's line or column out of range)"),
        ({"path": "/etc/passwd"}, "a finding about '/etc/passwd', which is not a trail or tool file of the workspace being reported"),
        ({"path": "../../etc/passwd"}, "a finding about '../../etc/passwd', which is not a trail or tool file of the workspace being reported"),
        ({"kind": "nope"}, "a malformed finding (finding field 'kind')"),
    ):  # fmt: skip
        bad = json.loads(json.dumps(first))
        bad["findings"] = [{**finding, **change}]
        assert refused([bad, second, third]) == f"shard-0.json: {message}"
    # A runIf branch of a trail the shard does not have.
    branched = json.loads(json.dumps(first))
    branched["shard"]["branches"] = [["sig", "elsewhere.trail.yaml", 1, 1]]
    assert refused([branched, second, third]) == (
        "shard-0.json: a malformed shard section (a runIf branch not of its own trails)"
    )
    # With the workspace being reported: its own trails and tool files only.
    owned = owned_by(find_workspace(ws, explicit=True), scan(find_workspace(ws, explicit=True)))
    assert merge([(Path("a"), first), (Path("b"), second), (Path("c"), third)], owned).trails
    stray = json.loads(json.dumps(first))
    stray["findings"] = [{**finding, "path": "README.md"}]
    with pytest.raises(ShardError) as caught:
        merge([(Path("a"), stray), (Path("b"), second), (Path("c"), third)], owned)
    assert str(caught.value) == (
        "a: a finding about 'README.md', which is not a trail or tool file of the workspace "
        "being reported"
    )
    assert merged([stray, second, third])["findings"]  # inside the workspace: only `owned` knows


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


@pytest.mark.tsc
def test_cli_merge_takes_a_verdict_only_from_shards_of_this_run(
    tsc: Compiler, tmp_path: Path
) -> None:
    """Through the command line: shards of another commit, shards that overlap, a finding
    whose line is not a number, and findings that point out of the workspace (by name or by
    a symlink) never make a merged pass, a traceback, or a code frame of another file."""
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps")
    write_tree(ws, {"trailmaps/notes/trails/broken.trail.yaml": BROKEN})
    secret = write_tree(tmp_path / "outside", {"passwd": f"{SECRET}\n"}) / "passwd"

    def shard(k: int, where: Path = ws) -> Path:
        out = tmp_path / f"{where.name}-{k}.json"
        done = run_python(
            where, "-m", "trailblaze", "check", "--shard", f"{k}/2", "--format", "json",
            "--output", str(out),
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        assert "Traceback" not in done.stderr
        return out

    def merge_cli(*reports: Path, fmt: str = "text") -> tuple[int, str, str]:
        done = run_python(
            ws, "-m", "trailblaze", "report", "merge", *map(str, reports), "--format", fmt
        )
        assert "Traceback" not in done.stderr
        return done.returncode, done.stdout, done.stderr

    one, two = shard(1), shard(2)
    code, out, _ = merge_cli(one, two)
    assert code == 1
    assert "TS2322" in out
    # The second shard of another commit: the broken trail fixed, every path and size the same.
    later = tmp_path / "later"
    shutil.copytree(ws, later, ignore=shutil.ignore_patterns(".trailblaze"))
    write_tree(
        later, {"trailmaps/notes/trails/broken.trail.yaml": BROKEN.replace("[5, 6]", "'56789'")}
    )
    code, out, err = merge_cli(one, shard(2, later))
    assert (code, out) == (2, "")
    assert "are shards of different runs" in err
    # The broken trail's shard replaced by a copy of the other, renumbered: an overlap.
    data = [json.loads(p.read_text()) for p in (one, two)]
    holder = next(i for i, d in enumerate(data) if "TS2322" in json.dumps(d))
    copy = json.loads(json.dumps(data[1 - holder]))
    copy["shard"]["index"] = data[holder]["shard"]["index"]
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(copy))
    code, out, err = merge_cli(forged, one if holder == 1 else two)
    assert (code, out) == (2, "")
    assert "shards of one run never overlap" in err
    # A finding whose line is not a number.
    bad = json.loads(json.dumps(data[holder]))
    next(f for f in bad["findings"] if f["code"] == "TS2322")["line"] = "twelve"
    forged.write_text(json.dumps(bad))
    parts = [forged, two] if holder == 0 else [one, forged]
    code, out, err = merge_cli(*parts)
    assert (code, out) == (2, "")
    assert err.endswith("a malformed finding (finding field 'line')\n")
    # A finding about a file outside the workspace, by name: refused, its line never shown.
    for path in (str(secret), os.path.relpath(secret, ws)):
        bad = json.loads(json.dumps(data[holder]))
        next(f for f in bad["findings"] if f["code"] == "TS2322")["path"] = path
        forged.write_text(json.dumps(bad))
        code, out, err = merge_cli(*parts)
        assert (code, out) == (2, ""), path
        assert "which is not a trail or tool file of the workspace being reported" in err
        assert SECRET not in out + err
    # ... or through a symlink inside a trailmap: the finding stands, no line of the file is read.
    (ws / "trailmaps/notes/tools").mkdir(exist_ok=True)
    (ws / "trailmaps/notes/tools/leak.yaml").symlink_to(secret)
    bad = json.loads(json.dumps(data[holder]))
    next(f for f in bad["findings"] if f["code"] == "TS2322").update(
        path="trailmaps/notes/tools/leak.yaml", line=1, column=1
    )
    forged.write_text(json.dumps(bad))
    code, out, err = merge_cli(*parts)
    assert code == 1, err
    assert "trailmaps/notes/tools/leak.yaml:" in out
    assert SECRET not in out + err
    # Shards whose root leads out of here, to another workspace on this machine: that
    # workspace is never read, so none of its lines is shown as a frame.
    victim = tmp_path / "victim"
    shutil.copytree(ws, victim, ignore=shutil.ignore_patterns(".trailblaze"))
    lines = len(BROKEN.splitlines()) + 5
    write_tree(victim, {"trailmaps/notes/trails/broken.trail.yaml": f"# {SECRET}\n" * lines})
    for k, shard_data in enumerate(data):
        moved = json.loads(json.dumps(shard_data))
        moved["shard"]["root"] = there = os.path.relpath(victim, ws)
        for entry in (*moved["trails"], *moved["findings"]):
            entry["path"] = f"{there}/{entry['path']}"
        (tmp_path / f"moved-{k}.json").write_text(json.dumps(moved))
    code, out, err = merge_cli(tmp_path / "moved-0.json", tmp_path / "moved-1.json")
    assert code == 1, err
    assert "TS2322" in out
    assert SECRET not in out + err


BROKEN = """\
config:
  target: notes
trail:
  - step: Search for a list
    recording:
      android-phone:
        - scrollUntilTextIsVisible:
            text: [5, 6]
"""


# -- hostile shard reports (hypothesis) ---------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any], Owned]:
    """A workspace with findings (a trail of an unknown tool, a malformed one), a secret file
    beside it and a tool file that links to it; its three shards' reports and what it owns."""
    top = tmp_path_factory.mktemp("hostile")
    secret = write_tree(top / "outside", {"passwd": f"{SECRET}\n"}) / "passwd"
    trail = "config:\n  target: app\ntrail:\n  - step: {}\n"
    ws = write_tree(
        top / "ws",
        {
            "trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: app\n",
            **{f"trailmaps/app/t{i}.trail.yaml": trail.format(i) for i in range(5)},
            "trailmaps/app/bad.trail.yaml": "config:\n  target: app\ntrail: {steps: 1}\n",
            "trailmaps/app/odd.trail.yaml": "- tapOn: {x: 1}\n- nope: 2\n",
        },
    )
    (ws / "trailmaps/app/tools").mkdir()
    (ws / "trailmaps/app/tools/leak.yaml").symlink_to(secret)
    reports = sharded(ws, 3)
    assert any(r["findings"] for r in reports)
    wsp = find_workspace(ws, explicit=True)
    return ws, reports, owned_by(wsp, scan(wsp))


@settings(
    max_examples=300,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_hostile_shard_reports_never_merge_into_a_traceback_a_false_pass_or_a_leak(
    hostile_setup: tuple[Path, list[Any], Owned], data: st.DataObject
) -> None:
    """Shard reports with values replaced by anything (numbers as text, paths out of the
    workspace, huge lines, lists for strings, keys removed): `report merge` refuses them with
    a `ShardError`, or merges a report of every trail of the workspace exactly once, whose
    findings name its own files, and whose text never shows a line of another file."""
    ws, reports, owned = hostile_setup
    changed = data.draw(st.sets(st.integers(0, 2), min_size=1))
    parts = [data.draw(mutated(r)) if i in changed else r for i, r in enumerate(reports)]
    named = [(Path(f"shard-{i}.json"), part) for i, part in enumerate(parts)]
    for with_owned in (owned, None):
        try:
            report = merge(named, with_owned)
        except ShardError as exc:
            refusal = str(exc)
            assert SECRET not in refusal
            continue
        paths = [t.path for t in report.trails]
        assert len(paths) == len(set(paths))
        if with_owned is not None:
            assert set(paths) == owned.trails
            assert all(f.kind == "infra" or owned.names(f.path) for f in report.findings)
        shown, frames = as_shown([(report, ws, None)], ws, "text")
        assert SECRET not in rendered(shown, frames, "text")
        for fmt in ("json", "sarif", "junit", "github"):
            assert SECRET not in render(as_shown([(report, ws, None)], ws, fmt)[0], fmt)
