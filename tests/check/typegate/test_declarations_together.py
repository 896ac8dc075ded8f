"""The scripted tools of several trailmaps are emitted by one compiler build (`tsc -b`), with
the verdicts and declarations each would have had from a compile of its own."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from trailblaze.check.typegate import declarations
from trailblaze.cli.main import main
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolchain.proc import ProcResult
from trailblaze.toolchain.proc import run as real_run

HEAD = 'import { trailblaze } from "@trailblaze/scripting";\n'


def tool(name: str, extra: str = "") -> str:
    return (
        HEAD
        + extra
        + f"export const {name} = trailblaze.tool<{{ title: string; count?: number }}>(\n"
        + f'  {{ description: "{name}" }},\n'
        + "  async (input) => input.title,\n);\n"
    )


def trail(target: str, call: str) -> str:
    return (
        f"config: {{target: {target}}}\ntrail:\n  - step: s\n    recording:\n"
        f"      android:\n        - {call}\n"
    )


def trailmap(name: str, files: dict[str, str], call: str) -> dict[str, str]:
    tree = {
        f"trailmaps/{name}/trailmap.yaml": f"id: {name}\ntarget:\n  display_name: {name}\n",
        f"trailmaps/{name}/trails/t.trail.yaml": trail(name, call),
    }
    tree.update({f"trailmaps/{name}/tools/{rel}": text for rel, text in files.items()})
    return tree


# A type error told over several lines, one tool per trailmap otherwise.
WRONG = "const wrong: (x: number) => void = (x: string) => {};\n"

TREE = {
    **trailmap("alpha", {"alpha_open.ts": tool("alpha_open", WRONG)}, "alpha_open: {title: x}"),
    **trailmap("beta", {"beta_open.ts": tool("beta_open")}, "beta_open: {title: 3}"),
    **trailmap("gamma", {"gamma_open.ts": tool("gamma_open")}, "gamma_open: {title: y}"),
    # A tool importing a file outside `tools/`: beyond the emit's rootDir, an error of its own,
    # and in a composite project also a file the project does not list.
    **trailmap(
        "delta",
        {"delta_open.ts": tool("delta_open", 'import { shared } from "../../shared";\n')},
        "delta_open: {title: z}",
    ),
    "trailmaps/shared.ts": "export const shared = 1;\n",
    # A tsconfig of the user's that extends another: compiled as it is, alone.
    **trailmap(
        "epsilon",
        {
            "epsilon_open.ts": tool("epsilon_open"),
            "tsconfig.json": '{"extends": "./base.json", "include": ["*.ts"]}\n',
            "base.json": '{"compilerOptions": {"strict": true, "skipLibCheck": true}}\n',
        },
        "epsilon_open: {title: w}",
    ),
}


class Spy:
    """Every compiler run of the declaration emit, as its arguments."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.argvs: list[list[str]] = []
        real: Callable[..., ProcResult] = real_run

        def spy(argv: Sequence[str], **kwargs: Any) -> ProcResult:
            self.argvs.append(list(argv))
            return real(argv, **kwargs)

        monkeypatch.setattr(declarations, "run", spy)

    def builds(self) -> list[list[str]]:
        return [argv for argv in self.argvs if "-b" in argv]

    def alone(self) -> list[str]:
        """The trailmaps compiled in a process of their own (by their tools' directory)."""
        return sorted(
            Path(argv[argv.index("--rootDir") + 1]).parent.name
            for argv in self.argvs
            if "-p" in argv
        )


