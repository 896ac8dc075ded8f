"""Paths for the reader: relative to where the command runs; github and sarif: the git root."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MINIMAL_MANIFEST, write_tree
from trailblaze.cli.main import main
from trailblaze.report.pathbase import git_root, rebaser

TRAIL = "apps/shop/trailmaps/shop/trails/bad.trail.yaml"


@pytest.fixture
def monorepo(tmp_path: Path) -> Path:
    """A git repository whose workspace is `apps/shop`, with one bad trail."""
    repo = tmp_path / "repo"
    write_tree(
        repo,
        {
            "apps/shop/trailmaps/shop/trailmap.yaml": MINIMAL_MANIFEST.format(id="shop"),
            TRAIL: "config:\n  target: shop\ntrail:\n  - stpe: a\n",
        },
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out


def annotated_files(github: str) -> set[str]:
    return {line.split("file=", 1)[1].split(",", 1)[0] for line in github.splitlines()}


def test_github_paths_are_relative_to_the_repository_root_from_anywhere_in_it(
    monorepo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(monorepo)
    code, out = run(capsys, "apps/shop", "--format", "github")
    assert code == 1
    assert annotated_files(out) == {TRAIL}
    monkeypatch.chdir(monorepo / "apps/shop/trailmaps")
    code, out = run(capsys, "--format", "github")
    assert annotated_files(out) == {TRAIL}
    # --path-base overrides the default.
    code, out = run(capsys, "--format", "github", "--path-base", str(monorepo / "apps/shop"))
    assert annotated_files(out) == {"trailmaps/shop/trails/bad.trail.yaml"}


def test_text_json_and_junit_paths_are_relative_to_the_current_directory(
    monorepo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(monorepo)
    code, out = run(capsys, "apps/shop")
    assert code == 1
    assert out.startswith(f"parse: {TRAIL}:4:5: ")
    assert "    4 |   - stpe: a" in out  # the code frame is still read from the file
    _, out = run(capsys, "apps/shop", "--format", "json")
    report = json.loads(out)
    assert {f["path"] for f in report["findings"]} == {TRAIL}
    assert [t["path"] for t in report["trails"]] == [TRAIL]
    assert report["path_base"] == str(monorepo)
    _, out = run(capsys, "apps/shop", "--format", "junit")
    assert f'name="{TRAIL}"' in out
    monkeypatch.chdir(monorepo / "apps/shop/trailmaps/shop")
    _, out = run(capsys, "--format", "json")
    assert {f["path"] for f in json.loads(out)["findings"]} == {"trails/bad.trail.yaml"}


def test_sarif_uris_are_relative_to_the_repository_root(
    monorepo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(monorepo / "apps/shop")
    code, out = run(capsys, "--format", "sarif")
    assert code == 1
    [sarif_run] = json.loads(out)["runs"]
    [location] = {
        json.dumps(loc["physicalLocation"]["artifactLocation"])
        for result in sarif_run["results"]
        for loc in result["locations"]
    }
    assert json.loads(location) == {"uri": TRAIL, "uriBaseId": "%SRCROOT%"}
    assert "uri" not in sarif_run["originalUriBaseIds"]["%SRCROOT%"]
    assert str(monorepo) not in out  # no path of the machine that ran it


def test_outside_a_repository_github_paths_are_relative_to_the_current_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(
        tmp_path / "ws",
        {
            "trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app"),
            "trailmaps/app/a.trail.yaml": "trail:\n  - stpe: a\n",
        },
    )
    assert git_root(tmp_path / "ws") is None or git_root(tmp_path / "ws") != tmp_path / "ws"
    monkeypatch.chdir(tmp_path)
    _, out = run(capsys, "ws", "--format", "github")
    expected = (
        "ws/trailmaps/app/a.trail.yaml"
        if git_root(tmp_path) is None
        else f"{(tmp_path / 'ws').relative_to(git_root(tmp_path) or tmp_path)}/trailmaps/app/a.trail.yaml"
    )
    assert annotated_files(out) == {expected}


def test_path_base_must_be_a_directory(
    monorepo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(monorepo)
    assert main(["check", "apps/shop", "--path-base", "nowhere"]) == 2
    assert capsys.readouterr().err == "trailblaze check: --path-base nowhere: not a directory\n"


def test_rebaser_keeps_absolute_paths_and_shows_renamed_ones(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rebase = rebaser(ws, tmp_path, {"copy.yaml": str(tmp_path / "orig.yaml"), "s": "<stdin>"})
    assert rebase("trailmaps/a.yaml") == "ws/trailmaps/a.yaml"
    assert rebase("/abs/tsc") == "/abs/tsc"
    assert rebase("copy.yaml") == "orig.yaml"
    assert rebase("s") == "<stdin>"
    inner = rebaser(ws, ws / "trailmaps" / "app")
    (ws / "trailmaps" / "app").mkdir(parents=True)
    assert inner("trailmaps/app/x.yaml") == "x.yaml"
    assert inner("trailmaps/other/y.yaml") == "../other/y.yaml"


def test_a_report_shown_from_its_workspace_keeps_every_path(tmp_path: Path) -> None:
    from trailblaze.finding import Finding  # noqa: PLC0415
    from trailblaze.report.output import as_shown  # noqa: PLC0415
    from trailblaze.report.record import Report, TrailStatus  # noqa: PLC0415

    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    report = Report(
        workspace=str(ws),
        trailmaps=("shop",),
        trails=(TrailStatus("trailmaps/shop/trails/a.trail.yaml", "shop", "type-checked"),),
        findings=(
            Finding("type", "trailmaps/shop/trails/a.trail.yaml", 3, 5, "bad", code="TS2322"),
            Finding("infra", "/usr/bin/tsc", 1, 1, "gone", code="toolchain"),
        ),
        shard={"index": 1, "count": 2},
    )
    # From the workspace itself (a symlink to it too): the paths as they are, the base set.
    (tmp_path / "link").symlink_to(ws)
    for base in (ws, tmp_path / "link"):
        shown, _ = as_shown([(report, ws, None)], base, "json")
        assert shown == report.with_paths(rebaser(ws, base), str(base))
        assert (shown.path_base, shown.shard) == (str(base), {"index": 1, "count": 2, "root": "."})
    # From elsewhere, or with a path shown as another: rebased.
    shown, _ = as_shown([(report, ws, None)], ws / "sub", "json")
    assert [t.path for t in shown.trails] == ["../trailmaps/shop/trails/a.trail.yaml"]
    renamed = {"trailmaps/shop/trails/a.trail.yaml": "<stdin>"}
    shown, _ = as_shown([(report, ws, renamed)], ws, "json")
    assert [f.path for f in shown.findings] == ["<stdin>", "/usr/bin/tsc"]
