"""Workspaces: where the trailmaps, the trails and the scratch directory are.

Two layouts are recognised, walking up from a start directory:

- Trailblaze's: `<ws>/trails/config/trailmaps/<id>/trailmap.yaml`, trails anywhere under
  `<ws>/trails/`, scratch in `<ws>/trails/.trailblaze/`;
- the compact one: `<ws>/trailmaps/<id>/trailmap.yaml`, trails anywhere under `<ws>/trailmaps/`,
  scratch in `<ws>/.trailblaze/`.

A directory whose `trails/config/trailblaze.yaml` exists is a workspace of Trailblaze's layout
too, with or without trailmaps: the reference's runtime walks up to that file.

`[tool.trailblaze]` in `<ws>/pyproject.toml` overrides the detection (`layout`, `trailmaps`,
`trails`, `scratch`, `exclude`) and names the host programs a recording may run
(`allow-host-programs`, read here once for the check and for replay:
`toolmodel.hostaccess`).

`TRAILBLAZE_CONFIG_DIR`, the reference's first-choice override of the `trails/config/`
directory, names where the trailmaps (`<dir>/trailmaps/`) and the legacy targets
(`<dir>/targets/`) are read from, whatever workspace the walk finds (`with_config_dir`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trailblaze import codes
from trailblaze.errors import TrailblazeError
from trailblaze.finding import Finding, Owned

Layout = Literal["compact", "trailblaze"]
EXCLUDED_DIRS = frozenset({"build", ".gradle", ".git", "node_modules", ".trailblaze", ".claude"})
TRAIL_NAMES = frozenset({"trail.yaml", "blaze.yaml"})
TRAIL_SUFFIX = ".trail.yaml"
PROJECT_CONFIG_NAME = "trailblaze.yaml"
_PROJECT_CONFIG_KEYS = re.compile(
    r"^(defaults|trailmaps|targets|toolsets|tools|providers|llm):", re.M
)
ALLOW_HOST_PROGRAMS = "allow-host-programs"
"""The `[tool.trailblaze]` key naming the host programs a recording may run (`exec`)."""
_CONFIG_KEYS = frozenset(
    {
        "layout",
        "trailmaps",
        "trails",
        "scratch",
        "exclude",
        "workspaces",
        ALLOW_HOST_PROGRAMS,
        "remote-cache-public-keys",
    }
)
CONFIG_DIR_ENV = "TRAILBLAZE_CONFIG_DIR"
"""The reference's override of the `trails/config/` directory (relative to the current
directory when relative)."""
PACKS_DIRS = (("trails", "config", "packs"), ("packs",))
"""Where the older layout kept its trailmaps (`packs/<id>/pack.yaml`): named in a hint."""
PUBLIC_KEY = re.compile(r"^ed25519:[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$")
"""A public key of `remote-cache-public-keys`: `ed25519:` and the key's 32 bytes in base64."""


class WorkspaceError(TrailblazeError):
    """No workspace where one was expected, or a bad `[tool.trailblaze]` table (usage error)."""


