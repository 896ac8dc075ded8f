from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import MINIMAL_MANIFEST, run_python, write_tree
from trailblaze.runs.monorepo import find_monorepo
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.toolmodel.tooldefs import RelPath, load_trailmap_tools
from trailblaze.workspace import (
    SettingsError,
    WorkspaceError,
    find_workspace,
    is_project_config,
    scan,
    scan_trailmaps,
    trailmap_files,
)


def test_compact_layout_is_found_from_a_subdirectory(compact_ws: Path) -> None:
    deep = compact_ws / "trailmaps" / "app" / "trails"
    deep.mkdir(parents=True)
    ws = find_workspace(deep)
    assert (ws.root, ws.layout) == (compact_ws, "compact")
    assert ws.trailmaps_dir == compact_ws / "trailmaps"
    assert ws.trails_dir == compact_ws / "trailmaps"
    assert ws.scratch == compact_ws / ".trailblaze"


def test_trailblaze_layout_is_found_even_from_inside_its_config_dir(tmp_path: Path) -> None:
    write_tree(
        tmp_path, {"trails/config/trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app")}
    )
    for start in (
        tmp_path,
        tmp_path / "trails" / "config",
        tmp_path / "trails/config/trailmaps/app",
    ):
        ws = find_workspace(start)
        assert (ws.root, ws.layout) == (tmp_path, "trailblaze")
        assert ws.trails_dir == tmp_path / "trails"
        assert ws.scratch == tmp_path / "trails" / ".trailblaze"


