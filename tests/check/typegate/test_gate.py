"""The type gate with the real compiler: corpus, seeded mutations, infrastructure failures,
caching and concurrency. Every test here runs tsc (the `tsc` fixture installs it via npm)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.conftest import CORPUS, DATA, OpenedDatabases, write_tree
from trailblaze.check.rows import TrailState
from trailblaze.check.run import last_stats, run_check
from trailblaze.check.typegate.compilation import compile_jobs
from trailblaze.check.typegate.gate import SPLIT_MIN, batch_due, beside_share
from trailblaze.check.typegate.jobs import Job
from trailblaze.check.typegate.settings import BATCH_SIZE, TAIL_BATCH
from trailblaze.cli.main import main
from trailblaze.generate.codegen import CALLS_PER_FUNCTION
from trailblaze.generate.linetable import GenLine, pack_lines
from trailblaze.options import CheckOptions
from trailblaze.report.record import Report
from trailblaze.state.scratch import Layout
from trailblaze.state.store import Store
from trailblaze.toolchain.compilers import TOOLCHAIN_DIR_ENV, Compiler
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.workspace import find_workspace

pytestmark = pytest.mark.usefixtures("tsc")

SAMPLE = "xyz.block.trailblaze.examples.sampleapp"
TAPS = (
    CORPUS
    / "head/examples/android-sample-app/trails/android-ondevice-accessibility/taps/tap-interactions/trail.yaml"
)
TRAIL = f"trailmaps/{SAMPLE}/trails/taps.trail.yaml"


def check(root: Path, **options: Any) -> Report:
    return run_check(find_workspace(root, explicit=True), CheckOptions(**options))


def stats(root: Path, layout: str = ".trailblaze") -> dict[str, Any]:
    return last_stats(root / layout)


def fatal(report: Report) -> list[str]:
    return [f.text for f in report.fatal_findings]


@pytest.fixture
def sample_ws(tmp_path: Path) -> Path:
    """A compact workspace with a trailmap named like the corpus trails' target and a real trail."""
    write_tree(
        tmp_path,
        {f"trailmaps/{SAMPLE}/trailmap.yaml": f"id: {SAMPLE}\ntarget:\n  display_name: Sample\n"},
    )
    (tmp_path / TRAIL).parent.mkdir(parents=True)
    shutil.copy(TAPS, tmp_path / TRAIL)
    return tmp_path


def test_real_trail_is_clean_and_every_call_is_checked(sample_ws: Path) -> None:
    report = check(sample_ws)
    assert fatal(report) == []
    [status] = report.trails
    assert (status.status, status.calls) == ("type-checked", 12)
    assert stats(sample_ws)["files_compiled"] == [TRAIL]


def mutate(ws: Path, line: int, old: str, new: str) -> None:
    path = ws / TRAIL
    lines = path.read_text().splitlines(keepends=True)
    assert old in lines[line - 1], lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new)
    path.write_text("".join(lines))


@pytest.mark.parametrize(
    ("line", "old", "new", "at", "step", "tool", "codes"),
    [
        pytest.param(
            62,
            "longPress: true",
            "longPress: 'true'",
            (62, 24, "longPress"),
            4,
            "tapOnElementBySelector",
            {"TS2322"},
            id="quoted-boolean",
        ),
        pytest.param(
            12,
            "appId: xyz.block.trailblaze.examples.sampleapp",
            "",
            (11, 7, None),
            0,
            "launchApp",
            {"TS2741", "TS2345"},
            id="dropped-required-argument",
        ),
        pytest.param(
            18,
            "tapOnElementBySelector:",
            "tapOnElementBySelectr:",
            (18, 11, None),
            1,
            "tapOnElementBySelectr",
            {"TS2551"},
            id="misspelled-tool",
        ),
        pytest.param(
            61,
            "reason:",
            "reasn:",
            (61, 13, "reasn"),
            4,
            "tapOnElementBySelector",
            {"TS2353", "TS2561"},
            id="unknown-argument",
        ),
        pytest.param(
            55,
            "textRegex: A11y Tap",
            "textRegx: A11y Tap",
            (55, 17, "nodeSelector.androidAccessibility.textRegx"),
            3,
            "tapOnElementBySelector",
            {"TS2353", "TS2561"},
            id="unknown-selector-field",
        ),
        pytest.param(
            85,
            "isChecked: true",
            "isChecked: 1",
            (85, 28, "nodeSelector.androidAccessibility.isChecked"),
            5,
            "assertVisibleBySelector",
            {"TS2322"},
            id="number-for-boolean",
        ),
    ],
)
def test_seeded_mutation_gives_exactly_one_finding_at_the_argument(
    *,
    sample_ws: Path,
    line: int,
    old: str,
    new: str,
    at: tuple[int, int, str | None],
    step: int,
    tool: str,
    codes: set[str],
) -> None:
    mutate(sample_ws, line, old, new)
    report = check(sample_ws)
    [finding] = report.fatal_findings
    assert (
        finding.kind,
        finding.path,
        (finding.line, finding.column, finding.property),
        finding.step,
        finding.tool,
        finding.classifier,
    ) == (
        "type",
        TRAIL,
        at,
        step,
        tool,
        "android-phone",
    )
    assert finding.code in codes
    assert report.exit_code == 1


def test_a_misspelled_tool_is_named_against_the_tool_methods_with_a_suggestion(
    sample_ws: Path,
) -> None:
    # The message names the methods type, not every tool of the trailmap spelled out.
    mutate(sample_ws, 18, "tapOnElementBySelector:", "tapOnElementBySelectr:")
    [finding] = check(sample_ws).fatal_findings
    assert finding.message == (
        "Property 'tapOnElementBySelectr' does not exist on type 'ToolMethods'. "
        "Did you mean 'tapOnElementBySelector'?"
    )


