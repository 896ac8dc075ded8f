"""How a host call is matched against `[tool.trailblaze] allow-host-programs`, and the one
sentence that says why it is refused (the check's finding and replay's refusal share it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from trailblaze import codes
from trailblaze.trail.hostcalls import HOST_TOOLS, HostCall
from trailblaze.trail.hostpolicy import NO_WORKSPACE, HostPolicy

ROOT = Path("/ws")
POLICY = HostPolicy(root=ROOT, allowed=("adb", "scripts/seed.sh", "/opt/tools/flash"))


def exec_call(*argv: Any, working_dir: Any = None, via: tuple[str, ...] = ("exec",)) -> HostCall:
    args: dict[str, Any] = {"argv": list(argv)}
    if working_dir is not None:
        args["workingDir"] = working_dir
    return HostCall(HOST_TOOLS["exec"], via, args)


def refused(call: HostCall, *, cwd: Path | None = ROOT, trail_dir: Path | None = None) -> bool:
    return POLICY.refusal(call, cwd=cwd, trail_dir=trail_dir or ROOT / "trails") is not None


@pytest.mark.parametrize(
    ("argv", "working_dir", "cwd"),
    [
        (["adb", "devices"], None, ROOT),  # a name entry: that name, found on PATH
        (["adb"], "/anywhere", ROOT),  # PATH does not depend on the working directory
        (["./scripts/seed.sh"], None, ROOT),  # a path entry, from where replay runs
        (["scripts/seed.sh", "--fresh"], None, ROOT),
        (["./seed.sh"], "scripts", ROOT),  # from the working directory, itself relative
        (["seed.sh/"[:-1].join(["./", ""])], "/ws/scripts", Path("/elsewhere")),
        (["/ws/scripts/seed.sh"], None, Path("/elsewhere")),  # absolute: wherever replay runs
        (["scripts/./seed.sh"], None, ROOT),  # normalized
        (["/opt/tools/flash"], None, ROOT),  # an absolute entry
    ],
)
def test_what_an_entry_allows(argv: list[str], working_dir: str | None, cwd: Path) -> None:
    assert not refused(exec_call(*argv, working_dir=working_dir), cwd=cwd)


@pytest.mark.parametrize(
    ("argv", "working_dir", "cwd"),
    [
        (["rm", "-rf", "/"], None, ROOT),
        (["/usr/bin/adb"], None, ROOT),  # a name entry allows no path
        (["./adb"], None, ROOT),
        (["seed.sh"], "scripts", ROOT),  # a bare name is looked up on PATH, not in workingDir
        (["scripts/seed.sh"], "/tmp", ROOT),  # the same words from another directory
        (["./scripts/seed.sh"], None, Path("/elsewhere")),  # replay runs elsewhere
        (["scripts/../scripts/seed.sh"], None, ROOT),  # never through '..'
        (["./seed.sh"], "tools/../scripts", ROOT),
        (["./seed.sh"], "{{args.dir}}", ROOT),  # a working directory known only at replay
        (["{{args.program}}"], None, ROOT),  # a program known only at replay
        (["${args.program}"], None, ROOT),
        (["{{memory.program}}"], None, ROOT),
        ([7], None, ROOT),  # not text
        (["adb "], None, ROOT),
        (["ADB"], None, ROOT),
    ],
)
def test_what_no_entry_allows(argv: list[Any], working_dir: str | None, cwd: Path) -> None:
    assert refused(exec_call(*argv, working_dir=working_dir), cwd=cwd)


def test_argv_that_is_not_a_list_is_taken_whole() -> None:
    token = HostCall(HOST_TOOLS["exec"], ("exec",), {"argv": "{{args.argv}}"})
    line = HostCall(HOST_TOOLS["exec"], ("exec",), {"argv": "adb devices"})
    assert refused(token)
    assert refused(line)
    # Nothing to start: the call fails on its own, with its own message.
    nothing: list[dict[str, Any] | None] = [{}, {"argv": []}, {"argv": [""]}, None]
    for args in nothing:
        assert not refused(HostCall(HOST_TOOLS["exec"], ("exec",), args))


def test_without_a_workspace_nothing_is_allowed() -> None:
    for argv in (["adb"], ["/usr/bin/true"], ["./x.sh"]):
        assert NO_WORKSPACE.refusal(exec_call(*argv), cwd=ROOT, trail_dir=ROOT) is not None


def test_shell_lines_and_scripts_are_never_allowed() -> None:
    everything = HostPolicy(root=ROOT, allowed=("sh", "bash", "node", "adb"))
    command = HostCall(HOST_TOOLS["runCommand"], ("runCommand",), {"command": "adb devices"})
    script = HostCall(HOST_TOOLS["script"], ("script",), {"source": "[]"})
    assert everything.refusal(command, cwd=ROOT, trail_dir=ROOT) == (
        "runCommand runs a shell command line on the host, and a shell line can start any "
        "program: no entry of [tool.trailblaze] allow-host-programs in pyproject.toml can allow "
        "it, and a recording may not run programs on the machine that replays it"
    )
    assert everything.refusal(script, cwd=ROOT, trail_dir=ROOT) == (
        "script runs JavaScript from the recording on the host, then the calls it yields, which "
        "nothing before the run sees: no entry of [tool.trailblaze] allow-host-programs in "
        "pyproject.toml can allow it, and a recording may not run programs on the machine that "
        "replays it"
    )
    assert HOST_TOOLS["runTrail"].code == codes.HOST_FILE
    assert {t.code for n, t in HOST_TOOLS.items() if n != "runTrail"} == {codes.HOST_PROGRAM}


def test_the_message_names_the_program_the_path_and_the_setting() -> None:
    direct = POLICY.refusal(exec_call("rm", "-rf", "/"), cwd=ROOT, trail_dir=ROOT)
    assert direct == (
        "exec runs the host program 'rm' (argv[0]), which [tool.trailblaze] allow-host-programs "
        "in pyproject.toml does not allow: a recording may run on the machine that replays it "
        "only the programs that setting names"
    )
    deep = POLICY.refusal(
        exec_call("rm", via=("cleanUp", "wipe", "exec")), cwd=ROOT, trail_dir=ROOT
    )
    assert deep == f"'cleanUp' reaches exec (cleanUp → wipe → exec): {direct}"
    token = POLICY.refusal(exec_call("{{args.cmd}}"), cwd=ROOT, trail_dir=ROOT)
    assert token == (
        "exec runs the host program '{{args.cmd}}', known only at replay (a token), so no entry "
        "of [tool.trailblaze] allow-host-programs in pyproject.toml can allow it: write the "
        "program out"
    )
    # What the recording wrote is shown escaped and cut short, never as raw terminal bytes.
    odd = POLICY.refusal(exec_call("\x1b[2J" + "x" * 300), cwd=ROOT, trail_dir=ROOT)
    assert odd is not None
    assert "\x1b" not in odd
    assert "\\x1b[2J" in odd
    assert len(odd) < 400


def run_trail(path: Any) -> HostCall:
    return HostCall(HOST_TOOLS["runTrail"], ("runTrail",), {"path": path})


def test_run_trail_reads_only_trail_files_inside_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    trails = ws / "trails" / "shop"
    trails.mkdir(parents=True)
    (ws / "trails" / "setup.trail.yaml").write_text("trail: []\n")
    outside = tmp_path / "outside.trail.yaml"
    outside.write_text("trail: []\n")
    os.symlink(outside, trails / "link.trail.yaml")
    os.symlink("/etc/passwd", trails / "passwd.trail.yaml")
    policy = HostPolicy(root=ws)

    def refusal(path: Any) -> str | None:
        return policy.refusal(run_trail(path), cwd=ws, trail_dir=trails)

    for inside in ("../setup.trail.yaml", "trails/setup.trail.yaml", f"{ws}/trails/x.trail.yaml"):
        assert refusal(inside) is None, inside
    for bad in (
        "/etc/passwd",
        "~/.ssh/id_rsa",
        str(outside),
        "../../../outside.trail.yaml",
        "link.trail.yaml",  # a link inside that leads out
        "passwd.trail.yaml",
        "../../pyproject.toml",  # inside, and not a trail file
        "{{args.setup}}",
    ):
        assert refusal(bad) is not None, bad
    assert refusal("/etc/passwd") == (
        "runTrail reads the host file '/etc/passwd', which is not a trail file inside the "
        "workspace: a recording may replay only the workspace's own trails"
    )
    # Without a workspace, next to the trail replayed.
    assert NO_WORKSPACE.refusal(run_trail("setup.trail.yaml"), cwd=ws, trail_dir=trails) is None
    assert (
        NO_WORKSPACE.refusal(run_trail("../setup.trail.yaml"), cwd=trails, trail_dir=trails)
        is not None
    )
    # Nothing to read: the call fails on its own.
    assert refusal("") is None
    assert refusal(None) is None