def test_pyproject_overrides_detection(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": """
                [tool.trailblaze]
                trailmaps = "ui/maps"
                trails = "ui"
                scratch = "build-cache/tb"
                exclude = ["fixtures"]
                allow-host-programs = ["adb", "scripts/seed.sh"]
            """,
            "ui/maps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app"),
            "ui/flows/a.trail.yaml": "trail:\n  - step: a\n",
            "ui/fixtures/b.trail.yaml": "trail:\n  - step: b\n",
        },
    )
    ws = find_workspace(tmp_path / "ui")
    assert ws.root == tmp_path
    assert ws.trailmaps_dir == tmp_path / "ui/maps"
    assert ws.scratch == tmp_path / "build-cache/tb"
    assert ws.allow_host_programs == ("adb", "scripts/seed.sh")
    found = scan(ws)
    assert [t.dir_name for t in found.trailmaps] == ["app"]
    assert [ws.rel(p) for p in found.trails] == ["ui/flows/a.trail.yaml"]


def test_bad_tool_trailblaze_table_is_a_usage_error(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": "[tool.trailblaze]\nlayuot = 'compact'\n"})
    with pytest.raises(WorkspaceError, match="unknown key 'layuot'"):
        find_workspace(tmp_path)


def test_an_unreadable_pyproject_is_the_same_located_error_for_a_workspace_and_a_monorepo(
    tmp_path: Path,
) -> None:
    root = tmp_path.resolve()
    write_tree(root, {"pyproject.toml": "[tool.trailblaze\n", "trailmaps/app/trailmap.yaml": ""})
    expected = (
        f"{root / 'pyproject.toml'}:1:17: cannot read: Expected ']' at the end of a table "
        "declaration"
    )
    for find in (find_workspace, find_monorepo):
        with pytest.raises(WorkspaceError) as caught:
            find(root)
        assert str(caught.value) == expected, find
    write_tree(root, {"pyproject.toml": '[tool.trailblaze]\nworkspaces = "apps"\n'})
    with pytest.raises(WorkspaceError) as caught:
        find_monorepo(root)
    assert str(caught.value) == (
        f"{root / 'pyproject.toml'}:2:1: [tool.trailblaze] workspaces must be a list of paths "
        "or globs"
    )


BAD_TABLES = [
    ("tool = 1\n", "1:1: [tool] must be a table, not 1"),
    ("tool = [1]\n", "1:1: [tool] must be a table, not [1]"),
    ('[tool]\ntrailblaze = "x"\n', "2:1: [tool.trailblaze] must be a table, not 'x'"),
    (
        '[project]\nname = "shop"\n\n[tool.trailblaze]\n# the apps\n  workspaces = "apps/*"\n',
        "6:3: [tool.trailblaze] workspaces must be a list of paths or globs",
    ),
    (
        "[tool.trailblaze]\nworkspaces = [1]\n",
        "2:1: [tool.trailblaze] workspaces must be a list of paths or globs",
    ),
    (
        "[tool.trailblaze]\nworkspaces = []\n",
        "2:1: [tool.trailblaze] workspaces must be a list of paths or globs",
    ),
    (
        '[tool]\ntrailblaze.workspaces = { apps = "x" }\n',
        "2:1: [tool.trailblaze] workspaces must be a list of paths or globs",
    ),
    (
        "tool.trailblaze.exclude = 3\n",
        "1:1: [tool.trailblaze] exclude must be a list of directory names",
    ),
    (
        '[tool.ruff]\nhelp = """\nlayout = 1\n"""\n[tool.trailblaze]\nlayout = "Compact"\n',
        "6:1: [tool.trailblaze] layout must be 'compact' or 'trailblaze', not 'Compact'",
    ),
    (
        "tool = { trailblaze = { scratch = 7 } }\n",
        "1:1: [tool.trailblaze] scratch must be a path string",
    ),
    (  # a NUL names no file: os.path raised ValueError
        '[tool.trailblaze]\ntrails = "ui\\u0000"\n',
        "2:1: [tool.trailblaze] trails must be a path string",
    ),  # The host programs a recording may run: a list of names or paths, each one program.
    (
        '[tool.trailblaze]\nlayout = "compact"\nallow-host-programs = "adb"\n',
        "3:1: [tool.trailblaze] allow-host-programs must be a list of program names or paths, "
        "not 'adb'",
    ),
    (
        "[tool.trailblaze]\nallow-host-programs = [\n  'adb',\n  3,\n]\n",
        "2:1: [tool.trailblaze] allow-host-programs[1] must be a program name or path "
        "(a string), not 3",
    ),
    (
        '[tool.trailblaze]\nallow-host-programs = ["adb "]\n',
        "2:1: [tool.trailblaze] allow-host-programs[0] 'adb ' is not a program: a name such as "
        "'adb' or a path such as 'scripts/seed.sh', without surrounding spaces",
    ),
    (
        '[tool.trailblaze]\nallow-host-programs = ["adb", ""]\n',
        "2:1: [tool.trailblaze] allow-host-programs[1] '' is not a program: a name such as "
        "'adb' or a path such as 'scripts/seed.sh', without surrounding spaces",
    ),
    (
        '[tool.trailblaze]\nallow-host-programs = ["scripts/"]\n',
        "2:1: [tool.trailblaze] allow-host-programs[0] 'scripts/' names a directory, not a program",
    ),
    (
        "[tool.trailblaze]\n\nallow-host-program = ['adb']\n",
        "3:1: [tool.trailblaze]: unknown key 'allow-host-program'; expected allow-host-programs, "
        "exclude, layout, remote-cache-public-keys, scratch, trailmaps, trails, workspaces",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD_TABLES)
def test_a_bad_tool_trailblaze_table_is_one_error_at_its_line(
    tmp_path: Path, text: str, message: str
) -> None:
    root = tmp_path.resolve()
    write_tree(
        root,
        {"pyproject.toml": text, "trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app")},
    )
    expected = f"{root / 'pyproject.toml'}:{message}"
    for find in (find_workspace, find_monorepo):
        with pytest.raises(WorkspaceError) as caught:
            find(root)
        assert str(caught.value) == expected, find


def test_a_bad_table_is_one_line_from_trailblaze_check_and_doit_check(tmp_path: Path) -> None:
    """The same error, no traceback, exit 2, from both commands, at a workspace and at a
    monorepo root."""
    tmp_path = tmp_path.resolve()
    manifest = MINIMAL_MANIFEST.format(id="app")
    shapes = {
        "workspace": ("", {"trailmaps/app/trailmap.yaml": manifest}, "check"),
        "monorepo": ("apps/*", {"apps/a/trailmaps/app/trailmap.yaml": manifest}, "check --all"),
    }
    dodos = {
        "workspace": "from trailblaze.doit_tasks import DOIT_CONFIG, task_check\n",
        "monorepo": "from trailblaze.doit_tasks import monorepo_config, monorepo_tasks\n"
        "DOIT_CONFIG = monorepo_config()\nglobals().update(monorepo_tasks())\n",
    }
    for name, (_, files, command) in shapes.items():
        # doit itself reads pyproject.toml's [tool.doit] first and fails on a `tool = 1`; a
        # `tool.trailblaze` that is not a table and a bad `workspaces` are ours to report.
        for text, line in (
            (
                '[tool]\ntrailblaze = "apps/*"\n',
                "2:1: [tool.trailblaze] must be a table, not 'apps/*'",
            ),
            (
                '[tool.trailblaze]\nworkspaces = "apps/*"\n',
                "2:1: [tool.trailblaze] workspaces must be a list of paths or globs",
            ),
            (
                "[tool.trailblaze]\nallow-host-programs = 'adb'\n",
                "2:1: [tool.trailblaze] allow-host-programs must be a list of program names or "
                "paths, not 'adb'",
            ),
        ):
            root = tmp_path / f"{name}-{len(text)}"
            write_tree(root, {**files, "pyproject.toml": text, "dodo.py": dodos[name]})
            expected = f"trailblaze check: {root / 'pyproject.toml'}:{line}\n"
            cli = run_python(root, "-m", "trailblaze", *command.split())
            assert (cli.returncode, cli.stderr) == (2, expected), (name, text)
            doit = run_python(root, "-m", "doit", "check")
            assert doit.returncode == 2, (name, text, doit.stdout, doit.stderr)
            assert "Traceback" not in doit.stdout + doit.stderr
            assert expected in doit.stdout, (name, text)
    # `tool = 1` at a workspace whose dodo.py is elsewhere: doit never reads it, we do.
    root = tmp_path / "elsewhere"
    write_tree(
        root, {"ws/trailmaps/app/trailmap.yaml": manifest, "ws/pyproject.toml": "tool = 1\n"}
    )
    write_tree(
        root,
        {
            "dodo.py": "from trailblaze.doit_tasks import doit_config, make_tasks\n"
            'DOIT_CONFIG = doit_config("ws")\nglobals().update(make_tasks("ws"))\n'
        },
    )
    expected = (
        f"trailblaze check: {root / 'ws' / 'pyproject.toml'}:1:1: [tool] must be a table, not 1\n"
    )
    cli = run_python(root / "ws", "-m", "trailblaze", "check")
    assert (cli.returncode, cli.stderr) == (2, expected)
    doit = run_python(root, "-m", "doit", "check")
    assert doit.returncode == 2, doit.stdout + doit.stderr
    assert expected in doit.stdout


def test_monorepo_roots_say_so_and_refuse_absolute_and_dot_workspaces(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    write_tree(
        root,
        {
            "pyproject.toml": '[tool.trailblaze]\nworkspaces = ["apps/*"]\n',
            "apps/a/trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app"),
        },
    )
    hint = (
        f"'{root}' is a monorepo root (its pyproject.toml's [tool.trailblaze] names workspaces): "
        "run inside one of them or name one, or check them all with 'trailblaze check --all'"
    )
    with pytest.raises(WorkspaceError) as caught:
        find_workspace(root / "apps")
    assert str(caught.value) == f"no workspace found from '{root / 'apps'}': {hint}"
    with pytest.raises(WorkspaceError) as caught:
        find_workspace(root, explicit=True)
    assert str(caught.value) == f"'{root}' is not a workspace: {hint}"
    assert [ws.root for ws in find_monorepo(root).workspaces] == [root / "apps" / "a"]
    # glob() raises on these (NotImplementedError, IndexError): they are refused by name.
    with pytest.raises(WorkspaceError) as caught:
        find_monorepo(root, ["/etc"])
    assert str(caught.value) == f"workspace '/etc' is outside {root}"
    with pytest.raises(WorkspaceError, match=r"^'\.' is not a workspace"):
        find_monorepo(root, ["."])
    assert [ws.root for ws in find_monorepo(root, ["apps/a/"]).workspaces] == [root / "apps/a"]


def test_no_workspace_is_an_error_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="no workspace found"):
        find_workspace(tmp_path)
    with pytest.raises(WorkspaceError, match="is not a workspace"):
        find_workspace(tmp_path, explicit=True)


def test_scan_applies_names_exclusions_and_project_config_rules(compact_ws: Path) -> None:
    trail = "trail:\n  - step: a\n"
    write_tree(
        compact_ws,
        {
            "trailmaps/app/trails/a.trail.yaml": trail,
            "trailmaps/app/trails/b/trail.yaml": trail,
            "trailmaps/app/trails/c/blaze.yaml": "- prompts:\n    - step: c\n",
            "trailmaps/app/trails/d/trailblaze.yaml": trail,
            "trailmaps/app/trailblaze.yaml": "# just comments\n",
            "trailmaps/app/trails/cfg/trailblaze.yaml": "targets:\n  - app\n",
            "trailmaps/app/trails/notes.yaml": trail,
            "trailmaps/app/trails/mytrail.yaml": trail,
            "trailmaps/app/node_modules/x.trail.yaml": trail,
            "trailmaps/app/build/x.trail.yaml": trail,
            "trailmaps/app/.trailblaze/x.trail.yaml": trail,
            "trailmaps/app/.git/x.trail.yaml": trail,
            "trailmaps/app/.claude/x.trail.yaml": trail,
            "trailmaps/notamap/readme.txt": "no manifest here",
        },
    )
    (compact_ws / "trailmaps/app/trails/dir.trail.yaml").mkdir()
    ws = find_workspace(compact_ws)
    found = scan(ws)
    assert [ws.rel(p) for p in found.trails] == [
        "trailmaps/app/trails/a.trail.yaml",
        "trailmaps/app/trails/b/trail.yaml",
        "trailmaps/app/trails/c/blaze.yaml",
        "trailmaps/app/trails/d/trailblaze.yaml",
        "trailmaps/app/trails/dir.trail.yaml",
    ]
    assert [t.dir_name for t in found.trailmaps] == ["app"]


def test_a_scratch_directory_configured_among_the_trails_is_not_scanned(tmp_path: Path) -> None:
    """Its `files/` holds copies of trails checked one by one (from outside the workspace):
    they were counted as the workspace's own trails by the next check."""
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.trailblaze]\nscratch = "trailmaps/tmp"\n',
            "trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app"),
            "trailmaps/app/a.trail.yaml": "trail:\n  - step: a\n",
            "trailmaps/tmp/files/input/0/outside.trail.yaml": "trail:\n  - step: b\n",
        },
    )
    ws = find_workspace(tmp_path)
    assert ws.scratch == tmp_path.resolve() / "trailmaps" / "tmp"
    assert [ws.rel(p) for p in scan(ws).trails] == ["trailmaps/app/a.trail.yaml"]


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ("directory", "is a directory, not a file"),
        ("dangling link", "cannot read file: No such file or directory"),
        ("link loop", "cannot read file: Too many levels of symbolic links"),
    ],
)
def test_a_trailmap_yaml_that_cannot_be_read_is_a_located_error_not_a_vanished_trailmap(
    tmp_path: Path, broken: str, message: str
) -> None:
    """Skipped before: the trailmap was not one, its trails passed as 'unknown target'."""
    root = write_tree(
        tmp_path / "ws",
        {
            "trailmaps/app/a.trail.yaml": "config: {target: app}\ntrail:\n  - step: a\n"
            "    recording:\n      android:\n        - pressBack: {}\n",
            "dodo.py": "from trailblaze.doit_tasks import DOIT_CONFIG, task_check, task_surfaces\n",
        },
    )
    manifest = root / "trailmaps" / "app" / "trailmap.yaml"
    if broken == "directory":
        manifest.mkdir()
    else:
        manifest.symlink_to("nowhere.yaml" if broken == "dangling link" else "trailmap.yaml")
    expected = f"manifest: trailmaps/app/trailmap.yaml:1:1: {message}"
    cli = run_python(root, "-m", "trailblaze", "check")
    assert cli.returncode == 1, cli.stdout + cli.stderr
    assert expected in cli.stdout.splitlines()
    assert "no typed surface" in cli.stdout
    for task in ("check", "surfaces"):  # a failed task, not doit's own error on its file_dep
        doit = run_python(root, "-m", "doit", task)
        assert doit.returncode == 1, doit.stdout + doit.stderr
        assert "Traceback" not in doit.stdout + doit.stderr


