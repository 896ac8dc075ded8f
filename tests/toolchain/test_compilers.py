"""The TypeScript toolchain: real npm installs, real compilers.

The pinned compiler is installed once per checkout into `.cache/toolchain` (or
`$TRAILBLAZE_TOOLCHAIN_DIR`); only the first session downloads it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from doit.exceptions import TaskError

from tests.conftest import ROOT, write_tree
from trailblaze.doit_tasks import tasks as doit_tasks
from trailblaze.toolchain.compilers import (
    BASELINE_TS_VERSION,
    LIBRARIES,
    TOOLCHAIN_DIR_ENV,
    TS_VERSION,
    TSC_ENV,
    Compiler,
    ToolchainError,
    compiler_key,
    find_compiler,
    install_library,
    install_typescript,
    installed_compiler,
    installed_library,
    library_dir,
    parse_version,
    platform_package,
    toolchain_dir,
    version_dir,
)
from trailblaze.toolchain.proc import run

# Read at import: the autouse `_clean_env` fixture removes TRAILBLAZE_* before each test.
CACHE = (
    Path(os.environ[TOOLCHAIN_DIR_ENV])
    if os.environ.get(TOOLCHAIN_DIR_ENV, "").strip()
    else ROOT / ".cache" / "toolchain"
)

VALID_TS = "const answer: number = 42;\nexport { answer };\n"
INVALID_TS = 'const answer: number = "42";\nexport { answer };\n'
TS2322 = "bad.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'."


@pytest.fixture(autouse=True)
def _no_tsc_override(monkeypatch: pytest.MonkeyPatch) -> None:
    # conftest keeps a developer's TRAILBLAZE_TSC on purpose; these tests set it themselves.
    monkeypatch.delenv(TSC_ENV, raising=False)


@pytest.fixture(scope="module")
def pinned() -> Compiler:
    """The pinned compiler from the test cache, ignoring any TRAILBLAZE_TSC."""
    install_typescript(TS_VERSION, base=CACHE)
    return installed_compiler(TS_VERSION, base=CACHE)


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "src", {"ok.ts": VALID_TS, "bad.ts": INVALID_TS})


def compile_(compiler: Compiler, cwd: Path, name: str) -> tuple[int, str]:
    result = run(
        [*compiler.argv_prefix, "--noEmit", "--strict", "--pretty", "false", name],
        cwd=cwd,
        timeout=60,
    )
    return result.returncode, result.stdout + result.stderr


# --- locating and naming --------------------------------------------------------------------


def test_toolchain_dir_env_override_then_xdg_then_home(tmp_path: Path) -> None:
    assert toolchain_dir({TOOLCHAIN_DIR_ENV: str(tmp_path / "tc")}) == tmp_path / "tc"
    assert toolchain_dir({"XDG_CACHE_HOME": str(tmp_path)}) == (
        tmp_path / "trailblaze-doit" / "toolchain"
    )
    home = Path.home() / ".cache" / "trailblaze-doit" / "toolchain"
    assert toolchain_dir({}) == home
    assert toolchain_dir({"XDG_CACHE_HOME": "relative/ignored"}) == home
    assert version_dir("7.0.2", tmp_path) == tmp_path / "typescript-7.0.2"


def test_each_version_has_its_own_directory(tmp_path: Path) -> None:
    assert version_dir(TS_VERSION, tmp_path) != version_dir(BASELINE_TS_VERSION, tmp_path)


def test_parse_version() -> None:
    assert parse_version("Version 7.0.2\n") == "7.0.2"
    assert parse_version("Version 6.0.3") == "6.0.3"
    with pytest.raises(ToolchainError) as info:
        parse_version("tsc: command not understood\n")
    assert str(info.value) == ("unexpected `tsc --version` output: 'tsc: command not understood'")


@pytest.mark.parametrize(
    ("system", "machine", "package"),
    [
        ("linux", "x86_64", "typescript-linux-x64"),
        ("linux", "aarch64", "typescript-linux-arm64"),
        ("darwin", "arm64", "typescript-darwin-arm64"),
        ("darwin", "x86_64", "typescript-darwin-x64"),
        ("win32", "AMD64", "typescript-win32-x64"),
        ("win32", "ARM64", "typescript-win32-arm64"),
    ],
)
def test_platform_package(system: str, machine: str, package: str) -> None:
    assert platform_package(system, machine) == package


# --- the pinned compiler, installed by npm ---------------------------------------------------


def test_pinned_compiler_is_the_native_binary(pinned: Compiler) -> None:
    assert pinned.version == TS_VERSION == "7.0.2"
    assert pinned.argv_prefix == (str(pinned.path),)
    assert pinned.path.is_absolute()
    assert pinned.path.name == "tsc"
    assert pinned.path.parent.name == "lib"
    assert pinned.path.parent.parent.name == platform_package()
    assert pinned.path.is_relative_to(version_dir(TS_VERSION, CACHE))
    if sys.platform == "linux":
        assert pinned.path.read_bytes()[:4] == b"\x7fELF"
    stat = pinned.path.stat()
    assert pinned.identity == f"7.0.2:{stat.st_size}:{stat.st_mtime_ns}"
    result = run([*pinned.argv_prefix, "--version"], timeout=30)
    assert result.stdout.strip() == "Version 7.0.2"


def test_cache_directory_describes_itself(pinned: Compiler) -> None:
    assert (
        (CACHE / "CACHEDIR.TAG")
        .read_text()
        .startswith("Signature: 8a477f597d28d172789f06886806bc55\n")
    )
    assert (CACHE / ".gitignore").read_text().endswith("\n*\n")
    assert "doit toolchain" in (CACHE / "README").read_text()


def test_second_install_does_nothing(pinned: Compiler, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="trailblaze")
    assert install_typescript(TS_VERSION, base=CACHE) == version_dir(TS_VERSION, CACHE)
    assert not [r for r in caplog.records if "npm" in r.getMessage()]
    assert installed_compiler(TS_VERSION, base=CACHE) == pinned


def test_session_fixture_compiles_valid_code(tsc: Compiler, sources: Path) -> None:
    assert compile_(tsc, sources, "ok.ts") == (0, "")


def test_session_fixture_reports_a_type_error(tsc: Compiler, sources: Path) -> None:
    code, output = compile_(tsc, sources, "bad.ts")
    assert code != 0
    assert output.splitlines() == [TS2322]


def test_find_compiler_without_override_is_the_installed_one(pinned: Compiler) -> None:
    assert find_compiler(base=CACHE) == pinned


def test_not_installed_says_how_to_install(tmp_path: Path) -> None:
    with pytest.raises(ToolchainError) as info:
        find_compiler(base=tmp_path)
    assert str(info.value) == (
        "TypeScript 7.0.2 is not installed: run `doit toolchain` to install it into "
        f"{tmp_path}, or set TRAILBLAZE_TSC to a compiler executable"
    )


def test_an_interrupted_install_does_not_count(pinned: Compiler, tmp_path: Path) -> None:
    # What a killed npm leaves: a staging directory, here even one with a whole compiler in it.
    shutil.copytree(
        version_dir(TS_VERSION, CACHE), tmp_path / ".typescript-7.0.2.x1y2z3.tmp", symlinks=True
    )
    with pytest.raises(ToolchainError, match="is not installed"):
        installed_compiler(TS_VERSION, base=tmp_path)
    with pytest.raises(ToolchainError, match="is not installed"):
        find_compiler(base=tmp_path)


def test_a_broken_install_is_reported(pinned: Compiler, tmp_path: Path) -> None:
    shutil.copytree(version_dir(TS_VERSION, CACHE), tmp_path / "typescript-7.0.2", symlinks=True)
    native = tmp_path / "typescript-7.0.2" / "node_modules" / "@typescript"
    shutil.rmtree(native)
    with pytest.raises(ToolchainError) as info:
        installed_compiler(TS_VERSION, base=tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'typescript-7.0.2'}: no native compiler for this machine (expected "
        f"@typescript/{platform_package()}; installed: none; are npm's optional dependencies "
        "turned off?)"
    )


# --- TRAILBLAZE_TSC ---------------------------------------------------------------------------


def test_override_pointing_at_a_missing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "bin" / "tsc"
    monkeypatch.setenv(TSC_ENV, str(missing))
    with pytest.raises(ToolchainError) as info:
        find_compiler(base=CACHE)
    assert str(info.value) == f"TRAILBLAZE_TSC={missing}: no such file"


def test_override_that_does_not_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "tsc"
    fake.write_text("#!/bin/sh\necho 'segfault' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv(TSC_ENV, str(fake))
    with pytest.raises(ToolchainError) as info:
        find_compiler(base=CACHE)
    assert str(info.value) == (
        f"TRAILBLAZE_TSC={fake}: `{fake} --version` failed (exit 3):\n    segfault"
    )


def test_override_pointing_at_the_real_binary_is_used(
    pinned: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TSC_ENV, str(pinned.path))
    # An empty cache: the override alone provides the compiler.
    assert find_compiler(base=tmp_path) == pinned
    # The benchmark's baseline asks for an exact version; the override does not replace it.
    with pytest.raises(ToolchainError, match=r"^TypeScript 6\.0\.3 is not installed"):
        find_compiler(BASELINE_TS_VERSION, base=tmp_path)


# --- the compiler's key (what shared caches key on) --------------------------------------------


class CountingCompiler:
    """A fake compiler at `path` (`TRAILBLAZE_TSC`) that answers `--version` with the version
    it was last written with and counts how often it was asked."""

    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "bin" / "tsc"
        self.path.parent.mkdir()
        self._log = tmp_path / "asked.log"

    def write(self, version: str) -> None:
        self.path.write_text(f"#!/bin/sh\necho asked >> {self._log}\necho 'Version {version}'\n")
        self.path.chmod(0o755)

    @property
    def asked(self) -> int:
        return self._log.read_text().count("asked") if self._log.exists() else 0


@pytest.fixture
def counting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CountingCompiler:
    fake = CountingCompiler(tmp_path)
    fake.write("7.0.2")
    monkeypatch.setenv(TSC_ENV, str(fake.path))
    return fake


def test_the_compiler_key_asks_each_binary_once_and_again_once_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counting: CountingCompiler
) -> None:
    fake = counting.path
    size = fake.stat().st_size
    assert compiler_key(base=tmp_path) == f"7.0.2:{size}"
    assert compiler_key(base=tmp_path) == f"7.0.2:{size}"
    assert counting.asked == 1  # the second run trusted the first answer
    # Rewritten in place (same size, same inode): asked again, and the key follows it. (File
    # times tick every few milliseconds: a rewrite within the same tick would look unchanged.)
    time.sleep(0.05)
    counting.write("7.0.3")
    assert fake.stat().st_size == size
    assert compiler_key(base=tmp_path) == f"7.0.3:{size}"
    assert counting.asked == 2
    # A record that is not one is no answer: the compiler is asked.
    for record in (tmp_path / "probed").iterdir():
        record.write_text("{not json")
    assert compiler_key(base=tmp_path) == f"7.0.3:{size}"
    assert counting.asked == 3
    # As find_compiler: a compiler that is not there is an error, not a key.
    monkeypatch.setenv(TSC_ENV, str(tmp_path / "missing"))
    with pytest.raises(ToolchainError, match="no such file"):
        compiler_key(base=tmp_path)


def test_the_compiler_is_asked_its_version_once_per_binary(
    tmp_path: Path, counting: CountingCompiler
) -> None:
    """A run finds its compiler without starting it when this very file has answered before
    (a `--version` costs a process start on every check); a binary rewritten is asked again."""
    assert find_compiler(base=tmp_path).version == "7.0.2"
    assert find_compiler(base=tmp_path).version == "7.0.2"
    assert counting.asked == 1
    time.sleep(0.05)
    counting.write("7.0.3")
    assert find_compiler(base=tmp_path).version == "7.0.3"
    assert counting.asked == 2
    # A binary that fails to answer is an error every time, and leaves no answer behind.
    time.sleep(0.05)
    counting.path.write_text("#!/bin/sh\nexit 3\n")
    for _ in range(2):
        with pytest.raises(ToolchainError, match="--version` failed"):
            find_compiler(base=tmp_path)


def test_the_compiler_key_of_the_installed_compiler_is_its_version_and_size(
    pinned: Compiler,
) -> None:
    assert compiler_key(base=CACHE) == f"{pinned.version}:{pinned.path.stat().st_size}"
    assert compiler_key(base=CACHE) == f"{pinned.version}:{pinned.path.stat().st_size}"


# --- installing: failures, concurrency, the baseline -------------------------------------------


def test_without_node_install_is_an_infrastructure_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    base = tmp_path / "toolchain"
    with pytest.raises(ToolchainError) as info:
        install_typescript(base=base)
    assert str(info.value) == (
        "cannot install TypeScript 7.0.2: node not found on PATH: install Node.js 20 and npm"
    )
    with pytest.raises(ToolchainError) as info:
        find_compiler(install=True, base=base)
    assert str(info.value).endswith("node not found on PATH: install Node.js 20 and npm")
    assert not base.exists()


def test_node_without_npm_is_an_infrastructure_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = shutil.which("node")
    assert node is not None
    only_node = tmp_path / "bin"
    only_node.mkdir()
    (only_node / "node").symlink_to(node)
    monkeypatch.setenv("PATH", str(only_node))
    with pytest.raises(ToolchainError) as info:
        install_typescript(base=tmp_path / "toolchain")
    assert str(info.value) == (
        "cannot install TypeScript 7.0.2: npm not found on PATH: install Node.js 20 and npm"
    )


def test_a_toolchain_dir_that_is_a_file_is_a_message_and_the_check_still_reports(
    tmp_path: Path,
) -> None:
    """`TRAILBLAZE_TOOLCHAIN_DIR` naming a file: a located 'could not run' (exit 3 in CI), the
    file untouched, no traceback (it was mkdir's FileExistsError)."""
    mine = tmp_path / "notes.txt"
    mine.write_text("keep\n")
    with pytest.raises(ToolchainError) as info:
        install_typescript(base=mine)
    assert str(info.value) == (
        f"cannot install TypeScript 7.0.2 into {mine} (the toolchain directory, "
        "$TRAILBLAZE_TOOLCHAIN_DIR): File exists"
    )
    ws = write_tree(
        tmp_path / "ws",
        {
            "trailmaps/app/trailmap.yaml": "id: app\ntarget:\n  display_name: app\n",
            "trailmaps/app/a.trail.yaml": "config: {target: app}\ntrail:\n  - step: s\n"
            "    recording:\n      tools:\n        - pressBack: {}\n",
        },
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAILBLAZE_")}
    env[TOOLCHAIN_DIR_ENV] = str(mine)
    for ci, code in (("0", 0), ("1", 3)):
        done = subprocess.run(
            [sys.executable, "-m", "trailblaze", "check", "--format", "json"],
            cwd=ws,
            capture_output=True,
            text=True,
            env={**env, "CI": ci},
            check=False,
            timeout=120,
        )
        assert done.returncode == code, done.stderr
        assert "Traceback" not in done.stderr
        infra = [f for f in json.loads(done.stdout)["findings"] if f["kind"] == "infra"]
        assert [f["message"] for f in infra] == [
            f"type check could not run for 1 trail(s): {info.value}"
        ]
    assert mine.read_text() == "keep\n"


def test_npm_failure_carries_npm_stderr(tmp_path: Path) -> None:
    # A version npm rejects before asking the registry: fails fast, offline.
    with pytest.raises(ToolchainError) as info:
        install_typescript("%bad%", base=tmp_path)
    message = str(info.value)
    assert message.startswith("npm install typescript@%bad% failed (exit 1):\n")
    assert '    npm error Invalid tag name "%bad%"' in message
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("typescript-")] == []
    assert not list(tmp_path.glob(".typescript-*.tmp"))


INSTALLER = textwrap.dedent(
    """
    import logging, sys
    from pathlib import Path
    from trailblaze.toolchain.compilers import install_typescript
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    print(install_typescript(base=Path(sys.argv[1])))
    """
)


@pytest.mark.slow
def test_concurrent_installs_leave_one_good_install(tmp_path: Path) -> None:
    base = tmp_path / "toolchain"
    leftover = base / ".typescript-7.0.2.killed.tmp"
    write_tree(leftover, {"package.json": '{"private": true}\n'})
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAILBLAZE_")}
    installers = [
        subprocess.Popen(
            [sys.executable, "-c", INSTALLER, str(base)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in installers]
    for installer, (out, err) in zip(installers, outputs, strict=True):
        assert installer.returncode == 0, err
        assert out == f"{base / 'typescript-7.0.2'}\n"
    logs = "".join(err for _, err in outputs)
    assert logs.count("typescript@7.0.2: installing with npm") == 1, logs
    assert sorted(p.name for p in base.iterdir()) == [
        ".gitignore",
        ".typescript-7.0.2.lock",
        "CACHEDIR.TAG",
        "README",
        "probed",  # what the installed compiler answered to `--version`
        "typescript-7.0.2",
    ]
    compiler = installed_compiler(TS_VERSION, base=base)
    assert compiler.version == "7.0.2"
    assert compiler.argv_prefix == (str(compiler.path),)


@pytest.mark.slow
def test_baseline_is_javascript_run_by_node(sources: Path) -> None:
    baseline = find_compiler(BASELINE_TS_VERSION, install=True, base=CACHE)
    assert baseline.version == "6.0.3"
    node = shutil.which("node")
    assert node is not None
    assert baseline.argv_prefix == (node, str(baseline.path))
    assert baseline.path == version_dir("6.0.3", CACHE) / "node_modules/typescript/lib/tsc.js"
    manifest = json.loads((baseline.path.parent.parent / "package.json").read_text())
    assert manifest["version"] == "6.0.3"
    assert compile_(baseline, sources, "ok.ts") == (0, "")
    code, output = compile_(baseline, sources, "bad.ts")
    assert code != 0
    assert output.splitlines() == [TS2322]


# --- the doit task ------------------------------------------------------------------------------


def test_toolchain_task_is_up_to_date_when_installed(
    pinned: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_library("zod", base=CACHE)
    task = doit_tasks.task_toolchain()
    assert task["doc"] == (
        "Install the pinned TypeScript compiler and zod (npm) into the toolchain cache."
    )
    [ready] = task["uptodate"]
    monkeypatch.setenv(TOOLCHAIN_DIR_ENV, str(CACHE))
    assert ready() is True
    monkeypatch.setenv(TSC_ENV, str(pinned.path))
    assert ready() is True
    monkeypatch.setenv(TSC_ENV, str(tmp_path / "missing-tsc"))
    assert ready() is False
    monkeypatch.delenv(TSC_ENV)
    monkeypatch.setenv(TOOLCHAIN_DIR_ENV, str(tmp_path))
    assert ready() is False
    assert "task_toolchain" in doit_tasks.make_tasks(tmp_path)


def test_toolchain_task_action_returns_a_task_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOOLCHAIN_DIR_ENV, str(tmp_path / "toolchain"))
    monkeypatch.setenv("PATH", str(tmp_path))
    [action] = doit_tasks.task_toolchain()["actions"]
    error = action()
    assert isinstance(error, TaskError)
    assert error.message == (
        "trailblaze toolchain: cannot install TypeScript 7.0.2: node not found on PATH: "
        "install Node.js 20 and npm"
    )


DODO = "from trailblaze.doit_tasks import task_toolchain\n"


def _doit(cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "doit", "toolchain"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_doit_toolchain(pinned: Compiler, tmp_path: Path) -> None:
    write_tree(tmp_path, {"dodo.py": DODO})
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAILBLAZE_")}
    env[TOOLCHAIN_DIR_ENV] = str(CACHE)
    done = _doit(tmp_path, env)
    assert (done.returncode, done.stdout) == (0, "-- toolchain\n"), done.stderr
    env[TOOLCHAIN_DIR_ENV] = str(tmp_path / "empty")
    env["PATH"] = str(tmp_path / "no-bin")
    failed = _doit(tmp_path, env)
    assert failed.returncode == 2
    output = failed.stdout + failed.stderr
    assert "Traceback" not in output
    assert (
        "trailblaze toolchain: cannot install TypeScript 7.0.2: node not found on PATH: "
        "install Node.js 20 and npm"
    ) in output


def test_a_missing_library_says_how_to_install_it_and_is_installed_pinned(tmp_path: Path) -> None:
    with pytest.raises(ToolchainError) as caught:
        installed_library("zod", base=tmp_path)
    assert str(caught.value) == (
        f"zod {LIBRARIES['zod']} is not installed: run `doit toolchain` to install it into "
        f"{tmp_path}"
    )
    with pytest.raises(ToolchainError):
        install_library("zod", base=tmp_path, install=False)
    package = install_library("zod", base=CACHE)
    assert package == library_dir("zod", CACHE)
    assert json.loads((package / "package.json").read_text())["version"] == LIBRARIES["zod"]
