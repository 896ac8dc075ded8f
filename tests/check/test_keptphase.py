"""A narrow one-edit check takes the stages and the type gate's preparation the last recording
check kept (`trailblaze/check/keptphase.py`), and only while everything they were made from is
as it was; its report is a cold check's either way."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.check.test_narrow import CHECKOUT, SEARCH, TOOL, check, cold, edit, narrow
from tests.conftest import DATA, ROOT
from tests.toolmodel.test_bundled import KIOSK
from trailblaze.check.run import last_stats
from trailblaze.state.kept import SECRET_NAME, open_sealed, seal
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import Compiler

pytestmark = pytest.mark.tsc

MANIFEST = "trailmaps/notes/trailmap.yaml"
SURFACE = "trailmaps/notes/tools/trailblaze-client.d.ts"


def kept(ws: Path) -> bool | None:
    """Whether the last check took a kept phase (None: it was no narrow check)."""
    found: bool | None = last_stats(ws / ".trailblaze").get("kept_phase")
    return found


def kept_file(ws: Path) -> Path:
    return Layout(ws / ".trailblaze").kept_phase


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home / "trailblaze-doit"


@pytest.fixture
def ws(tmp_path: Path, tsc: Compiler, user_cache: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", root / "trailmaps")
    check(root)
    assert kept_file(root).is_file()
    return root


_N = iter(range(1_000_000))


def _edit_trail(ws: Path) -> None:
    """A new text each time: a one-trail edit."""
    text = (ws / CHECKOUT).read_text("utf-8")
    start = text.index("textRegex: Not now")
    end = text.index("\n", start)
    (ws / CHECKOUT).write_text(f"{text[:start]}textRegex: Not now {next(_N)}{text[end:]}", "utf-8")


def test_a_one_edit_check_takes_the_kept_phase_and_reports_as_a_cold_check(
    ws: Path, tmp_path: Path
) -> None:
    edit(ws, SEARCH, "text: Packing list", "text: [1]")  # a type error
    after = check(ws)
    assert (narrow(ws), kept(ws)) == (1, True)
    stats = last_stats(ws / ".trailblaze")
    assert stats["decl_runs"] == 0
    assert after == cold(ws, tmp_path, "cold")
    assert "TB-TYPE" in after or "type" in after
    # ... and the next one too (a narrow run leaves the kept phase as it is).
    before = kept_file(ws).read_bytes()
    _edit_trail(ws)
    again = check(ws)
    assert (narrow(ws), kept(ws)) == (1, True)
    assert again == cold(ws, tmp_path, "cold-again")
    assert kept_file(ws).read_bytes() == before


def _tool(ws: Path) -> None:
    edit(ws, TOOL, "pin?: boolean;", "pin?: boolean;\n  /** Scroll to it. */\n  scroll?: boolean;")


def _manifest(ws: Path) -> None:
    (ws / MANIFEST).write_text((ws / MANIFEST).read_text("utf-8") + "\n# edited\n", "utf-8")


def _surface_changed(ws: Path) -> None:
    path = ws / SURFACE
    path.write_text(path.read_text("utf-8").replace("string", "number"), "utf-8")


def _surface_deleted(ws: Path) -> None:
    (ws / SURFACE).unlink()


def _declaration(ws: Path) -> Path:
    found = sorted((ws / ".trailblaze" / "typegate" / "tooldecl").rglob("notes_openNote.d.ts"))
    assert len(found) == 1
    return found[0]


def _declaration_changed(ws: Path) -> None:
    path = _declaration(ws)
    path.write_text(path.read_text("utf-8").replace("boolean", "string"), "utf-8")


def _declaration_deleted(ws: Path) -> None:
    _declaration(ws).unlink()


def _flipped(ws: Path) -> None:
    path = kept_file(ws)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))


def _other_secret(ws: Path) -> None:
    # A valid sealed file with the same header, made with another secret.
    path = kept_file(ws)
    secret = (Path(os.environ["XDG_CACHE_HOME"]) / "trailblaze-doit" / SECRET_NAME).read_bytes()
    sealed = open_sealed(path, secret, str(path))
    assert sealed is not None
    body = pickle.loads(sealed.body)
    path.write_bytes(seal(os.urandom(32), str(path), sealed.header, body))


def _secret_missing(ws: Path) -> None:
    (Path(os.environ["XDG_CACHE_HOME"]) / "trailblaze-doit" / SECRET_NAME).unlink()


def _secret_different(ws: Path) -> None:
    path = Path(os.environ["XDG_CACHE_HOME"]) / "trailblaze-doit" / SECRET_NAME
    path.write_bytes(os.urandom(32))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


NOT_KEPT: dict[str, tuple[Callable[[Path], None], int | None]] = {
    # (what changed, how many trails the check then checks narrowly: None, all of them)
    "a tool file": (_tool, None),
    "the manifest": (_manifest, None),
    "the generated surface changed": (_surface_changed, 1),
    "the generated surface deleted": (_surface_deleted, 1),
    "a declaration under .trailblaze changed": (_declaration_changed, 1),
    "a declaration under .trailblaze deleted": (_declaration_deleted, 1),
    "the kept file's bytes flipped": (_flipped, 1),
    "the kept file sealed with another secret": (_other_secret, 1),
    "the secret missing": (_secret_missing, 1),
    "the secret different": (_secret_different, 1),
}


@pytest.mark.parametrize("name", NOT_KEPT)
def test_the_kept_phase_is_not_taken_when_what_it_was_made_from_changed(
    ws: Path, tmp_path: Path, name: str
) -> None:
    change, narrowly = NOT_KEPT[name]
    change(ws)
    edit(ws, SEARCH, "text: Packing list", "text: [1]")
    after = check(ws)
    assert narrow(ws) == narrowly
    assert kept(ws) is (None if narrowly is None else False)
    assert after == cold(ws, tmp_path, "cold")
    if name.startswith("the generated surface"):
        fresh = tmp_path / "cold" / SURFACE
        assert (ws / SURFACE).read_bytes() == fresh.read_bytes()  # written again
    if name.startswith("a declaration"):
        assert _declaration(ws).read_bytes() == _declaration(tmp_path / "cold").read_bytes()
    # What this check built is kept in its place: the next edit takes it.
    _edit_trail(ws)
    again = check(ws)
    assert (narrow(ws), kept(ws)) == (1, True)
    assert again == cold(ws, tmp_path, "cold-again")


def test_other_options_do_not_take_the_kept_phase(ws: Path, tmp_path: Path) -> None:
    edit(ws, SEARCH, "text: Packing list", "text: [1]")
    lenient = check(ws, strict=False)
    assert (narrow(ws), kept(ws)) == (None, None)
    fresh = tmp_path / "fresh"
    shutil.copytree(ws, fresh, ignore=shutil.ignore_patterns(".trailblaze"))
    assert lenient == check(fresh, strict=False)
    # Kept under those options now; the default ones are a full check again.
    _edit_trail(ws)
    assert check(ws, strict=False) == check(fresh_copy(ws, tmp_path / "fresh2"), strict=False)
    assert (narrow(ws), kept(ws)) == (1, True)
    _edit_trail(ws)
    check(ws)
    assert (narrow(ws), kept(ws)) == (None, None)


def fresh_copy(ws: Path, where: Path) -> Path:
    shutil.copytree(ws, where, ignore=shutil.ignore_patterns(".trailblaze"))
    return where


def test_a_baked_target_that_appears_is_not_taken_from_the_kept_phase(
    tmp_path: Path, tsc: Compiler, user_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", root / "trailmaps")
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", str(root))
    edit(root, CHECKOUT, "target: shop", "target: kiosk")
    first = json.loads(check(root))
    assert [t["reason"] for t in first["trails"] if t["path"] == CHECKOUT] == ["unknown target"]
    (root / "targets").mkdir()
    (root / "targets" / "kiosk.yaml").write_text(KIOSK, "utf-8")
    edit(root, SEARCH, "text: Packing list", "text: [1]")
    after = check(root)
    assert (narrow(root), kept(root)) == (None, None)
    assert [t["reason"] for t in json.loads(after)["trails"] if t["path"] == CHECKOUT] != [
        "unknown target"
    ]
    fresh = fresh_copy(root, tmp_path / "fresh")
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", str(fresh))
    assert after == check(fresh)


def test_a_planted_kept_file_is_never_loaded(ws: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"

    class Planted:
        def __reduce__(self) -> tuple[object, tuple[str, str]]:
            return (open, (str(marker), "w"))

    path = kept_file(ws)
    our_prefix = path.read_bytes()[:64]  # our magic and a tag of another file
    for raw in (
        pickle.dumps(Planted()),
        our_prefix + pickle.dumps(Planted()),
        seal(os.urandom(32), str(path), {"format": 1}, Planted()),
    ):
        path.write_bytes(raw)
        _edit_trail(ws)
        after = check(ws)
        assert not marker.exists()
        assert (narrow(ws), kept(ws)) == (1, False)
        assert after == cold(ws, tmp_path, f"cold-{len(raw)}")


def test_without_a_secret_nothing_is_kept_and_the_checks_are_as_before(
    tmp_path: Path, tsc: Compiler, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x", "utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    root = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", root / "trailmaps")
    check(root)
    assert not kept_file(root).exists()
    edit(root, SEARCH, "text: Packing list", "text: [1]")
    after = check(root)
    assert (narrow(root), kept(root)) == (1, False)
    assert after == cold(root, tmp_path, "cold")


def test_something_of_someone_elses_in_the_kept_files_place_is_left_alone(
    tmp_path: Path, tsc: Compiler, user_cache: Path
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", root / "trailmaps")
    planted = kept_file(root)
    planted.mkdir(parents=True)
    (planted / "theirs.txt").write_text("not ours\n", "utf-8")
    check(root)
    edit(root, SEARCH, "text: Packing list", "text: [1]")
    after = check(root)
    assert (narrow(root), kept(root)) == (1, False)
    assert after == cold(root, tmp_path, "cold")
    assert (planted / "theirs.txt").read_text("utf-8") == "not ours\n"


PLAYWRIGHT_TRAIL = """\
- config:
    id: playwrightSample/open
    target: playwrightSample
    title: Open the fixture
