"""The server's session over the cases' workspace: every trail case whose findings come from
the type gate gives them through the kept workspace phase and the warm compiler, exactly as
`tests/test_cases.py` has the command line give them; the phase and the compiler are made once
and made again when an input changes, even without the client's notice."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cases import TRAILS_DIR, Case, build_workspace, differences, discover, failure_message
from tests.conftest import dedent, isolate_env, write_tree
from tests.lsp.trails import PICKS
from tests.toolmodel.test_bundled import KIOSK, KIOSK_TRAIL, make_package
from trailblaze.lsp.session import Session
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import find_workspace, scan_trailmaps

pytestmark = pytest.mark.tsc

ALL = discover()
TYPED = [
    case
    for case in ALL
    if case.path.endswith(".trail.yaml")
    and case.path.startswith(TRAILS_DIR)
    and case.xfail is None
    and any(e.kind == "type" for e in case.expected)
]


@pytest.fixture(scope="module")
def workspace(tsc: Compiler, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_workspace(tmp_path_factory.mktemp("session") / "ws", ALL)


@pytest.fixture(scope="module")
def session(workspace: Path) -> Iterator[Session]:
    with pytest.MonkeyPatch.context() as mp:
        isolate_env(mp)
        found = Session(find_workspace(workspace, explicit=True))
        yield found
        found.close()


@pytest.mark.parametrize("case", TYPED, ids=[c.name for c in TYPED])
def test_each_type_case_gives_its_findings_through_the_warm_compiler(
    session: Session, workspace: Path, case: Case
) -> None:
    path = workspace / case.path
    verdict = session.check(path, case.source.read_text("utf-8"))
    mine = [f for f in verdict.findings if f.path == case.path]
    problems = [p for p in differences(case, mine, None) if not p.startswith("status:")]
    assert not problems, failure_message(case, problems, mine)
    # One phase and one compiler for every case (a new text each: no verdict kept answered).
    assert verdict.compiled
    assert session.phases_made == 1
    assert session.warm_starts == 1


def test_an_input_changed_on_disk_makes_a_new_phase_and_compiler(
    session: Session, workspace: Path
) -> None:
    tool = workspace / "trailmaps/cases/tools/cases_pickDate.ts"
    source = tool.read_text("utf-8")
    path = workspace / TRAILS_DIR / "session-picks.trail.yaml"
    assert session.check(path, PICKS).findings == ()
    made, starts = session.phases_made, session.warm_starts
    try:
        tool.write_text(source.replace("  day: number;", "  day: string;"), "utf-8")
        # No notice from the client (`refresh`): the inputs' stamps tell the change.
        changed = session.check(path, PICKS + "\n")
        assert [(f.code, f.line) for f in changed.findings] == [("TS2322", 8)]
        assert (session.phases_made, session.warm_starts) == (made + 1, starts + 1)
    finally:
        tool.write_text(source, "utf-8")
        os.utime(tool, ns=(1, 1))  # another stamp again, whatever the clock's resolution
    assert session.check(path, PICKS + "\n\n").findings == ()
    assert (session.phases_made, session.warm_starts) == (made + 2, starts + 2)


def test_a_tool_file_added_to_a_listed_directory_is_seen(compact_ws: Path) -> None:
    write_tree(compact_ws, {"trailmaps/app/tools/app_tap.tool.yaml": tool_yaml("app_tap")})
    # Directories changed long ago: the session keeps the walk's listing between checks.
    for directory in [compact_ws / "trailmaps", *(compact_ws / "trailmaps").rglob("*")]:
        if directory.is_dir():
            os.utime(directory, ns=(10**18, 10**18))
    path = compact_ws / "trailmaps/app/trails/wave.trail.yaml"
    text = WAVE
    session = Session(find_workspace(compact_ws, explicit=True))
    try:
        unknown = session.check(path, text).findings
        assert [f.message for f in unknown if "app_wave" in f.message], unknown
        assert "app_wave" not in session.model().tools("app")  # what completion offers
        assert session.check(path, text + "\n").findings == unknown
        made = session.phases_made
        tool = compact_ws / "trailmaps/app/tools/app_wave.tool.yaml"
        tool.write_text(tool_yaml("app_wave"), "utf-8")
        # A file added changes its directory, not a file the last walk listed.
        assert session.check(path, text + "\n\n").findings == ()
        assert session.phases_made == made + 1
        # Completion and hover follow the check, without the client's notice either.
        assert "app_wave" in session.model().tools("app")
    finally:
        session.close()


def test_a_directory_changed_just_now_is_read_again_not_walked(
    compact_ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory changed within the file system clock's tick of a walk may change again with
    its `st_mtime` unchanged: its entries are read again at each edit (not the whole walk),
    and a tool added then is seen."""
    write_tree(compact_ws, {"trailmaps/app/tools/app_tap.tool.yaml": tool_yaml("app_tap")})
    just_now = time.time_ns() + 60 * 10**9  # recent for the whole test (a clock in the future)

    def changed_just_now() -> None:
        for directory in [compact_ws / "trailmaps", *(compact_ws / "trailmaps").rglob("*")]:
            if directory.is_dir():
                os.utime(directory, ns=(just_now, just_now))

    walks: list[int] = []

    def counted(*args: Any) -> Any:
        walks.append(1)
        return scan_trailmaps(*args)

    monkeypatch.setattr("trailblaze.lsp.session.scan_trailmaps", counted)
    path = compact_ws / "trailmaps/app/trails/wave.trail.yaml"
    session = Session(find_workspace(compact_ws, explicit=True))
    try:
        unknown = session.check(path, WAVE).findings  # writes the surfaces into tools/
        assert [f.message for f in unknown if "app_wave" in f.message], unknown
        changed_just_now()
        assert session.check(path, WAVE + "\n").findings == unknown
        walked = len(walks)
        assert session.check(path, WAVE + "\n\n").findings == unknown
        assert len(walks) == walked  # the listing kept, its recent directories read again
        tools = compact_ws / "trailmaps/app/tools"
        (tools / "app_wave.tool.yaml").write_text(tool_yaml("app_wave"), "utf-8")
        os.utime(tools, ns=(just_now, just_now))  # in the same tick: `st_mtime` as it was
        assert session.check(path, WAVE + "\n\n\n").findings == ()
        assert len(walks) > walked
    finally:
        session.close()


