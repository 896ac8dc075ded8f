"""The unit-test stage: each trailmap's `*.test.ts` run with bun on our SDK runtime, as findings,
cached per test file by the key of its inputs.

The workspace is a copy of upstream's playwright-native sample (tests/data/scripted, see its
NOTICE): three test files, six tests, written against `@trailblaze/scripting/testing`.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from bench.nginx import NginxCache
from tests.conftest import DATA, ROOT, run_python
from trailblaze import codes
from trailblaze.check.run import last_stats, run_check
from trailblaze.check.unittests import phase
from trailblaze.check.unittests.inputs import specifiers
from trailblaze.options import CheckOptions
from trailblaze.report.formats import render
from trailblaze.report.record import EXIT_FINDINGS, EXIT_INFRA, EXIT_OK, Report
from trailblaze.state.signing import SIGNING_KEY_ENV, new_private_key, public_key_text
from trailblaze.toolchain.bun import BUN_ENV
from trailblaze.toolchain.compilers import TOOLCHAIN_DIR_ENV
from trailblaze.workspace import find_workspace

PLAYWRIGHT = DATA / "scripted" / "playwright-native"
TOOLS = "trails/config/trailmaps/playwrightSample/tools"
FORM_TEST = "playwrightSample_web_openFormIfNeeded.test.ts"
SEEDED = "zz_seeded.test.ts"
UPSTREAM_TESTS = {
    "playwrightSample_web_openFixtureAndVerifyText.test.ts": [
        (
            "playwrightSample_web_openFixtureAndVerifyText > dispatches web_navigate then "
            "web_verifyTextVisible with the args verbatim",
            17,
        ),
        (
            "playwrightSample_web_openFixtureAndVerifyText > applies module defaults when args "
            "fields are omitted",
            42,
        ),
    ],
    FORM_TEST: [
        (
            "playwrightSample_web_openFormIfNeeded > returns the already-visible message when "
            "the heading probe succeeds",
            20,
        ),
        (
            "playwrightSample_web_openFormIfNeeded > attempts the recovery click when the "
            "heading probe throws",
            35,
        ),
    ],
    "playwrightSample_web_searchProductsAndOpenResult.test.ts": [
        (
            "playwrightSample_web_searchProductsAndOpenResult > dispatches navigate → type → "
            "click → click → verify with the args forwarded",
            17,
        ),
        (
            "playwrightSample_web_searchProductsAndOpenResult > falls back to the module-level "
            "defaults when args are omitted",
            56,
        ),
    ],
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(PLAYWRIGHT, root)
    return root


def check(root: Path, **options: Any) -> Report:
    return run_check(find_workspace(root, explicit=True), CheckOptions(**options))


def ran(report: Report) -> dict[str, Any]:
    """How many test files the run ran, and how many it took from the cache."""
    return {k: report.stats[k] for k in ("test_files", "test_files_run", "test_files_cached")}


def seed_failure(root: Path) -> Path:
    """A copy of the form test whose first test expects the wrong text (line 32)."""
    tools = root / TOOLS
    text = (tools / FORM_TEST).read_text()
    assert text.splitlines()[31].strip() == 'expect(result).toContain("already visible");'
    seeded = tools / SEEDED
    seeded.write_text(text.replace('toContain("already visible")', 'toContain("never shown")'))
    return seeded


# -- the upstream samples on our runtime -----------------------------------------------------------


def test_the_upstream_samples_tests_pass_on_our_sdk_runtime(ws: Path) -> None:
    report = check(ws)
    assert report.exit_code == EXIT_OK
    assert [f for f in report.findings if f.kind in ("test", "infra")] == []
    listed = {
        (Path(t.path).name, t.name, t.line, t.status, t.cached, t.trailmap) for t in report.tests
    }
    assert listed == {
        (file, name, line, "passed", False, "playwrightSample")
        for file, tests in UPSTREAM_TESTS.items()
        for name, line in tests
    }
    assert ran(report) == {"test_files": 3, "test_files_run": 3, "test_files_cached": 0}
    # The JSON report lists every test, with its duration and where it came from.
    data = report.to_json()
    assert data["summary"]["tests"] == {
        "total": 6,
        "passed": 6,
        "failed": 0,
        "skipped": 0,
        "todo": 0,
        "cached": 0,
        "files": 3,
    }
    first = data["tests"][0]
    assert set(first) == {"path", "trailmap", "name", "line", "status", "duration", "cached"}
    assert first["path"] == f"{TOOLS}/playwrightSample_web_openFixtureAndVerifyText.test.ts"
    assert isinstance(first["duration"], float)


def test_a_seeded_failure_is_a_located_test_finding_and_exit_1_in_every_format(ws: Path) -> None:
    seed_failure(ws)
    report = check(ws)
    assert report.exit_code == EXIT_FINDINGS
    [finding] = [f for f in report.findings if f.kind == "test"]
    path = f"{TOOLS}/{SEEDED}"
    name = UPSTREAM_TESTS[FORM_TEST][0][0]
    assert (finding.path, finding.line, finding.column, finding.code, finding.fatal) == (
        path,
        32,
        20,
        codes.TEST_FAILED,
        True,
    )
    assert finding.message == (
        f'{name}: expect(received).toContain(expected) | Expected to contain: "never shown" | '
        'Received: "The form section was already visible at '
        './examples/playwright-native/sample-app/index.html."'
    )
    assert finding.text.startswith(f"{path}:32:20: {name}: expect(received)")
    statuses = {(Path(t.path).name, t.name): t.status for t in report.tests}
    assert statuses[(SEEDED, name)] == "failed"
    assert list(statuses.values()).count("failed") == 1
    # JSON
    data = json.loads(render(report, "json"))
    assert data["exit_code"] == 1
    assert data["summary"]["tests"]["failed"] == 1
    [item] = [f for f in data["findings"] if f["kind"] == "test"]
    assert (item["path"], item["line"], item["column"], item["code"]) == (
        path,
        32,
        20,
        "test-failed",
    )
    # SARIF
    sarif = json.loads(render(report, "sarif"))
    [result] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "test-failed"]
    assert result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == path
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 32,
        "startColumn": 20,
    }
    # JUnit: a suite of the unit tests, the failed one failing with the finding.
    suites = ElementTree.fromstring(render(report, "junit"))
    [unit] = [s for s in suites.iter("testsuite") if s.get("name") == "unit tests"]
    assert (unit.get("tests"), unit.get("failures")) == ("8", "1")
    [failed] = [c for c in unit.iter("testcase") if c.find("failure") is not None]
    assert (failed.get("classname"), failed.get("name")) == (path, name)
    assert (failed.findtext("failure") or "").startswith(f"{path}:32:20: ")
    # GitHub annotations
    [line] = [x for x in render(report, "github").splitlines() if "test-failed" in x]
    assert line.startswith(
        f"::error file={path},line=32,col=20,title=trailblaze test test-failed::"
    )


def test_the_command_line_exits_1_and_shows_where_the_test_failed(ws: Path) -> None:
    seed_failure(ws)
    result = run_python(ws, "-m", "trailblaze", "check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{TOOLS}/{SEEDED}:32:20: " in result.stdout
    assert "unit tests: 7 passed, 1 failed in 4 file(s); 0 from the cache" in result.stdout
    # --no-tests: the phase is skipped, and the check passes.
    skipped = run_python(ws, "-m", "trailblaze", "check", "--no-tests")
    assert skipped.returncode == 0, skipped.stdout
    assert "unit tests" not in skipped.stdout


# -- cached per test file -----------------------------------------------------------------------------


def test_a_noop_runs_no_test_and_an_edit_reruns_only_the_files_that_import_it(ws: Path) -> None:
    tools = ws / TOOLS
    assert ran(check(ws))["test_files_run"] == 3
    again = check(ws)
    assert ran(again) == {"test_files": 3, "test_files_run": 0, "test_files_cached": 3}
    assert {t.cached for t in again.tests} == {True}
    assert again.exit_code == EXIT_OK
    # One tool source, imported by one test file.
    tool = tools / "playwrightSample_web_openFormIfNeeded.ts"
    tool.write_text(tool.read_text() + "\n// edited\n")
    assert ran(check(ws))["test_files_run"] == 1
    # The module every tool imports: every test file reruns.
    shared = tools / "playwrightSample_shared.ts"
    shared.write_text(shared.read_text() + "\n// edited\n")
    assert ran(check(ws))["test_files_run"] == 3
    # A tool no test imports: none.
    other = tools / "playwrightSample_web_submitContactForm.ts"
    other.write_text(other.read_text() + "\n// edited\n")
    assert ran(check(ws))["test_files_run"] == 0


def test_a_failing_file_is_never_cached_and_a_rerun_ignores_the_cache(ws: Path) -> None:
    seed_failure(ws)
    assert ran(check(ws))["test_files_run"] == 4
    second = check(ws)
    assert ran(second) == {"test_files": 4, "test_files_run": 1, "test_files_cached": 3}
    assert second.exit_code == EXIT_FINDINGS
    assert ran(check(ws, rerun_tests=True))["test_files_run"] == 4


def test_the_environment_passed_on_and_the_packages_imported_are_part_of_the_keys(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = ws / TOOLS
    package = tools / "node_modules" / "left-pad"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        '{"name": "left-pad", "version": "1.0.0", "main": "i.js"}'
    )
    (package / "i.js").write_text("module.exports = (s) => ' ' + s;\n")
    (tools / "pad.test.ts").write_text(
        'import { expect, test } from "bun:test";\nimport pad from "left-pad";\n\n'
        'test("pads", () => { expect(pad("a")).toBe(" a"); expect(process.env.TZ).toBe("UTC"); });\n'
    )
    monkeypatch.setenv("TZ", "UTC")
    assert ran(check(ws))["test_files_run"] == 4
    assert ran(check(ws))["test_files_run"] == 0
    (package / "package.json").write_text(
        '{"name": "left-pad", "version": "1.0.1", "main": "i.js"}'
    )
    assert ran(check(ws))["test_files_run"] == 1
    monkeypatch.setenv("TZ", "Europe/Paris")
    report = check(ws)
    assert ran(report)["test_files_run"] == 4
    [finding] = [f for f in report.findings if f.kind == "test"]
    assert (finding.path, finding.line) == (f"{TOOLS}/pad.test.ts", 4)


def test_the_import_graph_reads_every_form_of_import() -> None:
    source = """