- prompts:
    - step: Open the fixture and see its text
      recording:
        tools:
          - playwrightSample_web_openFixtureAndVerifyText:
              text: Hello
"""


def test_a_workspace_with_scripted_tools_and_their_unit_tests_takes_the_kept_phase(
    tmp_path: Path, tsc: Compiler, user_cache: Path
) -> None:
    # Upstream's playwright-native sample (tests/data/scripted): scripted tools whose
    # declarations the preparation emits, and three unit-test files, run on every check.
    root = tmp_path / "ws"
    shutil.copytree(DATA / "scripted" / "playwright-native", root)
    trail = root / "trails/config/trailmaps/playwrightSample/trails/open.trail.yaml"
    trail.parent.mkdir()
    trail.write_text(PLAYWRIGHT_TRAIL, "utf-8")
    check(root)
    scratch = root / "trails" / ".trailblaze"
    trail.write_text(PLAYWRIGHT_TRAIL.replace("text: Hello", "text: 1"), "utf-8")  # a type error
    after = check(root)
    stats = last_stats(scratch)
    assert (stats.get("narrow"), stats.get("kept_phase")) == (1, True)
    assert (stats["test_files"], stats["decl_runs"]) == (3, 0)
    assert "playwrightSample_web_openFixtureAndVerifyText" in after
    # A check from nothing, checked twice: its unit tests' results from the cache, as ours.
    fresh = fresh_copy(root, tmp_path / "fresh")
    check(fresh)
    assert without_durations(after) == without_durations(check(fresh))


def without_durations(report: str) -> object:
    """The report but how long each unit test took when it ran (kept with its cached result)."""
    data = json.loads(report)
    for test in data["tests"]:
        test.pop("duration")
    return data


def test_with_the_type_gate_off_the_stages_are_kept_without_a_preparation(
    tmp_path: Path, tsc: Compiler, user_cache: Path
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", root / "trailmaps")
    check(root, typecheck=False)
    edit(root, SEARCH, "direction: DOWN\n", "direction: [DOWN\n")  # a parse error
    after = check(root, typecheck=False)
    assert (narrow(root), kept(root)) == (1, True)
    assert after == check(fresh_copy(root, tmp_path / "fresh"), typecheck=False)
    # The gate on again: the stages kept without it are not taken.
    edit(root, SEARCH, "direction: [DOWN\n", "direction: DOWN\n")
    check(root)
    assert (narrow(root), kept(root)) == (None, None)
