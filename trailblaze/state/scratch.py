"""Every path in a workspace's scratch directory, named in one place.

The scratch directory (`<ws>/.trailblaze/`, or `<ws>/trails/.trailblaze/`, or the workspace's
`scratch` setting) holds only what trailblaze-doit can make again::

    .gitignore                       `*`: nothing here is committed
    doit.sqlite3                     doit's own database (`doit check`, `doit surfaces`)
    report.json                      the full report of the last `doit check` (a doit target)
    replay.json, replay-junit.xml    the results of the last `doit replay`
    state/store-v<N>.sqlite3         the state store (`trailblaze.state.store`): every memo and record
    state/cli-output.<variant>       the output of the last complete `trailblaze check` per format
    cache/results-v<N>.sqlite3       type-gate results by content key (`TRAILBLAZE_CACHE_DIR`)
    cache/tests-v1.sqlite3           unit tests' passing results by input key (likewise)
    sdk/dist/index.d.ts              `@trailblaze/scripting` for tsconfigs: ours, or the reference's
    sdk-trailblaze-doit/dist/...     our `@trailblaze/scripting` declarations, always
    typegate/surfaces/<tm>.d.ts      the type gate's module surface of each trailmap
    typegate/surfaces/<tm>.probe.ts  its probes (checked while declaration files are not)
    typegate/tools-tsconfig/<tm>.json  the tsconfig of a trailmap's tools when theirs is overridden
    typegate/tests-tsconfig/<tm>.json  the tsconfig its unit tests run with in that case
    typegate/tooldecl/<tm>/...       declarations emitted from each trailmap's scripted tools
    typegate/tooldecl-check/<tm>/... their `.ts` twins, which the surface check does check
    typegate/tooldecl-missing/...    never written: what a surface imports for a missing emit
    typegate/trails/<trail>.ts       one generated module per trail
    typegate/tsconfig.*.json         the tsconfig of one compiler run (deleted after it)
    typegate/canary.*.ts             the canary of one compiler run (`proof.py`, deleted after it)
    typegate/tsconfig.json           the project of the compiler started before a run (`primed.py`)
    typegate/primed/.../trail.ts     its placeholder modules, one per directory depth
    trail-validation/<id>/tools/     validation-only surfaces of package-bundled targets
    trailmap-surfaces/<tm>/tools/    a trailmap's surface, schema and sidecar when its tools/ is
                                     not ours to write (`--no-write`, another generator's files)

Anything else found there is left alone. Every write here goes through `state.owned`: a path
we created that is in the way (a directory where a file belongs, say) is cleared, anything
else in the way is an error naming it, and nothing is written through a link out of the
directory.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from trailblaze.fsutil import write_atomic, write_generated, write_if_changed
from trailblaze.state.keys import digest
from trailblaze.state.owned import GITIGNORE as GITIGNORE  # noqa: PLC0414 - re-exported
from trailblaze.state.owned import Scratch
from trailblaze.state.owned import ScratchError as ScratchError  # noqa: PLC0414 - re-exported
from trailblaze.state.owned import prepare_scratch as prepare_scratch  # noqa: PLC0414 - re-exported

CACHE_ENV = "TRAILBLAZE_CACHE_DIR"
STORE_VERSION = 2
"""The state store's format version: part of its file name, so versions never share a file."""
RESULTS_VERSION = 2
"""The result cache's format version (its rows and keys), likewise in its file name."""


def module_specifier(module: Path, from_dir: Path) -> str:
    """An import specifier for a module, relative to the importing file's directory."""
    rel = Path(os.path.relpath(module, from_dir)).as_posix()
    # TypeScript imports name the JavaScript a module becomes: x.ts / x.d.ts as "x",
    # x.mts / x.d.mts as "x.mjs", x.cts / x.d.cts as "x.cjs".
    for suffix, replacement in (
        (".d.ts", ""), (".d.mts", ".mjs"), (".d.cts", ".cjs"),
        (".mts", ".mjs"), (".cts", ".cjs"), (".ts", ""), (".js", ""),
    ):  # fmt: skip
        if rel.endswith(suffix):
            rel = rel[: -len(suffix)] + replacement
            break
    return rel if rel.startswith(".") else f"./{rel}"


