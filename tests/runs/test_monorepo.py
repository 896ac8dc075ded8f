"""Many workspaces in one monorepo: one dodo.py, `doit check` over all, one alone, in parallel,
and `trailblaze check --all` with one merged report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_python, write_tree
from trailblaze.runs.monorepo import find_monorepo
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import WorkspaceError

MANIFEST = "id: {id}\ntarget:\n  display_name: {id}\n"
TRAIL = """
config:
  target: {id}
trail:
  - step: Go back
    recording:
      android:
        - pressBack: {{}}
        - inputText:
            text: {text}
"""
DODO = """
from trailblaze.doit_tasks import monorepo_config, monorepo_tasks

DOIT_CONFIG = monorepo_config()
globals().update(monorepo_tasks())
"""


def monorepo(root: Path, *, configured: bool) -> Path:
    """Three workspaces: two in the compact layout, one in Trailblaze's."""
    files: dict[str, str] = {
        "dodo.py": DODO,
        "apps/shop/trailmaps/shop/trailmap.yaml": MANIFEST.format(id="shop"),
        "apps/shop/trailmaps/shop/trails/buy.trail.yaml": TRAIL.format(id="shop", text="Buy"),
        "apps/notes/trailmaps/notes/trailmap.yaml": MANIFEST.format(id="notes"),
        "apps/notes/trailmaps/notes/trails/pin.trail.yaml": TRAIL.format(id="notes", text="Pin"),
        "legacy/trails/config/trailmaps/kiosk/trailmap.yaml": MANIFEST.format(id="kiosk"),
        "legacy/trails/kiosk/reset.trail.yaml": TRAIL.format(id="kiosk", text="Reset"),
        "docs/README.md": "not a workspace\n",
    }
    if configured:
        files["pyproject.toml"] = '[tool.trailblaze]\nworkspaces = ["apps/*", "legacy"]\n'
    return write_tree(root, files)


@pytest.mark.parametrize("configured", [True, False])
def test_workspaces_are_configured_or_discovered(tmp_path: Path, configured: bool) -> None:
    mono = find_monorepo(monorepo(tmp_path, configured=configured))
    assert [mono.name(ws) for ws in mono.workspaces] == ["apps/notes", "apps/shop", "legacy"]
    assert [ws.layout for ws in mono.workspaces] == ["compact", "compact", "trailblaze"]


def test_a_configured_workspace_that_is_not_one_is_an_error(tmp_path: Path) -> None:
    monorepo(tmp_path, configured=False)
    write_tree(tmp_path, {"pyproject.toml": '[tool.trailblaze]\nworkspaces = ["docs"]\n'})
    with pytest.raises(WorkspaceError) as caught:
        find_monorepo(tmp_path)
    assert str(caught.value) == (
        "'docs' is not a workspace: expected 'trailmaps/<id>/trailmap.yaml' or "
        "'trails/config/trailmaps/'"
    )
    write_tree(tmp_path, {"pyproject.toml": '[tool.trailblaze]\nworkspaces = ["nope/*"]\n'})
    with pytest.raises(WorkspaceError, match=r"^workspace 'nope/\*' matches no directory under "):
        find_monorepo(tmp_path)


def doit(root: Path, *args: str) -> tuple[int, str]:
    result = run_python(root, "-m", "doit", *args)
    return result.returncode, result.stdout + result.stderr


def ran(output: str) -> list[str]:
    """The check tasks doit ran (`.  name`), not those it skipped (`-- name`)."""
    return sorted(line[3:].strip() for line in output.splitlines() if line.startswith(".  check"))


