"""`.pre-commit-hooks.yaml`: a repository uses `trailblaze-check` as a pre-commit hook.

The real `pre-commit` installs the hook from a git repository holding this checkout's package
(a temporary clone-able copy, so no network is needed for the hook itself; pip fetches its
dependencies) into its own virtualenv, then runs it on `git commit` in a temporary repository.
The copy is committed with fixed dates, so the same sources give the same revision and
pre-commit's environment in `.cache/pre-commit` is reused until the sources change.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.check.test_surfaces import upstream_example
from tests.conftest import MINIMAL_MANIFEST, ROOT, toolchain_cache, write_tree
from trailblaze.toolchain.compilers import TOOLCHAIN_DIR_ENV, Compiler

FIXED = {
    "GIT_AUTHOR_NAME": "trailblaze tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "trailblaze tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")


def git(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = os.environ.get("PRE_COMMIT_HOME") or str(ROOT / ".cache" / "pre-commit")
    return {
        **os.environ,
        **FIXED,
        "PRE_COMMIT_HOME": home,
        TOOLCHAIN_DIR_ENV: str(toolchain_cache()),
        "NO_COLOR": "1",
        "PATH": f"{PRE_COMMIT.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        # No global or system git configuration of the developer's.
        "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }


@pytest.fixture
def hook_repo(env: dict[str, str]) -> tuple[Path, str]:
    """A git repository with this checkout's package and hook definitions, one commit.

    At a fixed place: pre-commit keys its environments by repository and revision, so the
    same path and the same sources (the same commit) reuse the environment installed before.
    """
    repo = Path(env["PRE_COMMIT_HOME"]).parent / "pre-commit-hook-repo"
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    shutil.copytree(
        ROOT / "trailblaze", repo / "trailblaze", ignore=shutil.ignore_patterns("__pycache__")
    )
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "hooks")):
        result = git(repo, *args, env=env)
        assert result.returncode == 0, result.stderr
    return repo, git(repo, "rev-parse", "HEAD", env=env).stdout.strip()


@pytest.mark.slow
@pytest.mark.tsc
def test_a_bad_trail_fails_the_commit_and_a_good_one_passes(
    tsc: Compiler, tmp_path: Path, env: dict[str, str], hook_repo: tuple[Path, str]
) -> None:
    if not PRE_COMMIT.is_file():
        pytest.fail(f"pre-commit is not installed next to {sys.executable} (the test extra)")
    hooks, rev = hook_repo
    repo = write_tree(
        tmp_path / "repo",
        {
            ".pre-commit-config.yaml": f"""
                repos:
                  - repo: {hooks}
                    rev: {rev}
                    hooks:
                      - id: trailblaze-check
                      - id: trailblaze-check-all
                        args: [--workspace, apps/shop]
            """,
            "apps/shop/trailmaps/shop/trailmap.yaml": MINIMAL_MANIFEST.format(id="shop"),
            "apps/shop/trailmaps/shop/trails/good.trail.yaml": (
                "config: {target: shop}\ntrail:\n  - step: s\n    recording:\n      android:\n"
                "        - tapOnElementWithText: {text: Buy}\n"
            ),
        },
    )
    for args in (("init", "-q"), ("add", "-A")):
        assert git(repo, *args, env=env).returncode == 0
    installed = subprocess.run(
        [str(PRE_COMMIT), "install"], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    good = git(repo, "commit", "-m", "a good trail", env=env)
    output = good.stdout + good.stderr
    assert good.returncode == 0, output
    assert "trailblaze check (changed trails)" in output
    assert "Passed" in output
    assert "Failed" not in output

    bad = repo / "apps/shop/trailmaps/shop/trails/bad.trail.yaml"
    bad.write_text("config: {target: shop}\ntrail:\n  - stpe: a\n")
    assert git(repo, "add", str(bad), env=env).returncode == 0
    refused = git(repo, "commit", "-m", "a bad trail", env=env)
    output = refused.stdout + refused.stderr
    assert refused.returncode == 1, output
    assert "- hook id: trailblaze-check\n" in output
    assert "- hook id: trailblaze-check-all\n" in output
    # The finding, located, with the path from the repository root.
    assert (
        "parse: apps/shop/trailmaps/shop/trails/bad.trail.yaml:3:5: trail[0]: "
        "unknown key 'stpe' (did you mean 'step'?)"
    ) in output
    assert "Traceback" not in output
    assert git(repo, "log", "--format=%s", env=env).stdout.splitlines() == ["a good trail"]


def local_hooks(trailblaze: Path) -> str:
    """`.pre-commit-config.yaml` running this repository's hook definitions as they are (their
    ids, names, file patterns and `entry` arguments) as a `repo: local` of `language: system`,
    with the `trailblaze` installed beside this interpreter: no clone, no install, no network."""
    defined = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    hooks = []
    for hook in defined:
        program, _, rest = hook["entry"].partition(" ")
        assert program == "trailblaze", hook
        hooks.append(
            {
                **{k: v for k, v in hook.items() if k not in ("entry", "language")},
                "entry": f"{trailblaze} {rest}".strip(),
                "language": "system",
            }
        )
    # JSON is YAML: pre-commit reads it as its config.
    return json.dumps({"repos": [{"repo": "local", "hooks": hooks}]}, indent=2)


@pytest.mark.slow
@pytest.mark.tsc
@pytest.mark.parametrize("reference_files", [False, True], ids=["as-upstream", "with-its-surface"])
def test_the_first_commit_of_an_upstream_example_passes_and_leaves_the_tree_clean(
    tsc: Compiler, tmp_path: Path, env: dict[str, str], reference_files: bool
) -> None:
    if not PRE_COMMIT.is_file():
        pytest.fail(f"pre-commit is not installed next to {sys.executable} (the test extra)")
    repo = upstream_example(tmp_path / "repo", reference_files=reference_files)
    (repo / "dodo.py").unlink()
    (repo / ".pre-commit-config.yaml").write_text(local_hooks(PRE_COMMIT.with_name("trailblaze")))
    assert git(repo, "init", "-q", env=env).returncode == 0
    assert git(repo, "add", "-A", env=env).returncode == 0
    if reference_files:  # upstream commits them although its .gitignore lists them
        tools = "trails/config/trailmaps/playwrightSample/tools"
        added = git(
            repo, "add", "-f", f"{tools}/trailblaze-client.d.ts", f"{tools}/tsconfig.json", env=env
        )
        assert added.returncode == 0, added.stderr
    hooks_env = {**env, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    installed = subprocess.run(
        [str(PRE_COMMIT), "install"],
        cwd=repo,
        env=hooks_env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    first = git(repo, "commit", "-m", "the upstream example", env=hooks_env)
    output = first.stdout + first.stderr
    assert first.returncode == 0, output
    assert "trailblaze check (changed trails)" in output
    assert "trailblaze check (whole workspace)" in output
    assert "Failed" not in output
    assert "files were modified by this hook" not in output
    assert git(repo, "status", "--porcelain", env=env).stdout == ""
    assert git(repo, "log", "--format=%s", env=env).stdout.splitlines() == ["the upstream example"]
