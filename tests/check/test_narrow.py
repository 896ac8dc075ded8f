"""A check after an edit of some trails checks only those and merges them into the last
complete check's record (`trailblaze/check/narrow.py`): its report is a cold check's, byte for
byte, and anything the record does not cover runs the full stages."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.toolmodel.test_bundled import KIOSK, KIOSK_TRAIL
from trailblaze import codes
from trailblaze.check.run import last_stats, run_check
from trailblaze.options import CheckOptions
from trailblaze.report.output import rendered
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolmodel.sources import check_inputs
from trailblaze.workspace import find_workspace, scan

pytestmark = pytest.mark.tsc

SEARCH = "trailmaps/notes/trails/search.trail.yaml"
CHECKOUT = "trailmaps/shop/trails/checkout.trail.yaml"
TOOL = "trailmaps/notes/tools/notes_openNote.ts"


def check(ws: Path, **options: Any) -> str:
    """The JSON report of a check of `ws`, without what names its directory."""
    report = run_check(find_workspace(ws, explicit=True), CheckOptions(**options))
    data = json.loads(rendered(report, {}, "json"))
    data.pop("workspace", None)
    data.pop("seconds", None)
    return json.dumps(data, indent=1)


def cold(ws: Path, tmp_path: Path, name: str) -> str:
    """The report of a check of a copy of `ws` made from nothing."""
    fresh = tmp_path / name
    shutil.copytree(ws, fresh, ignore=shutil.ignore_patterns(".trailblaze"))
    return check(fresh)


def edit(ws: Path, rel: str, old: str, new: str) -> None:
    path = ws / rel
    text = path.read_text("utf-8")
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1), "utf-8")


def narrow(ws: Path) -> int | None:
    """How many trails the last check checked narrowly; None: it ran the full stages."""
    found: int | None = last_stats(ws / ".trailblaze").get("narrow")
    return found


@pytest.fixture
def ws(tmp_path: Path, tsc: Compiler) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(ROOT / "trailmaps", root / "trailmaps")
    check(root)
    return root


def _type_error(ws: Path) -> None:
    edit(ws, SEARCH, "text: Packing list", "text: [1]")


def _parse_error(ws: Path) -> None:
    edit(ws, SEARCH, "direction: DOWN\n", "direction: [DOWN\n")


def _twice(ws: Path) -> None:
    edit(ws, SEARCH, "text: Packing list", "text: Packing list once")
    edit(ws, SEARCH, "text: Packing list once", "text: [2]")


def _branch_no_longer_repeated(ws: Path) -> None:
    edit(ws, CHECKOUT, "textRegex: Not now\n            then", "textRegex: Later\n            then")


def _two_trails(ws: Path) -> None:
    _type_error(ws)
    edit(ws, CHECKOUT, "textRegex: Not now", "textRegex: Not now, thanks")


NARROW: dict[str, Callable[[Path], None]] = {
    "a type error": _type_error,
    "a parse error": _parse_error,
    "edited twice between runs": _twice,
    "a runIf branch no longer repeated": _branch_no_longer_repeated,
    "two trails": _two_trails,
}


@pytest.mark.parametrize("name", NARROW)
def test_an_edit_of_trails_is_checked_narrowly_and_reported_as_a_cold_check(
    ws: Path, tmp_path: Path, name: str
) -> None:
    before = check(ws)
    NARROW[name](ws)
    after = check(ws)
    assert narrow(ws) == (2 if name == "two trails" else 1)
    assert after == cold(ws, tmp_path, "cold")
    assert after != before


def test_what_a_narrow_check_shows_changes_with_its_trail(ws: Path, tmp_path: Path) -> None:
    before = json.loads(check(ws))
    _type_error(ws)
    broken = json.loads(check(ws))
    assert narrow(ws) == 1
    assert last_stats(ws / ".trailblaze")["files_compiled"] == [SEARCH]
    errors = [f for f in broken["findings"] if f["code"] == "TS2322"]
    assert [(f["path"], f["line"]) for f in errors] == [(SEARCH, 21)]
    assert broken["exit_code"] == 1
    _parse_error(ws)
    rejected = json.loads(check(ws))
    assert [t["status"] for t in rejected["trails"] if t["path"] == SEARCH] == ["rejected"]
    assert not [f for f in rejected["findings"] if f["code"] == "TS2322"]
    assert before["exit_code"] == 0


def test_a_repeated_runif_branch_is_worked_out_over_every_trail(ws: Path, tmp_path: Path) -> None:
    before = json.loads(check(ws))
    repeated = [f for f in before["findings"] if f["code"] == codes.RUNIF_REPEATED]
    assert len(repeated) == 1
    _branch_no_longer_repeated(ws)
    after = json.loads(check(ws))
    assert narrow(ws) == 1
    assert [f for f in after["findings"] if f["code"] == codes.RUNIF_REPEATED] == []
    edit(ws, CHECKOUT, "textRegex: Later\n            then", "textRegex: Not now\n            then")
    again = json.loads(check(ws))
    assert narrow(ws) == 1
    assert again == before  # edited back: the warning again, at the same place


def test_a_trail_edited_back_to_its_old_content_reports_as_before(ws: Path) -> None:
    before = check(ws)
    original = (ws / SEARCH).read_bytes()
    _type_error(ws)
    assert check(ws) != before
    (ws / SEARCH).write_bytes(original)
    assert check(ws) == before
    assert narrow(ws) == 1
    # Its verdict came from the result cache: nothing compiled.
    assert last_stats(ws / ".trailblaze")["files_compiled"] == []


def test_a_trail_touched_but_not_changed_keeps_its_verdict(ws: Path) -> None:
    before = check(ws)
    path = ws / SEARCH
    path.write_bytes(path.read_bytes())  # a new stamp, the same bytes
    assert check(ws) == before
    assert narrow(ws) == 1
    stats = last_stats(ws / ".trailblaze")
    assert (stats["trails_parsed"], stats["files_compiled"]) == (0, [])


def _add(ws: Path) -> None:
    shutil.copy(ws / SEARCH, ws / "trailmaps/notes/trails/search-again.trail.yaml")


def _remove(ws: Path) -> None:
    (ws / SEARCH).unlink()


def _rename(ws: Path) -> None:
    (ws / SEARCH).rename(ws / "trailmaps/notes/trails/find.trail.yaml")


def _trail_and_tool(ws: Path) -> None:
    _type_error(ws)
    edit(ws, TOOL, "pin?: boolean;", "pin?: boolean;\n  /** Scroll to it. */\n  scroll?: boolean;")


def _record_missing(ws: Path) -> None:
    _type_error(ws)
    Layout(ws / ".trailblaze").last_run.unlink()


def _record_corrupt(ws: Path) -> None:
    _type_error(ws)
    last = Layout(ws / ".trailblaze").last_run
    last.write_bytes(last.read_bytes()[:1000])


def _rows_written_since(ws: Path) -> None:
    # Another run wrote a trail's row (an editor's buffer, say): the record is not of these rows.
    text = (ws / SEARCH).read_bytes().replace(b"Packing list", b"Packing list (unsaved)")
    run_check(find_workspace(ws, explicit=True), CheckOptions(), texts={str(ws / SEARCH): text})
    _type_error(ws)


FULL: dict[str, Callable[[Path], None]] = {
    "a trail added": _add,
    "a trail removed": _remove,
    "a trail renamed": _rename,
    "a trail and a tool file": _trail_and_tool,
    "the record missing": _record_missing,
    "the record corrupt": _record_corrupt,
    "trail rows written by another run": _rows_written_since,
}


@pytest.mark.parametrize("name", FULL)
def test_what_the_record_does_not_cover_runs_the_full_stages(
    ws: Path, tmp_path: Path, name: str
) -> None:
    FULL[name](ws)
    after = check(ws)
    assert narrow(ws) is None
    assert after == cold(ws, tmp_path, "cold")
    # ... and records again: the next edit is narrow.
    edit(ws, CHECKOUT, "textRegex: Not now", "textRegex: Not now, thanks")
    again = check(ws)
    assert narrow(ws) == 1
    assert again == cold(ws, tmp_path, "cold-again")


def _spoil_findings(data: dict[str, Any]) -> dict[str, Any]:
    assert data["findings"], "the record holds findings to spoil"
    return {**data, "findings": [{"not": "a finding"}] * len(data["findings"])}


def _spoil_a_status(data: dict[str, Any]) -> dict[str, Any]:
    path, trailmap, _, reason, target, calls = data["statuses"][0]
    return {
        **data,
        "statuses": [[path, trailmap, "fine", reason, target, calls], *data["statuses"][1:]],
    }


def _spoil_a_stamp(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "stamps": [7, *data["stamps"][1:]]}


SPOILED: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "findings that are not findings": _spoil_findings,
    "a status of no kind a check gives": _spoil_a_status,
    "a stamp that is a number": _spoil_a_stamp,
}


@pytest.mark.parametrize("name", SPOILED)
def test_a_record_whose_rows_are_not_a_records_runs_the_full_stages(
    ws: Path, tmp_path: Path, name: str
) -> None:
    """Rows that read as JSON but not as a record's (rewritten in place, its stamp kept, so
    the store still vouches for it) are a miss: the run is a full check all the same, never
    a report made of them."""
    _type_error(ws)
    check(ws)  # records the type error's finding
    last = Layout(ws / ".trailblaze").last_run
    before = last.stat()
    spoiled = json.dumps(SPOILED[name](json.loads(last.read_bytes())), separators=(",", ":"))
    text = spoiled.encode()
    original = last.read_bytes()
    assert len(text) <= len(original)
    with last.open("r+b") as handle:  # in place: same inode
        handle.write(text + b" " * (len(original) - len(text)))
    os.utime(last, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (last.stat().st_size, last.stat().st_ino) == (before.st_size, before.st_ino)
    edit(ws, CHECKOUT, "textRegex: Not now", "textRegex: Not now, thanks")
    after = check(ws)
    assert narrow(ws) is None
    assert after == cold(ws, tmp_path, "cold")


def test_other_options_run_the_full_stages(ws: Path, tmp_path: Path) -> None:
    _type_error(ws)
    lenient = check(ws, strict=False)
    assert narrow(ws) is None
    fresh = tmp_path / "fresh"
    shutil.copytree(ws, fresh, ignore=shutil.ignore_patterns(".trailblaze"))
    assert lenient == check(fresh, strict=False)


def test_an_untouched_workspace_reports_the_record_s_verdicts_and_checks_nothing(
    ws: Path, tmp_path: Path
) -> None:
    # A check that finds no trail changed since the record (the other entry point checked
    # since, or another output format is asked for): every key of the record holds, so its
    # verdicts are this run's. It used to run the full stages (a whole cold check's time).
    _type_error(ws)
    first = check(ws)
    again = check(ws)
    assert narrow(ws) == 0
    assert last_stats(ws / ".trailblaze").get("trails_parsed", 0) == 0
    assert last_stats(ws / ".trailblaze")["compiler_runs"] == 0
    assert again == first == cold(ws, tmp_path, "cold")
    # A type-checked trail's generated module lost meanwhile: the full stages put it back.
    module = Layout(ws / ".trailblaze").trail_file(CHECKOUT)
    module.unlink()
    assert check(ws) == first
    assert narrow(ws) is None
    assert module.is_file()


def test_a_target_that_appears_outside_the_inputs_runs_the_full_stages(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A baked target of the configuration directory (or of a package installed since) is no
    # input of the inputs key: the record's keys hold the targets the run resolved and their
    # surfaces, so a trail that targets a name that now resolves is not left as it was.
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", str(ws))
    edit(ws, CHECKOUT, "target: shop", "target: kiosk")
    unknown = json.loads(check(ws))
    assert [t["reason"] for t in unknown["trails"] if t["path"] == CHECKOUT] == ["unknown target"]
    (ws / "targets").mkdir()
    (ws / "targets" / "kiosk.yaml").write_text("id: kiosk\ndisplay_name: Kiosk\n", "utf-8")
    _type_error(ws)
    after = check(ws)
    assert narrow(ws) is None
    assert [t["reason"] for t in json.loads(after)["trails"] if t["path"] == CHECKOUT] != [
        "unknown target"
    ]
    fresh = tmp_path / "fresh"
    shutil.copytree(ws, fresh, ignore=shutil.ignore_patterns(".trailblaze"))
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", str(fresh))
    assert after == check(fresh)


def test_a_baked_target_that_changes_runs_the_full_stages(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same target, another tool type: a trail that targets it and was not edited gets
    # the new verdict, as a cold check gives it.
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", str(ws))
    (ws / "targets").mkdir()
    (ws / "targets" / "kiosk.yaml").write_text(KIOSK, "utf-8")
    kiosk = "trailmaps/shop/trails/kiosk.trail.yaml"
    (ws / kiosk).write_text(KIOSK_TRAIL, "utf-8")
    first = json.loads(check(ws))
    assert [(f["line"], f["column"]) for f in first["findings"] if f["path"] == kiosk] == [(8, 19)]
    (ws / "targets" / "kiosk.yaml").write_text(
        KIOSK.replace("hard: {type: boolean}", "hard: {type: string}"), "utf-8"
    )
    _type_error(ws)
    after = check(ws)
    assert narrow(ws) is None
    assert kiosk not in {f["path"] for f in json.loads(after)["findings"]}
    fresh = tmp_path / "fresh"
    shutil.copytree(ws, fresh, ignore=shutil.ignore_patterns(".trailblaze"))
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", str(fresh))
    assert after == check(fresh)


def test_the_callers_list_of_inputs_keys_the_record_as_its_own_listing_does(ws: Path) -> None:
    # The command line and doit hand down the inputs their own keys listed (`listed`): the
    # record's key made from that list is the one made without it (the record of a check
    # without it holds), and it still covers the tool files.
    def listed_check() -> None:
        workspace = find_workspace(ws, explicit=True)
        found = scan(workspace)
        files = check_inputs(found, workspace.targets_dir)
        run_check(workspace, CheckOptions(), found=found, listed=files)

    _type_error(ws)
    listed_check()
    assert narrow(ws) == 1
    edit(ws, SEARCH, "text: [1]", "text: [2]")
    check(ws)  # and the other way round
    assert narrow(ws) == 1
    edit(ws, TOOL, "export", "// edited\nexport")
    edit(ws, SEARCH, "text: [2]", "text: [3]")
    listed_check()
    assert narrow(ws) is None
