"""The declarations of scripted tools: a tool module the tool reader refuses is not compiled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import run_python, write_tree
from trailblaze.toolchain.compilers import Compiler
from trailblaze.yaml.text import MAX_FILE_BYTES

HEAD = 'import { trailblaze } from "@trailblaze/scripting";\n'
BIG = (
    HEAD
    + "export const big_tool = trailblaze.tool<{ v: string }>("
    + '{ description: "big" }, async (i) => i.v);\n'
    + 'const wrong: number = "a type error the compiler would report";\n'
)
PADDING = "// padding of a generated file\n"


def check(ws: Path) -> dict[str, Any]:
    result = run_python(ws, "-m", "trailblaze", "check", "--format", "json")
    assert "Traceback" not in result.stderr, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_a_tool_module_reported_as_not_read_is_not_compiled(tmp_path: Path, tsc: Compiler) -> None:
    ws = write_tree(
        tmp_path / "ws",
        {
            "trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: app\n",
            "trailmaps/app/tools/big.ts": BIG,
            "trailmaps/app/tools/small.ts": HEAD
            + "export const small_tool = trailblaze.tool<{ w: string }>("
            + '{ description: "small" }, async (i) => i.w);\n',
            "trailmaps/app/trails/t.trail.yaml": (
                "config: {target: app}\ntrail:\n  - step: s\n    recording:\n      android:\n"
                "        - small_tool: {w: text}\n"
            ),
        },
    )
    big = ws / "trailmaps/app/tools/big.ts"
    first = check(ws)  # compiled: its type error is a tool finding, its calls checked
    assert [(f["kind"], f["line"]) for f in first["findings"]] == [("tool", 3)]
    assert [t["status"] for t in first["trails"]] == ["type-checked"]

    big.write_text(BIG + PADDING * (MAX_FILE_BYTES // len(PADDING) + 1))
    report = check(ws)
    at_big = sorted(
        (f["kind"], f["message"]) for f in report["findings"] if f["path"].endswith("big.ts")
    )
    assert at_big == [
        (
            "infra",
            "not compiled: file is 5.0 MiB; files over 5 MiB are not read; the scripted tools "
            "of trailmap 'app' are not type-checked",
        ),
        ("manifest", "file is 5.0 MiB; files over 5 MiB are not read"),
    ]
    # Its trailmap's other tools are not checked either, not even against the declarations
    # the last compile left behind.
    assert [t["status"] for t in report["trails"]] == ["parsed"]
    assert report["exit_code"] == 1

    big.write_text(BIG)
    assert check(ws)["findings"] == first["findings"]
