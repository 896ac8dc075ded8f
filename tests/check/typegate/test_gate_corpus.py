"""The type gate over every real trail of the corpus, and proof that each call it counts as
type-checked was checked against a real type.

`tests/data/corpus` (upstream's trails and trailmaps, see its NOTICE) with our stand-ins for its
missing tool modules (`tests/data/corpus-code`) is laid out as one workspace in which every real
trail has a trailmap to be checked against: the upstream trailmaps, the sample app's trailmap
also under the package id its trails name (upstream checks none of them: that id has no
trailmap), and the history and sample-app trails copied into it. A trail with no target gets the
one its directory names, so the clock trails are checked too.

A clean check proves no false failure. It does not prove a call was checked: a tool whose input
type had become `any` or an index signature would pass too. So each generated module is then
compiled again with one fault in every call (a property its type does not declare) and one in
every scalar argument (a value of another type), and tsc must reject every one of them.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import CORPUS, DATA
from trailblaze.check.run import run_check
from trailblaze.check.typegate.settings import COMPILER_OPTIONS
from trailblaze.options import CheckOptions
from trailblaze.report.record import Report
from trailblaze.state.scratch import Layout
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import find_workspace, is_trail_name

pytestmark = pytest.mark.tsc

CODE = DATA / "corpus-code" / "head"
SAMPLE = "head/examples/android-sample-app/trails/config/trailmaps/sampleapp"
PACKAGE = "xyz.block.trailblaze.examples.sampleapp"
TARGET_BY_DIR = (("clock", "clock"), ("contacts", "contacts"), ("android-sample-app", PACKAGE))
"""The target a trail with none is given, by a directory name in its path."""
CALL = re.compile(r"  client\.tools\.(\w+)\(\{(\}\);)?")
SCALAR = re.compile(
    r'^(\s+(?:"[^"]+"|[A-Za-z_$][\w$]*): )("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false)(.*)$'
)
DIAGNOSTIC = re.compile(r"(.+?)\((\d+),(\d+)\): error (TS\d+): ")


def _trails(root: Path) -> list[Path]:
    return [
        p
        for p in sorted(root.rglob("*.yaml"))
        if is_trail_name(p.name) and "config" not in p.relative_to(root).parts
    ]


def _with_target(text: str, target: str) -> str | None:
    """The trail with `target` in its config, or None when it has no config to put it in."""
    if re.search(r"^\s*-?\s*target:", text, flags=re.M):
        return text
    if re.search(r"^config:\n", text, flags=re.M):
        return re.sub(r"^config:\n", f"config:\n  target: {target}\n", text, count=1, flags=re.M)
    if re.search(r"^- config:\n", text, flags=re.M):
        return re.sub(
            r"^- config:\n", f"- config:\n    target: {target}\n", text, count=1, flags=re.M
        )
    return None


def corpus_workspace(root: Path) -> Path:
    """The corpus as one workspace in which every trail has a trailmap (module docstring)."""
    trails = root / "trails"
    shutil.copytree(CORPUS / "head/trails", trails)
    shutil.copytree(CODE / "trails", trails, dirs_exist_ok=True)
    for name in ("sampleapp", PACKAGE):
        trailmap = trails / "config/trailmaps" / name
        shutil.copytree(CORPUS / SAMPLE, trailmap)
        shutil.copytree(CODE / SAMPLE.removeprefix("head/"), trailmap, dirs_exist_ok=True)
        manifest = trailmap / "trailmap.yaml"
        text = manifest.read_text()
        # Exempt upstream for an MCP demo trail that is not in the corpus: its findings would
        # not fail the check, and this test is about findings.
        text = re.sub(r"^trail_validation:\n  exempt: .*\n", "", text, flags=re.M)
        manifest.write_text(text.replace("id: sampleapp", f"id: {name}"))
    sources = [CORPUS / "head/examples/android-sample-app/trails"]
    for commit in sorted((CORPUS / "history").iterdir()):
        sources += [d for d in (commit / "trails", commit / "examples") if d.is_dir()]
    for source in sources:
        for path in _trails(source):
            copy = trails / "corpus" / path.relative_to(CORPUS)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, copy)
    for path in _trails(trails):
        rel = path.relative_to(trails).as_posix()
        target = next((t for part, t in TARGET_BY_DIR if part in rel), None)
        if target is not None and (targeted := _with_target(path.read_text(), target)):
            path.write_text(targeted)
    return root


@dataclass(frozen=True)
class Corpus:
    root: Path
    report: Report


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, tsc: Compiler) -> Corpus:
    root = corpus_workspace(tmp_path_factory.mktemp("corpus") / "ws")
    report = run_check(find_workspace(root, explicit=True), CheckOptions())
    return Corpus(root=root, report=report)


def test_every_real_trail_with_a_trailmap_type_checks_clean(corpus: Corpus) -> None:
    report = corpus.report
    counts = report.counts()
    assert (counts["trails"], counts["rejected"]) == (212, 10)
    assert (counts["type_checked"], counts["calls_type_checked"]) == (94, 414)
    assert counts["infra"] == counts["warnings"] == 0
    assert set(counts["not_type_checked"]) == {"no recorded calls", "no target"}
    # What does fail is wrong: the config key `app` the format no longer has, and a tool of a
    # benchmark trailmap that is not in the corpus.
    assert {(f.kind, f.code, f.message) for f in report.fatal_findings} == {
        ("parse", "unknown-key", "unknown key 'app'"),
        (
            "type",
            "TS2339",
            "Property 'androidworldbenchmarks_runAdbShell' does not exist on type 'ToolMethods'.",
        ),
    }
    assert len(report.fatal_findings) == 12


def _faulty(corpus: Corpus, fault: str) -> tuple[dict[tuple[str, int], str], list[str]]:
    """Every generated module with a fault in each call (`extra`) or scalar argument (`value`),
    written beside the real ones; (file, line) -> tool of each fault, and the modules."""
    typegate = Layout(corpus.root / "trails/.trailblaze").root
    out_dir = typegate / f"faulty-{fault}"
    faults: dict[tuple[str, int], str] = {}
    modules: list[str] = []
    for module in sorted((typegate / "trails").rglob("*.ts")):
        target = out_dir / module.relative_to(typegate / "trails")  # as deep: imports still resolve
        lines, tool = [], ""
        for number, text in enumerate(module.read_text().splitlines(), 1):
            line = text
            call = CALL.match(line)
            if call:
                tool = call.group(1)
                if fault == "extra":
                    head = call.group(0)
                    undeclared = '"__undeclared__": 1'
                    faulty = (
                        head[:-3] + undeclared + "});" if call.group(2) else head + undeclared + ","
                    )
                    line = line.replace(head, faulty, 1)
                    faults[(str(target), number)] = tool
            scalar = SCALAR.match(line)
            if fault == "value" and scalar and tool:
                other = "12345" if scalar.group(2).startswith('"') else '"text"'
                line = scalar.group(1) + other + scalar.group(3)
                faults[(str(target), number)] = tool
            lines.append(line)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines) + "\n")
        modules.append(str(target))
    return faults, modules


def _rejected(tsc: Compiler, corpus: Corpus, modules: list[str]) -> set[tuple[str, int]]:
    typegate = Layout(corpus.root / "trails/.trailblaze").root
    config = typegate / "tsconfig.faulty.json"
    config.write_text(json.dumps({"compilerOptions": COMPILER_OPTIONS, "files": modules}))
    run = subprocess.run(
        [*tsc.argv_prefix, "-p", str(config), "--pretty", "false"],
        capture_output=True,
        text=True,
        check=False,
        cwd=typegate,
        timeout=300,
    )
    found = set()
    for line in run.stdout.splitlines():
        if m := DIAGNOSTIC.match(line):
            found.add((str((typegate / m.group(1)).resolve()), int(m.group(2))))
    return found


@pytest.mark.parametrize("fault", ["extra", "value"])
def test_every_call_counted_as_type_checked_rejects_a_fault(
    corpus: Corpus, tsc: Compiler, fault: str
) -> None:
    faults, modules = _faulty(corpus, fault)
    if fault == "extra":
        # One fault per generated call: exactly the calls the report counts (and the two of the
        # tool that does not exist, in a trail that failed).
        assert len(faults) == corpus.report.counts()["calls_type_checked"] == 414
    else:
        assert len(faults) == 825
    rejected = _rejected(tsc, corpus, modules)
    missed = {where: tool for where, tool in faults.items() if where not in rejected}
    assert missed == {}