@dataclass(frozen=True, slots=True)
class Layout:
    """The paths of one scratch directory."""

    scratch: Path
    home: Path | None = None
    """The workspace's own scratch directory when this one is a check's own below it
    (`trailblaze check FILE`, the language server): the SDK the generated `tools/tsconfig.json`
    names is the workspace's (`sdk_dir`), so that every kind of check writes the same file."""

    # -- top level ------------------------------------------------------------------------------

    @property
    def gitignore(self) -> Path:
        return self.scratch / ".gitignore"

    @property
    def doit_db(self) -> Path:
        return self.scratch / "doit.sqlite3"

    @property
    def report(self) -> Path:
        return self.scratch / "report.json"

    @property
    def replay_json(self) -> Path:
        return self.scratch / "replay.json"

    @property
    def replay_junit(self) -> Path:
        return self.scratch / "replay-junit.xml"

    # -- state ----------------------------------------------------------------------------------

    @property
    def state_dir(self) -> Path:
        return self.scratch / "state"

    @property
    def store(self) -> Path:
        return self.state_dir / f"store-v{STORE_VERSION}.sqlite3"

    @property
    def last_run(self) -> Path:
        """The per-trail part of the last complete check's report (`check.narrow`)."""
        return self.state_dir / "last-run.json"

    @property
    def kept_phase(self) -> Path:
        """The stages and the gate's preparation of the last recording check, sealed
        (`check.keptphase`)."""
        return self.state_dir / "phase.kept"

    def cli_output(self, variant: str) -> Path:
        """Where `trailblaze check` keeps its last output in one variant (format and settings)."""
        name = digest("trailblaze-cli-output", variant)[:16]
        return self.state_dir / f"cli-output.{name}"

    def cache_dir(self, env: Mapping[str, str] | None = None) -> Path:
        """Where type-gate results are cached: `TRAILBLAZE_CACHE_DIR`, else `cache/` here."""
        override = (env if env is not None else os.environ).get(CACHE_ENV, "").strip()
        return Path(override).expanduser() if override else self.scratch / "cache"

    def results(self, env: Mapping[str, str] | None = None) -> Path:
        return self.cache_dir(env) / f"results-v{RESULTS_VERSION}.sqlite3"

    def test_results(self, env: Mapping[str, str] | None = None) -> Path:
        """The unit tests' passing results by key (`state.testresults`), beside the type gate's."""
        return self.cache_dir(env) / "tests-v1.sqlite3"

    def tests_tsconfig(self, trailmap: str) -> Path:
        """The tsconfig a trailmap's unit tests run with when its own SDK mapping is overridden."""
        return self.root / "tests-tsconfig" / f"{scratch_name(trailmap)}.json"

    # -- generated code -------------------------------------------------------------------------

    @property
    def sdk_dir(self) -> Path:
        """Where generated tsconfigs find `@trailblaze/scripting` (and the reference CLI
        extracts its bundle): ours unless a bundle that is not ours sits there."""
        return (self.home if self.home is not None else self.scratch) / "sdk"

    @property
    def sdk_index(self) -> Path:
        return self.sdk_dir / "dist" / "index.d.ts"

    @property
    def own_sdk_dir(self) -> Path:
        """Our declarations, always: what trails and fallback tool compiles are checked against."""
        return self.scratch / "sdk-trailblaze-doit"

    @property
    def own_sdk_index(self) -> Path:
        return self.own_sdk_dir / "dist" / "index.d.ts"

    def validation_dir(self, target_id: str) -> Path:
        """Where a bundled target's validation-only surface lives (its `tools/` is inside)."""
        return self.scratch / "trail-validation" / target_id

    def trailmap_tools(self, trailmap: str) -> Path:
        """Where a workspace trailmap's generated files go when its `tools/` is not ours to
        write (`--no-write`, or a generated file there that another generator owns): the
        check's own surface, schema and sidecar, beside nothing of the user's."""
        return self.trailmap_surfaces_dir / scratch_name(trailmap) / "tools"

    @property
    def trailmap_surfaces_dir(self) -> Path:
        return self.scratch / "trailmap-surfaces"

    @property
    def root(self) -> Path:
        """The type gate's directory (every compiler run's working directory)."""
        return self.scratch / "typegate"

    @property
    def surfaces_dir(self) -> Path:
        return self.root / "surfaces"

    def surface(self, trailmap: str) -> Path:
        return self.surfaces_dir / f"{scratch_name(trailmap)}.d.ts"

    def probe(self, trailmap: str) -> Path:
        """The probes of a surface: a `.ts` file, checked while declaration files are not."""
        return self.surfaces_dir / f"{scratch_name(trailmap)}.probe.ts"

    def tools_tsconfig(self, trailmap: str) -> Path:
        """The tsconfig a trailmap's scripted tools compile with when theirs is overridden."""
        return self.root / "tools-tsconfig" / f"{scratch_name(trailmap)}.json"

    def trail_file(self, trail_path: str) -> Path:
        return _trails_dir(self.scratch) / generated_name(trail_path)

    @property
    def trails_dir(self) -> Path:
        return self.root / "trails"

    @property
    def tooldecl_dir(self) -> Path:
        return self.root / "tooldecl"

    def tooldecl(self, trailmap: str) -> Path:
        return self.tooldecl_dir / scratch_name(trailmap)

    def missing_decl(self, module_name: str) -> Path:
        """What a surface imports for a tool module whose declarations were not emitted: a path
        nothing writes (no trailmap's), so the import fails and its trails go unchecked."""
        return self.root / "tooldecl-missing" / module_name

    def tooldecl_check(self, trailmap: str) -> Path:
        """`.ts` twins of a trailmap's emitted declarations: checked where `.d.ts` are not."""
        return self.root / "tooldecl-check" / scratch_name(trailmap)

    def surface_import(self, trail_path: str, trailmap: str) -> str:
        """How the generated module of a trail imports its trailmap's surface."""
        return _surface_import(self, trailmap, generated_name(trail_path).rpartition("/")[0])