class SettingsError(WorkspaceError):
    """A `pyproject.toml` that cannot be read, or a bad `[tool.trailblaze]` table: never a
    reason to go on as if there were no workspace (its settings would be lost)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Workspace:
    """A workspace on disk: its root, layout, and where its trailmaps, trails and scratch are."""

    root: Path
    layout: Layout
    trailmaps_dir: Path
    trails_dir: Path
    scratch: Path
    exclude: frozenset[str] = field(default=EXCLUDED_DIRS)
    remote_keys: tuple[str, ...] = ()
    """`remote-cache-public-keys`: the keys remote-cache entries must be signed with
    (`state.signing`); none: entries are not checked for a signature."""
    allow_host_programs: tuple[str, ...] = ()
    """`[tool.trailblaze] allow-host-programs`: the host programs a recording may run, as
    written (`toolmodel.hostaccess` says how a call's program is matched against them)."""
    config_dir: Path | None = None
    """The configuration directory `TRAILBLAZE_CONFIG_DIR` names (resolved), when it is set:
    the trailmaps and the legacy targets are read from it instead of the workspace's own."""
    home_scratch: Path | None = None
    """The workspace's own scratch directory when `scratch` is one a check keeps below it for
    itself (`trailblaze check FILE`, the language server): what it writes into the trailmaps
    (`tools/tsconfig.json`'s SDK) names the workspace's, as every other check does
    (`state.scratch.Layout.home`)."""

    @property
    def settings(self) -> dict[str, Any]:
        """The settings of `[tool.trailblaze]` and of the environment a verdict depends on
        beyond the files it reads: part of every key that repeats a verdict (the command
        line's no-op, doit's up-to-date check, the run entry)."""
        found: dict[str, Any] = {"allow_host_programs": list(self.allow_host_programs)}
        if self.config_dir is not None:
            # Relative to the workspace: the same on every machine (the remote cache's keys).
            found["config_dir"] = os.path.relpath(self.config_dir, self.root).replace(os.sep, "/")
        return found

    @property
    def targets_dir(self) -> Path | None:
        """Baked `targets/<id>.yaml` kept in the workspace (Trailblaze's legacy location), or
        in the configuration directory `TRAILBLAZE_CONFIG_DIR` names."""
        if self.config_dir is not None:
            return self.config_dir / "targets"
        return self.root / "trails" / "config" / "targets" if self.layout == "trailblaze" else None

    def rel(self, path: Path) -> str:
        """Workspace-relative POSIX path, the form every report uses."""
        # String slicing: this runs once per trail on every check, and Path.relative_to is slow.
        text = str(path)
        prefix = str(self.root) + os.sep
        if text.startswith(prefix):
            return shown_path(text[len(prefix) :].replace(os.sep, "/"))
        return shown_path(path.as_posix())


def shown_path(rel: str) -> str:
    """A path as reports and stored state name it: bytes of the name that are not UTF-8 (which
    Python keeps as lone surrogates) written as `\\xNN`, so it is text every output can carry.
    Any other character is kept; each output escapes what it cannot show."""
    if rel.isascii():
        return rel
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return rel


@dataclass(frozen=True, slots=True, kw_only=True)
class TrailmapDir:
    """A trailmap's directory as the scan found it, with its manifest."""

    dir_name: str
    path: Path
    manifest: Path


@dataclass(frozen=True, slots=True, kw_only=True)
class Scan:
    """What is on disk: trailmap directories, trail files, and problems found while looking."""

    trailmaps: tuple[TrailmapDir, ...]
    trail_paths: tuple[str, ...]
    """Every trail candidate (a directory named like a trail too: the parse gate reports it)."""
    findings: tuple[Finding, ...]

    @property
    def trails(self) -> tuple[Path, ...]:
        return tuple(map(Path, self.trail_paths))


def is_trail_name(name: str) -> bool:
    return name.endswith(TRAIL_SUFFIX) or name in TRAIL_NAMES or name == PROJECT_CONFIG_NAME


def is_project_config(text: str) -> bool:
    """A `trailblaze.yaml` is project configuration when it is all comments or holds config keys."""
    meaningful = [
        line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    return not meaningful or bool(_PROJECT_CONFIG_KEYS.search(text))


def find_workspace(start: Path | None = None, *, explicit: bool = False) -> Workspace:
    """The workspace at `start` (explicit) or the nearest one above it, its trailmaps read
    from the directory `TRAILBLAZE_CONFIG_DIR` names when it is set (`with_config_dir`)."""
    config = config_dir_override()
    try:
        found = _find_workspace(start, explicit=explicit)
    except SettingsError:
        raise
    except WorkspaceError:
        if config is None or explicit:
            raise
        # No workspace around the current directory: the one that owns the configuration
        # directory (`<ws>/trails/config`), as the reference's runtime reads it.
        owner = config.parent.parent if _is_trails_config(config) else config
        found = _workspace_at(owner) or _default_scratch(_trailblaze_layout(owner))
    return with_config_dir(found, config)


def config_dir_override(environ: Mapping[str, str] | None = None) -> Path | None:
    """The directory `TRAILBLAZE_CONFIG_DIR` names, resolved against the current directory;
    None when it is unset or blank. One that is not a directory is a `SettingsError` naming
    the variable: the run would otherwise check against trailmaps it was told not to use."""
    value = (os.environ if environ is None else environ).get(CONFIG_DIR_ENV, "")
    if not value.strip():
        return None
    path = Path(value).expanduser()
    resolved = (Path.cwd() / path).resolve() if not path.is_absolute() else path.resolve()
    if not resolved.is_dir():
        what = "does not exist" if not resolved.exists() else "is not a directory"
        raise SettingsError(
            f"{CONFIG_DIR_ENV}={value}: '{resolved}' {what}: it must name a Trailblaze "
            "configuration directory (the one holding trailblaze.yaml and trailmaps/, "
            "such as 'examples/app/trails/config'), or be unset"
        )
    return resolved


def with_config_dir(ws: Workspace, config: Path | None) -> Workspace:
    """`ws` with its trailmaps read from the configuration directory `config` (None: as it
    is)."""
    if config is None:
        return ws
    return dataclasses.replace(ws, trailmaps_dir=config / "trailmaps", config_dir=config)


def _is_trails_config(path: Path) -> bool:
    return path.name == "config" and path.parent.name == "trails"


def _find_workspace(start: Path | None, *, explicit: bool) -> Workspace:
    here = (start or Path.cwd()).resolve()
    if explicit:
        if not here.is_dir():
            raise WorkspaceError(f"workspace '{start}' is not a directory")
        found = _workspace_at(here)
        if found is None:
            raise WorkspaceError(
                _monorepo_hint(here, f"'{start}' is not a workspace")
                or (
                    f"'{start}' is not a workspace: {packs}"
                    if (packs := _packs_hint(here))
                    else None
                )
                or f"'{start}' is not a workspace: expected 'trailmaps/<id>/trailmap.yaml', "
                f"'trails/config/trailmaps/<id>/trailmap.yaml', 'trails/config/trailblaze.yaml' "
                f"or [tool.trailblaze] in pyproject.toml"
            )
        return found
    for candidate in (here, *here.parents):
        found = _workspace_at(candidate)
        if found is not None:
            return found
    monorepo = next((c for c in (here, *here.parents) if _is_monorepo_root(c)), None)
    hint = _monorepo_hint(monorepo, f"no workspace found from '{here}'") if monorepo else None
    packs = next(filter(None, map(_packs_hint, (here, *here.parents))), None)
    raise WorkspaceError(
        hint
        or (f"no workspace found from '{here}': {packs}" if packs else None)
        or f"no workspace found from '{here}': run inside a directory with 'trailmaps/', "
        f"'trails/config/trailmaps/' or 'trails/config/trailblaze.yaml', or pass the workspace "
        f"path"
    )


def _packs_hint(root: Path) -> str | None:
    """What to do with the `pack.yaml` files of the older layout's `packs/` directories at
    `root`: the current layout's names for them; None when there are none."""
    packs: list[Path] = []
    for parts in PACKS_DIRS:
        directory = root.joinpath(*parts)
        if directory.is_dir():
            packs.extend(sorted(directory.glob("*/pack.yaml")))
    if not packs:
        return None
    shown = packs[0].relative_to(root).as_posix()
    new = shown.replace("packs/", "trailmaps/", 1).removesuffix("pack.yaml") + "trailmap.yaml"
    more = f" (and {len(packs) - 1} more)" if len(packs) > 1 else ""
    return (
        f"'{shown}'{more} is the older layout, where trailmaps were packs: rename each "
        f"'packs/<id>/pack.yaml' to 'trailmaps/<id>/trailmap.yaml' (here '{new}')"
    )


def _is_monorepo_root(path: Path) -> bool:
    table = pyproject_table(path)
    return table is not None and "workspaces" in table


def _monorepo_hint(root: Path, what: str) -> str | None:
    """What to do at a monorepo root, whose `[tool.trailblaze] workspaces` names workspaces
    but is not one itself; None elsewhere."""
    if not _is_monorepo_root(root):
        return None
    return (
        f"{what}: '{root}' is a monorepo root (its pyproject.toml's [tool.trailblaze] names "
        f"workspaces): run inside one of them or name one, or check them all with "
        f"'trailblaze check --all'"
    )


def is_workspace(path: Path) -> bool:
    """Whether `path` is the root of a workspace (either layout, or its own configuration)."""
    return _workspace_at(path) is not None


def _workspace_at(path: Path) -> Workspace | None:
    config = pyproject_table(path)
    if config is not None and "workspaces" in config:
        return None  # a monorepo root (`monorepo.py`) names workspaces; it is not one
    if config is not None:
        return _configured(path, config)
    if (path / "trails" / "config" / "trailmaps").is_dir():
        return _default_scratch(_trailblaze_layout(path))
    if (path / "trails" / "config" / PROJECT_CONFIG_NAME).is_file():
        # The reference's runtime anchor: a workspace even before it has a trailmap.
        return _default_scratch(_trailblaze_layout(path))
    if (path / "trailmaps").is_dir():
        if path.name == "config" and path.parent.name == "trails":
            return None  # inside a Trailblaze workspace: its root is two levels up
        return _default_scratch(_compact_layout(path))
    return None


def _default_scratch(ws: Workspace) -> Workspace:
    """`ws` with its scratch directory where it really is: a symbolic link to a directory
    inside the workspace is followed (the compiler names files by their real paths, and so
    must we); one that leads out of it is a `SettingsError` at the link."""
    real = ws.scratch.resolve()
    if real == ws.scratch:
        return ws
    if not _inside(real, ws.root):
        raise SettingsError(
            f"{ws.scratch}: the scratch directory leads to '{real}', outside the workspace: "
            "nothing is written there; remove the link, or set [tool.trailblaze] scratch in "
            "pyproject.toml to a directory inside the workspace"
        )
    return dataclasses.replace(ws, scratch=real)


def _inside(path: Path, root: Path) -> bool:
    """Whether the real `path` is strictly below the real `root`."""
    real_root = root.resolve()
    return path != real_root and path.is_relative_to(real_root)


def _trailblaze_layout(root: Path) -> Workspace:
    return Workspace(
        root=root,
        layout="trailblaze",
        trailmaps_dir=root / "trails" / "config" / "trailmaps",
        trails_dir=root / "trails",
        scratch=root / "trails" / ".trailblaze",
    )


def _compact_layout(root: Path) -> Workspace:
    return Workspace(
        root=root,
        layout="compact",
        trailmaps_dir=root / "trailmaps",
        trails_dir=root / "trailmaps",
        scratch=root / ".trailblaze",
    )


def pyproject_table(root: Path) -> dict[str, Any] | None:
    """`[tool.trailblaze]` of `root/pyproject.toml` (None without the file or the table), its
    keys known and `workspaces`, when there, a list of paths; a file that cannot be read or a
    table that is not one is a `SettingsError` at the file's line and column."""
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    import tomllib  # noqa: PLC0415 - a workspace with a pyproject.toml only

    try:
        text = pyproject.read_text("utf-8")
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{pyproject}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r" \(at line (\d+), column (\d+)\)$", str(exc))
        where = f"{pyproject}:{at[1]}:{at[2]}" if at else str(pyproject)
        message = str(exc)[: at.start()] if at else str(exc)
        raise SettingsError(f"{where}: cannot read: {message}") from None

    def error(path: tuple[str, ...], message: str) -> SettingsError:
        line, column = _key_position(text, path)
        return SettingsError(f"{pyproject}:{line}:{column}: {message}")

    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise error(("tool",), f"[tool] must be a table, not {tool!r}")
    table = tool.get("trailblaze")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise error(("tool", "trailblaze"), f"[tool.trailblaze] must be a table, not {table!r}")
    unknown = sorted(set(table) - _CONFIG_KEYS)
    if unknown:
        raise error(
            ("tool", "trailblaze", unknown[0]),
            f"[tool.trailblaze]: unknown key '{unknown[0]}'; "
            f"expected {', '.join(sorted(_CONFIG_KEYS))}",
        )
    for key, value in table.items():
        problem = _config_problem(key, value)
        if problem is not None:
            raise error(("tool", "trailblaze", key), f"[tool.trailblaze] {problem}")
    return table


def _config_problem(key: str, value: Any) -> str | None:
    """What is wrong with the value of a `[tool.trailblaze]` key, or None."""
    if key == "layout" and value not in ("compact", "trailblaze"):
        return f"layout must be 'compact' or 'trailblaze', not {value!r}"
    if key in ("trailmaps", "trails", "scratch") and not _is_path(value):
        return f"{key} must be a path string"
    if key == "exclude" and not (isinstance(value, list) and all(map(_is_path, value))):
        return "exclude must be a list of directory names"
    if key == "workspaces" and not (
        isinstance(value, list) and value and all(map(_is_path, value))
    ):
        return "workspaces must be a list of paths or globs"
    if key == "remote-cache-public-keys" and not (
        isinstance(value, list) and all(isinstance(v, str) and PUBLIC_KEY.match(v) for v in value)
    ):
        return (
            "remote-cache-public-keys must be a list of public keys, each 'ed25519:' and the "
            "key's 32 bytes in base64 (`trailblaze signing-key FILE` prints one)"
        )
    if key == ALLOW_HOST_PROGRAMS:
        return _programs_problem(value)
    return None


def _programs_problem(value: Any) -> str | None:
    """What is wrong with `allow-host-programs`: a list of program names (`adb`) or paths
    (`scripts/seed.sh`, relative to the workspace), each written as a call names it."""
    if not isinstance(value, list):
        return (
            f"{ALLOW_HOST_PROGRAMS} must be a list of program names or paths, not {_shown(value)}"
        )
    for index, item in enumerate(value):
        where = f"{ALLOW_HOST_PROGRAMS}[{index}]"
        if not isinstance(item, str):
            return f"{where} must be a program name or path (a string), not {_shown(item)}"
        if not item.strip() or item != item.strip() or "\0" in item:
            return (
                f"{where} {item!r} is not a program: a name such as 'adb' or a path such as "
                "'scripts/seed.sh', without surrounding spaces"
            )
        if item.endswith("/") or item.rsplit("/", 1)[-1] in (".", ".."):
            return f"{where} {item!r} names a directory, not a program"
    return None


def _shown(value: Any) -> str:
    """A TOML value in an error message: short, one line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_path(value: Any) -> bool:
    """A string that can name a file (no file name holds a NUL)."""
    return isinstance(value, str) and bool(value) and "\0" not in value


_TOML_KEY = r"""(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')"""
_TOML_KEYS = rf"{_TOML_KEY}(?:\s*\.\s*{_TOML_KEY})*"
_TOML_HEADER = re.compile(rf"\s*\[\[?\s*({_TOML_KEYS})\s*\]")
_TOML_ASSIGNMENT = re.compile(rf"\s*({_TOML_KEYS})\s*=")


def _key_position(text: str, path: tuple[str, ...]) -> tuple[int, int]:
    """Line and column (1-based) where the TOML key `path` is defined in `text`, else where the
    nearest enclosing key or table is (an inline table, a `tool = 1`), else 1:1.

    tomllib keeps no positions: this follows the table headers and the keys as TOML writes them
    (bare, quoted, dotted), skipping multi-line strings, which is enough to point at the key.
    """
    best: tuple[int, tuple[int, int]] = (0, (1, 1))
    table: tuple[str, ...] = ()
    in_string: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if in_string is not None:
            if line.count(in_string) % 2:
                in_string = None
            continue
        header = _TOML_HEADER.match(line)
        assignment = None if header else _TOML_ASSIGNMENT.match(line)
        match = header or assignment
        if match is not None:
            keys = _toml_keys(match[1])
            full = keys if header else (*table, *keys)
            if header:
                table = keys
            depth = len(full)
            if full == path[:depth] and depth > best[0]:
                best = (depth, (number, match.start(1) + 1))
                if depth == len(path):
                    return best[1]
        for quotes in ('"""', "'''"):
            if line.count(quotes) % 2:
                in_string = quotes
                break
    return best[1]


def _toml_keys(dotted: str) -> tuple[str, ...]:
    parts = re.findall(_TOML_KEY, dotted)
    return tuple(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def _configured(root: Path, table: dict[str, Any]) -> Workspace:
    """The workspace `table` (checked by `pyproject_table`) describes at `root`."""
    layout = table.get("layout")
    if layout == "compact":
        base = _compact_layout(root)
    elif layout == "trailblaze" or (root / "trails" / "config" / "trailmaps").is_dir():
        base = _trailblaze_layout(root)
    else:
        base = _compact_layout(root)

    def path_of(key: str, default: Path) -> Path:
        value = table.get(key)
        return default if value is None else (root / value).resolve()

    ws = Workspace(
        root=root,
        layout=base.layout,
        trailmaps_dir=path_of("trailmaps", base.trailmaps_dir),
        trails_dir=path_of("trails", base.trails_dir),
        scratch=path_of("scratch", base.scratch),
        exclude=EXCLUDED_DIRS | frozenset(table.get("exclude", [])),
        remote_keys=tuple(sorted(set(table.get("remote-cache-public-keys", [])))),
        allow_host_programs=tuple(table.get(ALLOW_HOST_PROGRAMS, ())),
    )
    if "scratch" not in table:
        return _default_scratch(ws)
    problem = _scratch_problem(ws)
    if problem is not None:
        line, column = _key_position(
            (root / "pyproject.toml").read_text("utf-8"), ("tool", "trailblaze", "scratch")
        )
        raise SettingsError(
            f"{root / 'pyproject.toml'}:{line}:{column}: [tool.trailblaze] scratch "
            f"'{table['scratch']}' {problem}"
        )
    return ws


def _scratch_problem(ws: Workspace) -> str | None:
    """What is wrong with where a configured scratch directory really is, or None: we write
    there, so it must be a directory of its own inside the workspace."""
    if ws.scratch == ws.root.resolve():
        return "is the workspace root: the scratch directory must be a directory of its own"
    if not _inside(ws.scratch, ws.root):
        return (
            f"leads to '{ws.scratch}', outside the workspace '{ws.root}': the scratch "
            "directory must be inside the workspace"
        )
    for what, directory in (("trailmaps", ws.trailmaps_dir), ("trails", ws.trails_dir)):
        if directory.resolve().is_relative_to(ws.scratch):
            return (
                f"holds the {what} directory '{directory}': the scratch directory must be a "
                "directory of its own"
            )
    return None


def scan_trailmaps(ws: Workspace) -> tuple[tuple[TrailmapDir, ...], tuple[Finding, ...]]:
    """The trailmap directories of the workspace, sorted, with the problems found listing them.

    `scan` without the walk of every trail: what needs only the trailmaps uses this.
    """
    findings: list[Finding] = []
    trailmaps: list[TrailmapDir] = []
    if ws.trailmaps_dir.is_dir():
        for entry in sorted(os.scandir(ws.trailmaps_dir), key=lambda e: e.name):
            if not entry.is_dir(follow_symlinks=False) or entry.name in ws.exclude:
                continue
            manifest = Path(entry.path) / "trailmap.yaml"
            # A directory or a broken link of that name too: its load is a located error,
            # where skipping it made the trailmap vanish and its trails pass as unknown targets.
            if os.path.lexists(manifest):
                trailmaps.append(
                    TrailmapDir(dir_name=entry.name, path=Path(entry.path), manifest=manifest)
                )
            elif (Path(entry.path) / "trailmap.yml").exists():
                findings.append(
                    Finding(
                        kind="warning",
                        path=ws.rel(Path(entry.path) / "trailmap.yml"),
                        line=1,
                        column=1,
                        message="a trailmap manifest must be named 'trailmap.yaml'; this directory is "
                        "not read as a trailmap",
                        code=codes.NOT_A_TRAILMAP,
                        fatal=False,
                    )
                )
    listed, problems = listed_trailmaps(ws, trailmaps)
    trailmaps.extend(listed)
    trailmaps.sort(key=lambda t: t.dir_name)
    findings.extend(problems)
    packs = ws.trailmaps_dir.parent / "packs"
    for pack in sorted(packs.glob("*/pack.yaml")) if packs.is_dir() else ():
        new = f"trailmaps/{pack.parent.name}/trailmap.yaml"
        findings.append(
            Finding(
                kind="warning",
                path=ws.rel(pack),
                line=1,
                column=1,
                message=f"the older layout, where trailmaps were packs: not read as a trailmap; "
                f"rename it to '{new}' beside 'packs/' (the current layout)",
                code=codes.NOT_A_TRAILMAP,
                fatal=False,
            )
        )
    return tuple(trailmaps), tuple(findings)


def project_config(ws: Workspace) -> Path | None:
    """The workspace's `trailblaze.yaml` (the reference's anchor): in the configuration
    directory `TRAILBLAZE_CONFIG_DIR` names, else `<ws>/trails/config/` in Trailblaze's
    layout; None in the compact layout."""
    if ws.config_dir is not None:
        return ws.config_dir / PROJECT_CONFIG_NAME
    if ws.layout == "trailblaze":
        return ws.root / "trails" / "config" / PROJECT_CONFIG_NAME
    return None


_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(.*)$")
_ITEM = re.compile(r"^(\s*)-(\s+(.*))?$")


def _uncommented(text: str) -> str:
    """`text` without a trailing YAML comment (` #...` outside quotes)."""
    quote: str | None = None
    for index, char in enumerate(text):
        if quote is not None:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or text[index - 1] in " \t"):
            return text[:index].rstrip()
    return text.rstrip()


def _unquoted(text: str) -> str | None:
    """A plain or quoted YAML scalar's text (None: not a simple scalar, e.g. a mapping)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if not text or text[0] in "[{&*!|>%@`" or ": " in text or text.endswith(":"):
        return None
    return text


def _listed_entries(text: str) -> tuple[list[tuple[int, int, str | None]], tuple[int, str] | None]:
    """The `trailmaps:` entries of a `trailblaze.yaml`'s text: `(line, column, path)` each
    (path None: not a plain path), and where the key is with what is wrong with its value when
    it is not a list. Only what the reference's loader reads of it: a top-level list of
    strings, in block (`- path`) or flow (`[a, b]`) style."""
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        key = _TOP_KEY.match(line)
        if key is None or key[1] != "trailmaps":
            continue
        rest = _uncommented(key[2]).strip()
        if rest.startswith("["):
            if not rest.endswith("]"):
                return [], (number, "a flow list ('[...]') on one line")
            column = line.index("[") + 2
            found: list[tuple[int, int, str | None]] = []
            for part in rest[1:-1].split(","):
                if part.strip():
                    found.append((number, column + len(part) - len(part.lstrip()), _unquoted(part)))
                column += len(part) + 1
            return found, None
        if rest and rest not in ("~", "null"):
            return [], (number, "a list of paths")
        found = []
        for later, item_line in enumerate(lines[number:], number + 1):
            body = _uncommented(item_line)
            if not body.strip():
                continue
            item = _ITEM.match(body)
            if item is None:
                if not body[0].isspace():
                    break
                continue  # a continuation of the item above: that item is not a plain path
            found.append((later, len(item[1]) + 3, _unquoted(item[3] or "")))
        return found, None
    return [], None


def listed_trailmaps(
    ws: Workspace, known: list[TrailmapDir]
) -> tuple[list[TrailmapDir], list[Finding]]:
    """The trailmaps `trailblaze.yaml`'s `trailmaps:` lists beyond those in the trailmaps
    directory (`known`): paths of manifests (or of their directories) relative to the
    directory holding the `trailblaze.yaml`, as the reference reads them. An entry that names
    no manifest, or a trailmap whose name another has, is a warning at its line, never fatal:
    the reference's `check` does not read the list at all."""
    config = project_config(ws)
    if config is None or not config.is_file():
        return [], []
    try:
        text = config.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return [], []  # the file is not ours to judge: its own loader reports it
    entries, wrong = _listed_entries(text)

    def warning(line: int, column: int, message: str) -> Finding:
        return Finding(
            kind="warning", path=ws.rel(config), line=line, column=column, message=message,
            code=codes.NOT_A_TRAILMAP, fatal=False,
        )  # fmt: skip

    problems = []
    if wrong is not None:
        problems.append(warning(wrong[0], 1, f"trailmaps: must be {wrong[1]}; not read"))
    names = {t.dir_name: t for t in known}
    manifests = {os.path.realpath(t.manifest) for t in known}
    found: list[TrailmapDir] = []
    for line, column, value in entries:
        if value is None:
            problems.append(warning(line, column, "trailmaps: an entry must be a path; not read"))
            continue
        path = Path(os.path.normpath(config.parent / value))
        manifest = path / "trailmap.yaml" if path.is_dir() else path
        if not manifest.is_file():
            problems.append(
                warning(line, column, f"trailmaps: '{value}' names no trailmap.yaml; not read")
            )
            continue
        if os.path.realpath(manifest) in manifests:
            continue  # the trailmaps directory's own, listed as well
        name = manifest.parent.name
        if name in names:
            problems.append(
                warning(
                    line,
                    column,
                    f"trailmaps: '{value}': a trailmap named '{name}' is already read from "
                    f"'{ws.rel(names[name].path)}'; this one is not",
                )
            )
            continue
        listed = TrailmapDir(dir_name=name, path=manifest.parent, manifest=manifest)
        names[name] = listed
        manifests.add(os.path.realpath(manifest))
        found.append(listed)
    return found, problems


def scan(ws: Workspace) -> Scan:
    """Walk the workspace once: trailmap directories and trail files, sorted."""
    trailmaps, listed = scan_trailmaps(ws)
    findings = list(listed)
    # Strings, not Paths, and only the directory entries' cached types: this runs on every
    # doit invocation, for every trail, and a no-op should cost little more than the stats.
    trails: list[str] = []
    root_real = str(ws.root.resolve()) + os.sep
    stack = [str(ws.trails_dir)] if ws.trails_dir.is_dir() else []
    exclude = ws.exclude
    scratch = str(ws.scratch)  # configured inside the trails: its copies are not trails
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            findings.append(
                Finding(
                    kind="parse", path=ws.rel(Path(directory)), line=1, column=1,
                    message=f"cannot list directory: {exc.strerror}", code=codes.IO,
                )
            )  # fmt: skip
            continue
        for entry in entries:
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                if name in exclude or entry.path == scratch:
                    continue
                if is_trail_name(name) and name != PROJECT_CONFIG_NAME:
                    trails.append(entry.path)  # the parse gate reports "is a directory"
                    continue
                stack.append(entry.path)
                continue
            if not is_trail_name(name):
                continue
            path = entry.path
            if entry.is_symlink():
                target = os.path.realpath(path)
                if os.path.exists(target) and not target.startswith(root_real):
                    findings.append(
                        Finding(
                            kind="warning", path=ws.rel(Path(path)), line=1, column=1,
                            message=f"symlink to '{target}' outside the workspace; not checked",
                            code=codes.OUTSIDE_WORKSPACE, fatal=False,
                        )
                    )  # fmt: skip
                    continue
            if name == PROJECT_CONFIG_NAME and _looks_like_config(Path(path)):
                continue
            trails.append(path)
    trails.sort()
    return Scan(trailmaps=trailmaps, trail_paths=tuple(trails), findings=tuple(findings))


def _looks_like_config(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(64 * 1024)
    except OSError:
        return False
    return is_project_config(head.decode("utf-8", "replace"))


TOOL_DIRS = ("tools", "shortcuts", "trailheads", "toolsets", "waypoints")
"""The subdirectories of a trailmap that hold its tool files (and its waypoint files, which
the check validates: inputs of every key that repeats its verdict, like the tool files)."""

_GENERATED_WHAT = {
    "trailblaze-client.d.ts": "typed surface",
    "tsconfig.json": "tsconfig",
    "trailblaze-tool-descriptors.json": "tool descriptors",
    "trail.schema.json": "trail JSON Schema",
}
GENERATED_TOOL_FILES = frozenset(_GENERATED_WHAT)
"""What we generate into a trailmap's `tools/` (`check.surfaces.write_surfaces`), each name with what
its error says it is."""


def generated_in_the_way(tools_dir: Path) -> list[tuple[Path, str]]:
    """What stands where a trailmap's generated files go, each with what is wrong with it: a
    `tools` that is no directory, a directory (or pipe, socket, device) named like one of them.
    Left as it is: it is the user's (`check.surfaces.write_surfaces` reports it)."""
    return generated_places(tools_dir)[0]


def generated_places(tools_dir: Path) -> tuple[list[tuple[Path, str]], list[Path]]:
    """`generated_in_the_way`, and the generated files that are not there (one `os.stat` each:
    what the no-op keys hold, so that a file deleted by hand is written again)."""
    try:
        if not stat.S_ISDIR(os.stat(tools_dir).st_mode):
            return [(tools_dir, "is a file, not a directory: the generated files go in it")], []
    except FileNotFoundError:
        if os.path.lexists(tools_dir):
            return [(tools_dir, "is a symbolic link to nothing: the generated files go in it")], []
        return [], [tools_dir / name for name in _GENERATED_WHAT]
    except OSError:
        return [], []  # writing says what is wrong
    blocked = []
    missing = []
    for name, what in _GENERATED_WHAT.items():
        try:
            mode = os.stat(tools_dir / name).st_mode
        except FileNotFoundError:
            missing.append(tools_dir / name)  # none yet (or a link to nothing: replaced)
            continue
        except OSError:
            continue  # writing says what is wrong
        if stat.S_ISDIR(mode):
            blocked.append((tools_dir / name, f"is a directory, not a file: the {what} goes here"))
        elif not stat.S_ISREG(mode):
            blocked.append((tools_dir / name, f"is not a regular file: the {what} goes here"))
    return blocked, missing


def tool_files(
    directory: Path, exclude: frozenset[str] = EXCLUDED_DIRS
) -> Iterator[tuple[str, Path]]:
    """`(subdirectory, path)` of every file under a trailmap's tool directories, sorted.

    The one walk deciding which files may be a trailmap's tools: what the surfaces generator
    reads (`tooldefs`) and what doit's up-to-date check stamps (`trailmap_files`). Directories
    named in `exclude` (`EXCLUDED_DIRS` by default: build output, VCS and tool caches,
    node_modules, our scratch) and the files we generate into `tools/` are skipped.
    """
    for sub in TOOL_DIRS:
        base = directory / sub
        if not base.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in exclude)
            top = dirpath == str(base)
            for filename in sorted(filenames):
                # Only what sits directly in `tools/` is ours: a nested project's own
                # `tsconfig.json` is one of its inputs.
                if not (top and _is_generated(sub, filename)):
                    yield sub, Path(dirpath) / filename


def trailmap_files(trailmap: TrailmapDir) -> list[Path]:
    """The files of a trailmap that its surfaces depend on (not its trails).

    Every file `tool_files` walks, with the default exclusions (not the workspace's own
    `exclude`): the surfaces generator reads tool files with those, and a file it reads must
    make the check stale when it changes.
    """
    files = [trailmap.manifest]
    tools_dir = trailmap.path / "tools"
    projects: list[Path] = []
    for sub, path in tool_files(trailmap.path):
        files.append(path)
        if sub == "tools" and path.name == NESTED_TSCONFIG and path.parent != tools_dir:
            projects.append(path.parent)  # `nested_projects`, from the same walk
    # Installing or updating a nested project's dependencies changes its verdict.
    for project in projects:
        files.extend(dependency_manifests(project))
    return files


def _is_generated(sub: str, filename: str) -> bool:
    return sub == "tools" and is_generated_tool(filename)


def is_generated_tool(filename: str) -> bool:
    """Whether a file of this name directly in a trailmap's `tools/` is one we generate."""
    return filename in GENERATED_TOOL_FILES or filename.endswith(".trail.gen.ts")


def owned_by(ws: Workspace, found: Scan) -> Owned:
    """What findings about `ws` may name (`finding.Owned`), from its scan `found`."""
    dirs = [ws.rel(t.path) + "/" for t in found.trailmaps]
    if ws.targets_dir is not None:
        dirs.append(ws.rel(ws.targets_dir) + "/")
    return Owned(
        trails=frozenset(ws.rel(Path(p)) for p in found.trail_paths),
        dirs=tuple(d for d in dirs if not d.startswith("/")),
        files=frozenset(f.path for f in found.findings),
    )


NESTED_TSCONFIG = "tsconfig.json"


def nested_projects(tools_dir: Path, exclude: frozenset[str] = EXCLUDED_DIRS) -> list[Path]:
    """The directories below a trailmap's `tools/` with a `tsconfig.json` of their own, sorted.

    Each is a TypeScript project of its own (a host-only tools folder, an MCP server): it is
    compiled with its own tsconfig, never as a part of the trailmap's program.
    """
    found: list[Path] = []
    if not tools_dir.is_dir():
        return found
    for dirpath, dirnames, filenames in os.walk(tools_dir):
        dirnames[:] = sorted(d for d in dirnames if d not in exclude)
        if dirpath != str(tools_dir) and NESTED_TSCONFIG in filenames:
            found.append(Path(dirpath))
    return sorted(found)


def outermost(projects: list[Path]) -> list[Path]:
    """The projects that are not inside another one of the list."""
    return [p for p in projects if not any(q != p and p.is_relative_to(q) for q in projects)]


def declared_dependencies(project: Path) -> list[str] | None:
    """The packages a project's `package.json` lists under `dependencies` and
    `devDependencies`, sorted; None when it has no readable `package.json` (nothing declared)."""
    try:
        data = json.loads((project / "package.json").read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    names: set[str] = set()
    for section in ("dependencies", "devDependencies"):
        listed = data.get(section)
        if isinstance(listed, dict):
            names.update(n for n in listed if isinstance(n, str) and _PACKAGE_NAME.match(n))
    return sorted(names)


_PACKAGE_NAME = re.compile(r"^(@[A-Za-z0-9._~-]+/)?[A-Za-z0-9._~-]+$")


def resolved_dependency(project: Path, name: str) -> Path | None:
    """The `package.json` of package `name` as Node resolves it from `project` (the nearest
    `node_modules/<name>` up the tree), or None."""
    for directory in (project, *project.parents):
        manifest = directory / "node_modules" / name / "package.json"
        if manifest.is_file():
            return manifest
    return None


def missing_dependencies(project: Path) -> list[str]:
    """The packages a project declares that do not resolve from it (not installed)."""
    return [
        name
        for name in declared_dependencies(project) or []
        if resolved_dependency(project, name) is None
    ]


def dependency_manifests(project: Path) -> list[Path]:
    """What tells whether a project's dependencies are installed, and which versions: each
    declared package's `package.json` where it resolves (where it would be installed when it
    does not). The project's own `package.json` is one of the trailmap's tool files."""
    found: list[Path] = []
    for name in declared_dependencies(project) or []:
        found.append(
            resolved_dependency(project, name) or project / "node_modules" / name / "package.json"
        )
    return found
