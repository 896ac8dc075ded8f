"""The wheel a user installs: what it carries, what it leaves out, what it declares.

Built for real (`pip wheel`, the project's own build backend), once for the module, from a copy
of what a clone holds: building in the checkout would reuse its `build/` directory, where a
module deleted since the last build still lies.
"""

from __future__ import annotations

import email.parser
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from email.message import Message
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow
_UNTRACKED = shutil.ignore_patterns("__pycache__", "*.pyc")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    out = tmp_path_factory.mktemp("wheel")
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "trailblaze", source / "trailblaze", ignore=_UNTRACKED)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("trailblaze_doit-*.whl")
    with zipfile.ZipFile(built) as archive:
        yield archive


def metadata(wheel: zipfile.ZipFile) -> Message:
    (name,) = (n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    return email.parser.Parser().parsestr(wheel.read(name).decode("utf-8"))


def test_the_wheel_carries_the_license_and_the_typing_marker(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    (license_file,) = (n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert wheel.read(license_file) == (ROOT / "LICENSE").read_bytes()
    assert "trailblaze/py.typed" in names
    # The data the package reads at run time.
    for data in ("catalog.json", "trailmap.schema.json", "scripting/index.d.ts"):
        assert f"trailblaze/data/{data}" in names


def test_the_wheel_holds_the_package_and_no_test_support(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/")[0] for name in wheel.namelist() if ".dist-info/" not in name}
    assert tops == {"trailblaze"}
    # The fake adb device is test support beside the package, not part of it.
    assert not [n for n in wheel.namelist() if "fake" in n]
    sources = {n for n in wheel.namelist() if n.startswith("trailblaze/") and n.endswith(".py")}
    on_disk = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "trailblaze").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert sources == on_disk


def test_the_metadata_declares_pythons_platform_license_and_a_doit_range(
    wheel: zipfile.ZipFile,
) -> None:
    meta = metadata(wheel)
    assert meta["Requires-Python"] == ">=3.11"
    assert meta["License-Expression"] == "Apache-2.0"
    classifiers = meta.get_all("Classifier") or []
    assert "Operating System :: POSIX" in classifiers
    assert not [
        c for c in classifiers if "Windows" in c or c == "Operating System :: OS Independent"
    ]
    assert "Programming Language :: Python :: 3.11" in classifiers
    requires = meta.get_all("Requires-Dist") or []
    (doit,) = (r for r in requires if r.startswith("doit"))
    # A range a monorepo's own doit can meet, not one exact version.
    assert "==" not in doit
    assert ">=0.36" in doit


def test_the_entry_point_runs_the_cli(wheel: zipfile.ZipFile) -> None:
    (name,) = (n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt"))
    text = wheel.read(name).decode("utf-8")
    assert "trailblaze = trailblaze.cli.main:program" in text
    done = subprocess.run(
        [sys.executable, "-m", "trailblaze", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path("/"),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("trailblaze")