def test_symlinks_out_of_the_workspace_are_not_followed(
    compact_ws: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    write_tree(
        outside,
        {"x.trail.yaml": "trail:\n  - step: a\n", "sub/y.trail.yaml": "trail:\n  - step: b\n"},
    )
    trails = compact_ws / "trailmaps" / "app" / "trails"
    trails.mkdir(parents=True)
    os.symlink(outside / "x.trail.yaml", trails / "linked.trail.yaml")
    os.symlink(outside / "sub", trails / "linkeddir")
    ws = find_workspace(compact_ws)
    found = scan(ws)
    assert found.trails == ()
    assert [f.text for f in found.findings] == [
        f"trailmaps/app/trails/linked.trail.yaml:1:1: symlink to '{outside / 'x.trail.yaml'}' "
        "outside the workspace; not checked"
    ]


def test_misnamed_manifest_is_pointed_out(compact_ws: Path) -> None:
    write_tree(compact_ws, {"trailmaps/other/trailmap.yml": "id: other\n"})
    found = scan(find_workspace(compact_ws))
    assert [f.text for f in found.findings] == [
        "trailmaps/other/trailmap.yml:1:1: a trailmap manifest must be named 'trailmap.yaml'; "
        "this directory is not read as a trailmap"
    ]


def test_scan_trailmaps_is_the_trailmap_half_of_scan(compact_ws: Path) -> None:
    write_tree(
        compact_ws,
        {
            "trailmaps/other/trailmap.yml": "id: other\n",
            "trailmaps/app/trails/a.trail.yaml": "trail:\n  - step: a\n",
        },
    )
    ws = find_workspace(compact_ws)
    found = scan(ws)
    assert scan_trailmaps(ws) == (found.trailmaps, found.findings)
    assert [t.dir_name for t in found.trailmaps] == ["app"]
    assert len(found.trail_paths) == 1


def test_the_generator_reads_exactly_the_tool_files_the_check_stamps(compact_ws: Path) -> None:
    """One walk: a tool file under an excluded directory is neither read nor an input."""
    tool = "id: {id}\ndescription: A tool.\ntools:\n  - hideKeyboard: {{}}\n"
    write_tree(
        compact_ws,
        {
            "pyproject.toml": '[tool.trailblaze]\nexclude = ["fixtures"]\n',
            "trailmaps/app/tools/app_a.tool.yaml": tool.format(id="app_a"),
            "trailmaps/app/tools/nested/app_b.tool.yaml": tool.format(id="app_b"),
            "trailmaps/app/tools/fixtures/app_f.tool.yaml": tool.format(id="app_f"),
            "trailmaps/app/tools/build/app_x.tool.yaml": tool.format(id="app_x"),
            "trailmaps/app/tools/.gradle/app_y.tool.yaml": tool.format(id="app_y"),
            "trailmaps/app/tools/node_modules/app_z.tool.yaml": tool.format(id="app_z"),
            "trailmaps/app/tools/.trailblaze/app_s.tool.yaml": tool.format(id="app_s"),
            "trailmaps/app/tools/screens.trail.gen.ts": "export const app_gen = 1;\n",
            "trailmaps/app/tools/tsconfig.json": "{}\n",
        },
    )
    ws = find_workspace(compact_ws)
    (trailmap,) = scan(ws).trailmaps
    inputs = set(trailmap_files(trailmap))
    loaded = load_trailmap_tools(trailmap.path, RelPath(ws.root), load_catalog())
    assert not [f.text for f in loaded.findings]
    assert sorted(loaded.tools) == ["app_a", "app_b", "app_f"]
    assert set(loaded.files) <= inputs
    assert inputs - set(loaded.files) == {trailmap.manifest}


@pytest.mark.parametrize(
    ("text", "is_config"),
    [
        ("# comments only\n\n", True),
        ("targets:\n  - a\n", True),
        ("llm:\n  provider: x\n", True),
        ("config:\n  target: a\ntrail:\n  - step: a\n", False),
    ],
)
def test_project_config_detection(text: str, is_config: bool) -> None:
    assert is_project_config(text) is is_config


def test_trailblaze_yaml_alone_marks_a_workspace_as_the_reference_s_runtime_does(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path, {"app/trails/config/trailblaze.yaml": "targets:\n  - app\n"})
    for start in (tmp_path / "app", tmp_path / "app/trails/config"):
        ws = find_workspace(start)
        assert (ws.root, ws.layout) == (tmp_path / "app", "trailblaze")
    assert scan(find_workspace(tmp_path / "app")).trailmaps == ()


def test_config_dir_names_where_the_trailmaps_are_and_is_part_of_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = MINIMAL_MANIFEST.format(id="app")
    write_tree(
        tmp_path,
        {
            "trails/config/trailmaps/root/trailmap.yaml": MINIMAL_MANIFEST.format(id="root"),
            "examples/x/trails/config/trailmaps/app/trailmap.yaml": manifest,
        },
    )
    monkeypatch.chdir(tmp_path)
    plain = find_workspace()
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", "examples/x/trails/config")
    ws = find_workspace()
    config = tmp_path / "examples/x/trails/config"
    assert (ws.root, ws.trails_dir, ws.scratch) == (plain.root, plain.trails_dir, plain.scratch)
    assert (ws.trailmaps_dir, ws.config_dir, ws.targets_dir) == (
        config / "trailmaps",
        config,
        config / "targets",
    )
    assert [t.dir_name for t in scan(ws).trailmaps] == ["app"]
    assert ws.settings != plain.settings  # every key that repeats a verdict holds it
    assert ws.settings["config_dir"] == "examples/x/trails/config"  # the same on any machine
    # Blank is unset, as the reference reads it.
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", " ")
    assert find_workspace() == plain


def test_config_dir_outside_any_workspace_brings_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(
        tmp_path,
        {"pkg/trails/config/trailmaps/app/trailmap.yaml": MINIMAL_MANIFEST.format(id="app")},
    )
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", str(tmp_path / "pkg/trails/config"))
    ws = find_workspace()
    assert (ws.root, ws.trailmaps_dir) == (
        tmp_path / "pkg",
        tmp_path / "pkg/trails/config/trailmaps",
    )


def test_a_bad_config_dir_is_a_settings_error_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"trails/config/trailblaze.yaml": "targets: []\n"})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRAILBLAZE_CONFIG_DIR", "trails/config/trailblaze.yaml")
    with pytest.raises(SettingsError) as raised:
        find_workspace()
    assert str(raised.value).startswith(
        f"TRAILBLAZE_CONFIG_DIR=trails/config/trailblaze.yaml: "
        f"'{tmp_path / 'trails/config/trailblaze.yaml'}' is not a directory: it must name"
    )