@pytest.mark.tsc
def test_one_dodo_checks_every_workspace_alone_together_and_in_parallel(
    tsc: Compiler, tmp_path: Path
) -> None:
    root = monorepo(tmp_path, configured=True)
    code, out = doit(root, "list")
    assert code == 0, out
    assert {"check", "check:apps/shop", "check:apps/notes", "check:legacy"} <= {
        line.split()[0] for line in out.splitlines() if line.strip()
    }

    code, out = doit(root, "check")
    assert code == 0, out
    assert [t for t in ran(out) if t.endswith(":run")] == [
        "check:apps/notes:run",
        "check:apps/shop:run",
        "check:legacy:run",
    ]
    for ws in ("apps/shop", "apps/notes", "legacy/trails"):
        report = json.loads((root / ws / ".trailblaze" / "report.json").read_text("utf-8"))
        assert report["summary"]["type_checked"] == 1
    # One doit database, at the root.
    assert (root / ".trailblaze" / "doit.sqlite3").exists()
    assert not list(root.glob("*/*/.trailblaze/doit.sqlite3"))

    # Nothing changed: nothing runs.
    code, out = doit(root, "check")
    assert code == 0, out
    assert [t for t in ran(out) if t.endswith(":run")] == []

    # One workspace changes: only its check runs again, and its finding fails the build.
    write_tree(
        root,
        {"apps/notes/trailmaps/notes/trails/pin.trail.yaml": TRAIL.format(id="notes", text="[1]")},
    )
    code, out = doit(root, "check")
    assert code == 1, out
    assert [t for t in ran(out) if t.endswith(":run")] == ["check:apps/notes:run"]
    assert "apps/notes" not in out or "pin.trail.yaml" in out

    # One workspace alone.
    code, out = doit(root, "check:apps/shop")
    assert code == 0, out
    assert "notes" not in out

    # In parallel, from nothing.
    for ws in ("apps/shop", "apps/notes", "legacy/trails"):
        for state in (root / ws / ".trailblaze" / "state").glob("*"):
            state.unlink()
    (root / "apps/shop/trailmaps/shop/trails/buy.trail.yaml").touch()
    (root / "legacy/trails/kiosk/reset.trail.yaml").touch()
    code, out = doit(root, "-n", "3", "check")
    assert code == 1, out
    # The state store holds each check's recorded outcome too: without it, every workspace
    # checks again (the two touched ones and the unchanged one).
    assert [t for t in ran(out) if t.endswith(":run")] == [
        "check:apps/notes:run",
        "check:apps/shop:run",
        "check:legacy:run",
    ]

    # The command line: every workspace, one report.
    result = run_python(root, "-m", "trailblaze", "check", "--all", "--format", "json")
    assert result.returncode == 1, result.stderr
    merged = json.loads(result.stdout)
    assert [t["path"] for t in merged["trails"]] == [
        "apps/notes/trailmaps/notes/trails/pin.trail.yaml",
        "apps/shop/trailmaps/shop/trails/buy.trail.yaml",
        "legacy/trails/kiosk/reset.trail.yaml",
    ]
    assert merged["trailmaps"] == ["apps/notes:notes", "apps/shop:shop", "legacy:kiosk"]
    [finding] = [f for f in merged["findings"] if f["fatal"]]
    assert finding["path"] == "apps/notes/trailmaps/notes/trails/pin.trail.yaml"
    assert finding["code"] == "TS2322"


def test_make_tasks_with_a_list_names_each_workspace(tmp_path: Path) -> None:
    root = monorepo(tmp_path, configured=False)
    write_tree(
        root,
        {
            "dodo.py": (
                "from trailblaze.doit_tasks import make_tasks, monorepo_config\n"
                "DOIT_CONFIG = monorepo_config()\n"
                "globals().update(make_tasks(['apps/shop', 'legacy']))\n"
            )
        },
    )
    code, out = doit(root, "list", "--all")
    assert code == 0, out
    names = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert {"check", "check:apps/shop", "check:apps/shop:run", "check:legacy"} <= names
    assert not any("notes" in name for name in names)
    assert "surfaces:legacy:kiosk" in names


