"""`trailblaze check` and the reference's configuration knobs, on a copy of the upstream
repository's root (tests/data/corpus/head, see its NOTICE)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS, ROOT, run_python
from trailblaze.check.run import last_stats
from trailblaze.cli.main import main
from trailblaze.toolchain.compilers import Compiler

IOS_CONFIG = "examples/ios-contacts/trails/config"


@pytest.fixture
def upstream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tsc: Compiler) -> Path:
    """The upstream root (its `trails/` and `examples/`), as the current directory."""
    root = tmp_path / "trailblaze"
    for part in ("trails", "examples"):
        shutil.copytree(CORPUS / "head" / part, root / part)
    monkeypatch.chdir(root)
    return root


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["check", *args, "--format", "json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def fatal(report: dict[str, Any]) -> list[str]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return sorted(f"{f['path']}:{f['line']}" for f in findings if f["fatal"])


def test_config_dir_is_where_upstream_ci_finds_the_ios_contacts_trailmap(
    upstream: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Upstream's CI: `TRAILBLAZE_CONFIG_DIR=examples/ios-contacts/trails/config trailblaze
    # check trails/ios-contacts` at the repository's root. Without the variable the trails
    # are checked against the root's own `contacts` trailmap, which has none of their tools.
    code, without, _ = check(capsys, "trails/ios-contacts")
    assert code == 1
    assert len(fatal(without)) == 15
    assert {f["path"].split("/")[1] for f in without["findings"] if f["fatal"]} == {"ios-contacts"}

    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", IOS_CONFIG)
    code, scoped, err = check(capsys, "trails/ios-contacts")
    assert (code, err) == (0, "")
    assert fatal(scoped) == []
    summary = scoped["summary"]
    assert isinstance(summary, dict)
    assert (summary["trailmaps"], summary["trails"], summary["type_checked"]) == (1, 13, 11)
    # The trailmap is the example's: its findings name the example's files.
    manifests = {f["path"] for f in scoped["findings"] if "trailmap.yaml" in f["path"]}
    assert manifests == {f"{IOS_CONFIG}/trailmaps/contacts/trailmap.yaml"}

    # The whole root too: the root's own trailmaps are not read, so a trail naming `clock`
    # is an unknown target, never a finding.
    code, whole, _ = check(capsys)
    assert code == 0
    assert fatal(whole) == []
    statuses = {t["path"]: t["reason"] for t in whole["trails"]}
    assert statuses["trails/clock/cycle-through-tabs.trail.yaml"] == "unknown target"


def test_switching_the_config_dir_never_repeats_a_verdict(
    upstream: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for setting, expected in ((IOS_CONFIG, 0), (None, 1), (IOS_CONFIG, 0), (None, 1)):
        if setting is None:
            monkeypatch.delenv("TRAILBLAZE_CONFIG_DIR", raising=False)
        else:
            monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", setting)
        for args in ((), ("trails/ios-contacts",)):
            code, _, _ = check(capsys, *args)
            assert code == expected, (setting, args)


@pytest.mark.parametrize(
    ("value", "what"),
    [("no/such/dir", "does not exist"), ("trails/config/trailblaze.yaml", "is not a directory")],
)
def test_a_config_dir_that_is_not_a_directory_is_a_configuration_error(
    upstream: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    value: str,
    what: str,
) -> None:
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", value)
    code = main(["check"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith(f"trailblaze check: TRAILBLAZE_CONFIG_DIR={value}: ")
    assert f"'{upstream / value}' {what}" in err
    assert "Traceback" not in err


def test_a_directory_with_only_trailblaze_yaml_is_a_workspace(
    upstream: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # examples/ios-sample-app has trails/config/trailblaze.yaml and nothing else: the
    # reference's runtime anchor, so a workspace (with no trailmap yet), not "no workspace".
    monkeypatch.chdir(upstream / "examples/ios-sample-app")
    code, report, err = check(capsys)
    assert (code, err) == (0, "")
    summary = report["summary"]
    assert isinstance(summary, dict)
    assert (summary["trailmaps"], summary["trails"]) == (0, 0)


def test_outside_a_workspace_a_trailmap_id_is_looked_for_in_the_examples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reference's last resort (`check contacts` at a repository holding only examples).
    shutil.copytree(CORPUS / "head" / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    code, report, err = check(capsys, "contacts")
    assert (code, err) == (0, "")
    assert report["trailmaps"] == ["contacts"]
    # In two examples: which one is not guessed.
    shutil.copytree(tmp_path / "examples/ios-contacts", tmp_path / "examples/ios-contacts-2")
    assert main(["check", "contacts"]) == 2
    _, err = capsys.readouterr()
    assert err == (
        f"trailblaze check: no workspace found from '{tmp_path}', and trailmap 'contacts' is in "
        "several examples (examples/ios-contacts, examples/ios-contacts-2): run in one of "
        "them, or pass --workspace DIR\n"
    )
    # No such trailmap in any: no workspace, as before.
    assert main(["check", "nothing"]) == 2
    assert "no workspace found from" in capsys.readouterr().err


def test_a_config_dir_outside_the_workspace_is_read_and_never_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reference's distribution pattern: a shipped `trails/config/` anywhere, named by the
    # variable. Its trailmap is not ours to write into: the surface is validation-only, in
    # the workspace's scratch directory.
    shipped = tmp_path / "shipped" / "config"
    shutil.copytree(CORPUS / "head" / IOS_CONFIG, shipped)
    ws = tmp_path / "ws"
    shutil.copytree(CORPUS / "head" / "trails" / "ios-contacts", ws / "trails" / "ios-contacts")
    (ws / "trails/config").mkdir()
    (ws / "trails/config/trailblaze.yaml").write_text("targets:\n  - contacts\n")
    before = sorted(
        (p.relative_to(shipped).as_posix(), p.read_bytes())
        for p in shipped.rglob("*")
        if p.is_file()
    )
    monkeypatch.chdir(ws)
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", str(shipped))
    code, report, err = check(capsys)
    assert (code, err) == (0, ""), fatal(report)
    summary = report["summary"]
    assert (summary["trailmaps"], summary["trails"], summary["type_checked"]) == (1, 13, 11)
    after = sorted(
        (p.relative_to(shipped).as_posix(), p.read_bytes())
        for p in shipped.rglob("*")
        if p.is_file()
    )
    assert after == before
    assert (
        ws / "trails/.trailblaze/trail-validation/contacts/tools/trailblaze-client.d.ts"
    ).is_file()


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), "utf-8")


def _comparable(report: dict[str, Any]) -> dict[str, Any]:
    """A JSON report without what names the directory it was made in."""
    return {k: v for k, v in report.items() if k not in ("workspace", "path_base")}


@pytest.mark.tsc
def test_the_report_after_one_edit_is_a_cold_run_s_and_only_that_trail_is_compiled(
    tsc: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import ROOT  # noqa: PLC0415
    from trailblaze.check.run import last_stats  # noqa: PLC0415

    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps")
    monkeypatch.chdir(ws)
    out = tmp_path / "report.json"
    assert main(["check", "--format", "json", "--output", str(out)]) == 0
    # An edit that makes a type error (a list for a string), then one that fixes it again: each
    # run compiles the edited trail alone, and reports what a check from nothing reports.
    search = ws / "trailmaps/notes/trails/search.trail.yaml"
    for old, new, code in (
        ("text: Packing list", "text: [1]", 1),
        ("text: [1]", "text: Packing list again", 0),
    ):
        _edit(search, old, new)
        assert main(["check", "--format", "json", "--output", str(out)]) == code
        assert last_stats(ws / ".trailblaze")["files_compiled"] == [
            "trailmaps/notes/trails/search.trail.yaml"
        ]
        assert last_stats(ws / ".trailblaze")["narrow"] == 1  # no other trail looked at
        # By the compiler started while the pipeline loaded (`typegate/primed.py`).
        assert last_stats(ws / ".trailblaze")["primed_compiles"] == 1
        edited = json.loads(out.read_text("utf-8"))
        fresh = tmp_path / f"fresh-{code}"
        shutil.copytree(ws, fresh, ignore=shutil.ignore_patterns(".trailblaze"))
        monkeypatch.chdir(fresh)
        cold = tmp_path / f"cold-{code}.json"
        assert main(["check", "--format", "json", "--output", str(cold)]) == code
        monkeypatch.chdir(ws)
        assert _comparable(edited) == _comparable(json.loads(cold.read_text("utf-8")))
        assert any(f["code"] == "TS2322" for f in edited["findings"]) == (code == 1)


LOADED_ONLY_ELSEWHERE = (
    "trailblaze.yaml.lean",  # the parse workers' composer
    "multiprocessing",  # the parse workers
    "concurrent.futures.process",
    "jsonschema",  # manifests and tool files validated (a narrow check's are remembered)
    "trailblaze.check.unittests.inputs",  # a trailmap with tests
    "trailblaze.check.unittests.junit",
    "trailblaze.state.testresults",
    "trailblaze.toolmodel.tooldefs.waypoint",  # a waypoint file
    "importlib.metadata",  # a package that declares trailmaps
    "importlib.resources",  # (our data files are read from the package's directory)
    "tomllib",  # a workspace's pyproject.toml
    "trailblaze.runs.runcache",  # the remote cache: its run entries, rows and client
    "trailblaze.runs.rows",
    "trailblaze.state.remote",
    "http.client",
    "trailblaze.check.shard",
    "trailblaze.replay",
    "trailblaze.lsp",
    "trailblaze.doit_tasks",
)
"""Modules a check of one edited trail never needs (`python -m bench.run`'s one-edit run):
loaded where they are used, so that the one-edit check does not pay for them."""

LOADED = """
import json, sys
before = set(sys.modules)
from trailblaze.cli.main import main
code = main(["check", "--format", "json", "--output", "report.json"])
loaded = sorted(
    name for name in sys.modules
    if name not in before and name.startswith(tuple(json.loads(sys.argv[1])))
)
print(json.dumps([code, loaded]))
"""


@pytest.mark.tsc
def test_a_one_trail_check_loads_no_module_only_other_checks_need(
    tmp_path: Path, tsc: Compiler
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", ws / "trailmaps")
    names = json.dumps(LOADED_ONLY_ELSEWHERE)
    cold = run_python(ws, "-c", LOADED, names)
    assert cold.returncode == 0, cold.stderr
    assert json.loads(cold.stdout)[1] != []  # a full check needs some of them: the test sees
    trail = ws / "trailmaps/notes/trails/search.trail.yaml"
    trail.write_text(trail.read_text("utf-8").replace("text: Packing list", "text: [1]"), "utf-8")
    edited = run_python(ws, "-c", LOADED, names)
    assert edited.returncode == 0, edited.stderr
    assert last_stats(ws / ".trailblaze").get("narrow") == 1  # checked narrowly
    assert json.loads(edited.stdout) == [1, []]