def test_the_older_packs_layout_gets_a_hint_naming_what_to_rename(tmp_path: Path) -> None:
    write_tree(tmp_path, {"trails/config/packs/shop/pack.yaml": "id: shop\n"})
    with pytest.raises(WorkspaceError) as raised:
        find_workspace(tmp_path / "trails")
    assert str(raised.value) == (
        f"no workspace found from '{tmp_path / 'trails'}': 'trails/config/packs/shop/pack.yaml' "
        "is the older layout, where trailmaps were packs: rename each 'packs/<id>/pack.yaml' to "
        "'trailmaps/<id>/trailmap.yaml' (here 'trails/config/trailmaps/shop/trailmap.yaml')"
    )
    # With its anchor, it is a workspace: each pack is a warning at its file, never fatal.
    write_tree(tmp_path, {"trails/config/trailblaze.yaml": "targets:\n  - shop\n"})
    found = scan(find_workspace(tmp_path))
    assert found.trailmaps == ()
    [warning] = found.findings
    assert (warning.path, warning.line, warning.kind, warning.fatal) == (
        "trails/config/packs/shop/pack.yaml",
        1,
        "warning",
        False,
    )
    assert warning.message == (
        "the older layout, where trailmaps were packs: not read as a trailmap; rename it to "
        "'trailmaps/shop/trailmap.yaml' beside 'packs/' (the current layout)"
    )


