"""A compile that runs to its end runs with the Go collector off, under a memory ceiling.

The native compiler holds nearly its whole program until it exits; at Go's default target its
collector traced that heap again and again for nothing (a third of a batch's CPU time).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.check.typegate.test_proof import BAD, GOOD, TRAIL
from tests.conftest import write_tree
from trailblaze.check.run import run_check
from trailblaze.options import CheckOptions
from trailblaze.toolchain import compilers
from trailblaze.toolchain.compilers import Compiler, collector_ceiling, one_shot_collector
from trailblaze.workspace import find_workspace

pytestmark = pytest.mark.usefixtures("tsc")


@pytest.fixture
def logged(
    tmp_path_factory: pytest.TempPathFactory, tsc: Compiler, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A compiler that writes each run's collector settings and arguments to a log first."""
    outside = tmp_path_factory.mktemp("bin")  # not in the workspace
    log = outside / "runs.log"
    fake = outside / "tsc"
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "GOGC=${{GOGC-unset}} GOMEMLIMIT=${{GOMEMLIMIT-unset}} $1" >> {shlex.quote(str(log))}\n'
        f'exec {shlex.quote(str(tsc.path))} "$@"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("TRAILBLAZE_TSC", str(fake))
    monkeypatch.delenv("GOGC", raising=False)
    monkeypatch.delenv("GOMEMLIMIT", raising=False)
    return log


def compiles(log: Path) -> list[str]:
    """The settings of every compile of a program (`-p`), not of the version probe."""
    return [line.rsplit(" ", 1)[0] for line in log.read_text().splitlines() if line.endswith(" -p")]


def check_codes(root: Path) -> list[str | None]:
    write_tree(root, {GOOD: TRAIL.format(x=1), BAD: TRAIL.format(x='"one"')})
    report = run_check(find_workspace(root, explicit=True), CheckOptions(tests=False))
    return [f.code for f in report.fatal_findings]


def test_a_compile_runs_with_the_collector_off_under_a_ceiling(
    compact_ws: Path, logged: Path
) -> None:
    assert check_codes(compact_ws) == ["TS2322"]
    ceiling = f"GOGC=off GOMEMLIMIT={collector_ceiling() >> 20}MiB"
    assert one_shot_collector() == {"GOGC": "off", "GOMEMLIMIT": f"{collector_ceiling() >> 20}MiB"}
    assert compiles(logged), "no compile ran"
    assert set(compiles(logged)) == {ceiling}


@pytest.mark.parametrize(
    ("setting", "seen"),
    [
        (("GOGC", "150"), "GOGC=150 GOMEMLIMIT=unset"),
        (("GOMEMLIMIT", "900MiB"), "GOGC=unset GOMEMLIMIT=900MiB"),
    ],
)
def test_a_collector_setting_of_the_user_is_kept_as_set(
    compact_ws: Path,
    logged: Path,
    monkeypatch: pytest.MonkeyPatch,
    setting: tuple[str, str],
    seen: str,
) -> None:
    monkeypatch.setenv(*setting)
    assert check_codes(compact_ws) == ["TS2322"]
    assert set(compiles(logged)) == {seen}


def test_the_javascript_compiler_keeps_its_environment(tsc: Compiler) -> None:
    node = Compiler(path=tsc.path, argv_prefix=tsc.argv_prefix, version="6.0.3", identity="x")
    assert not node.native
    assert node.one_shot_env() is None
    assert tsc.native


@pytest.mark.parametrize(
    ("physical", "cgroup", "ceiling"),
    [
        (24 << 30, None, 4 << 30),  # a quarter, at most 4 GiB
        (8 << 30, None, 2 << 30),
        (64 << 30, 4 << 30, 1 << 30),  # a container's limit below the machine's memory
        (1 << 30, None, 512 << 20),  # at least 512 MiB
        (None, None, 512 << 20),  # nothing known
    ],
)
def test_the_ceiling_is_a_quarter_of_the_memory_this_process_may_use(
    monkeypatch: pytest.MonkeyPatch, physical: int | None, cgroup: int | None, ceiling: int
) -> None:
    monkeypatch.setattr(compilers, "_physical_memory", lambda: physical)
    monkeypatch.setattr(compilers, "_cgroup_limit", lambda: cgroup)
    collector_ceiling.cache_clear()
    try:
        assert collector_ceiling() == ceiling
    finally:
        collector_ceiling.cache_clear()


@pytest.mark.parametrize(
    ("text", "limit"),
    [("max\n", None), ("2147483648\n", 2 << 30), ("9223372036854771712\n", None), ("junk", None)],
)
def test_a_cgroup_limit_is_read_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, limit: int | None
) -> None:
    (tmp_path / "memory.max").write_text(text)
    monkeypatch.setattr(compilers, "_CGROUP_LIMITS", (str(tmp_path / "memory.max"),))
    assert compilers._cgroup_limit() == limit