def test_bad_enum_value_in_launch_mode(sample_ws: Path) -> None:
    mutate(
        sample_ws,
        12,
        "appId: xyz.block.trailblaze.examples.sampleapp",
        "appId: x\n        launchMode: SIDEWAYS",
    )
    [finding] = check(sample_ws).fatal_findings
    assert (finding.line, finding.column, finding.step, finding.tool, finding.code) == (
        13,
        21,
        0,
        "launchApp",
        "TS2322",
    )
    assert finding.property == "launchMode"
    assert finding.message == (
        'Type \'"SIDEWAYS"\' is not assignable to type \'"FORCE_RESTART" | "REINSTALL" | "RESUME" | undefined\'.'
    )


def test_quoted_number_for_a_number_argument_is_a_lint_not_a_finding(sample_ws: Path) -> None:
    # The reference's runtime converts a quoted canonical number for a number parameter, so the
    # recording replays: a warning that says the fix, not a failed build.
    (sample_ws / TRAIL).write_text(
        f"config: {{target: {SAMPLE}}}\ntrail:\n  - step: tap\n    recording:\n      android:\n"
        "        - tapOnPoint: {x: '100', y: 200}\n        - wait: {timeToWaitInSeconds: \"5\"}\n"
        "        - tapOnPoint: {x: '007', y: '1.5'}\n"
    )
    report = check(sample_ws)
    assert report.trails[0].status == "type-checked"
    lints = [f for f in report.findings if f.code == "quoted-number"]
    assert [(f.kind, f.fatal, f.line, f.column, f.tool, f.property) for f in lints] == [
        ("warning", False, 6, 27, "tapOnPoint", "x"),
        ("warning", False, 7, 39, "wait", "timeToWaitInSeconds"),
    ]
    assert lints[0].text == (
        f"{TRAIL}:6:27: trail[0].recording.android[0].tapOnPoint.x: quoted number '100' for "
        "the number argument 'x': replay converts it to 100, the type gate checks it as a "
        "number; write it without quotes (x: 100)"
    )
    # Not canonical numbers (the reference leaves them strings): still type findings.
    assert [(f.line, f.column, f.property, f.code) for f in report.fatal_findings] == [
        (8, 27, "x", "TS2322"),
        (8, 37, "y", "TS2322"),
    ]
    assert report.exit_code == 1


def _filler(schema: dict[str, object]) -> object:
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]  # type: ignore[index]
    return {"string": "x", "integer": 1, "number": 1, "boolean": True, "array": []}.get(
        kind if isinstance(kind, str) else "", {}
    )


def test_every_enum_argument_of_the_catalog_is_case_insensitive(sample_ws: Path) -> None:
    # The reference's runtime decodes enums case-insensitively (its change #203): a lowercase
    # or mixed-case value replays, so it passes here, for every enum parameter there is.
    catalog = load_catalog()
    lines = []
    for tool in sorted(catalog.recordable_tools(), key=lambda t: t.name):
        name = tool.name
        schema = tool.input_schema or {}
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        for param, prop in properties.items():
            values = prop.get("enum")
            if not values or name == "runIf" or not tool.surface:
                continue
            for i, value in enumerate(values):
                args = {r: _filler(properties[r]) for r in required if r != param}
                args[param] = value.lower() if i % 2 == 0 else value.capitalize()
                lines.append(f"        - {name}: {json.dumps(args)}")
    assert len(lines) >= 25, lines  # launchMode, keyCode, swipe and scroll directions, ...
    assert any('- swipe: {"direction": "Down"}' in line for line in lines)
    (sample_ws / TRAIL).write_text(
        f"config: {{target: {SAMPLE}}}\ntrail:\n  - step: s\n    recording:\n      android:\n"
        + "\n".join(lines)
        + "\n"
    )
    report = check(sample_ws)
    assert fatal(report) == []
    assert (report.trails[0].status, report.trails[0].calls) == ("type-checked", len(lines))


def test_an_enum_value_of_no_case_is_still_a_finding(sample_ws: Path) -> None:
    (sample_ws / TRAIL).write_text(
        f"config: {{target: {SAMPLE}}}\ntrail:\n  - step: s\n    recording:\n      android:\n"
        "        - swipe: {direction: sideways}\n"
    )
    [finding] = check(sample_ws).fatal_findings
    assert (finding.line, finding.column, finding.property, finding.code) == (
        6,
        30,
        "direction",
        "TS2322",
    )


def test_quoted_numeric_string_for_a_string_argument_passes(sample_ws: Path) -> None:
    # Trailblaze's coercion bug turns '12345678' into a number and then fails the type check.
    (sample_ws / TRAIL).write_text(
        f"config: {{target: {SAMPLE}}}\ntrail:\n  - step: type\n    recording:\n      android:\n"
        "        - inputText: {text: '12345678'}\n        - inputText: {text: 12345678}\n"
        "        - longPressOnElementWithText: {text: x, index: 007}\n"
    )
    report = check(sample_ws)
    assert fatal(report) == []
    assert report.trails[0].status == "type-checked"


def test_wrong_type_inside_a_runif_branch_is_one_finding_at_its_own_line(sample_ws: Path) -> None:
    (sample_ws / TRAIL).write_text(
        f"config: {{target: {SAMPLE}}}\n"
        "trail:\n"
        "  - step: dismiss the popup\n"
        "    recording:\n"
        "      android:\n"
        "        - runIf:\n"
        "            condition: {selector: {androidAccessibility: {textRegex: Not now}}}\n"
        "            then:\n"
        "              - tapOnElementWithText: {text: Not now}\n"
        "              - tapOnPoint: {x: 10, y: 'twenty'}\n"
    )
    report = check(sample_ws)
    [finding] = report.fatal_findings
    assert (
        finding.line,
        finding.column,
        finding.step,
        finding.tool,
        finding.position,
        finding.code,
    ) == (
        10,
        40,
        1,
        "tapOnPoint",
        "runIf.then[1]",
        "TS2322",
    )
    assert finding.key_path == "trail[0].recording.android[0].runIf.then[1].tapOnPoint.y"
    assert finding.property == "y"