def test_trailblaze_yaml_trailmaps_entries_are_read_relative_to_it(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "trails/config/trailblaze.yaml": (
                "# the anchor\n"
                "targets:\n  - shop\n"
                "trailmaps:\n"
                "  - trailmaps/own/trailmap.yaml   # the directory's own: read once\n"
                "  - ../../shared/shop/trailmap.yaml\n"
                "  - '../../shared/notes'\n"
                "  - ../../missing/trailmap.yaml\n"
                "  - ../../other/own/trailmap.yaml\n"
                "  - {path: x}\n"
                "llm: {}\n"
            ),
            "trails/config/trailmaps/own/trailmap.yaml": MINIMAL_MANIFEST.format(id="own"),
            "shared/shop/trailmap.yaml": MINIMAL_MANIFEST.format(id="shop"),
            "shared/notes/trailmap.yaml": MINIMAL_MANIFEST.format(id="notes"),
            "other/own/trailmap.yaml": MINIMAL_MANIFEST.format(id="own"),
        },
    )
    ws = find_workspace(tmp_path)
    trailmaps, findings = scan_trailmaps(ws)
    assert [(t.dir_name, t.path) for t in trailmaps] == [
        ("notes", tmp_path / "shared/notes"),
        ("own", tmp_path / "trails/config/trailmaps/own"),
        ("shop", tmp_path / "shared/shop"),
    ]
    assert [(f.path, f.line, f.column, f.fatal, f.message) for f in findings] == [
        (
            "trails/config/trailblaze.yaml",
            8,
            5,
            False,
            "trailmaps: '../../missing/trailmap.yaml' names no trailmap.yaml; not read",
        ),
        (
            "trails/config/trailblaze.yaml",
            9,
            5,
            False,
            "trailmaps: '../../other/own/trailmap.yaml': a trailmap named 'own' is already "
            "read from 'trails/config/trailmaps/own'; this one is not",
        ),
        (
            "trails/config/trailblaze.yaml",
            10,
            5,
            False,
            "trailmaps: an entry must be a path; not read",
        ),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("trailmaps: [a/trailmap.yaml, 'b']\n", ["a", "b"]),
        ("trailmaps:\n- a\n- b  # comment\ntargets: []\n", ["a", "b"]),
        ("trailmaps: []\n", []),
        ("trailmaps:\n", []),
        ("targets:\n  - a\n", []),
    ],
)
def test_trailmaps_entries_in_either_yaml_list_style(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    write_tree(tmp_path, {"trails/config/trailblaze.yaml": text})
    for name in ("a", "b"):
        write_tree(
            tmp_path, {f"trails/config/{name}/trailmap.yaml": MINIMAL_MANIFEST.format(id=name)}
        )
    trailmaps, findings = scan_trailmaps(find_workspace(tmp_path))
    assert ([t.dir_name for t in trailmaps], findings) == (expected, ())
