"""Which files a replay picks up: the workspace's own scan, not a second walk."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakeadb import FakeDevice, ModelDevice
from tests.conftest import MINIMAL_MANIFEST, write_tree
from trailblaze.replay import trailfiles, trailmaps
from trailblaze.replay.request import ReplayUsageError
from trailblaze.replay.run import ReplayRequest, replay
from trailblaze.workspace import scan

from .support import FAST, SAMPLE_APP, trail_text

PROJECT_CONFIG = "defaults:\n  target: app\n"


def _replay(*trails: Path, workspace: Path | None = None) -> list[str]:
    device = ModelDevice(FakeDevice.load(SAMPLE_APP))
    request = ReplayRequest(trails=trails, workspace=workspace)
    run = replay(request, device=device, options=FAST)
    assert run.exit_code == 0, [t.findings for t in run.trails]
    return [t.path for t in run.trails]


def test_a_directory_with_the_project_config_does_not_replay_it(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "trailblaze.yaml": PROJECT_CONFIG,
            "a.trail.yaml": trail_text("- hideKeyboard: {}"),
        },
    )
    assert [Path(p).name for p in _replay(tmp_path)] == ["a.trail.yaml"]


def test_a_directory_in_a_workspace_skips_its_config_and_its_excluded_dirs(
    tmp_path: Path,
) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.trailblaze]\ntrailmaps = "ui/maps"\ntrails = "ui"\n'
            'exclude = ["fixtures"]\n',
            "ui/maps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app"),
            "ui/trailblaze.yaml": PROJECT_CONFIG,
            "ui/flows/a.trail.yaml": trail_text("- hideKeyboard: {}"),
            "ui/fixtures/b.trail.yaml": "not even a trail",
        },
    )
    assert _replay(tmp_path / "ui") == ["ui/flows/a.trail.yaml"]
    assert _replay(tmp_path / "ui" / "flows") == ["ui/flows/a.trail.yaml"]
    # The workspace root holds the trails directory: the same selection.
    assert _replay(tmp_path) == ["ui/flows/a.trail.yaml"]


@pytest.mark.parametrize("named", [False, True])
def test_the_workspace_is_scanned_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: bool
) -> None:
    write_tree(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app"),
            "trailmaps/app/a.trail.yaml": trail_text("- hideKeyboard: {}"),
        },
    )
    scans: list[Path] = []

    def counting_scan(ws):  # type: ignore[no-untyped-def]
        scans.append(ws.root)
        return scan(ws)

    monkeypatch.setattr(trailfiles, "scan", counting_scan)
    monkeypatch.setattr(trailmaps, "scan", counting_scan)
    if named:
        assert _replay(tmp_path / "trailmaps") == ["trailmaps/app/a.trail.yaml"]
    else:
        assert _replay(workspace=tmp_path) == ["trailmaps/app/a.trail.yaml"]
    assert scans == [tmp_path]


def test_replay_reads_the_trailmaps_of_the_config_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tool the trail calls is in the trailmap of the directory TRAILBLAZE_CONFIG_DIR
    # names, not in the workspace's own trailmap of the same name.
    hide = (
        "id: app_hide\nclass: xyz.block.trailblaze.toolcalls.commands.HideKeyboardTrailblazeTool\n"
    )
    write_tree(
        tmp_path,
        {
            "trails/config/trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app"),
            "examples/x/trails/config/trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(
                id="app"
            ),
            "examples/x/trails/config/trailmaps/app/tools/app_hide.tool.yaml": hide,
            "trails/a.trail.yaml": trail_text("- app_hide: {}", config="config:\n  target: app\n"),
        },
    )
    monkeypatch.chdir(tmp_path)
    device = ModelDevice(FakeDevice.load(SAMPLE_APP))
    request = ReplayRequest(trails=(tmp_path / "trails",), workspace=None)
    without = replay(request, device=device, options=FAST)
    assert without.exit_code != 0
    [failed] = without.trails
    assert "'app_hide'" in repr(failed.steps), failed.steps  # not a tool of the root's trailmap
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", "examples/x/trails/config")
    assert _replay(tmp_path / "trails") == ["trails/a.trail.yaml"]
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", "examples/nowhere")
    with pytest.raises(ReplayUsageError, match="TRAILBLAZE_CONFIG_DIR=examples/nowhere: "):
        replay(request, device=device, options=FAST)