def test_unknown_tool_inside_a_runif_condition(sample_ws: Path) -> None:
    (sample_ws / TRAIL).write_text(
        f"config: {{target: {SAMPLE}}}\ntrail:\n  - step: s\n    recording:\n      android:\n"
        "        - runIf:\n            condition: {tool: {assertVisibleWithTxt: {text: Hi}}}\n"
        "            then: [{pressBack: {}}]\n"
    )
    [finding] = check(sample_ws).fatal_findings
    assert (finding.line, finding.tool, finding.position, finding.code) == (
        7,
        "assertVisibleWithTxt",
        "runIf.condition",
        "TS2551",
    )


def test_scripted_tool_is_checked_against_its_module_type(compact_ws: Path) -> None:
    write_tree(
        compact_ws,
        {
            "trailmaps/app/tools/app_login.ts": """
                import { trailblaze } from "@trailblaze/scripting";
                export interface LoginInput { user: string; remember?: boolean }
                export const app_login = trailblaze.tool<LoginInput>({ description: "Log in" }, async (i) => i.user);
            """,
            "trailmaps/app/trails/a.trail.yaml": "config: {target: app}\ntrail:\n  - step: s\n    recording:\n      android:\n        - app_login: {user: ann, remember: 'yes'}\n",
        },
    )
    [finding] = check(compact_ws).fatal_findings
    assert (finding.line, finding.tool, finding.code) == (6, "app_login", "TS2322")
    # The module owns the type: widen it there and the same recording passes.
    module = compact_ws / "trailmaps/app/tools/app_login.ts"
    module.write_text(
        module.read_text().replace("remember?: boolean", "remember?: boolean | string")
    )
    assert fatal(check(compact_ws)) == []


def test_no_op_run_parses_nothing_and_starts_no_compiler(sample_ws: Path) -> None:
    check(sample_ws)
    check(sample_ws)
    second = stats(sample_ws)
    assert (
        second["compiler_runs"],
        second["trails_parsed"],
        second["files_read"],
        second["files_compiled"],
    ) == (0, 0, 0, [])


def test_one_edited_trail_is_the_only_file_the_compiler_sees(sample_ws: Path) -> None:
    other = f"trailmaps/{SAMPLE}/trails/other.trail.yaml"
    shutil.copy(sample_ws / TRAIL, sample_ws / other)
    check(sample_ws)
    assert sorted(stats(sample_ws)["files_compiled"]) == sorted([TRAIL, other])
    mutate(sample_ws, 22, "textRegex: Tap Me", "textRegex: Tap me")
    check(sample_ws)
    assert stats(sample_ws)["files_compiled"] == [TRAIL]
    assert stats(sample_ws)["trails_parsed"] == 1


def test_a_cached_result_never_outlives_the_positions_it_points_at(sample_ws: Path) -> None:
    # The same generated text with every YAML line moved down: the finding must move too.
    mutate(sample_ws, 55, "textRegex: A11y Tap", "textRegx: A11y Tap")
    [before] = check(sample_ws).fatal_findings
    text = (sample_ws / TRAIL).read_text()
    (sample_ws / TRAIL).write_text("# a comment\n# another\n" + text)
    [after] = check(sample_ws).fatal_findings
    assert (after.line, after.column) == (before.line + 2, before.column) == (57, 17)
    assert stats(sample_ws)["files_compiled"] == [TRAIL]


def test_findings_are_reported_again_from_the_cache(sample_ws: Path) -> None:
    mutate(sample_ws, 18, "tapOnElementBySelector:", "tapOnElementBySelectr:")
    first = fatal(check(sample_ws))
    again = check(sample_ws)
    assert fatal(again) == first != []
    assert stats(sample_ws)["compiler_runs"] == 0


def test_corrupt_cache_entries_are_misses(sample_ws: Path) -> None:
    check(sample_ws)
    for entry in (sample_ws / ".trailblaze/cache").glob("results-*"):
        entry.write_bytes(b"garbage, not a database" * 100)
    Layout(sample_ws / ".trailblaze").store.write_text("garbage")
    report = check(sample_ws)
    assert fatal(report) == []
    assert stats(sample_ws)["files_compiled"] == [TRAIL]
    cache = sample_ws / ".trailblaze/cache"
    assert (
        (cache / "CACHEDIR.TAG")
        .read_text()
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )
    assert (cache / ".gitignore").read_text().endswith("*\n")


def test_generated_files_persist_and_orphans_are_removed(sample_ws: Path) -> None:
    check(sample_ws)
    generated = sample_ws / ".trailblaze/typegate/trails" / f"{TRAIL}.ts"
    assert generated.is_file()
    mtime = generated.stat().st_mtime_ns
    Layout(sample_ws / ".trailblaze").store.unlink()  # forces regeneration of the text
    check(sample_ws)
    assert generated.stat().st_mtime_ns == mtime  # same text: not rewritten
    (sample_ws / TRAIL).unlink()
    write_tree(
        sample_ws,
        {
            f"trailmaps/{SAMPLE}/trails/b.trail.yaml": f"config: {{target: {SAMPLE}}}\ntrail:\n  - step: s\n    recording:\n      android: [{{pressBack: {{}}}}]\n"
        },
    )
    check(sample_ws)
    assert not generated.exists()
    # A trail in a subdirectory, moved out of it: its module and the emptied directories go.
    nested = sample_ws / f"trailmaps/{SAMPLE}/trails/deep/er/c.trail.yaml"
    nested.parent.mkdir(parents=True)
    shutil.copy(sample_ws / f"trailmaps/{SAMPLE}/trails/b.trail.yaml", nested)
    check(sample_ws)
    module_dir = sample_ws / f".trailblaze/typegate/trails/trailmaps/{SAMPLE}/trails/deep"
    assert (module_dir / "er/c.trail.yaml.ts").is_file()
    nested.rename(sample_ws / f"trailmaps/{SAMPLE}/trails/c.trail.yaml")
    check(sample_ws)
    assert not module_dir.exists()
    kept = sorted(p.name for p in module_dir.parent.iterdir())
    assert kept == ["b.trail.yaml.ts", "c.trail.yaml.ts"]


def test_disabled_type_gate_is_counted_with_its_reason(sample_ws: Path) -> None:
    report = check(sample_ws, typecheck=False)
    assert [(t.status, t.reason) for t in report.trails] == [("parsed", "type gate disabled")]