def check(ws: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The JSON report of a check of `ws`, the workspace's path in it as `WS`."""
    monkeypatch.chdir(ws)
    out = ws.parent / f"{ws.name}.json"
    assert main(["check", str(ws), "--format", "json", "--output", str(out)]) == 1
    report: dict[str, Any] = json.loads(out.read_text("utf-8").replace(str(ws), "WS"))
    return report


def emitted(ws: Path) -> dict[str, str]:
    root = ws / ".trailblaze/typegate/tooldecl"
    return {str(p.relative_to(root)): p.read_text("utf-8") for p in sorted(root.rglob("*.d.*ts"))}


@pytest.fixture
def pair(tmp_path: Path, tsc: Compiler) -> tuple[Path, Path]:
    together = write_tree(tmp_path / "together", TREE)
    alone = tmp_path / "alone"
    shutil.copytree(together, alone)
    return together, alone


def test_one_build_gives_what_a_compile_each_gives(
    pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    together, alone = pair
    with monkeypatch.context() as patch:
        patch.setattr(declarations, "TOGETHER_MIN", 10**9)
        each = Spy(patch)
        expected = check(alone, patch)
    assert each.builds() == []
    assert each.alone() == ["alpha", "beta", "delta", "epsilon", "gamma"]

    spy = Spy(monkeypatch)
    report = check(together, monkeypatch)
    # One build for the trailmaps; delta's composite project drew a diagnostic about its
    # files, which a compile of its own does not give: delta is compiled again, alone.
    assert len(spy.builds()) == 1
    assert spy.alone() == ["delta", "epsilon"]
    assert report == expected
    assert emitted(together) == emitted(alone)

    tools = sorted(
        (f["path"], f["line"], f["code"]) for f in report["findings"] if f["kind"] == "tool"
    )
    assert tools == [
        ("trailmaps/alpha/tools/alpha_open.ts", 2, "TS2322"),
        ("trailmaps/delta/tools/delta_open.ts", 2, "TS6059"),
    ]
    # The lines that go on alpha's error are its message's, as from a compile of its own.
    (wrong,) = [f for f in report["findings"] if f["code"] == "TS2322" and f["kind"] == "tool"]
    assert "Types of parameters 'x' and 'x' are incompatible" in wrong["message"]
    assert [f["code"] for f in report["findings"] if f["kind"] == "type"] == ["TS2322"]
    statuses = {t["path"].split("/")[1]: t["status"] for t in report["trails"]}
    assert statuses == {
        "alpha": "type-checked",
        "beta": "type-checked",
        "delta": "type-checked",
        "epsilon": "type-checked",
        "gamma": "type-checked",
    }


@pytest.mark.parametrize(
    "said",
    [
        # A build that fails without a word of any project.
        ProcResult(("tsc",), 3, "", "fatal: out of memory\n", 0.1),
        # A build that says what no project owns.
        ProcResult(("tsc",), 0, "something else entirely\n", "", 0.1),
    ],
    ids=["fails", "unknown output"],
)
def test_a_build_that_cannot_be_read_leaves_each_trailmap_to_a_compile_of_its_own(
    pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, said: ProcResult
) -> None:
    together, alone = pair
    with monkeypatch.context() as patch:
        patch.setattr(declarations, "TOGETHER_MIN", 10**9)
        expected = check(alone, patch)
    real: Callable[..., ProcResult] = real_run
    argvs: list[list[str]] = []

    def broken(argv: Sequence[str], **kwargs: Any) -> ProcResult:
        argvs.append(list(argv))
        return said if "-b" in argv else real(argv, **kwargs)

    monkeypatch.setattr(declarations, "run", broken)
    assert check(together, monkeypatch) == expected
    assert emitted(together) == emitted(alone)
    assert sum("-b" in argv for argv in argvs) == 1
    assert sum("-p" in argv for argv in argvs) == 5


BUILD = """\
10:40:58 PM - Projects in this build:
    * tmp/x/p0.json
    * tmp/x/p2.json
    * tmp/x/build.json

10:40:58 PM - Project 'tmp/x/p0.json' is out of date because output file 'tmp/x/p0.tsbuildinfo' does not exist

10:40:58 PM - Building project 'tmp/x/p0.json'...

ws/a/tools/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.
  A line that goes on.
/ws/a/tools/a.ts
10:40:58 PM - Project 'tmp/x/p2.json' is out of date because output file 'tmp/x/p2.tsbuildinfo' does not exist

10:40:58 PM - Building project 'tmp/x/p2.json'...

/ws/b/tools/b.ts
"""

NAMES = {"p0.json": 0, "p2.json": 2}


def test_a_build_is_split_into_each_projects_lines() -> None:
    sections = declarations._build_sections(BUILD, NAMES)
    assert sections == {
        0: [
            "",
            "ws/a/tools/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.",
            "  A line that goes on.",
            "/ws/a/tools/a.ts",
        ],
        2: ["", "/ws/b/tools/b.ts"],
    }
    assert all(declarations._all_owned(lines) for lines in sections.values())


@pytest.mark.parametrize(
    "output",
    [
        BUILD.replace("    * tmp/x/p2.json\n", "    * tmp/x/p2.json\nerror TS5083: no\n"),
        BUILD + "10:40:58 PM - Building project 'tmp/x/p0.json'...\n",  # twice
        BUILD + "10:40:58 PM - Building project 'tmp/x/p9.json'...\n",  # not ours
    ],
    ids=["stray line", "a project twice", "an unknown project"],
)
def test_a_build_with_output_no_project_owns_is_not_read(output: str) -> None:
    assert declarations._build_sections(output, NAMES) is None


def test_a_listed_file_named_like_a_note_of_the_build_is_its_projects() -> None:
    odd = "/ws/b/tools/x - Building project 'tmp/x/p0.json'..."
    sections = declarations._build_sections(BUILD + odd + "\n", NAMES)
    assert sections is not None
    assert sections[2][-1] == odd


@pytest.mark.parametrize(
    "lines",
    [
        ["error TS5023: Unknown compiler option 'x'."],
        ["  a line going on from nothing"],
        ["Found 1 error."],
    ],
)
def test_a_project_line_that_is_no_diagnostic_nor_listed_file_is_not_owned(
    lines: list[str],
) -> None:
    assert not declarations._all_owned(["/ws/a.ts", *lines])


def test_a_tsconfig_of_the_users_that_names_a_declaration_dir_gets_nothing_written_there(
    tmp_path: Path, tsc: Compiler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`declarationDir` in a user's tsconfig would send the emit's declarations into the
    workspace (a file we do not own, and one the surfaces would not find): in one build and in
    a compile of its own alike, they go to the scratch directory, and the calls are checked."""
    own = (
        '{"compilerOptions": {"strict": true, "declarationDir": "./types"}, "include": ["*.ts"]}\n'
    )
    ws = write_tree(
        tmp_path / "ws",
        {
            **trailmap(
                "alpha",
                {"alpha_open.ts": tool("alpha_open"), "tsconfig.json": own},
                "alpha_open: {title: 3}",
            ),
            **trailmap("beta", {"beta_open.ts": tool("beta_open")}, "beta_open: {title: 4}"),
            **trailmap("delta", {"delta_open.ts": tool("delta_open")}, "delta_open: {title: 6}"),
            **trailmap(
                "gamma",
                {
                    "gamma_open.ts": tool("gamma_open"),
                    "tsconfig.json": '{"extends": "./base.json", "include": ["*.ts"]}\n',
                    "base.json": own,
                },
                "gamma_open: {title: 5}",
            ),
        },
    )
    spy = Spy(monkeypatch)
    report = check(ws, monkeypatch)
    # The users' tsconfigs are compiled as they are (extended by ours, which places our
    # surface), each alone; ours in one build.
    assert len(spy.builds()) == 1
    assert spy.alone() == ["alpha", "gamma"]
    assert sorted(p.relative_to(ws).as_posix() for p in ws.rglob("types")) == []
    assert [p for p in ws.rglob("*.d.ts") if p.name != "trailblaze-client.d.ts"] == [
        p for p in ws.rglob("*.d.ts") if ".trailblaze" in p.relative_to(ws).parts
    ]
    # Each trail's wrong title is found against its tool's own declared type.
    assert sorted(
        (f["path"].split("/")[1], f["code"]) for f in report["findings"] if f["kind"] == "type"
    ) == [("alpha", "TS2322"), ("beta", "TS2322"), ("delta", "TS2322"), ("gamma", "TS2322")]
