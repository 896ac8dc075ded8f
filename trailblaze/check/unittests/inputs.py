"""What one unit-test file's result depends on: the file and everything it imports, transitively.

The imports are read from the sources (static `import`/`export ... from`, `import(...)`,
`require(...)`), as bun would resolve them:

- a relative specifier is a file of the workspace: its content, and what it imports in turn;
- `@trailblaze/scripting` and its subpaths are the SDK the trailmap runs on: its identity
  (our runtime's digest, or the workspace's own SDK's);
- `bun:*`, `node:*` and Node's built-in modules are the runtime's: bun's identity covers them;
- any other bare specifier is a package: the `package.json` of the nearest
  `node_modules/<name>` above the importing file (its version decides what runs), or `missing`.

Beside those, every file of the run's working directory that bun reads by itself (`tsconfig.json`,
`package.json`, `bunfig.toml`, the `.env` files bun loads) is an input of every test file in it.

An import that cannot be told (a computed `import(x)`) makes no key smaller: such a file's key
covers every source file of its `tools/` directory instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from trailblaze.state.keys import MISSING, digest, file_digest

_SPECIFIER = re.compile(
    r"""(?:\bimport\s*(?:type\s+)?(?:[\w*{}\s,$]+?\s*from\s*)?|\bexport\s*(?:type\s+)?[\w*{}\s,$]*?\s*from\s*|\brequire\s*\(\s*|\bimport\s*\(\s*)(["'])([^"'\n]+)\1"""
)
_DYNAMIC = re.compile(r"\b(?:import|require)\s*\(\s*[^\s\"')]")
_COMMENT = re.compile(r"/\*.*?\*/|(?<![:\"'\\])//[^\n]*", re.S)
_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json")
_BUILTINS = frozenset(
    [
        "assert",
        "async_hooks",
        "buffer",
        "child_process",
        "cluster",
        "console",
        "constants",
        "crypto",
        "dgram",
        "dns",
        "domain",
        "events",
        "fs",
        "http",
        "http2",
        "https",
        "inspector",
        "module",
        "net",
        "os",
        "path",
        "perf_hooks",
        "process",
        "punycode",
        "querystring",
        "readline",
        "repl",
        "stream",
        "string_decoder",
        "sys",
        "timers",
        "tls",
        "trace_events",
        "tty",
        "url",
        "util",
        "v8",
        "vm",
        "wasi",
        "worker_threads",
        "zlib",
    ]
)
SDK_MODULE = "@trailblaze/scripting"
RUN_DIR_FILES = (
    "tsconfig.json",
    "package.json",
    "bunfig.toml",
    ".env",
    ".env.test",
    ".env.local",
    ".env.test.local",
)
"""What bun reads in its working directory for every test file it runs."""
SOURCE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json")


def specifiers(text: str) -> tuple[list[str], bool]:
    """The module specifiers a source imports, and whether it has an import it cannot tell."""
    code = _COMMENT.sub(" ", text)
    found = [m.group(2) for m in _SPECIFIER.finditer(code)]
    return found, bool(_DYNAMIC.search(code))


@dataclass
class Graph:
    """The import graph of one run, memoized across the test files of every trailmap."""

    root: Path
    """The workspace: files outside it are keyed by their absolute path."""
    sdk: dict[Path, str]
    """Each `tools/` directory's SDK identity (`@trailblaze/scripting` as its tests get it)."""
    _files: dict[Path, tuple[str, list[Path], list[tuple[str, Path]], bool]] = field(
        default_factory=dict
    )
    _packages: dict[tuple[Path, str], str] = field(default_factory=dict)
    read: dict[str, tuple[str, os.stat_result | None]] = field(default_factory=dict)
    """Every file outside the inputs a key was made of (a package's manifest): for the no-op
    keys (`state.reads`)."""

    def key(self, test: Path, tools: Path) -> str:
        """The digest of everything `test` (a file of the `tools/` directory `tools`) depends on."""
        parts: list[str] = [f"sdk\0{self.sdk.get(tools, MISSING)}"]
        for name in RUN_DIR_FILES:
            parts.append(f"run\0{name}\0{file_digest(str(tools / name))[0]}")
        seen: set[Path] = set()
        stack = [test]
        untold = False
        while stack:
            path = stack.pop()
            if path in seen:
                continue
            seen.add(path)
            token, local, packages, dynamic = self._file(path)
            untold = untold or dynamic
            parts.append(f"file\0{self._shown(path)}\0{token}")
            stack.extend(local)
            for name, base in packages:
                parts.append(f"package\0{name}\0{self._package(base, name)}")
        if untold:
            # A computed import: any source of the directory may be it.
            for source in _sources(tools):
                if source not in seen:
                    parts.append(f"file\0{self._shown(source)}\0{self._file(source)[0]}")
        return digest(*sorted(parts))

    def _shown(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def _file(self, path: Path) -> tuple[str, list[Path], list[tuple[str, Path]], bool]:
        known = self._files.get(path)
        if known is not None:
            return known
        token, _ = file_digest(str(path))
        local: list[Path] = []
        packages: list[tuple[str, Path]] = []
        dynamic = False
        if token != MISSING and not token.startswith("unreadable") and path.suffix != ".json":
            try:
                text = path.read_text("utf-8", errors="replace")
            except OSError:
                text = ""
            found, dynamic = specifiers(text)
            for spec in found:
                if spec.startswith((".", "/")):
                    target = _resolve(path.parent / spec)
                    local.append(target if target is not None else path.parent / spec)
                elif spec == SDK_MODULE or spec.startswith(SDK_MODULE + "/"):
                    continue  # the SDK's identity is part of every key
                elif not _is_builtin(spec):
                    packages.append((_package_name(spec), path.parent))
        result = (token, local, packages, dynamic)
        self._files[path] = result
        return result

    def _package(self, base: Path, name: str) -> str:
        known = self._packages.get((base, name))
        if known is not None:
            return known
        token = MISSING
        for parent in (base, *base.parents):
            manifest = parent / "node_modules" / name / "package.json"
            found, st = file_digest(str(manifest))
            if found != MISSING:
                token = found
                self.read[str(manifest)] = (found, st)
                break
        self._packages[(base, name)] = token
        return token


def _resolve(candidate: Path) -> Path | None:
    """The file a relative import names, as bun finds it (with or without its suffix, a `.js`
    written for a `.ts`, a directory's index); None when nothing is there."""
    if candidate.is_file():
        return candidate
    stem = candidate
    if candidate.suffix in (".js", ".mjs", ".cjs", ".jsx"):
        swapped = {".js": ".ts", ".mjs": ".mts", ".cjs": ".cts", ".jsx": ".tsx"}[candidate.suffix]
        if candidate.with_suffix(swapped).is_file():
            return candidate.with_suffix(swapped)
    for suffix in _SUFFIXES:
        path = stem.with_name(stem.name + suffix)
        if path.is_file():
            return path
    for suffix in _SUFFIXES:
        path = stem / f"index{suffix}"
        if path.is_file():
            return path
    return None


def _is_builtin(spec: str) -> bool:
    if spec.startswith(("bun:", "node:")) or spec == "bun":
        return True
    return spec.split("/", 1)[0] in _BUILTINS


def _package_name(spec: str) -> str:
    parts = spec.split("/")
    return "/".join(parts[:2]) if spec.startswith("@") and len(parts) > 1 else parts[0]


def _sources(tools: Path) -> Iterable[Path]:
    for dirpath, dirnames, filenames in os.walk(tools):
        dirnames[:] = sorted(d for d in dirnames if d != "node_modules" and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                yield Path(dirpath) / name