import { a } from "./a";
import type { B } from './b';
import * as c from "./c.js";
import "./side-effect";
export { d } from "./d";
export * from "pkg/sub";
const e = require("./e");
const f = await import("@scope/pkg/x");
// import { g } from "./commented";
/* import { h } from "./blocked"; */
import {
  i,
  j,
} from "./multi";
const k = import(name);
"""
    found, dynamic = specifiers(source)
    assert found == [
        "./a",
        "./b",
        "./c.js",
        "./side-effect",
        "./d",
        "pkg/sub",
        "./e",
        "@scope/pkg/x",
        "./multi",
    ]
    assert dynamic


# -- what does not run to its end ----------------------------------------------------------------------


def test_a_file_that_does_not_load_is_a_test_error_and_is_run_again(ws: Path) -> None:
    (ws / TOOLS / "broken.test.ts").write_text(
        'import { test } from "bun:test";\nimport { x } from "./nope";\n\ntest("a", () => x());\n'
    )
    report = check(ws)
    assert report.exit_code == EXIT_FINDINGS
    [finding] = [f for f in report.findings if f.kind == "test"]
    assert (finding.path, finding.line, finding.code) == (
        f"{TOOLS}/broken.test.ts",
        1,
        codes.TEST_ERROR,
    )
    assert finding.message.startswith(
        "the test file did not run to its end: error: Cannot find module './nope' from '"
    )
    assert not report.complete  # never repeated without running it
    # The other files of the same bun run are not taken down with it.
    assert ran(report)["test_files_run"] == 4
    assert len([t for t in report.tests if t.status == "passed"]) == 6
    assert ran(check(ws)) == {"test_files": 4, "test_files_run": 1, "test_files_cached": 3}


def test_a_run_that_does_not_finish_in_time_is_a_test_timeout(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / TOOLS / "hang.test.ts").write_text(
        'import { test } from "bun:test";\n\n'
        'test("never settles", async () => { await new Promise(() => setInterval(() => {}, 1000)); }, 600000);\n'
    )
    monkeypatch.setattr(phase, "timeout_seconds", lambda: 3.0)
    report = check(ws, rerun_tests=True)
    hung = [f for f in report.findings if f.code == codes.TEST_TIMEOUT]
    # Every file of the bun run that was stopped (the others of the trailmap ran apart).
    assert f"{TOOLS}/hang.test.ts" in {f.path for f in hung}
    assert {(f.kind, f.fatal) for f in hung} == {("test", True)}
    assert len(hung) == report.stats["test_files_run"] - len({t.path for t in report.tests})
    assert hung[0].message == (
        "bun test did not finish within 3000ms and was stopped; set TRAILBLAZE_TEST_TIMEOUT_MS "
        "if the suite is known to be slow"
    )
    assert report.exit_code == EXIT_FINDINGS
    assert not report.complete


def test_the_timeout_is_read_as_the_reference_reads_it() -> None:
    assert phase.timeout_seconds({}) == 300.0
    assert phase.timeout_seconds({"TRAILBLAZE_TEST_TIMEOUT_MS": "120000"}) == 120.0
    assert phase.timeout_seconds({"TRAILBLAZE_TEST_TIMEOUT_MS": "10"}) == 60.0  # at least 1 min
    assert phase.timeout_seconds({"TRAILBLAZE_TEST_TIMEOUT_MS": "abc"}) == 300.0


def test_without_bun_the_tests_are_not_run_which_is_never_a_pass(
    ws: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(BUN_ENV, str(tmp_path / "no-bun"))
    report = check(ws)
    [finding] = [f for f in report.findings if f.code == codes.TESTS_NOT_RUN]
    assert (finding.kind, finding.path, finding.fatal) == ("infra", TOOLS, False)
    assert finding.message == (
        "3 unit test files of trailmap 'playwrightSample' not run: "
        f"{BUN_ENV}={tmp_path / 'no-bun'}: no such file"
    )
    assert report.tests == ()
    assert not report.complete
    assert report.exit_code == EXIT_OK
    assert check(ws, require_typecheck=True).exit_code == EXIT_INFRA
    result = run_python(ws, "-m", "trailblaze", "check", "--require-typecheck")
    assert result.returncode == 3, result.stdout + result.stderr


def test_no_tests_skips_the_phase(ws: Path) -> None:
    seed_failure(ws)
    report = check(ws, tests=False)
    assert (report.tests, report.exit_code) == ((), EXIT_OK)
    assert "test_files" not in report.stats


# -- the SDK the tests resolve ---------------------------------------------------------------------


def test_a_hand_written_tsconfig_whose_mapping_does_not_resolve_still_runs_on_our_sdk(
    ws: Path,
) -> None:
    tools = ws / TOOLS
    (tools / "tsconfig.json").write_text(
        json.dumps(
            {
                "compilerOptions": {
                    "target": "ES2022",
                    "lib": ["ES2022"],
                    "module": "ESNext",
                    "moduleResolution": "Bundler",
                    "paths": {
                        "@trailblaze/scripting": ["./no-sdk/dist/index"],
                        "@trailblaze/scripting/*": ["./no-sdk/dist/*"],
                    },
                },
                "include": ["*.ts"],
                "exclude": ["*.test.ts"],
            }
        )
    )
    report = check(ws)
    [warning] = report.findings
    assert (warning.kind, warning.code) == ("warning", codes.TSCONFIG_KEPT)
    assert "maps '@trailblaze/scripting' to " in warning.message
    # The tests ran on our SDK all the same (bun was given a tsconfig that maps it to ours).
    assert len([t for t in report.tests if t.status == "passed"]) == 6


def test_test_files_run_in_parallel_runs_bounded_by_the_cores(ws: Path) -> None:
    tools = ws / TOOLS
    for n in range(12):
        (tools / f"gen{n:02}.test.ts").write_text(
            f'import {{ expect, test }} from "bun:test";\ntest("t{n}", () => expect({n}).toBe({n}));\n'
        )
    report = check(ws)
    assert ran(report)["test_files_run"] == 15
    assert report.stats["bun_runs"] == min(15, os.cpu_count() or 1)
    assert len(report.tests) == 18


def test_the_runtime_in_the_sdk_folder_is_the_packaged_one() -> None:
    # What tests import at run time is the runtime replay runs scripted tools on.
    runtime = ROOT / "trailblaze" / "data" / "scripting"
    assert (runtime / "testing.cjs").is_file()


# -- the remote cache ------------------------------------------------------------------------------


def remote_check(root: Path, server: NginxCache, **options: Any) -> Report:
    return check(root, remote_cache=server.url, **options)


def test_a_fresh_clone_with_a_warm_remote_cache_runs_no_test(
    ws: Path, server: NginxCache, tmp_path: Path
) -> None:
    seed_failure(ws)
    first = remote_check(ws, server)
    assert ran(first)["test_files_run"] == 4
    # Only the three passing files are shared: a failure never is.
    assert first.stats["test_remote_stored"] == 3
    entries = [k for k in server.entries() if k.startswith("ac/")]
    assert len(entries) >= 3
    clone = tmp_path / "clone"
    shutil.copytree(PLAYWRIGHT, clone)
    warm = remote_check(clone, server)
    assert ran(warm) == {"test_files": 3, "test_files_run": 0, "test_files_cached": 3}
    assert warm.stats["test_remote_hits"] == 3
    assert [(t.status, t.cached) for t in warm.tests] == [("passed", True)] * 6
    # Kept locally as well: the next run asks the remote nothing.
    assert remote_check(clone, server).stats["test_remote_hits"] == 0


def test_read_only_stores_nothing_and_signed_entries_are_checked(
    ws: Path, server: NginxCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert remote_check(ws, server, remote_read_only=True).stats["test_remote_stored"] == 0
    assert [k for k in server.entries() if k.startswith("ac/")] == []
    # A writer that signs, and a reader that trusts another key: the entries are refused
    # (one warning) and the tests run.
    _, mine = new_private_key()
    _, theirs = new_private_key()
    signer = tmp_path / "signer"
    shutil.copytree(PLAYWRIGHT, signer)
    keys = f'[tool.trailblaze]\nremote-cache-public-keys = ["{public_key_text(mine)}"]\n'
    (signer / "pyproject.toml").write_text(keys)
    monkeypatch.setenv(SIGNING_KEY_ENV, "ed25519-private:" + base64.b64encode(mine).decode())
    stored = remote_check(signer, server)
    assert stored.stats["test_remote_stored"] == 3
    monkeypatch.delenv(SIGNING_KEY_ENV)
    reader = tmp_path / "reader"
    shutil.copytree(PLAYWRIGHT, reader)
    (reader / "pyproject.toml").write_text(
        keys.replace(public_key_text(mine), public_key_text(theirs))
    )
    refused = remote_check(reader, server)
    assert refused.stats["test_remote_hits"] == 0
    assert "signed by a key not in remote-cache-public-keys" in (
        refused.stats["test_remote_fault"] or ""
    )
    assert ran(refused)["test_files_run"] == 3
    trusting = tmp_path / "trusting"
    shutil.copytree(PLAYWRIGHT, trusting)
    (trusting / "pyproject.toml").write_text(keys)
    assert ran(remote_check(trusting, server))["test_files_run"] == 0


# -- doit -------------------------------------------------------------------------------------------


def doit(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    full = {k: v for k, v in os.environ.items() if not k.startswith("TRAILBLAZE_")}
    full.update({TOOLCHAIN_DIR_ENV: os.environ[TOOLCHAIN_DIR_ENV], "NO_COLOR": "1"}, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "doit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=full,
        check=False,
        timeout=300,
    )


def test_doit_check_runs_the_tests_and_an_unchanged_workspace_runs_none(ws: Path) -> None:
    (ws / "dodo.py").write_text("from trailblaze.doit_tasks import DOIT_CONFIG, task_check\n")
    seed_failure(ws)
    failed = doit(ws, "check")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f"{TOOLS}/{SEEDED}:32:20: " in failed.stdout
    recorded = json.loads((ws / "trails/.trailblaze/report.json").read_text())
    assert recorded["summary"]["tests"]["failed"] == 1
    assert len(recorded["tests"]) == 8
    (ws / TOOLS / SEEDED).unlink()
    assert doit(ws, "check").returncode == 0
    scratch = ws / "trails/.trailblaze"
    after = last_stats(scratch)
    assert after["test_files_run"] == 0  # the three others: from the cache
    # Nothing changed: check:run is up to date, no pipeline and no test.
    again = doit(ws, "check")
    assert again.returncode == 0
    assert "up to date" in again.stdout
    assert last_stats(scratch) == after
    # TRAILBLAZE_NO_TESTS=1 changes the options: a run without the phase.
    skipped = doit(ws, "check", env={"TRAILBLAZE_NO_TESTS": "1"})
    assert skipped.returncode == 0, skipped.stdout
    assert "test_files" not in last_stats(scratch)
    # The same from doit's command line (a variable: it decides what check:run does, which
    # no task parameter reaches), and a failing test that only the phase would see.
    seed_failure(ws)
    assert doit(ws, "check").returncode == 1
    by_variable = doit(ws, "check", "no_tests=1")
    assert by_variable.returncode == 0, by_variable.stdout + by_variable.stderr
    assert "test_files" not in last_stats(scratch)
    assert "unit tests" not in by_variable.stdout
    bad = doit(ws, "check", "no_tests=perhaps")
    assert bad.returncode != 0
    assert "TRAILBLAZE_NO_TESTS" in bad.stdout + bad.stderr
    assert "Traceback" not in bad.stdout + bad.stderr


def test_the_first_shard_runs_the_tests_and_the_merge_lists_them_once(
    ws: Path, tmp_path: Path
) -> None:
    seed_failure(ws)
    files = []
    for k in (1, 2):
        out = tmp_path / f"shard-{k}.json"
        done = run_python(
            ws, "-m", "trailblaze", "check", "--shard", f"{k}/2", "--format", "json",
            "--output", str(out),
        )  # fmt: skip
        assert done.returncode == (1 if k == 1 else 0), done.stdout + done.stderr
        files.append(str(out))
    assert "tests" not in json.loads(Path(files[1]).read_text())
    merged = run_python(ws, "-m", "trailblaze", "report", "merge", *files, "--format", "json")
    assert merged.returncode == 1, merged.stderr
    data = json.loads(merged.stdout)
    assert len(data["tests"]) == 8
    assert data["summary"]["tests"]["failed"] == 1
    assert [f["code"] for f in data["findings"] if f["kind"] == "test"] == ["test-failed"]


def test_a_whole_run_from_the_remote_cache_lists_its_tests_as_cached(
    ws: Path, server: NginxCache, tmp_path: Path
) -> None:
    first = run_python(ws, "-m", "trailblaze", "check", "--remote-cache", server.url)
    assert first.returncode == 0, first.stdout + first.stderr
    clone = tmp_path / "clone"
    shutil.copytree(PLAYWRIGHT, clone)
    warm = run_python(
        clone, "-m", "trailblaze", "check", "--remote-cache", server.url, "--format", "json"
    )
    assert warm.returncode == 0, warm.stderr
    data = json.loads(warm.stdout)
    assert [(t["status"], t["cached"]) for t in data["tests"]] == [("passed", True)] * 6


def test_skipped_and_todo_tests_nested_names_and_a_file_without_tests(ws: Path) -> None:
    tools = ws / TOOLS
    (tools / "kinds.test.ts").write_text(
        'import { describe, expect, test } from "bun:test";\n'
        'describe("outer", () => {\n'
        '  describe("inner", () => {\n'
        '    test.skip("skipped one", () => {});\n'
        '    test.todo("todo one");\n'
        '    test("passes", () => expect(1).toBe(1));\n'
        "  });\n"
        "});\n"
    )
    (tools / "empty.test.ts").write_text("export const nothing = 1;\n")
    report = check(ws)
    assert report.exit_code == EXIT_OK
    kinds = [(t.name, t.line, t.status) for t in report.tests if t.path.endswith("kinds.test.ts")]
    assert kinds == [
        ("outer > inner > skipped one", 4, "skipped"),
        ("outer > inner > todo one", 5, "todo"),
        ("outer > inner > passes", 6, "passed"),
    ]
    assert not [t for t in report.tests if t.path.endswith("empty.test.ts")]
    # Both files passed: neither runs again.
    assert ran(check(ws)) == {"test_files": 5, "test_files_run": 0, "test_files_cached": 5}
