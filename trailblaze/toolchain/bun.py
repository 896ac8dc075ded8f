"""bun, the runtime trailmaps' unit tests (`*.test.ts`) are written for: pinned like the compiler.

bun is installed from npm as its platform package (`@oven/bun-<os>-<arch>`, the native binary
alone) into the toolchain cache, with the same staged, probed install as every pinned npm tool
(`toolchain.npm`): the directory `bun-<version>` exists only once the binary in it answered
`--version` with the pinned version. `TRAILBLAZE_BUN` names another bun executable instead.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from trailblaze.toolchain import proc
from trailblaze.toolchain.compilers import ToolchainError, toolchain_dir
from trailblaze.toolchain.npm import install_npm_tool

BUN_VERSION = "1.4.5"
BUN_ENV = "TRAILBLAZE_BUN"
_OS = {"linux": "linux", "darwin": "darwin", "win32": "windows"}
_ARCH = {"x86_64": "x64", "amd64": "x64", "x64": "x64", "aarch64": "aarch64", "arm64": "aarch64"}
_VERSION_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class Bun:
    """A bun ready to run, and what a cached test result keys on."""

    path: Path
    version: str
    identity: str
    """`<version>:<binary size>`: the same on every machine with the same bun."""


def bun_package(system: str | None = None, machine: str | None = None) -> str:
    """The npm package holding bun's binary for this machine, e.g. `@oven/bun-linux-x64`."""
    system = sys.platform if system is None else system
    machine = platform.machine() if machine is None else machine
    os_name = _OS.get(system, system)
    arch = _ARCH.get(machine.lower(), machine.lower())
    return f"@oven/bun-{os_name}-{arch}"


def bun_dir(version: str = BUN_VERSION, base: Path | None = None) -> Path:
    """Where bun `version` is (or would be) installed."""
    return (base if base is not None else toolchain_dir()).absolute() / f"bun-{version}"


def _binary(directory: Path) -> Path:
    name = "bun.exe" if sys.platform == "win32" else "bun"
    return directory / "node_modules" / bun_package() / "bin" / name


def _ask_version(path: Path) -> str:
    try:
        result = proc.run([str(path), "--version"], timeout=_VERSION_TIMEOUT)
    except proc.ProcError as exc:
        raise ToolchainError(f"{path}: {exc}") from None
    if not result.ok:
        raise ToolchainError(
            f"{path} --version failed (exit {result.returncode}): "
            f"{(result.stderr or result.stdout).strip()}"
        )
    return result.stdout.strip()


def _probe(version: str) -> Callable[[Path], None]:
    def probe(directory: Path) -> None:
        path = _binary(directory)
        if not path.is_file():
            raise ToolchainError(f"{path}: not installed")
        found = _ask_version(path)
        if found != version:
            raise ToolchainError(f"{path} is bun {found}, not {version}")

    return probe


def install_bun(version: str = BUN_VERSION, *, base: Path | None = None) -> Path:
    """Install bun `version` into the toolchain cache unless it is there; its executable."""
    directory = install_npm_tool(
        f"bun-{version}",
        [f"{bun_package()}@{version}"],
        probe=_probe(version),
        base=base,
    )
    return _binary(directory)


def find_bun(*, install: bool = False, base: Path | None = None) -> Bun:
    """The bun the test phase runs: `TRAILBLAZE_BUN`, else the pinned one in the toolchain cache
    (installed first when `install` is true). Raises `ToolchainError` saying what to do."""
    override = os.environ.get(BUN_ENV, "").strip()
    if override:
        path = Path(override).expanduser().absolute()
        if not path.is_file():
            raise ToolchainError(f"{BUN_ENV}={override}: no such file")
        version = _ask_version(path)
        return Bun(path, version, f"{version}:{path.stat().st_size}")
    path = _binary(bun_dir(base=base))
    if not path.is_file():
        if not install:
            raise ToolchainError(
                f"bun {BUN_VERSION} is not installed: run `doit toolchain` to install it into "
                f"{bun_dir(base=base).parent}, or set {BUN_ENV} to a bun executable"
            )
        path = install_bun(base=base)
    # The directory exists only once its binary answered the pinned version (`install_npm_tool`).
    return Bun(path, BUN_VERSION, f"{BUN_VERSION}:{path.stat().st_size}")
