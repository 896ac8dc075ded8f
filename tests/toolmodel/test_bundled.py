"""Trailmaps and baked targets shipped in installed packages (entry point group
`trailblaze.trailmaps`) get validation-only surfaces in the scratch directory (§4.9)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_python, write_tree
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolmodel.bundled import discover
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.toolmodel.sources import ENTRY_POINT_GROUP

KIOSK = """
    id: kiosk
    display_name: Kiosk
    platforms:
      android:
        tool_sets: [navigation]
    tools:
      - name: kiosk_reset
        description: Reset the kiosk.
        inputSchema:
          type: object
          properties:
            hard: {type: boolean}
          required: [hard]
"""
KIOSK_TRAIL = """\
config:
  target: kiosk
trail:
  - step: Reset
    recording:
      android:
        - kiosk_reset:
            hard: "yes"
"""
"""A trail whose call passes a string where the kiosk target's `hard` is a boolean (8:19)."""
SHELF = "id: shelf\ntarget:\n  display_name: Shelf\n"


def make_package(site: Path) -> Path:
    """An installed distribution `kioskpkg` whose entry point names its package directory."""
    write_tree(
        site,
        {
            "kioskpkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: kioskpkg\nVersion: 1.0\n",
            "kioskpkg-1.0.dist-info/entry_points.txt": f"[{ENTRY_POINT_GROUP}]\nkiosk = kioskpkg\n",
            "kioskpkg/__init__.py": "",
            "kioskpkg/trailmaps/shelf/trailmap.yaml": SHELF,
            "kioskpkg/targets/kiosk.yaml": KIOSK,
        },
    )
    return site / "kioskpkg"


def trailblaze(cwd: Path, site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Keeps the test session's toolchain directory: `check` type-checks with its tsc.
    return run_python(cwd, "-m", "trailblaze", *args, env={"PYTHONPATH": str(site)})


def test_discover_reads_trailmaps_and_baked_targets(tmp_path: Path) -> None:
    package = make_package(tmp_path / "site")
    write_tree(
        tmp_path,
        {
            "other/targets/kiosk.yaml": "id: kiosk\ndisplay_name: Second\n",
            "other/targets/broken.yaml": "id: broken\ntools:\n  - name: 9bad\n",
        },
    )
    found = discover(load_catalog(), sources=[("kiosk", package), ("other", tmp_path / "other")])
    assert sorted(found.trailmaps) == ["kiosk", "shelf"]
    kiosk = found.trailmaps["kiosk"]
    assert (kiosk.origin, kiosk.manifest.display_name) == ("kiosk", "Kiosk")  # first source wins
    assert [n.value for n in kiosk.manifest.own_tool_sets] == ["navigation"]
    assert kiosk.tools is not None
    reset = kiosk.tools.tools["kiosk_reset"]
    assert (reset.kind, reset.input_schema) == (
        "descriptor",
        {"type": "object", "properties": {"hard": {"type": "boolean"}}, "required": ["hard"]},
    )
    assert found.trailmaps["shelf"].directory == package / "trailmaps/shelf"
    assert [f.text.removeprefix(tmp_path.as_posix() + "/") for f in found.findings] == [
        "other/targets/broken.yaml:3:11: tools[0].name: '9bad' is not a valid name"
    ]


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    make_package(site)
    return site


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "ws",
        {"trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: App\n"},
    )


@pytest.mark.tsc
def test_check_writes_validation_surfaces_for_an_installed_package(
    tsc: Compiler, site: Path, workspace: Path
) -> None:
    write_tree(
        workspace,
        {"trailmaps/app/trails/kiosk.trail.yaml": KIOSK_TRAIL},
    )
    result = trailblaze(workspace, site, "check", ".", "--format", "json")
    assert result.returncode == 1, result.stdout + result.stderr
    base = workspace / ".trailblaze" / "trail-validation"
    assert sorted(p.name for p in base.iterdir()) == ["kiosk", "shelf"]
    tools = base / "kiosk" / "tools"
    assert sorted(p.name for p in tools.iterdir()) == [
        "trail.schema.json",
        "trailblaze-client.d.ts",
        "trailblaze-tool-descriptors.json",
        "tsconfig.json",
    ]
    assert not (base / "kiosk" / ".gitignore").exists()
    dts = (tools / "trailblaze-client.d.ts").read_text()
    assert "    kiosk_reset: {\n      args: {\n        hard: boolean;\n      };" in dts
    # The validation surface compiles on its own, through its own tsconfig.
    compiled = subprocess.run(
        [*tsc.argv_prefix, "-p", str(tools / "tsconfig.json"), "--noEmit", "--pretty", "false"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert (compiled.returncode, compiled.stdout) == (0, "")
    # ... and trails targeting the packaged target are checked against it.
    report = json.loads(result.stdout)
    assert [
        (f["kind"], f["path"], f["line"], f["tool"], f["message"]) for f in report["findings"]
    ] == [
        (
            "type",
            "trailmaps/app/trails/kiosk.trail.yaml",
            8,
            "kiosk_reset",
            "Type 'string' is not assignable to type 'boolean'.",
        )
    ]


def test_a_workspace_trailmap_with_the_same_id_wins(site: Path, workspace: Path) -> None:
    write_tree(
        workspace, {"trailmaps/kiosk/trailmap.yaml": "id: kiosk\ntarget:\n  display_name: Ours\n"}
    )
    result = trailblaze(workspace, site, "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr
    base = workspace / ".trailblaze" / "trail-validation"
    assert sorted(p.name for p in base.iterdir()) == ["shelf"]
    ours = (workspace / "trailmaps/kiosk/tools/trailblaze-client.d.ts").read_text()
    assert "kiosk_reset" not in ours


def test_surfaces_writes_validation_surfaces_for_an_installed_package(
    site: Path, workspace: Path
) -> None:
    result = trailblaze(workspace, site, "surfaces", ".")
    assert result.returncode == 0, result.stdout + result.stderr
    tools = workspace / ".trailblaze" / "trail-validation" / "kiosk" / "tools"
    assert (tools / "trailblaze-client.d.ts").is_file()
    client = (tools / "trailblaze-client.d.ts").read_text(encoding="utf-8")
    # The package's own tool, typed from its baked target's inputSchema.
    assert (
        "     * Reset the kiosk.\n"
        "     */\n"
        "    kiosk_reset: {\n"
        "      args: {\n"
        "        hard: boolean;\n"
        "      };\n"
        "      result: string;\n"
        "    };\n"
    ) in client
