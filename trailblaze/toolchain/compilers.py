"""The pinned TypeScript compilers: where they live, how they are installed, how they are run.

The type gate uses TypeScript 7 (`TS_VERSION`), a native binary shipped inside an npm package;
`BASELINE_TS_VERSION` is the JavaScript compiler the reference bundles, kept for comparisons.
Each version is installed by npm into its own directory of one toolchain cache
(`toolchain_dir()`), so versions never mix. `TRAILBLAZE_TSC` points the type gate at another
compiler executable instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import logging
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from trailblaze.errors import TrailblazeError
from trailblaze.fsutil import write_atomic
from trailblaze.state.keys import digest
from trailblaze.toolchain import proc

logger = logging.getLogger(__name__)

PROGRESS = {"progress": True}
"""`extra=` of the log records a person waiting for an install should see (`console.py`
shows them on stderr): the install's start and end."""

TS_VERSION = "7.0.2"
BASELINE_TS_VERSION = "6.0.3"
LIBRARIES = {"zod": "4.3.6"}
"""npm packages whose own declarations scripted tools compile against, pinned like the compiler
(zod: what `@trailblaze/scripting` re-exports as `z`, at the SDK's own version)."""

TOOLCHAIN_DIR_ENV = "TRAILBLAZE_TOOLCHAIN_DIR"
TSC_ENV = "TRAILBLAZE_TSC"

# `--version` answers in milliseconds (native) or a fraction of a second (node); a compiler that
# takes longer than this to say its version is broken, not slow.
_VERSION_TIMEOUT = 30.0
_LOCK_POLL = 0.1

_PLATFORMS = {"linux": "linux", "darwin": "darwin", "win32": "win32"}
_ARCHES = {"x86_64": "x64", "amd64": "x64", "x64": "x64", "aarch64": "arm64", "arm64": "arm64"}
_VERSION_RE = re.compile(r"^Version\s+(\S+)\s*$", re.MULTILINE)

_README = (
    "This directory holds the TypeScript compilers of trailblaze-doit, installed by npm\n"
    "(`doit toolchain`), one version per `typescript-<version>/` directory.\n"
    "It is a cache: deleting it is safe, the next `doit toolchain` installs again.\n"
)


