"""The JavaScript a Node child runs: tool modules with their types stripped, next to our runtime.

A scripted tool's module is compiled once per replay run with the pinned compiler
(``toolchain``; ``--noCheck``: the type gate already checked it, here only the types are
stripped) into one scratch directory per run. That directory also holds our runtime of
``@trailblaze/scripting`` (``data/scripting/*.cjs``) and the pinned zod, under
``node_modules``, so the compiled modules' imports of both resolve there.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from trailblaze.fsutil import write_atomic
from trailblaze.toolchain import proc
from trailblaze.toolchain.compilers import (
    TS_VERSION,
    ToolchainError,
    find_compiler,
    install_library,
)

logger = logging.getLogger(__name__)

_COMPILE_TIMEOUT = 120.0
_JS_SUFFIX = {".ts": ".js", ".mts": ".mjs", ".cts": ".cjs"}
_TSC_ERROR = re.compile(r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): error (?P<msg>.*)$")
#: The runtime's files; the package's subpaths (``@trailblaze/scripting/<subpath>``) are some.
_RUNTIME_FILES = (
    "index.cjs",
    "memory.cjs",
    "context.cjs",
    "conditional.cjs",
    "in-process.cjs",
    "sub-process.cjs",
    "testing.cjs",
)
_PACKAGE = {
    "name": "@trailblaze/scripting",
    "main": "./index.cjs",
    "exports": {
        ".": "./index.cjs",
        "./in-process": "./in-process.cjs",
        "./sub-process": "./sub-process.cjs",
        "./testing": "./testing.cjs",
        "./package.json": "./package.json",
    },
}


class ScriptError(Exception):
    """A scripted tool could not run; the message says why."""


@dataclass(frozen=True, slots=True)
class _Compiled:
    js: Path | None
    error: str | None


def data_file(name: str) -> Path:
    """A file of ``trailblaze/data/scripting``."""
    return Path(str(resources.files("trailblaze").joinpath("data/scripting", name)))


class ScriptCompiler:
    """Compiles the tool modules of one replay run into one scratch directory. Thread-safe."""

    def __init__(self, root: Path, scratch: Path, env: Mapping[str, str]) -> None:
        self.root = root
        self.scratch = scratch
        self.env = env
        self._lock = threading.Lock()
        self._out: Path | None = None
        self._compiled: dict[Path, _Compiled] = {}

    @property
    def runtime(self) -> Path:
        """Our ``@trailblaze/scripting`` in the output directory (which it creates)."""
        return self.out_dir() / "node_modules" / "@trailblaze" / "scripting" / "index.cjs"

    def out_dir(self) -> Path:
        with self._lock:
            return self._make_out()

    def close(self) -> None:
        with self._lock:
            if self._out is not None:
                shutil.rmtree(self._out, ignore_errors=True)
                self._out = None
            self._compiled.clear()

    def _make_out(self) -> Path:
        if self._out is None:
            self.scratch.mkdir(parents=True, exist_ok=True)
            out = Path(tempfile.mkdtemp(prefix="scripted-", dir=self.scratch))
            runtime = out / "node_modules" / "@trailblaze" / "scripting"
            runtime.mkdir(parents=True)
            for name in _RUNTIME_FILES:
                shutil.copyfile(data_file(name), runtime / name)
            write_atomic(runtime / "package.json", json.dumps(_PACKAGE) + "\n")
            write_atomic(out / "package.json", json.dumps({"type": "module"}) + "\n")
            try:
                # `z` of @trailblaze/scripting (and `import ... from "zod"`): the pinned zod.
                zod = install_library("zod")
            except ToolchainError as exc:
                logger.warning("scripted tools run without zod: %s", exc)
            else:
                os.symlink(zod, out / "node_modules" / "zod", target_is_directory=True)
            self._out = out
        return self._out

    def compiled(self, module: Path) -> Path:
        """The JavaScript of ``module`` (compiled on first use); ``ScriptError`` if it has none."""
        module = module.absolute()
        with self._lock:
            found = self._compiled.get(module)
            if found is None:
                found = self._compile(module)
                self._compiled[module] = found
        if found.js is None:
            raise ScriptError(found.error or "cannot compile")
        return found.js

    def _compile(self, module: Path) -> _Compiled:
        rel = self.rel(module)
        if not module.is_file():
            return _Compiled(None, f"its module {rel} does not exist")
        out = self._make_out()  # under the lock
        target = out / module.relative_to(module.anchor)
        target = target.with_suffix(_JS_SUFFIX.get(module.suffix, module.suffix))
        try:
            compiler = find_compiler(TS_VERSION, install=True)
        except ToolchainError as exc:
            return _Compiled(None, f"no TypeScript compiler to strip the types of {rel}: {exc}")
        argv = [
            *compiler.argv_prefix,
            "--ignoreConfig",
            "--noCheck",
            "--allowJs",
            "--module", "esnext",
            "--moduleResolution", "bundler",
            "--target", "es2022",
            "--rewriteRelativeImportExtensions",
            "--sourceMap",
            "--skipLibCheck",
            "--types", "",
            "--pretty", "false",
            "--rootDir", module.anchor,
            "--outDir", str(out),
            str(module),
        ]  # fmt: skip
        try:
            done = proc.run(argv, cwd=out, env=self.env, timeout=_COMPILE_TIMEOUT)
        except proc.ProcError as exc:  # no program, or a timeout: it was killed
            return _Compiled(None, f"cannot compile {rel}: {exc}")
        errors = []
        for line in done.stdout.splitlines():
            match = _TSC_ERROR.match(line.strip())
            if match is None:
                continue
            where = self.rel((out / match["file"]).resolve())
            errors.append(f"{where}:{match['line']}:{match['col']}: {match['msg']}")
        if errors or done.returncode != 0 or not target.is_file():
            shown = "; ".join(errors[:5]) or (done.stdout + done.stderr).strip()[:500]
            more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
            return _Compiled(None, f"{rel} does not compile: {shown}{more}")
        return _Compiled(target, None)

    def rel(self, path: Path) -> str:
        """``path`` as the report shows it: relative to the workspace when it is inside."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()
