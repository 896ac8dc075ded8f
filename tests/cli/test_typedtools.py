"""`trailblaze check --show-typed-tools`: scripted tools as the type gate's compiler types them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import DATA, ROOT, write_tree
from trailblaze.cli.main import main

PLAYWRIGHT = DATA / "scripted" / "playwright-native"
TOOLS = "trails/config/trailmaps/playwrightSample/tools"


def listing(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["check", *args, "--show-typed-tools"])
    return code, capsys.readouterr().out.splitlines()


def module_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if "  [module, " in line]


@pytest.mark.tsc
def test_the_bundled_scripted_tools_are_listed_with_fields_result_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "trailmaps", tmp_path / "trailmaps")
    monkeypatch.chdir(tmp_path)
    code, lines = listing(capsys, "--all")
    assert code == 0
    assert module_lines(lines) == [
        "  notes_copyText(text: string) -> string  [module, trailmaps/notes/tools/notes_copyText.ts:12]",
        "  notes_launchApp(clean?: boolean) -> string  [module, trailmaps/notes/tools/notes_launchApp.ts:12]",
        "  notes_openNote(title: string, pin?: boolean) -> string  [module, trailmaps/notes/tools/notes_openNote.ts:14]",
    ]  # fmt: skip
    # the line is the export that defines the tool
    source = (tmp_path / "trailmaps/notes/tools/notes_openNote.ts").read_text().splitlines()
    assert source[13].startswith("export const notes_openNote = ")


@pytest.mark.tsc
def test_the_upstream_playwright_sample_tools_are_listed_with_their_types(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(PLAYWRIGHT, tmp_path / "ws")
    monkeypatch.chdir(tmp_path / "ws")
    code, lines = listing(capsys, "--all")
    assert code == 0
    assert module_lines(lines) == [
        f"  playwrightSample_web_incrementCounterToValue(relativePath?: string, increments?: number, expectedValue?: string) -> string  [module, {TOOLS}/playwrightSample_web_incrementCounterToValue.ts:23]",
        f"  playwrightSample_web_openDuplicateProductDetail(relativePath?: string, itemId?: string, expectedCategory?: string) -> string  [module, {TOOLS}/playwrightSample_web_openDuplicateProductDetail.ts:21]",
        f"  playwrightSample_web_openFixtureAndVerifyText(relativePath?: string, text?: string) -> string  [module, {TOOLS}/playwrightSample_web_openFixtureAndVerifyText.ts:20]",
        f"  playwrightSample_web_openFormIfNeeded(relativePath?: string, formHeading?: string) -> string  [module, {TOOLS}/playwrightSample_web_openFormIfNeeded.ts:21]",
        f"  playwrightSample_web_searchProductsAndOpenResult(relativePath?: string, query?: string, resultId?: string, expectedDetailText?: string) -> string  [module, {TOOLS}/playwrightSample_web_searchProductsAndOpenResult.ts:24]",
        f"  playwrightSample_web_submitContactForm(relativePath?: string, name?: string, email?: string, category?: string, message?: string) -> string  [module, {TOOLS}/playwrightSample_web_submitContactForm.ts:24]",
    ]  # fmt: skip
    assert not list((tmp_path / "ws").rglob("tooltypes-*"))  # the probe leaves nothing behind


ODD_TOOLS = {
    "trailmaps/app/tools/app_shapes.ts": """\
import { trailblaze } from "@trailblaze/scripting";

export interface Found {
  ok: boolean;
  count: number;
}

/** Fields of every shape the listing must print on one line. */
export const app_shapes = trailblaze.tool<
  {
    /** A name that is not an identifier. */
    "first-name": string;
    where?: { x: number; y: number; tags: string[] };
    mode: "fast" | "slow";
  },
  Found
>({ description: "shapes" }, async () => ({ ok: true, count: 1 }));

export const app_nothing = trailblaze.tool<Record<string, never>, string>(
  { description: "takes nothing" },
  async () => "done",
);

export const app_open = trailblaze.tool<Record<string, unknown>, string>(
  { description: "takes anything" },
  async () => "done",
);

export const app_notATool = 3;
""",
}


@pytest.mark.tsc
def test_odd_shapes_are_printed_on_one_line_and_a_non_tool_says_why(
    compact_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(compact_ws, ODD_TOOLS)
    manifest = compact_ws / "trailmaps/app/trailmap.yaml"
    manifest.write_text(manifest.read_text() + "  tools:\n    - app_notATool\n")
    monkeypatch.chdir(compact_ws)
    code, lines = listing(capsys, "--all")
    assert code in (0, 1)  # what the check itself says of app_notATool is not this listing's
    where = "trailmaps/app/tools/app_shapes.ts"
    assert module_lines(lines) == [
        f"  app_notATool(typed by its module; not shown: its module's export is not a function the runtime can call)  [module, {where}:29]",
        f"  app_nothing() -> string  [module, {where}:19]",
        f"  app_open([x: string]: unknown) -> string  [module, {where}:24]",
        f'  app_shapes(first-name: string, where?: {{ x: number; y: number; tags: string[]; }}, mode: "fast" | "slow") -> Found  [module, {where}:9]',
    ]  # fmt: skip