def tool_yaml(name: str) -> str:
    return f"id: {name}\ndescription: Taps.\ntools:\n  - tapOnElementWithText:\n      text: Hi\n"


WAVE = dedent(
    """
    config:
      target: app
    trail:
      - step: Wave
        recording:
          android:
            - app_wave: {}
    """
)


def test_a_baked_target_that_appears_or_changes_is_seen_by_the_next_edit(
    tsc: Compiler, tmp_path: Path
) -> None:
    root = write_tree(
        tmp_path / "ws",
        {"trails/config/trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: App\n"},
    )
    for directory in [root, *root.rglob("*")]:
        if directory.is_dir():  # changed long ago: the session keeps its listing between edits
            os.utime(directory, ns=(10**18, 10**18))
    path = root / "trails/kiosk.trail.yaml"
    with pytest.MonkeyPatch.context() as mp:
        isolate_env(mp)
        session = Session(find_workspace(root, explicit=True))
        try:
            before = session.check(path, KIOSK_TRAIL).findings
            assert not [f for f in before if f.code == "TS2322"], before
            # The target appears, with no notice from the client: the string is no boolean.
            write_tree(root, {"trails/config/targets/kiosk.yaml": KIOSK})
            found = session.check(path, KIOSK_TRAIL + "\n").findings
            assert [(f.code, f.line, f.column) for f in found] == [("TS2322", 8, 19)]
            # It changes in place: the same call passes.
            target = root / "trails/config/targets/kiosk.yaml"
            target.write_text(KIOSK.replace("hard: {type: boolean}", "hard: {type: string}"))
            os.utime(target, ns=(1, 1))
            assert session.check(path, KIOSK_TRAIL + "\n\n").findings == ()
        finally:
            session.close()


def test_a_package_installed_while_the_server_runs_is_seen_by_the_next_edit(
    tsc: Compiler, tmp_path: Path
) -> None:
    # pip installs a distribution that brings the `kiosk` target into a directory of the
    # server's sys.path: no workspace directory changes, and the client says nothing.
    root = write_tree(
        tmp_path / "ws", {"trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: App\n"}
    )
    site = tmp_path / "site"
    site.mkdir()
    for directory in [root, *root.rglob("*"), site]:
        if directory.is_dir():  # changed long ago: the session keeps its listing between edits
            os.utime(directory, ns=(10**18, 10**18))
    path = root / "trailmaps/app/trails/kiosk.trail.yaml"
    with pytest.MonkeyPatch.context() as mp:
        isolate_env(mp)
        mp.syspath_prepend(str(site))
        session = Session(find_workspace(root, explicit=True))
        try:
            before = session.check(path, KIOSK_TRAIL).findings
            assert not [f for f in before if f.code == "TS2322"], before
            make_package(site)
            found = session.check(path, KIOSK_TRAIL + "\n").findings
            assert [(f.code, f.line, f.column) for f in found] == [("TS2322", 8, 19)]
        finally:
            session.close()
