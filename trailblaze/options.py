"""Options of a check, and the environment variables that set them.

Kept free of heavy imports: doit's task creation reads them on every run, even a no-op.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from trailblaze.errors import UsageError

log = logging.getLogger(__name__)

DISABLE_ENV = "TRAILBLAZE_DISABLE_TRAIL_RECORDING_VALIDATION"
REQUIRE_ENV = "TRAILBLAZE_REQUIRE_TYPECHECK"
REMOTE_ENV = "TRAILBLAZE_REMOTE_CACHE"
REMOTE_READ_ONLY_ENV = "TRAILBLAZE_REMOTE_CACHE_READ_ONLY"
NO_TESTS_ENV = "TRAILBLAZE_NO_TESTS"
RERUN_TESTS_ENV = "TRAILBLAZE_RERUN_TESTS"
NO_WRITE_ENV = "TRAILBLAZE_NO_WRITE"
OVERWRITE_GENERATED_ENV = "TRAILBLAZE_OVERWRITE_GENERATED"
CI_ENV = "CI"
_ON = frozenset(("1", "true", "yes", "on"))
_OFF = frozenset(("0", "false", "no", "off"))
SWITCH_SPELLINGS = "1/0, true/false, yes/no or on/off"


def env_switch(name: str, env: Mapping[str, str] | None = None) -> bool | None:
    """The one reader of our boolean environment variables: on for `1`, `true`, `yes`, `on`,
    off for `0`, `false`, `no`, `off` (any case, surrounding blanks ignored), None when unset
    or blank. Any other value is a `UsageError` naming the variable: `=enable` or `=Y` meaning
    "off" would let a pull-request build write to a shared cache."""
    raw = (env if env is not None else os.environ).get(name)
    value = raw.strip().lower() if raw is not None else ""
    if not value:
        return None
    if value in _ON:
        return True
    if value in _OFF:
        return False
    shown = raw if raw is not None and len(raw) <= 40 else f"{(raw or '')[:40]}..."
    raise UsageError(f"{name}={shown!r} is not a switch: use {SWITCH_SPELLINGS} (any case)")


def env_flag(name: str, env: Mapping[str, str] | None = None) -> bool:
    """A switch that is off unless set on (`env_switch`: a value it does not know is an error)."""
    return env_switch(name, env) is True


def env_milliseconds(
    name: str, default: float, *, floor: float, env: Mapping[str, str] | None = None
) -> float:
    """Seconds from a `*_MS` variable: `default` when unset, at least `floor`. A value that is
    not a finite number of milliseconds (`abc`, `nan`, `inf`) is `default`, with a warning
    (as the reference's timeouts fall back): `nan` or `inf` reached the clock as a traceback."""
    raw = (env if env is not None else os.environ).get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw) / 1000.0
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        log.warning(
            "%s=%r is not a number of milliseconds; using %s", name, raw, f"{default * 1000:g}"
        )
        return default
    return max(value, floor)


TEST_ENV = (
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "NODE_ENV",
    "CI",
    "TRAILBLAZE_MEMORY_BLANK_UNKNOWN_TOKENS",
)
"""What of the environment the unit tests see beyond where programs are: part of their keys."""
LOCATION_ENV = ("PATH", "HOME", "TMPDIR", "TEMP", "TMP", "SYSTEMROOT")
"""Passed on to the unit tests so that bun and what a test starts can run, and not part of
their keys: they locate programs and temporary files, and differ from one machine to the next."""


def unit_test_env(env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The values of `TEST_ENV` that are set, sorted: what of the environment a test's key covers."""
    environ = os.environ if env is None else env
    return sorted((name, environ[name]) for name in TEST_ENV if name in environ)


def in_ci(env: Mapping[str, str] | None = None) -> bool:
    """Whether we run in CI, read as CI services set `CI`: `true` mostly, `1` or a name of their
    own on some. Any value is on but a blank one and the off spellings of a switch (`0`,
    `false`, `no`, `off`, any case), never an error: a value we do not know is the stricter
    reading, since in CI a check that could not run fails."""
    value = (env if env is not None else os.environ).get(CI_ENV, "").strip().lower()
    return value not in ("", *_OFF)


def typecheck_required(explicit: bool | None = None, env: Mapping[str, str] | None = None) -> bool:
    """Whether a type check that could not run fails the check (exit 3).

    The command line wins (`--require-typecheck` / `--no-require-typecheck`), then
    `TRAILBLAZE_REQUIRE_TYPECHECK` (a switch: `env_switch`), then `CI`: in CI a check that did
    not really check must not pass.
    """
    value = env_switch(REQUIRE_ENV, env)  # read even when overridden: a bad value is an error
    if explicit is not None:
        return explicit
    return in_ci(env) if value is None else value


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What a check is asked to do: the command line's and doit's options, the same for both."""

    strict: bool = True
    typecheck: bool = True
    require_typecheck: bool = False
    install: bool = True
    """Install the pinned compiler through npm when it is missing."""
    remote_cache: str | None = None
    """Base URL of a shared result cache (Bazel's HTTP remote-cache protocol; `remote.py`)."""
    remote_read_only: bool = False
    shard: tuple[int, int] | None = None
    """(K, N): check only the K-th of N shards of the trails (`shard.py`)."""
    tests: bool = True
    """Run the trailmaps' unit tests (`check.unittests`); `--no-tests` turns it off."""
    rerun_tests: bool = False
    """Run every unit test, whatever the cache holds (for tests that are not hermetic)."""
    write: bool = True
    """Write each trailmap's generated files into its `tools/` (`--no-write`: nothing is
    written outside the scratch directory)."""
    overwrite_generated: bool = False
    """Replace generated files of a `tools/` that Trailblaze (not we) generated."""

    @classmethod
    def from_env(
        cls,
        *,
        strict: bool = True,
        require_typecheck: bool | None = None,
        remote_cache: str | None = None,
        remote_read_only: bool = False,
        write: bool = True,
        overwrite_generated: bool = False,
    ) -> CheckOptions:
        """The options the command line gives, completed from the environment. Every switch of
        the environment is read, even where the command line overrides it: a value it does not
        know is a usage error before any work."""
        remote = remote_cache if remote_cache is not None else os.environ.get(REMOTE_ENV, "")
        read_only = env_flag(REMOTE_READ_ONLY_ENV)
        no_write = env_flag(NO_WRITE_ENV)
        overwrite = env_flag(OVERWRITE_GENERATED_ENV)
        return cls(
            strict=strict,
            typecheck=not env_flag(DISABLE_ENV),
            require_typecheck=typecheck_required(require_typecheck),
            remote_cache=remote.strip() or None,
            remote_read_only=remote_read_only or read_only,
            tests=not env_flag(NO_TESTS_ENV),
            rerun_tests=env_flag(RERUN_TESTS_ENV),
            write=(write and not no_write),
            overwrite_generated=overwrite_generated or overwrite,
        )
