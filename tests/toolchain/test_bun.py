"""bun pinned like the compiler: its platform package, the staged and probed install, overrides."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import toolchain_cache
from trailblaze.toolchain.bun import (
    BUN_ENV,
    BUN_VERSION,
    bun_dir,
    bun_package,
    find_bun,
    install_bun,
)
from trailblaze.toolchain.compilers import ToolchainError


@pytest.mark.parametrize(
    ("system", "machine", "package"),
    [
        ("linux", "x86_64", "@oven/bun-linux-x64"),
        ("linux", "aarch64", "@oven/bun-linux-aarch64"),
        ("darwin", "arm64", "@oven/bun-darwin-aarch64"),
        ("darwin", "x86_64", "@oven/bun-darwin-x64"),
        ("win32", "AMD64", "@oven/bun-windows-x64"),
    ],
)
def test_the_platform_package_is_buns_own_npm_name(system: str, machine: str, package: str) -> None:
    assert bun_package(system, machine) == package


def test_the_pinned_bun_installs_into_the_toolchain_cache_and_answers_its_version() -> None:
    path = install_bun(base=toolchain_cache())
    assert path.is_file()
    assert path.is_relative_to(bun_dir(base=toolchain_cache()))
    bun = find_bun(base=toolchain_cache())
    assert (bun.path, bun.version) == (path, BUN_VERSION)
    assert bun.identity == f"{BUN_VERSION}:{path.stat().st_size}"


def test_without_an_install_the_message_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(BUN_ENV, raising=False)
    with pytest.raises(ToolchainError) as caught:
        find_bun(base=tmp_path)
    assert str(caught.value) == (
        f"bun {BUN_VERSION} is not installed: run `doit toolchain` to install it into "
        f"{tmp_path}, or set {BUN_ENV} to a bun executable"
    )


def test_a_broken_install_is_replaced_by_a_complete_one(tmp_path: Path) -> None:
    # A copy of the real install whose binary no longer answers: the probe refuses it, and
    # the next install stages a new one in its place.
    source = bun_dir(base=toolchain_cache())
    install_bun(base=toolchain_cache())
    shutil.copytree(source, bun_dir(base=tmp_path), symlinks=True)
    binary = find_bun(base=tmp_path).path
    binary.write_text("#!/bin/sh\necho 0.0.1\n")
    path = install_bun(base=tmp_path)
    assert path == binary
    assert path.stat().st_size > 1_000_000
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_trailblaze_bun_names_another_executable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BUN_ENV, str(tmp_path / "nope"))
    with pytest.raises(ToolchainError) as caught:
        find_bun()
    assert str(caught.value) == f"{BUN_ENV}={tmp_path / 'nope'}: no such file"
    monkeypatch.setenv(BUN_ENV, str(install_bun(base=toolchain_cache())))
    assert find_bun().version == BUN_VERSION