@functools.lru_cache(maxsize=64)
def _trails_dir(scratch: Path) -> Path:
    """`Layout.trails_dir`, made once: every trail's module path is made from it (twice a trail
    on a cold check: where its worker writes it, and the compiler's job)."""
    return Layout(scratch).trails_dir


@functools.lru_cache(maxsize=4096)
def _surface_import(layout: Layout, trailmap: str, module_dir: str) -> str:
    """`Layout.surface_import` for the modules in `module_dir` (below `trails/`): the same for
    every trail of a directory, and worked out with `os.path.relpath` once instead of per trail."""
    return module_specifier(layout.surface(trailmap), layout.trails_dir / module_dir)


def write_scratch(path: Path, data: bytes | str, scratch: Path, *, always: bool = False) -> bool:
    """`fsutil.write_if_changed` (`write_atomic` when `always`) for a file of ours in the
    scratch directory `scratch` (`state.owned`): what we created that is in its way (a
    directory where the file belongs, a file where a directory does) is cleared, anything else
    is a `ScratchError`. True when it wrote."""
    owned = Scratch.of(scratch)
    owned.claim(path)
    write = write_atomic if always else write_if_changed
    try:
        return write(path, data) is not False
    except (IsADirectoryError, NotADirectoryError, FileExistsError, PermissionError):
        if not owned.clear(path):
            raise
    return write(path, data) is not False


def write_module(path: Path, text: str, scratch: Path) -> bool:
    """`fsutil.write_generated` for a generated module in the scratch directory `scratch`, with
    the rules of `write_scratch`. True when it wrote."""
    owned = Scratch.of(scratch)
    owned.claim(path)
    try:
        return write_generated(path, text)
    except (IsADirectoryError, NotADirectoryError, FileExistsError):
        if not owned.clear(path):
            raise
    return write_generated(path, text)


def make_dir(path: Path, scratch: Path) -> None:
    """`mkdir -p` for a directory of ours in the scratch directory `scratch`, with the rules of
    `write_scratch` (a directory there already is written into, whoever made it)."""
    owned = Scratch.of(scratch)
    owned.confine(path / "-")
    if path.is_dir():
        return
    owned.claim(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        if not owned.clear(path / "-"):
            raise
        path.mkdir(parents=True, exist_ok=True)


def remove_scratch(path: Path, scratch: Path) -> bool:
    """Remove a file of ours from the scratch directory `scratch` (stale, orphaned); False,
    and nothing removed, when it is not ours."""
    return Scratch.of(scratch).remove(path)


_NAME_CHARS = re.compile(r"[^a-z0-9_-]")


@functools.cache
def scratch_name(trailmap: str) -> str:
    """The name of a trailmap's files in the type gate's directories: its id in lower case with
    anything but letters, digits, `_` and `-` made `_`, then `-` and a digest of the exact id.

    Ids may hold dots and differ only in case (`a.d`, `a`, `App`, `app`): the compiler resolves
    the import `./a.d` to `a.d.ts` (trailmap `a`'s surface) before `a.d.d.ts`, and `./x.probe`
    to trailmap `x`'s probes, so raw ids would hand one trailmap's trails another's surface.
    These names hold no dot, end in the digest, and differ in more than case.
    """
    readable = _NAME_CHARS.sub("_", trailmap.lower())
    return f"{readable}-{digest('trailblaze-scratch-name', trailmap)[:10]}"


_SAFE_NAME = re.compile(r"[A-Za-z0-9 ._@+=,~-]+(/[A-Za-z0-9 ._@+=,~-]+)*")
_UNSAFE_CHAR = re.compile(r"[^A-Za-z0-9 ._@+=,~/-]")


def generated_name(trail_path: str) -> str:
    """The generated module's path under `typegate/trails/` for a trail: `<trail path>.ts` when
    every character of it is plain and lower case, else a safe derived name in lower case with a
    digest of the real one.

    The compiler prints file names in its diagnostics, one per line, as `file(line,col)`: a
    newline, a parenthesis, a backslash or bytes that are not UTF-8 in the name would make them
    unreadable (and then every trail of the batch unchecked). And it refuses two files whose
    names differ only in case (TS1149, the whole batch unchecked), even on a disk where they
    are two files: `trailmaps/App/` and `trailmaps/app/` hold two trailmaps there.
    """
    if _SAFE_NAME.fullmatch(trail_path) and trail_path == trail_path.lower():
        return f"{trail_path}.ts"
    real = digest("trailblaze-generated-name", trail_path)[:12]
    return f"{_UNSAFE_CHAR.sub('_', trail_path).lower()}.{real}.ts"
