"""Pinned npm packages other than the compiler, in the toolchain cache: installed like it.

Tools the project runs but does not ship (the tests' SARIF Multitool, say) are npm packages
pinned to exact versions. Each pinned set goes into its own directory of the toolchain cache
(`toolchain_dir()`), installed by npm into a staging directory that is renamed into place only
once `probe` accepts it, under a lock: a directory that exists is a complete install.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from trailblaze.fsutil import write_atomic
from trailblaze.toolchain import proc
from trailblaze.toolchain.compilers import (
    PROGRESS,
    ToolchainError,
    _locked,
    staged_install,
    toolchain_dir,
)

logger = logging.getLogger("trailblaze.toolchain.compilers")

_PINNED = re.compile(r"^(@[a-z0-9._-]+/)?[a-z0-9._-]+@\d+\.\d+\.\d+$")


def install_npm_tool(
    name: str,
    packages: Sequence[str],
    *,
    probe: Callable[[Path], None],
    base: Path | None = None,
    timeout: float = 600,
) -> Path:
    """The directory holding `packages` (`name@x.y.z` each) installed by npm, as `name`.

    `probe(directory)` raises `ToolchainError` when an install does not work; it decides
    both whether an existing install is kept and whether a new one is accepted.
    """
    for package in packages:
        if not _PINNED.match(package):
            raise ToolchainError(f"{package}: npm tools are pinned to an exact version")
    root = (base if base is not None else toolchain_dir()).absolute()
    target = root / name
    with contextlib.suppress(ToolchainError):
        if target.is_dir():
            probe(target)
            return target
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / f".{name}.lock", timeout):
        with contextlib.suppress(ToolchainError):
            if target.is_dir():
                probe(target)
                return target
        started = time.monotonic()
        with staged_install(root, name) as staging:
            write_atomic(staging / "package.json", json.dumps({"private": True}) + "\n")
            logger.info(
                "%s: installing with npm into %s (once per version)...",
                " ".join(packages),
                root,
                extra=PROGRESS,
            )
            argv = ["npm", "install", "--prefix", str(staging), "--no-audit", "--no-fund"]
            argv += ["--no-save", "--loglevel=error", *packages]
            try:
                result = proc.run(argv, cwd=staging, timeout=timeout)
            except proc.ProcError as exc:
                raise ToolchainError(f"cannot install {name}: {exc}") from None
            if not result.ok:
                output = (result.stderr or result.stdout).strip()
                raise ToolchainError(
                    f"npm install {' '.join(packages)} failed (exit {result.returncode})"
                    + (
                        ":\n" + "\n".join(f"    {line}" for line in output.splitlines())
                        if output
                        else ""
                    )
                )
            probe(staging)
    logger.info(
        "%s: installed in %s (%.1f s)", name, target, time.monotonic() - started, extra=PROGRESS
    )
    return target