def test_exempt_target_findings_are_counted_not_fatal(sample_ws: Path) -> None:
    (sample_ws / f"trailmaps/{SAMPLE}/trailmap.yaml").write_text(
        f"id: {SAMPLE}\ntrail_validation:\n  exempt: records MCP tools\ntarget:\n  display_name: Sample\n"
    )
    mutate(sample_ws, 18, "tapOnElementBySelector:", "generateTestUser:")
    report = check(sample_ws)
    assert report.exit_code == 0
    assert report.counts()["exempt_findings"] == 1
    assert [(f.tool, f.fatal) for f in report.findings if f.kind == "type"] == [
        ("generateTestUser", False)
    ]


def test_broken_compiler_is_infra_not_a_pass_and_not_cached(
    sample_ws: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tsc: Compiler,
) -> None:
    fake = tmp_path_factory.mktemp("bin") / "tsc"
    fake.write_text(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Version 7.0.2'; exit 0; fi\necho 'fatal: out of memory' >&2\nexit 134\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("TRAILBLAZE_TSC", str(fake))
    report = check(sample_ws)
    assert report.exit_code == 0  # infrastructure problems warn by default, as in the reference
    assert [(t.status, t.reason) for t in report.trails] == [("parsed", "type check could not run")]
    [infra] = report.infra_findings
    assert infra.text == (
        f"{TRAIL}:1:1: type check could not run: the surfaces could not be compiled: "
        "tsc exited 134 (a compile that finds the canary's error exits 1 or 2): fatal: out of memory"
    )
    assert check(sample_ws, require_typecheck=True).exit_code == 3
    monkeypatch.setenv("TRAILBLAZE_TSC", str(tsc.path))
    check(sample_ws)
    assert stats(sample_ws)["files_compiled"] == [TRAIL]  # the failed run was not cached


@pytest.mark.parametrize(
    ("where", "error"),
    [
        ("trailblaze.check.typegate.gate.compile_jobs", RuntimeError("the compile thread crashed")),
        ("trailblaze.check.parse.Parser.regenerate", KeyboardInterrupt()),
    ],
    ids=["compiling", "between-parse-and-compile"],
)
def test_a_check_that_fails_after_the_gate_opened_its_cache_closes_it(
    sample_ws: Path,
    monkeypatch: pytest.MonkeyPatch,
    opened_databases: OpenedDatabases,
    where: str,
    error: BaseException,
) -> None:
    # The gate reads the result cache for the first trail parsed and closed it only at the end
    # of `finish`: a check that failed in between left the connection to be collected.
    check(sample_ws)  # the cache's file exists from now on
    trail = sample_ws / TRAIL
    trail.write_text(trail.read_text() + "# edited\n")

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(where, fails)
    with pytest.raises(type(error)):
        check(sample_ws)
    assert any("state/results.py" in at for _, at in opened_databases.opened)
    assert opened_databases.still_open() == []


def test_missing_surface_import_is_infra(tmp_path: Path, tsc: Compiler) -> None:
    layout = Layout(tmp_path / ".trailblaze")
    gen = layout.trail_file("t.trail.yaml")
    gen.parent.mkdir(parents=True)
    gen.write_text(
        '// GENERATED\nimport type { Client } from "./surfaces/missing";\ndeclare const client: Client;\n'
        "export async function __trail__(): Promise<void> {\n  client.tools.anything({});\n}\n"
    )
    job = Job(
        "t.trail.yaml",
        "app",
        gen,
        pack_lines({5: GenLine(1, None, "anything", 3, 7, "trail[0]")}),
        "k",
    )
    result = compile_jobs([job], tsc, layout, timeout=60)
    assert result.failed == {"t.trail.yaml"}
    [infra] = result.infra
    assert "unmapped diagnostic on the header of the generated module" in infra.message
    assert "TS2307" in infra.message


def test_syntax_error_in_one_file_does_not_hide_the_others(tmp_path: Path, tsc: Compiler) -> None:
    layout = Layout(tmp_path / ".trailblaze")
    jobs = []
    for name, body in (("bad", "  client.tools.x({;\n"), ("good", "  const n: number = 'x';\n")):
        gen = layout.trail_file(f"{name}.trail.yaml")
        gen.parent.mkdir(parents=True, exist_ok=True)
        gen.write_text(
            f"// GENERATED\nexport {{}};\ndeclare const client: any;\nexport async function __trail__(): Promise<void> {{\n{body}}}\n"
        )
        jobs.append(
            Job(
                f"{name}.trail.yaml",
                "app",
                gen,
                pack_lines({5: GenLine(1, None, "x", 3, 7, "trail[0]")}),
                name,
            )
        )
    result = compile_jobs(jobs, tsc, layout, timeout=60)
    assert result.failed == {"bad.trail.yaml"}
    assert [(f.path, f.code) for f in result.findings["good.trail.yaml"]] == [
        ("good.trail.yaml", "TS2322")
    ]
    assert result.compiler_runs == 2


def test_two_concurrent_checks_leave_a_consistent_cache(sample_ws: Path) -> None:
    for i in range(6):
        shutil.copy(sample_ws / TRAIL, sample_ws / f"trailmaps/{SAMPLE}/trails/t{i}.trail.yaml")
    env = {**os.environ, "NO_COLOR": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "trailblaze", "check", str(sample_ws), "--format", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        report = json.loads(out)
        assert [t["status"] for t in report["trails"]] == ["type-checked"] * 7
    with Store.open(sample_ws / ".trailblaze") as store:
        assert len(TrailState.load(store).trails) == 7
    assert check(sample_ws).exit_code == 0
    assert stats(sample_ws)["compiler_runs"] == 0


def corpus_copy(tmp_path: Path) -> Path:
    root = tmp_path / "head"
    shutil.copytree(CORPUS / "head", root)
    shutil.copytree(DATA / "corpus-code" / "head", root, dirs_exist_ok=True)
    return root


def test_corpus_head_workspaces_type_check_with_no_fatal_findings(tmp_path: Path) -> None:
    root = corpus_copy(tmp_path)
    main = check(root)
    assert fatal(main) == []
    checked = [t.path for t in main.trails if t.status == "type-checked"]
    assert len(checked) == 12
    assert all(t.reason != "type check could not run" for t in main.trails)
    # Every trail whose target names a trailmap of this workspace was type-checked.
    assert {t.path for t in main.trails if t.target in ("clock", "contacts") and t.calls} == set(
        checked
    )
    sample = check(root / "examples/android-sample-app")
    assert fatal(sample) == []
    assert [t.path for t in sample.trails if t.status == "type-checked"] == [
        "trails/forms/text-input-generated-user.trail.yaml"
    ]
    reasons = {t.reason for t in sample.trails if t.status == "parsed"}
    assert reasons == {"unknown target"}  # they target the package id, not the trailmap


def test_corpus_without_its_code_reports_the_tools_it_does_not_ship(tmp_path: Path) -> None:
    root = tmp_path / "head"
    shutil.copytree(CORPUS / "head", root)
    report = check(root)
    tools = sorted({f.tool for f in report.fatal_findings if f.tool})
    assert tools == [
        "contacts_ios_createContact",
        "contacts_ios_openApp",
        "contacts_ios_openContact",
        "contacts_ios_searchAndVerify",
        "contacts_ios_searchContacts",
        "contacts_ios_verifyContactStructure",
    ]
    assert {f.code for f in report.fatal_findings} <= {"TS2339", "TS2551"}


def test_results_found_in_the_cache_while_parsing_are_kept(sample_ws: Path) -> None:
    # A trail parsed again (its file changed) whose generated module is already in the result
    # cache: a hit during parsing must end as type-checked, with the cached findings.
    mutate(sample_ws, 18, "tapOnElementBySelector:", "tapOnElementBySelectr:")
    first = check(sample_ws)
    Layout(sample_ws / ".trailblaze").store.unlink()  # forget the state, keep the cache
    again = check(sample_ws)
    assert [t.status for t in again.trails] == ["type-checked"]
    assert fatal(again) == fatal(first) != []
    assert stats(sample_ws)["compiler_runs"] == 0


def test_a_hand_edited_module_surface_is_rendered_again(sample_ws: Path) -> None:
    check(sample_ws)
    surface = Layout(sample_ws / ".trailblaze").surface(SAMPLE)
    original = surface.read_text()
    assert "export interface Tools" in original
    surface.write_text(original.replace("export interface Tools", "export interface Tool"))
    report = check(sample_ws)
    assert surface.read_text() == original
    assert fatal(report) == []
    assert [t.status for t in report.trails] == ["type-checked"]


PROTOTYPE_NAMES = [
    "constructor",
    "toString",
    "toLocaleString",
    "valueOf",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "__proto__",
]


def test_object_prototype_names_are_tools_only_where_a_trailmap_defines_them(
    compact_ws: Path,
) -> None:
    files = {"trailmaps/defs/trailmap.yaml": "id: defs\ntarget:\n  display_name: defs\n"}
    call = (
        "config: {{target: {target}}}\ntrail:\n  - step: s\n    recording:\n      android:\n{calls}"
    )
    for name in PROTOTYPE_NAMES:
        files[f"trailmaps/defs/tools/{name}.tool.yaml"] = (
            f"id: {name}\ndescription: d\nparameters:\n  - name: n\n    type: integer\n"
            "    required: true\ntools:\n  - hideKeyboard: {}\n"
        )
        files[f"trailmaps/app/trails/{name}.trail.yaml"] = call.format(
            target="app", calls=f"        - {name}: {{}}\n"
        )
        files[f"trailmaps/defs/trails/{name}.trail.yaml"] = call.format(
            target="defs", calls=f"        - {name}: {{n: 1}}\n        - {name}: {{n: x}}\n"
        )
    write_tree(compact_ws, files)
    report = check(compact_ws)
    assert {t.status for t in report.trails} == {"type-checked"}
    found = sorted((f.path, f.line, f.tool, f.code) for f in report.fatal_findings)
    unknown = [(f"trailmaps/app/trails/{n}.trail.yaml", 6, n) for n in PROTOTYPE_NAMES]
    defined = [(f"trailmaps/defs/trails/{n}.trail.yaml", 7, n, "TS2322") for n in PROTOTYPE_NAMES]
    # Unknown in `app`: exactly one finding each, at the call (tsc's own words for `__proto__`).
    assert found == sorted(
        [(*u, "TS2339" if u[2] == "__proto__" else "TS2344") for u in unknown] + defined
    )
    messages = {f.tool: f.message for f in report.fatal_findings if "/app/" in f.path}
    # The tool as the user wrote it, not the string literal type of the generated lookup.
    assert (
        messages["constructor"]
        == "Type 'constructor' does not satisfy the constraint 'keyof Tools'."
    )


RUNIF_ONLY_INVALID = f"""\
config: {{target: {SAMPLE}}}
trail:
  - step: dismiss the popup
    recording:
      android:
        - runIf:
            condition: {{selector: {{androidAccessibility: {{textRegex: Not now}}}}}}
            then: [{{pressBack: {{}}}}]
            otherwise: []
"""


def test_a_trail_whose_only_call_is_an_invalid_runif_is_not_type_checked(sample_ws: Path) -> None:
    # Nothing of an invalid runIf tree is emitted: no call of it reached the compiler.
    (sample_ws / TRAIL).write_text(RUNIF_ONLY_INVALID)
    report = check(sample_ws)
    [status] = report.trails
    assert (status.status, status.reason, status.calls) == (
        "parsed",
        "only invalid runIf calls",
        0,
    )
    counts = report.counts()
    assert (counts["type_checked"], counts["calls_type_checked"]) == (0, 0)
    assert counts["not_type_checked"] == {"only invalid runIf calls": 1}
    assert [f.code for f in report.fatal_findings] == ["runif-unknown-key"]
    assert not Layout(sample_ws / ".trailblaze").trail_file(TRAIL).exists()
    # The same from the state, with nothing changed.
    again = check(sample_ws)
    assert again.trails == report.trails
    assert [f.code for f in again.fatal_findings] == ["runif-unknown-key"]


def test_type_checked_calls_are_the_calls_the_compiler_saw(sample_ws: Path) -> None:
    # A valid runIf is its own call and so is each call in it (condition tool, both branches);
    # an invalid runIf is nothing.
    valid = (
        "        - runIf:\n"
        "            condition: {tool: {assertVisibleWithText: {text: Hi}}}\n"
        "            then: [{pressBack: {}}, {tapOnPoint: {x: 1, y: 2}}]\n"
        "            else: [{hideKeyboard: {}}]\n"
        "        - pressBack: {}\n"
    )
    (sample_ws / TRAIL).write_text(RUNIF_ONLY_INVALID + valid)
    report = check(sample_ws)
    [status] = report.trails
    module = Layout(sample_ws / ".trailblaze").trail_file(TRAIL).read_text()
    emitted = module.count("  client.tools.")
    assert (status.status, status.calls, emitted) == ("type-checked", 6, 6)
    assert report.counts()["calls_type_checked"] == 6
    assert [f.code for f in report.fatal_findings] == ["runif-unknown-key"]


def test_a_record_of_an_older_generator_is_counted_again(sample_ws: Path) -> None:
    # The state of generator 2 counted the recorded calls: its type-checked row for a trail
    # whose only call is an invalid runIf must not stand once the generator changed.
    (sample_ws / TRAIL).write_text(RUNIF_ONLY_INVALID)
    assert check(sample_ws).trails[0].status == "parsed"
    with Store.open(sample_ws / ".trailblaze") as store:
        state = TrailState.load(store)
        record = state.trails[TRAIL]
        state.trails[TRAIL] = msgspec.structs.replace(
            record, calls=1, key="0" * 64, surface_key="old", base_key="old"
        )
        state.save(store)
        store.commit()
    report = check(sample_ws)
    assert [(t.status, t.reason, t.calls) for t in report.trails] == [
        ("parsed", "only invalid runIf calls", 0)
    ]
    assert report.counts()["calls_type_checked"] == 0


def test_a_run_with_the_gate_off_leaves_the_generated_modules_alone(sample_ws: Path) -> None:
    check(sample_ws)
    module = Layout(sample_ws / ".trailblaze").trail_file(TRAIL)
    text = module.read_text()
    off = check(sample_ws, typecheck=False)
    assert [t.reason for t in off.trails] == ["type gate disabled"]
    assert module.read_text() == text
    # Served from the state and the result cache: no compiler, and the module is as it was.
    again = check(sample_ws)
    assert [t.status for t in again.trails] == ["type-checked"]
    assert stats(sample_ws)["compiler_runs"] == 0
    assert module.read_text() == text


@pytest.mark.parametrize("lost", ["module", "directory"])
def test_a_lost_module_is_written_again_by_a_run_served_from_the_cache(
    sample_ws: Path, lost: str
) -> None:
    other = f"trailmaps/{SAMPLE}/trails/deep/other.trail.yaml"
    (sample_ws / other).parent.mkdir(parents=True)
    shutil.copy(sample_ws / TRAIL, sample_ws / other)
    check(sample_ws)
    layout = Layout(sample_ws / ".trailblaze")
    texts = {t: layout.trail_file(t).read_text() for t in (TRAIL, other)}
    if lost == "module":
        layout.trail_file(other).unlink()
    else:
        shutil.rmtree(layout.trails_dir)
    report = check(sample_ws)
    assert [t.status for t in report.trails] == ["type-checked", "type-checked"]
    assert stats(sample_ws)["compiler_runs"] == 0  # the verdicts came from the result cache
    assert {t: layout.trail_file(t).read_text() for t in (TRAIL, other)} == texts


def test_a_module_left_by_a_trail_that_is_no_longer_checked_is_removed(sample_ws: Path) -> None:
    check(sample_ws)
    module = Layout(sample_ws / ".trailblaze").trail_file(TRAIL)
    assert module.is_file()
    # Retargeted while the gate was off: the next run does not check it, so its module goes.
    mutate(sample_ws, 3, f"target: {SAMPLE}", "target: elsewhere")
    check(sample_ws, typecheck=False)
    report = check(sample_ws)
    assert [t.reason for t in report.trails] == ["unknown target"]
    assert not module.exists()


def test_doit_check_after_a_run_with_the_gate_off_has_every_module(sample_ws: Path) -> None:
    # The same path through doit: its own up-to-date state, the check run in its process.
    (sample_ws / "dodo.py").write_text(
        "from trailblaze.doit_tasks import DOIT_CONFIG, task_check\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAILBLAZE_")}
    env[TOOLCHAIN_DIR_ENV] = os.environ[TOOLCHAIN_DIR_ENV]

    def doit(**extra: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "doit", "check"],
            cwd=sample_ws,
            capture_output=True,
            text=True,
            env={**env, **extra},
            check=False,
            timeout=120,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    assert "1 type-checked (12 calls)" in doit()
    module = Layout(sample_ws / ".trailblaze").trail_file(TRAIL)
    text = module.read_text()
    assert "type gate disabled: 1" in doit(TRAILBLAZE_DISABLE_TRAIL_RECORDING_VALIDATION="1")
    assert "1 type-checked (12 calls)" in doit()
    assert stats(sample_ws)["compiler_runs"] == 0
    assert module.read_text() == text


@pytest.mark.parametrize(
    ("declared", "checked"),
    [
        ("Record<string, unknown>", False),
        ("Record<string, any>", False),
        ("{ [key: string]: any; note?: string }", False),
        ("Record<string, string>", True),
        ("{ user: string; [key: string]: string }", True),
    ],
)
def test_a_tool_that_takes_any_property_of_any_value_is_not_counted_as_checked(
    compact_ws: Path, declared: str, checked: bool
) -> None:
    # Recorded arguments are a mapping: such a type passes every call, as `unknown` does.
    write_tree(
        compact_ws,
        {
            "trailmaps/app/tools/app_open.ts": (
                'import { trailblaze } from "@trailblaze/scripting";\n'
                f"export const app_open = trailblaze.tool<{declared}>({{}}, async () => 'ok');\n"
            ),
            "trailmaps/app/trails/a.trail.yaml": (
                "config: {target: app}\ntrail:\n  - step: s\n    recording:\n      android:\n"
                "        - app_open: {user: ann, tries: 3}\n"
            ),
        },
    )
    report = check(compact_ws)
    [status] = report.trails
    if checked:
        # A value of another type is refused: the call was checked.
        assert status.status == "type-checked"
        assert [(f.line, f.tool, f.code) for f in report.fatal_findings] == [
            (6, "app_open", "TS2322")
        ]
        return
    assert (status.status, status.reason) == ("parsed", "type check could not run")
    [unchecked] = report.findings
    assert unchecked.text == (
        "trailmaps/app/trails/a.trail.yaml:6:11: not type-checked: input type of `app_open` "
        "unresolved (it accepts any arguments: an index signature of `any` or `unknown`)"
    )


def test_findings_in_every_function_of_a_long_trail_are_at_their_yaml_lines(
    compact_ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A long trail's calls are split into functions of CALLS_PER_FUNCTION: a finding in the
    # first call of a later function, and in the very last call, still points at its YAML line.
    calls = 3 * CALLS_PER_FUNCTION + 17
    bad = {CALLS_PER_FUNCTION, 2 * CALLS_PER_FUNCTION + 5, calls - 1}  # 0-based call numbers
    lines = ["config: {target: app}", "trail:"]
    expected = []
    for n in range(calls):
        lines += [f"  - step: s{n}", "    recording:", "      android:"]
        if n in bad and n % 2:
            lines.append("        - tapOnPoint: {x: 1, y: twenty}")
            expected.append((len(lines), 33, n + 1, "tapOnPoint", "TS2322"))
        elif n in bad:
            lines.append("        - inputText: {txt: hello}")
            expected.append((len(lines), 23, n + 1, "inputText", "TS2561"))  # did you mean
        else:
            lines.append(f"        - inputText: {{text: t{n}}}")
    write_tree(compact_ws, {"trailmaps/app/trails/long.trail.yaml": "\n".join(lines) + "\n"})
    code = main(["check", str(compact_ws), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [
        (f["line"], f["column"], f["step"], f["tool"], f["code"]) for f in report["findings"]
    ] == expected
    assert [(t["status"], t["calls"]) for t in report["trails"]] == [("type-checked", calls)]


def test_a_batch_goes_when_full_or_half_full_to_a_free_compiler_or_split_near_the_end() -> None:
    assert batch_due(BATCH_SIZE, 9000, compiler_free=False) == BATCH_SIZE
    assert batch_due(BATCH_SIZE - 1, 9000, compiler_free=False) == 0
    # A free compiler does not wait for a full batch.
    assert batch_due(BATCH_SIZE // 2, 9000, compiler_free=True) == BATCH_SIZE // 2
    assert batch_due(BATCH_SIZE // 2 - 1, 9000, compiler_free=True) == 0
    # Near the end, once the compiler is free: half of what is pending and what is to come;
    # the rest compiles beside it when the parse ends.
    assert batch_due(900, 300, compiler_free=True) == 750
    assert batch_due(900, 500, compiler_free=True) == 900
    assert batch_due(900, 300, compiler_free=False) == 0
    assert batch_due(600, 700, compiler_free=True) == 0
    # Never smaller than the tail batch while the parse goes on.
    assert batch_due(TAIL_BATCH - 1, 10, compiler_free=True) == 0
    assert batch_due(TAIL_BATCH + 10, 1, compiler_free=True) == TAIL_BATCH
    # After the last chunk the rest waits for `finish` (every core).
    assert batch_due(BATCH_SIZE // 2 - 1, 0, compiler_free=True) == 0


def test_what_is_left_at_the_end_is_split_so_both_compilers_end_together() -> None:
    # Not known yet how fast the first compiler goes: all of it beside the busy one.
    assert beside_share(1000, 0.3, None) == 1000
    # The first is about to be free: half each.
    assert beside_share(1000, 0.0, 0.0005) == 500
    # It has 0.2 s left (400 trails' worth): the second takes 400 more than the first.
    assert beside_share(1000, 0.2, 0.0005) == 700
    # Busy for longer than the rest takes, or its share too small for a run: all beside.
    assert beside_share(1000, 5.0, 0.0005) == 1000
    assert beside_share(2 * SPLIT_MIN - 1, 0.0, 0.0005) == 2 * SPLIT_MIN - 1
    assert beside_share(2 * SPLIT_MIN, 0.0, 0.0005) == SPLIT_MIN


def test_the_rest_queued_behind_a_busy_compiler_is_compiled_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the parse ends while the first compiler is busy and its pace is known, part of
    what is left goes beside it and part waits for it; every trail is compiled once, with
    the same verdicts."""
    import threading  # noqa: PLC0415

    import trailblaze.check.typegate.gate as gate_module  # noqa: PLC0415
    from bench.generate import Spec, generate  # noqa: PLC0415

    manifest = generate(tmp_path / "ws", Spec(trails=300, trailmaps=2))
    one = check(tmp_path / "ws")
    shutil.rmtree(tmp_path / "ws" / ".trailblaze")

    monkeypatch.setattr(gate_module, "SPLIT_MIN", 1)
    due: list[int] = []

    first_done = threading.Event()

    def two_batches(pending: int, to_come: int, *, compiler_free: bool) -> int:
        # Two batches during the parse, the second once the first has told the compiler's
        # pace; the rest is left for the parse's end.
        if len(due) < 2 and pending >= 20:
            if due:
                assert first_done.wait(timeout=10)
            due.append(pending)
            return pending
        return 0

    monkeypatch.setattr(gate_module, "batch_due", two_batches)
    parsed = threading.Event()
    calls: list[tuple[str, int, bool]] = []
    lock = threading.Lock()

    def compiling(jobs: list[Job], *args: Any, **kwargs: Any) -> Any:
        thread = threading.current_thread().name
        with lock:
            first = [c for c in calls if not c[0].startswith("tsc-beside")]
            calls.append((thread, len(jobs), parsed.is_set()))
        if not thread.startswith("tsc-beside") and len(first) == 1:
            # The first thread's second batch lasts until the parse is over: busy then, and
            # its first batch told its pace.
            assert parsed.wait(timeout=10)
        try:
            return compile_jobs(jobs, *args, **kwargs)
        finally:
            first_done.set()

    submit_last = gate_module.TypeGate._submit_last

    def last(self: gate_module.TypeGate) -> None:
        parsed.set()
        submit_last(self)

    monkeypatch.setattr(gate_module, "compile_jobs", compiling)
    monkeypatch.setattr(gate_module.TypeGate, "_submit_last", last)
    many = check(tmp_path / "ws")
    # Two batches during the parse (the second held until its end), then what was left in
    # two: one beside the busy compiler, one queued behind it, of about the same size.
    during = [size for _, size, late in calls if not late]
    after = sorted((thread.startswith("tsc-beside"), size) for thread, size, late in calls if late)
    assert during == due, calls
    assert [beside for beside, _ in after] == [False, True], calls
    rest = len(manifest.eligible) - sum(due)
    assert sum(size for _, size in after) == rest
    assert min(size for _, size in after) >= rest // 4, calls
    assert many.to_json() == one.to_json()


def test_batches_cut_anywhere_give_the_same_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How the trails are cut into compiler runs changes no verdict and loses no trail."""
    import trailblaze.check.typegate.gate as gate_module  # noqa: PLC0415
    from bench.generate import Spec, generate  # noqa: PLC0415

    manifest = generate(tmp_path / "ws", Spec(trails=300, trailmaps=2))
    planted = {(e.trail, e.line) for e in manifest.errors}
    assert planted, "the generated workspace plants errors"
    one = check(tmp_path / "ws")
    assert sum(stats(tmp_path / "ws")["batches"]) == len(manifest.eligible)
    shutil.rmtree(tmp_path / "ws" / ".trailblaze")

    monkeypatch.setattr(gate_module, "BATCH_SIZE", 80)
    monkeypatch.setattr(gate_module, "TAIL_BATCH", 10)
    many = check(tmp_path / "ws")
    run = stats(tmp_path / "ws")
    assert len(run["batches"]) >= 4
    assert max(run["batches"]) <= 80
    assert sum(run["batches"]) == len(manifest.eligible)
    assert sorted(run["files_compiled"]) == sorted(manifest.eligible)
    assert many.to_json() == one.to_json()
    type_errors = {
        (f.path, f.line) for f in many.findings if f.kind == "type" and f.code.startswith("TS")
    }
    assert type_errors == planted


def test_the_batch_left_after_the_parse_compiles_beside_a_busy_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the parse is over, what is left does not wait behind a batch still compiling: it
    runs beside it (the workers' core is free), and the verdicts are the same."""
    import threading  # noqa: PLC0415

    import trailblaze.check.typegate.gate as gate_module  # noqa: PLC0415
    from bench.generate import Spec, generate  # noqa: PLC0415

    manifest = generate(tmp_path / "ws", Spec(trails=300, trailmaps=2))
    one = check(tmp_path / "ws")
    shutil.rmtree(tmp_path / "ws" / ".trailblaze")

    monkeypatch.setattr(gate_module, "BATCH_SIZE", 80)
    overlapped = threading.Event()
    seen_beside: list[bool] = []
    calls: list[int] = []
    lock = threading.Lock()

    def compiling(jobs: list[Job], *args: Any, **kwargs: Any) -> Any:
        with lock:
            calls.append(len(jobs))
            first = len(calls) == 1
        if first:
            # Held until another batch starts: one queued behind it never would.
            seen_beside.append(overlapped.wait(timeout=10))
        else:
            overlapped.set()
        return compile_jobs(jobs, *args, **kwargs)

    monkeypatch.setattr(gate_module, "compile_jobs", compiling)
    many = check(tmp_path / "ws")
    assert seen_beside == [True], f"every batch waited for the one before it: {calls}"
    assert sum(calls) == len(manifest.eligible)
    assert many.to_json() == one.to_json()


def test_an_edited_trail_is_compiling_while_the_unchanged_ones_are_looked_at(
    sample_ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With ten thousand trails, looking at the unchanged ones takes longer than compiling the
    # one an edit changed: its compile starts first and runs beside that loop.
    import trailblaze.check.typegate.gate as gate_module  # noqa: PLC0415

    others = [f"trailmaps/{SAMPLE}/trails/other-{n}.trail.yaml" for n in range(3)]
    for other in others:
        shutil.copy(sample_ws / TRAIL, sample_ws / other)
    check(sample_ws)
    mutate(sample_ws, 22, "textRegex: Tap Me", "textRegex: Tap me")
    # The full stages (a narrow run, `check/narrow.py`, does not look at the unchanged trails
    # at all): without the last run's record.
    Layout(sample_ws / ".trailblaze").last_run.unlink()
    events: list[str] = []
    offer_unchanged = gate_module.TypeGate.offer_unchanged

    def looking(self: gate_module.TypeGate, records: Any) -> list[str]:
        events.append("unchanged trails looked at")
        return offer_unchanged(self, records)

    def compiling(jobs: list[Job], *args: Any, **kwargs: Any) -> Any:
        events.append("compile started: " + ", ".join(job.path for job in jobs))
        return compile_jobs(jobs, *args, **kwargs)

    monkeypatch.setattr(gate_module.TypeGate, "offer_unchanged", looking)
    monkeypatch.setattr(gate_module, "compile_jobs", compiling)
    report = check(sample_ws)
    assert events[0] == f"compile started: {TRAIL}"
    assert "unchanged trails looked at" in events
    assert stats(sample_ws)["files_compiled"] == [TRAIL]
    assert stats(sample_ws)["cache_hits"] == len(others)
    assert fatal(report) == []
