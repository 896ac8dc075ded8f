"""`trailblaze check [TRAILMAP_ID] [--all] [--workspace DIR]`, `check FILE...` and `check -`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MINIMAL_MANIFEST, write_tree
from trailblaze.cli.main import main

BAD = "config:\n  target: {target}\ntrail:\n  - stpe: a\n"
RECORDED = """\
config:
  target: {target}
trail:
  - step: tap
    recording:
      android:
        - tapOnElementWithText:
            text: {text}
"""


@pytest.fixture
def two_maps(tmp_path: Path) -> Path:
    """A compact workspace with trailmaps `alpha` and `beta`, one bad trail in each."""
    return write_tree(
        tmp_path / "ws",
        {
            "trailmaps/alpha/trailmap.yaml": MINIMAL_MANIFEST.format(id="alpha"),
            "trailmaps/beta/trailmap.yaml": MINIMAL_MANIFEST.format(id="beta"),
            "trailmaps/alpha/trails/a.trail.yaml": BAD.format(target="alpha"),
            "trailmaps/beta/trails/b.trail.yaml": BAD.format(target="beta"),
        },
    )


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any] | str, str]:
    code = main(["check", *args])
    out, err = capsys.readouterr()
    try:
        return code, json.loads(out), err
    except ValueError:
        return code, out, err


def paths(report: object) -> list[str]:
    assert isinstance(report, dict)
    return sorted({f["path"] for f in report["findings"] if f["fatal"]})


def test_a_trailmap_id_limits_the_report_to_that_trailmap(
    two_maps: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(two_maps)
    code, report, _ = check(capsys, "alpha", "--format", "json")
    assert code == 1
    assert paths(report) == ["trailmaps/alpha/trails/a.trail.yaml"]
    assert isinstance(report, dict)
    assert report["trailmaps"] == ["alpha"]
    assert [t["path"] for t in report["trails"]] == ["trailmaps/alpha/trails/a.trail.yaml"]
    code, report, _ = check(capsys, "--all", "--format", "json")
    assert code == 1
    assert paths(report) == [
        "trailmaps/alpha/trails/a.trail.yaml",
        "trailmaps/beta/trails/b.trail.yaml",
    ]


def test_inside_a_trailmap_directory_the_check_is_scoped_to_it_unless_all(
    two_maps: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(two_maps / "trailmaps/beta/trails")
    code, report, _ = check(capsys, "--format", "json")
    assert code == 1
    assert paths(report) == ["b.trail.yaml"]  # relative to where the command runs
    _, report, _ = check(capsys, "--all", "--format", "json")
    assert paths(report) == ["../../alpha/trails/a.trail.yaml", "b.trail.yaml"]


def test_workspace_option_and_the_older_workspace_argument(
    two_maps: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, report, _ = check(
        capsys,
        "--workspace",
        str(two_maps),
        "beta",
        "--format",
        "json",
        "--path-base",
        str(two_maps),
    )
    assert (code, paths(report)) == (1, ["trailmaps/beta/trails/b.trail.yaml"])
    code, report, _ = check(capsys, str(two_maps), "--format", "json", "--path-base", str(two_maps))
    assert code == 1
    assert len(paths(report)) == 2
    code, out, err = check(capsys, str(two_maps), "--workspace", str(two_maps))
    assert (code, out) == (2, "")
    assert "--workspace names the workspace already" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["gamma"],
            "trailblaze check: trailmap 'gamma' not found in {ws}/trailmaps. Available: alpha, beta\n",
        ),
        (
            ["alpha", "--all"],
            "trailblaze check: --all checks every trailmap: it cannot be combined with 'alpha'\n",
        ),
        (
            ["alpha", "beta"],
            "trailblaze check: give at most one trailmap id (got 'alpha', 'beta')\n",
        ),
        (
            ["..\\escape"],
            "trailblaze check: invalid trailmap id '..\\\\escape': a trailmap id is one directory "
            "name (no '/', '\\' or '..'); a directory or trail file must exist\n",
        ),
        (["missing.trail.yaml"], "trailblaze check: missing.trail.yaml: no such file\n"),
        (["-", "-"], "trailblaze check: standard input ('-') can be read once\n"),
    ],
)
def test_usage_errors_exit_2_with_one_message(
    two_maps: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(two_maps)
    code, out, err = check(capsys, *args)
    assert (code, out) == (2, "")
    assert err == message.format(ws=two_maps)


def test_an_empty_trailmaps_directory_lists_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"trailmaps/alpha/trails/x.trail.yaml": "trail: []\n"})
    (tmp_path / "trailmaps/alpha/trails/x.trail.yaml").unlink()
    monkeypatch.chdir(tmp_path)
    code, _, err = check(capsys, "--workspace", str(tmp_path), "alpha")
    assert code == 2
    assert err.endswith("Available: <none>\n")


@pytest.mark.tsc
def test_trail_files_are_checked_alone_and_leave_the_workspace_state_alone(
    two_maps: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(
        two_maps,
        {
            "trailmaps/alpha/trails/good.trail.yaml": RECORDED.format(target="alpha", text="Buy"),
            "trailmaps/alpha/trails/typed.trail.yaml": RECORDED.format(target="alpha", text="[1]"),
        },
    )
    monkeypatch.chdir(two_maps / "trailmaps/alpha")
    code, report, _ = check(capsys, "trails/good.trail.yaml", "--format", "json")
    assert code == 0
    assert isinstance(report, dict)
    assert [(t["path"], t["status"]) for t in report["trails"]] == [
        ("trails/good.trail.yaml", "type-checked")
    ]
    code, report, _ = check(capsys, "trails/typed.trail.yaml", "trails/a.trail.yaml")
    assert code == 1
    assert isinstance(report, str)
    assert "type: trails/typed.trail.yaml:" in report
    assert "[TS2322]" in report
    assert "parse: trails/a.trail.yaml:4:5: trail[0]: unknown key 'stpe'" in report
    assert "beta" not in report
    # The workspace's own state was not touched: a full check still parses every trail.
    assert not (two_maps / ".trailblaze/check-state.json").exists()


@pytest.mark.tsc
def test_a_file_check_writes_the_tools_tsconfig_a_full_check_writes(
    two_maps: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file check (as the language server makes on every buffer) used to name its own
    # scratch directory's SDK in each trailmap's generated tools/tsconfig.json, and a full
    # check its own: each undid the other's, and the full check after a file check was no
    # narrow one (every trail parsed again).
    from trailblaze.check.run import last_stats  # noqa: PLC0415

    good = "trailmaps/alpha/trails/good.trail.yaml"
    write_tree(two_maps, {good: RECORDED.format(target="alpha", text="Buy")})
    monkeypatch.chdir(two_maps)
    assert check(capsys, "--format", "json")[0] == 1  # the fixture's two bad trails
    tsconfigs = sorted(two_maps.glob("trailmaps/*/tools/tsconfig.json"))
    assert tsconfigs  # the test sees something
    written = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tsconfigs}
    assert all(b'"../../../.trailblaze/sdk/dist/index"' in text for text, _ in written.values())
    write_tree(two_maps, {good: RECORDED.format(target="alpha", text="Buy milk")})
    assert check(capsys, good, "--format", "json")[0] == 0
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tsconfigs} == written
    assert check(capsys, "--format", "json")[0] == 1
    assert last_stats(two_maps / ".trailblaze").get("narrow") == 1  # the edited trail only


@pytest.mark.tsc
def test_a_file_outside_the_workspace_is_checked_as_a_copy(
    two_maps: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outside = write_tree(
        tmp_path / "elsewhere", {"x.trail.yaml": RECORDED.format(target="beta", text="[1]")}
    )
    monkeypatch.chdir(outside)
    code, report, _ = check(capsys, "x.trail.yaml", "--workspace", str(two_maps))
    assert code == 1
    assert isinstance(report, str)
    assert report.startswith("type: x.trail.yaml:")
    assert sorted(p.name for p in outside.iterdir()) == ["x.trail.yaml"]  # nothing beside it


def test_standard_input_is_a_trail_too(
    two_maps: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(two_maps)
    monkeypatch.setattr("sys.stdin", io.StringIO("config:\n  target: alpha\ntrail:\n  - stp: a\n"))
    code, report, _ = check(capsys, "-", "--format", "github")
    assert code == 1
    assert isinstance(report, str)
    assert report.splitlines()[-1] == (
        "::error file=<stdin>,line=4,col=5,title=trailblaze parse unknown-key::"
        "trail[0]: unknown key 'stp' (did you mean 'step'?)"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO("config:\n  target: alpha\ntrail:\n  - step: a\n"))
    code, out, _ = check(capsys, "-", "--stdin-filename", "trailmaps/alpha/new.trail.yaml")
    assert code == 0
    assert isinstance(out, str)
    assert out.endswith("passed\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("trail:\n  - stpe: a\n"))
    code, out, _ = check(capsys, "-", "--stdin-filename", "trailmaps/alpha/new.trail.yaml")
    assert code == 1
    assert isinstance(out, str)
    assert out.startswith("parse: trailmaps/alpha/new.trail.yaml:2:5: ")


@pytest.mark.tsc
def test_no_typecheck_leaves_out_the_tool_sources_diagnostics_only(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(
        compact_ws,
        {
            "trailmaps/app/tools/app_login.ts": """
                import { trailblaze } from "@trailblaze/scripting";
                export interface LoginInput { user: string }
                const broken: number = "not a number";
                export const app_login = trailblaze.tool<LoginInput>({ description: "Log in" }, async (i) => i.user + broken);
            """,
            "trailmaps/app/trails/a.trail.yaml": "config: {target: app}\ntrail:\n  - step: s\n    recording:\n      android:\n        - app_login: {user: 7}\n",
        },
    )
    monkeypatch.chdir(compact_ws)
    code, report, _ = check(capsys, "--format", "json")
    assert code == 1
    assert paths(report) == [
        "trailmaps/app/tools/app_login.ts",
        "trailmaps/app/trails/a.trail.yaml",
    ]
    code, report, _ = check(capsys, "--format", "json", "--no-typecheck")
    assert code == 1
    assert paths(report) == ["trailmaps/app/trails/a.trail.yaml"]  # the type gate still ran


@pytest.mark.tsc
def test_show_typed_tools_lists_each_tool_with_its_arguments(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(compact_ws)
    code, out, _ = check(capsys, "--show-typed-tools")
    assert code == 0
    assert isinstance(out, str)
    lines = out.splitlines()
    head = lines[0]
    assert head.startswith("typed tools of trailmap 'app': ")
    assert int(head.rsplit(" ", 1)[1]) > 20
    assert "  inputText(text, reasoning?)  [framework, framework]" in lines or any(
        line.startswith("  inputText(text") for line in lines
    )
    assert lines[-1] == "passed"


def test_trail_files_of_several_workspaces_are_checked_each_against_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a pre-commit hook passes in a monorepo: staged trails of two workspaces.
    write_tree(
        tmp_path,
        {
            "apps/a/trailmaps/a/trailmap.yaml": MINIMAL_MANIFEST.format(id="a"),
            "apps/b/trailmaps/b/trailmap.yaml": MINIMAL_MANIFEST.format(id="b"),
            "apps/a/trailmaps/a/x.trail.yaml": BAD.format(target="a"),
            "apps/b/trailmaps/b/y.trail.yaml": "config:\n  target: b\ntrail:\n  - step: fine\n",
            "apps/b/trailmaps/b/z.trail.yaml": BAD.format(target="b"),
        },
    )
    monkeypatch.chdir(tmp_path)
    code, report, _ = check(
        capsys,
        "apps/a/trailmaps/a/x.trail.yaml",
        "apps/b/trailmaps/b/y.trail.yaml",
        "apps/b/trailmaps/b/z.trail.yaml",
        "--format",
        "json",
    )
    assert code == 1
    assert paths(report) == ["apps/a/trailmaps/a/x.trail.yaml", "apps/b/trailmaps/b/z.trail.yaml"]
    assert isinstance(report, dict)
    assert [t["path"] for t in report["trails"]] == [
        "apps/a/trailmaps/a/x.trail.yaml",
        "apps/b/trailmaps/b/y.trail.yaml",
        "apps/b/trailmaps/b/z.trail.yaml",
    ]
    assert report["trailmaps"] == ["a", "b"]
    code, text, _ = check(
        capsys, "apps/a/trailmaps/a/x.trail.yaml", "apps/b/trailmaps/b/z.trail.yaml"
    )
    assert isinstance(text, str)
    assert "    4 |   - stpe: a" in text  # code frames from both workspaces
    assert text.count("    4 |   - stpe: a") == 4
    assert text.splitlines()[-1] == "FAILED: 4 finding(s) in 2 file(s) (exit 1)"
