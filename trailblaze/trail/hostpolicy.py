"""What a workspace lets a recording do on the host, and why a host call is refused.

The one way through for a host program is `[tool.trailblaze] allow-host-programs` in the
workspace's `pyproject.toml` (read once, by `workspace.py`, for the check and for replay):

```toml
[tool.trailblaze]
allow-host-programs = ["adb", "scripts/seed.sh"]
```

- `exec` may run a program the list names. An entry without a `/` is a program name, looked up
  on `PATH` when it runs: it allows a call whose `argv[0]` is exactly that name (`adb`, not
  `/usr/bin/adb` nor `./adb`). An entry with a `/` is a file, relative to the workspace root
  unless absolute: it allows a call whose `argv[0]` holds a `/` and names that file, a relative
  one taken from `workingDir` (itself relative to where replay runs) or else from where replay
  runs, as `exec` starts it; the check takes the workspace root for where replay runs. Paths
  are compared as written, normalized, never with a `..` part. A program given by a token
  (`{{args.cmd}}`, a composed tool's `{{params.x}}`) is known only at replay: never allowed.
- `runCommand` and `script` are never allowed: no entry can name what a shell line or a script
  runs.
- `runTrail` reads only a trail file (`*.trail.yaml`, `trail.yaml`, `blaze.yaml`) inside the
  workspace (without one, inside the directory of the trail replayed); the list has no say.

`HostPolicy.refusal` gives the one sentence that says why, for the check's finding and for
replay's refusal alike.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import msgspec

from trailblaze.report.escaping import printable
from trailblaze.trail.argtokens import TOKEN
from trailblaze.trail.hostcalls import HostCall
from trailblaze.workspace import ALLOW_HOST_PROGRAMS, TRAIL_NAMES, TRAIL_SUFFIX, Workspace

SETTING: Final = f"[tool.trailblaze] {ALLOW_HOST_PROGRAMS} in pyproject.toml"
_SHOWN = 120
"""The most of a program or path a message shows."""


def _shown(text: str) -> str:
    text = printable(text)
    return repr(text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…")


class HostPolicy(msgspec.Struct, frozen=True):
    """The host programs a workspace allows its recordings to run, and where its trails are."""

    root: Path | None = None
    """The workspace root: where path entries are relative to, and where `runTrail` may read
    (None: no workspace, so no entry, and `runTrail` reads next to the trail replayed)."""
    allowed: tuple[str, ...] = ()

    @classmethod
    def of(cls, ws: Workspace | None) -> HostPolicy:
        if ws is None:
            return cls()
        return cls(root=ws.root, allowed=ws.allow_host_programs)

    def refusal(self, call: HostCall, *, cwd: Path | None, trail_dir: Path | None) -> str | None:
        """Why `call` may not run (one sentence), or None when the workspace allows it.

        `cwd` is the directory a relative path is taken from when the call runs (replay's
        working directory; for the check, the workspace root), `trail_dir` the directory of the
        trail that makes the call.
        """
        reason = self._why(call, cwd=cwd, trail_dir=trail_dir)
        if reason is None:
            return None
        if call.direct:
            return reason
        return f"'{call.via[0]}' reaches {call.tool.name} ({' → '.join(call.via)}): {reason}"

    def _why(self, call: HostCall, *, cwd: Path | None, trail_dir: Path | None) -> str | None:
        name = call.tool.name
        args: Mapping[str, Any] = call.args if isinstance(call.args, Mapping) else {}
        if name == "exec":
            return self._exec(args, cwd)
        if name == "runTrail":
            return self._run_trail(args, cwd, trail_dir)
        return (
            f"{name} {call.tool.does}: no entry of {SETTING} can allow it, and a recording "
            "may not run programs on the machine that replays it"
        )

    def _exec(self, args: Mapping[str, Any], cwd: Path | None) -> str | None:
        argv = args.get("argv")
        if argv is None or argv == [] or (isinstance(argv, list) and argv[0] == ""):
            return None  # nothing to start: the call fails on its own
        # Not a list (a token, text): taken whole, as the program it may become.
        program = argv[0] if isinstance(argv, list) else argv
        if not isinstance(program, str):
            return (
                "exec runs a host program that its call does not write out as text "
                f"(argv[0]), so no entry of {SETTING} can allow it"
            )
        if TOKEN.search(program):
            return (
                f"exec runs the host program {_shown(program)}, known only at replay (a token), "
                f"so no entry of {SETTING} can allow it: write the program out"
            )
        if self.allows(program, args.get("workingDir"), cwd):
            return None
        return (
            f"exec runs the host program {_shown(program)} (argv[0]), which {SETTING} does not "
            "allow: a recording may run on the machine that replays it only the programs "
            "that setting names"
        )

    def allows(self, program: str, working_dir: Any, cwd: Path | None) -> bool:
        """Whether an entry allows `exec` to run `program` (its `argv[0]`) from `working_dir`."""
        if "/" not in program:
            return program in self.allowed
        where = self._program_file(program, working_dir, cwd)
        if where is None:
            return False
        for entry in self.allowed:
            if "/" not in entry or ".." in entry.split("/"):
                continue
            if posixpath.isabs(entry):
                target = posixpath.normpath(entry)
            elif self.root is not None:
                target = posixpath.normpath(posixpath.join(self.root.as_posix(), entry))
            else:
                continue
            if where == target:
                return True
        return False

    @staticmethod
    def _program_file(program: str, working_dir: Any, cwd: Path | None) -> str | None:
        """The file `exec` starts for a program holding a `/`, as written and normalized; None
        when it cannot be told before the run, or has a `..` part."""
        if ".." in program.split("/"):
            return None
        if posixpath.isabs(program):
            return posixpath.normpath(program)
        if working_dir is None or working_dir == "":
            base = cwd.as_posix() if cwd is not None else None
        elif isinstance(working_dir, str) and not TOKEN.search(working_dir):
            if ".." in working_dir.split("/"):
                return None
            if posixpath.isabs(working_dir):
                base = working_dir
            elif cwd is not None:
                base = posixpath.join(cwd.as_posix(), working_dir)
            else:
                base = None
        else:
            base = None
        return posixpath.normpath(posixpath.join(base, program)) if base is not None else None

    def _run_trail(
        self, args: Mapping[str, Any], cwd: Path | None, trail_dir: Path | None
    ) -> str | None:
        raw = args.get("path")
        if not isinstance(raw, str) or not raw.strip():
            return None  # nothing is read: the call fails on its own
        raw = raw.strip()
        if TOKEN.search(raw):
            return (
                f"runTrail reads the host file {_shown(raw)}, known only at replay (a token): "
                "a recording may replay only the workspace's own trails, named as written"
            )
        if self.reads_inside(raw, cwd, trail_dir):
            return None
        return (
            f"runTrail reads the host file {_shown(raw)}, which is not a trail file inside "
            f"{'the workspace' if self.root is not None else 'the directory of the trail'}: "
            "a recording may replay only the workspace's own trails"
        )

    def home(self, trail_dir: Path | None) -> Path | None:
        """Where `runTrail` may read: the workspace, else the directory of the trail replayed."""
        return self.root if self.root is not None else trail_dir

    def reads_inside(self, raw: str, cwd: Path | None, trail_dir: Path | None) -> bool:
        """Whether the trail `runTrail` names by `raw` is a trail file inside `home`: absolute
        or `~` as it is, relative from `cwd` or the trail's directory (replay looks there in
        that order), symlinks resolved as far as they exist."""
        home = self.home(trail_dir)
        if home is None or not is_trail_file_name(raw):
            return False
        given = os.path.expanduser(raw)
        if os.path.isabs(given):
            candidates = [given]
        else:
            candidates = [os.path.join(base, given) for base in (cwd, trail_dir) if base]
        real_home = Path(os.path.realpath(home))
        # The file replay would open: the first that is there, symlinks resolved. With none
        # there, the call fails at replay without reading anything: one inside will do.
        found = next((c for c in candidates if os.path.isfile(c)), None)
        for candidate in [found] if found is not None else candidates:
            real = os.path.realpath(candidate)
            if is_trail_file_name(real) and is_inside(real, real_home):
                return True
        return False


NO_WORKSPACE: Final = HostPolicy()
"""No workspace: no program allowed, `runTrail` only next to the trail replayed."""


def is_trail_file_name(path: str) -> bool:
    """Whether `path` names a trail file by its name (`runTrail` reads no other)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.endswith(TRAIL_SUFFIX) or name in TRAIL_NAMES


def is_inside(path: str | Path, home: Path) -> bool:
    """Whether `path`, normalized as written, lies below `home`."""
    normal = os.path.normpath(path)
    base = os.path.normpath(home)
    return normal.startswith(base.rstrip(os.sep) + os.sep)