@pytest.mark.tsc
def test_doit_check_shows_every_workspace_in_one_report_when_the_first_fails(
    tsc: Compiler, tmp_path: Path
) -> None:
    root = monorepo(tmp_path, configured=True)
    # The first workspace and the last have a finding each: doit stops at a failing task, so
    # a `check` made of the workspaces' own would never have shown (or checked) the last.
    write_tree(
        root,
        {
            "apps/notes/trailmaps/notes/trails/pin.trail.yaml": TRAIL.format(
                id="notes", text="[1]"
            ),
            "legacy/trails/kiosk/reset.trail.yaml": TRAIL.format(id="kiosk", text="{a: 1}"),
        },
    )
    code, out = doit(root, "check", "--format", "json", "--output", "merged.json")
    assert code == 1, out
    assert [t for t in ran(out) if t.endswith(":run")] == [
        "check:apps/notes:run",
        "check:apps/shop:run",
        "check:legacy:run",
    ]
    # The text shows both findings, with their paths from the monorepo root, and one verdict.
    assert "apps/notes/trailmaps/notes/trails/pin.trail.yaml:" in out
    assert "legacy/trails/kiosk/reset.trail.yaml:" in out
    assert "trailblaze check: 2 finding(s)" in out
    # The file is the report `trailblaze check --all` gives.
    cli = run_python(root, "-m", "trailblaze", "check", "--all", "--format", "json")
    assert cli.returncode == 1, cli.stderr
    assert json.loads((root / "merged.json").read_text("utf-8")) == json.loads(cli.stdout)
    assert [f["path"] for f in json.loads(cli.stdout)["findings"] if f["fatal"]] == [
        "apps/notes/trailmaps/notes/trails/pin.trail.yaml",
        "legacy/trails/kiosk/reset.trail.yaml",
    ]

    # Nothing changed: no workspace checks again, and the report still stands.
    again_code, again = doit(root, "check")
    assert again_code == 1, again
    assert [t for t in ran(again) if t.endswith(":run")] == []
    assert "legacy/trails/kiosk/reset.trail.yaml:" in again

    # `--output` alone writes the text there, and the text still shows.
    code, out = doit(root, "check", "--output", "report.txt")
    assert code == 1, out
    assert "legacy/trails/kiosk/reset.trail.yaml:" in out
    written = (root / "report.txt").read_text("utf-8")
    assert "apps/notes/trailmaps/notes/trails/pin.trail.yaml:" in written
    assert "legacy/trails/kiosk/reset.trail.yaml:" in written

    # One workspace alone shows and fails for its own finding only.
    code, out = doit(root, "check:legacy")
    assert code == 1, out
    assert "reset.trail.yaml" in out
    assert "pin.trail.yaml" not in out

    # Both fixed: the two workspaces check again, then the whole check is up to date.
    write_tree(
        root,
        {
            "apps/notes/trailmaps/notes/trails/pin.trail.yaml": TRAIL.format(
                id="notes", text="Pin"
            ),
            "legacy/trails/kiosk/reset.trail.yaml": TRAIL.format(id="kiosk", text="Reset"),
        },
    )
    code, out = doit(root, "check")
    assert code == 0, out
    assert [t for t in ran(out) if t.endswith(":run")] == [
        "check:apps/notes:run",
        "check:legacy:run",
    ]
    code, out = doit(root, "check")
    assert code == 0, out
    assert ran(out) == []
    assert "-- check: up to date, apps/notes: 1 trailmaps, 1 trails" in out


def test_doit_surfaces_writes_every_workspace_when_the_first_fails(tmp_path: Path) -> None:
    root = monorepo(tmp_path, configured=True)
    write_tree(root, {"apps/notes/trailmaps/notes/trailmap.yaml": "id: notes\ntarget: [\n"})
    code, out = doit(root, "surfaces")
    assert code == 1, out
    assert "trailblaze surfaces: apps/notes: 1 problem(s) in trailmap.yaml" in out
    for tools in ("apps/shop/trailmaps/shop/tools", "legacy/trails/config/trailmaps/kiosk/tools"):
        assert (root / tools / "trailblaze-client.d.ts").is_file(), tools
    assert not (root / "apps/notes/trailmaps/notes/tools/trailblaze-client.d.ts").exists()