class ToolchainError(TrailblazeError):
    """A compiler is missing, broken, or could not be installed; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Compiler:
    """A TypeScript compiler ready to run: `[*argv_prefix, *args]`."""

    path: Path
    argv_prefix: tuple[str, ...]
    version: str
    identity: str
    """Changes whenever the compiler does: for cache keys of type-check verdicts."""

    @property
    def native(self) -> bool:
        """TypeScript 7 or later: the native (Go) compiler."""
        major = self.version.split(".", 1)[0]
        return major.isdigit() and int(major) >= 7

    def one_shot_env(self) -> dict[str, str] | None:
        """The environment of one compile that runs to its end (`tsc -p`), or None: inherited.

        A native compiler's program is nearly all live until it exits: its collector, at Go's
        default target, traces that heap again every time it doubles and frees almost nothing
        (measured: a third of the compile's CPU time for 2,000 trail modules). So it runs with
        the collector off (`GOGC=off`) and a soft ceiling (`GOMEMLIMIT`, `collector_ceiling()`)
        at which it collects after all. A user who sets either variable keeps both as set.
        """
        if not self.native or "GOGC" in os.environ or "GOMEMLIMIT" in os.environ:
            return None
        return {**os.environ, **one_shot_collector()}


def one_shot_collector() -> dict[str, str]:
    """The collector settings of a compile that runs to its end (`Compiler.one_shot_env`)."""
    return {"GOGC": "off", "GOMEMLIMIT": f"{collector_ceiling() >> 20}MiB"}


CEILING_SHARE = 4
"""A one-shot compile's collector ceiling is this fraction (1/n) of the machine's memory..."""
CEILING_MAX = 4 << 30
"""... and at most this: a program that outgrows it collects as usual from there."""
CEILING_MIN = 512 << 20
"""... and at least this: a batch of 2,000 trail modules holds some 330 MiB, and a program held
above its ceiling is collected over and over (Go caps that at half its CPU time)."""


@functools.cache
def collector_ceiling() -> int:
    """Bytes a native compile may hold before its collector runs (see `one_shot_env`): a
    quarter of the memory this process may use (the machine's, or its cgroup's limit when
    lower), between `CEILING_MIN` and `CEILING_MAX`."""
    known = [size for size in (_physical_memory(), _cgroup_limit()) if size]
    if not known:
        return CEILING_MIN
    return max(CEILING_MIN, min(CEILING_MAX, min(known) // CEILING_SHARE))


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


_CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
"""cgroup v2's limit, then v1's: a container's memory, which the machine's total overstates."""


def _cgroup_limit() -> int | None:
    for name in _CGROUP_LIMITS:
        try:
            text = Path(name).read_text("ascii").strip()
        except (OSError, UnicodeDecodeError):
            continue
        # "max" (v2) or a page-rounded huge number (v1) when there is no limit.
        return int(text) if text.isdigit() and int(text) < 1 << 60 else None
    return None


def toolchain_dir(env: Mapping[str, str] | None = None) -> Path:
    """The toolchain cache: `$TRAILBLAZE_TOOLCHAIN_DIR`, else the user cache directory."""
    environ = os.environ if env is None else env
    override = environ.get(TOOLCHAIN_DIR_ENV, "").strip()
    if override:
        return Path(override).expanduser().absolute()
    # XDG says a relative value is invalid and must be ignored.
    xdg = environ.get("XDG_CACHE_HOME", "").strip()
    cache = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return cache / "trailblaze-doit" / "toolchain"


def version_dir(version: str, base: Path | None = None) -> Path:
    """Where `typescript@<version>` is (or would be) installed."""
    return (base if base is not None else toolchain_dir()).absolute() / f"typescript-{version}"


def parse_version(output: str) -> str:
    """`"Version 7.0.2"` (what `tsc --version` prints) -> `"7.0.2"`."""
    match = _VERSION_RE.search(output)
    if match is None:
        raise ToolchainError(f"unexpected `tsc --version` output: {output.strip()!r}")
    return match.group(1)


def platform_package(system: str | None = None, machine: str | None = None) -> str:
    """The npm package holding the native compiler for this machine, e.g. `typescript-linux-x64`."""
    system = sys.platform if system is None else system
    machine = platform.machine() if machine is None else machine
    os_name = _PLATFORMS.get(system, system)
    arch = _ARCHES.get(machine.lower(), machine.lower())
    return f"typescript-{os_name}-{arch}"


def installed_compiler(version: str = TS_VERSION, *, base: Path | None = None) -> Compiler:
    """The compiler installed for `version` in the toolchain cache (`TRAILBLAZE_TSC` ignored)."""
    target = version_dir(version, base)
    if not target.is_dir():
        raise ToolchainError(
            f"TypeScript {version} is not installed: run `doit toolchain` to install it into "
            f"{target.parent}, or set {TSC_ENV} to a compiler executable"
        )
    compiler = _compiler_in(target, base=base if base is not None else toolchain_dir())
    if compiler.version != version:
        raise ToolchainError(
            f"{target} holds TypeScript {compiler.version}, not {version}: delete it and run "
            "`doit toolchain`"
        )
    return compiler


def find_compiler(
    version: str = TS_VERSION, *, install: bool = False, base: Path | None = None
) -> Compiler:
    """The compiler to run for `version`.

    `TRAILBLAZE_TSC` wins for the type gate's version (`TS_VERSION`); a request for another
    version (the benchmark's baseline) always gets that exact version. Otherwise the installed
    one, installed first when `install` is true.
    """
    if version == TS_VERSION:
        override = os.environ.get(TSC_ENV, "").strip()
        if override:
            return compiler_at(override, base=base)
    try:
        return installed_compiler(version, base=base)
    except ToolchainError:
        if not install:
            raise
    install_typescript(version, base=base)
    return installed_compiler(version, base=base)


def compiler_key(version: str = TS_VERSION, *, base: Path | None = None) -> str:
    """`<version>:<binary size>` of the compiler `find_compiler(version)` gives: its identity
    as the same on every machine (what a cache shared between machines keys on; the stamp in
    `Compiler.identity` is this machine's alone).

    The compiler is asked its `--version` only when this very file (path, size, mtime, ctime,
    inode) has not answered before: the answer is kept in `<toolchain>/probed/`, and a binary
    replaced, rebuilt or written in place has another stamp (its ctime at least) and is asked
    again. Raises `ToolchainError` as `find_compiler(version)` does (nothing is installed).
    """
    try:
        if version == TS_VERSION and os.environ.get(TSC_ENV, "").strip():
            path = _executable_at(os.environ[TSC_ENV].strip())
        else:
            path = _executable_in(version_dir(version, base))[0]
        stamp = _stamp(path)
    except (ToolchainError, OSError):
        compiler = find_compiler(version, base=base)  # raises what is wrong
        return f"{compiler.version}:{compiler.path.stat().st_size}"
    version_answered = _probed(path, base=base, stamp=stamp)
    if version_answered is not None:
        return f"{version_answered}:{stamp[0]}"
    compiler = find_compiler(version, base=base)
    if compiler.path == path and _stamp(path) == stamp:  # the file that answered
        _remember_probe(path, stamp, compiler.version, base)
    return f"{compiler.version}:{compiler.path.stat().st_size}"


def _probed(path: Path, *, base: Path | None, stamp: list[int]) -> str | None:
    """The version the compiler file at `path` answered when it had this very `stamp` (path,
    size, mtime, ctime, inode), as `<toolchain>/probed/` keeps it; None: not known."""
    record = (base if base is not None else toolchain_dir()) / "probed" / _record_name(path)
    try:
        data = json.loads(record.read_bytes())
    except (OSError, ValueError):
        return None  # unreadable is unknown: ask the compiler
    if (
        isinstance(data, dict)
        and data.get("path") == str(path)
        and data.get("stamp") == stamp
        and isinstance(data.get("version"), str)
    ):
        return str(data["version"])
    return None


def _version_of(path: Path, prefix: tuple[str, ...], *, base: Path | None, stamp: list[int]) -> str:
    """`_probed`, else the compiler asked its `--version` now and the answer kept."""
    known = _probed(path, base=base, stamp=stamp)
    if known is not None:
        return known
    version = _ask_version(prefix)
    with contextlib.suppress(OSError):
        if _stamp(path) == stamp:  # the file that answered
            _remember_probe(path, stamp, version, base)
    return version


def _remember_probe(path: Path, stamp: list[int], version: str, base: Path | None) -> None:
    record = (base if base is not None else toolchain_dir()) / "probed" / _record_name(path)
    data = {"path": str(path), "stamp": stamp, "version": version}
    with contextlib.suppress(OSError):  # a read-only toolchain: asked every time
        record.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(record, json.dumps(data))


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _record_name(path: Path) -> str:
    """The file of `<toolchain>/probed/` that keeps what the compiler at `path` answered: named
    by a digest of the path alone (the record itself holds the stamp it vouches for)."""
    return digest("trailblaze-probed", str(path))[:32] + ".json"


def compiler_location(version: str = TS_VERSION) -> str:
    """Where the type gate looks for its compiler: `TRAILBLAZE_TSC`, else the install directory.

    What a finding about a missing or broken compiler points at.
    """
    override = os.environ.get(TSC_ENV, "").strip() if version == TS_VERSION else ""
    return override or str(version_dir(version))


def compiler_at(executable: str | Path, *, base: Path | None = None) -> Compiler:
    """A compiler given by path (what `TRAILBLAZE_TSC` holds), its version asked from it
    unless this very file answered before (`_probed`, in the toolchain cache `base`)."""
    path = _executable_at(executable)
    if path.suffix in (".js", ".cjs", ".mjs"):
        prefix: tuple[str, ...] = (_node(), str(path))
    else:
        prefix = (str(path),)
    try:
        stamp = _stamp(path)
        version = _version_of(path, prefix, base=base, stamp=stamp)
    except OSError as exc:
        raise ToolchainError(f"{TSC_ENV}={executable}: {exc.strerror or exc}") from None
    except ToolchainError as exc:
        raise ToolchainError(f"{TSC_ENV}={executable}: {exc}") from None
    return _compiler(path, prefix, version)


def install_typescript(
    version: str = TS_VERSION, *, base: Path | None = None, timeout: float = 600
) -> Path:
    """Install `typescript@<version>` with npm unless it is already there; its directory.

    npm installs into a temporary sibling that is renamed into place only once the compiler in
    it answers `--version` correctly, so a directory named `typescript-<version>` is always a
    complete install. A lock file serialises concurrent installers: the second one waits, then
    finds the first one's install.
    """
    # Absolute: npm runs inside the staging directory and would resolve a relative one there.
    root = (base if base is not None else toolchain_dir()).absolute()
    target = version_dir(version, root)
    with contextlib.suppress(ToolchainError):
        installed_compiler(version, base=root)
        return target
    _prepare_root(root, f"TypeScript {version}")
    with _locked(root / f".{target.name}.lock", timeout):
        with contextlib.suppress(ToolchainError):
            installed_compiler(version, base=root)
            logger.info("typescript@%s: installed meanwhile by another process", version)
            return target
        started = time.monotonic()
        with staged_install(root, target.name) as staging:
            _npm_install(staging, version, timeout)
            compiler = _compiler_in(staging)
            if compiler.version != version:
                raise ToolchainError(
                    f"npm installed TypeScript {compiler.version} when asked for {version}"
                )
    logger.info(
        "typescript@%s: installed in %s (%.1f s)",
        version,
        target,
        time.monotonic() - started,
        extra=PROGRESS,
    )
    return target


def _prepare_root(root: Path, what: str) -> None:
    """Before installing `what` into `root`: node and npm are there, and so is the directory,
    described as a cache."""
    # Only when installing: the command line's no-op, which asks for `compiler_key`, never does.
    from trailblaze.state.results import describe_cache_dir  # noqa: PLC0415

    _check_node(what)
    try:
        root.mkdir(parents=True, exist_ok=True)
        describe_cache_dir(
            root, "# Generated by trailblaze-doit: everything here is a cache.\n*\n", _README
        )
    except OSError as exc:  # a file in its place, no permission: the user's to fix
        raise ToolchainError(
            f"cannot install {what} into {root} (the toolchain directory, "
            f"${TOOLCHAIN_DIR_ENV}): {exc.strerror or exc}"
        ) from None


def _check_node(what: str) -> None:
    """Node and npm must both be there: npm is itself a node script."""
    for program in ("node", "npm"):
        try:
            proc.run([program, "--version"], timeout=_VERSION_TIMEOUT)
        except proc.ProcError as exc:
            raise ToolchainError(f"cannot install {what}: {exc}") from None


def library_dir(name: str, base: Path | None = None) -> Path:
    """Where the pinned npm package `name` (a key of `LIBRARIES`) is, or would be, installed."""
    root = (base if base is not None else toolchain_dir()).absolute()
    return root / f"{name}-{LIBRARIES[name]}" / "node_modules" / name


def installed_library(name: str, *, base: Path | None = None) -> Path:
    """The installed package directory of the pinned library `name`; a `ToolchainError` if none."""
    package = library_dir(name, base)
    version = LIBRARIES[name]
    try:
        found = json.loads((package / "package.json").read_text("utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        raise ToolchainError(
            f"{name} {version} is not installed: run `doit toolchain` to install it into "
            f"{package.parent.parent.parent}"
        ) from None
    if found != version:
        raise ToolchainError(
            f"{package} holds {name} {found}, not {version}: delete it and run `doit toolchain`"
        )
    return package


def install_library(
    name: str, *, base: Path | None = None, timeout: float = 600, install: bool = True
) -> Path:
    """The pinned library `name`, installed with npm first when missing and `install` is true.

    Installed like the compiler: into a staging directory renamed into place when complete,
    under a lock, so a directory named `<name>-<version>` always holds a complete install.
    """
    try:
        return installed_library(name, base=base)
    except ToolchainError:
        if not install:
            raise
    version = LIBRARIES[name]
    root = (base if base is not None else toolchain_dir()).absolute()
    stem = f"{name}-{version}"
    _prepare_root(root, f"{name} {version}")
    with _locked(root / f".{stem}.lock", timeout):
        with contextlib.suppress(ToolchainError):
            return installed_library(name, base=root)
        with staged_install(root, stem) as staging:
            _npm_install(staging, version, timeout, package=name)
    logger.info("%s@%s: installed in %s", name, version, root / stem, extra=PROGRESS)
    return installed_library(name, base=root)


def _npm_install(staging: Path, version: str, timeout: float, package: str = "typescript") -> None:
    # Without a package.json of its own, npm walks up and installs into a parent project.
    write_atomic(staging / "package.json", json.dumps({"private": True}) + "\n")
    argv = [
        "npm",
        "install",
        "--prefix",
        str(staging),
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--loglevel=error",
        f"{package}@{version}",
    ]
    logger.info(
        "%s@%s: installing with npm into %s (once per version)...",
        package,
        version,
        staging.parent,
        extra=PROGRESS,
    )
    try:
        result = proc.run(argv, cwd=staging, timeout=timeout)
    except proc.ProcTimeout as exc:
        raise ToolchainError(
            f"npm install {package}@{version} timed out after {timeout:g} s"
            + _indented(exc.stderr or exc.stdout)
        ) from None
    except proc.ProcError as exc:
        raise ToolchainError(f"cannot install {package} {version}: {exc}") from None
    if not result.ok:
        raise ToolchainError(
            f"npm install {package}@{version} failed (exit {result.returncode})"
            + _indented(result.stderr or result.stdout)
        )


def _compiler_in(directory: Path, *, base: Path | None = None) -> Compiler:
    """The compiler of an npm install of `typescript` in `directory`; with a `base` (the
    toolchain cache it is installed in), asked its `--version` only when this very file has
    not answered before (`_probed`)."""
    path, prefix = _executable_in(directory)
    if base is None:  # an install being staged: asked
        return _compiler(path, prefix, _ask_version(prefix))
    try:
        stamp = _stamp(path)
    except OSError as exc:
        raise ToolchainError(f"{path}: {exc.strerror or exc}") from None
    return _compiler(path, prefix, _version_of(path, prefix, base=base, stamp=stamp))


def _executable_at(executable: str | Path) -> Path:
    """The file `TRAILBLAZE_TSC` names (a path, or a command on PATH), absolute."""
    path = Path(executable).expanduser()
    if not path.is_file():
        on_path = shutil.which(str(executable)) if os.sep not in str(executable) else None
        if on_path is None:
            raise ToolchainError(f"{TSC_ENV}={executable}: no such file")
        path = Path(on_path)
    return path.absolute()


def _executable_in(directory: Path) -> tuple[Path, tuple[str, ...]]:
    """The compiler file of an npm install of `typescript` in `directory`, and its argv prefix."""
    package = directory / "node_modules" / "typescript"
    try:
        manifest = json.loads((package / "package.json").read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ToolchainError(f"{directory}: no typescript package installed ({exc})") from None
    optional = manifest.get("optionalDependencies") or {}
    natives = [name for name in optional if name.startswith("@typescript/typescript-")]
    if natives:
        # TypeScript 7: the Go binary comes in one optional package per platform, of which npm
        # installs only this machine's. It is run directly: the Node wrapper and npx around it
        # cost more than the compile itself (measured: see docs/performance.md).
        wanted = platform_package()
        exe = "tsc.exe" if sys.platform == "win32" else "tsc"
        path = directory / "node_modules" / "@typescript" / wanted / "lib" / exe
        if not path.is_file():
            scope = directory / "node_modules" / "@typescript"
            present = sorted(p.name for p in scope.iterdir()) if scope.is_dir() else []
            raise ToolchainError(
                f"{directory}: no native compiler for this machine (expected @typescript/{wanted};"
                f" installed: {', '.join(present) or 'none'}; are npm's optional dependencies "
                "turned off?)"
            )
        prefix: tuple[str, ...] = (str(path),)
    else:
        # TypeScript up to 6 is JavaScript run by node.
        path = package / "lib" / "tsc.js"
        if not path.is_file():
            raise ToolchainError(f"{directory}: {path.name} missing from the typescript package")
        prefix = (_node(), str(path))
    return path, prefix


def _compiler(path: Path, prefix: tuple[str, ...], version: str) -> Compiler:
    stat = path.stat()
    return Compiler(path, prefix, version, f"{version}:{stat.st_size}:{stat.st_mtime_ns}")


def _ask_version(prefix: tuple[str, ...]) -> str:
    try:
        result = proc.run([*prefix, "--version"], timeout=_VERSION_TIMEOUT)
    except proc.ProcError as exc:
        raise ToolchainError(str(exc)) from None
    if not result.ok:
        raise ToolchainError(
            f"`{' '.join(prefix)} --version` failed (exit {result.returncode})"
            + _indented(result.stderr or result.stdout)
        )
    return parse_version(result.stdout)


def _node() -> str:
    found = shutil.which("node")
    if found is None:
        raise ToolchainError("node not found on PATH: install Node.js 20 and npm")
    return found


@contextlib.contextmanager
def _locked(path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive `flock` on `path`, waiting up to `timeout` for another holder."""
    with path.open("a") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ToolchainError(
                        f"waited {timeout:g} s for another install holding {path}"
                    ) from None
                time.sleep(_LOCK_POLL)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def staged_install(root: Path, name: str) -> Iterator[Path]:
    """A fresh staging directory for the install `root/name`: renamed into place when the body
    returns (so a directory under that name is always complete), removed when it raises.

    Called under the install's lock: no other installer of `name` is running, so any staging
    directory is what an interrupted (killed) install left behind; it is removed first, and so
    is an install that was complete once (renamed into place) but is broken now.
    """
    target = root / name
    for leftover in root.glob(f".{name}.*.tmp"):
        logger.info("removing an interrupted install: %s", leftover)
        shutil.rmtree(leftover, ignore_errors=True)
    if target.exists():
        # Renamed away first so that a crash halfway through the removal cannot leave a
        # partial directory under the name that means "complete".
        doomed = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=root))
        os.rename(target, doomed / target.name)
        shutil.rmtree(doomed, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=root))
    try:
        # mkdtemp's 0700 would keep the install from other users of a shared cache.
        staging.chmod(0o755)
        yield staging
        os.rename(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _indented(text: str) -> str:
    text = text.strip()
    if not text:
        return ""
    return ":\n" + "\n".join(f"    {line}" for line in text.splitlines())
