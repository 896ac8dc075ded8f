"""One root for user errors (`trailblaze.errors.TrailblazeError`), caught in one place per
entry point: a user mistake is one line on stderr and an exit code, never a traceback."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import fakeadb
import trailblaze
from tests.conftest import write_tree
from trailblaze.cli.main import main
from trailblaze.errors import TrailblazeError, UsageError
from trailblaze.report.record import EXIT_USAGE

NOT_USER_ERRORS = {
    # Outcomes that become data (findings, tool failures) where they are raised.
    "Reject": "the parse gate's signal that a trail is refused; it becomes a finding",
    "_NotJava": "the selector translator's internal signal",
    "Unsupported": "the lean composer's signal that a document goes to the usual composer",
    "ProcError": "a program that could not run: the caller makes it a finding or a ToolchainError",
    "ProcTimeout": "a ProcError",
    "ProcCancelled": "a ProcError (replay reads it as the run cancelled)",
    "_Cancelled": "proc's internal signal that the caller's cancel event is set",
    "WaypointProblem": "assertWaypoint's signal; the tool makes it the call's failure",
    "WarmError": "the warm compiler failed: the type gate reports the trail as not checked",
    "Unproven": "a ProcError: the type gate reports it as not checked",
    "RemoteFault": "a remote-cache fault: the check degrades to local work",
    "BadBody": "a remote run entry that does not decode: a miss, the check runs",
    "NotOurs": "a remote hit's file that is not ours to write: a miss, the check runs",
    "Unverified": "a remote entry without a trusted signature: a RemoteFault, a miss",
    "DeviceError": "a device command failed: a tool failure, the replay goes on",
    "DeviceLostError": "a DeviceError",
    "UnsupportedInputError": "a DeviceError",
    "CommandTimeout": "a DeviceError",
    "ToolFailure": "a tool failed during replay: a result, attributed to the tool",
    "ExpectedFailure": "a ToolFailure",
    "ToolError": "a ToolFailure",
    "FatalToolError": "a ToolFailure",
    "OutsideWorkspace": "runTrail of a file outside the workspace: a ToolError",
    "Cancelled": "^C between tools: the run's outcome",
    "ScriptError": "a scripted tool could not run: a tool failure",
    "ChildGone": "the scripted tools' Node child stopped answering: a ScriptError",
    "SelectorError": "a selector that matches nothing usable: a tool failure",
    "JunitError": "bun's report missing or not JUnit: its test files become test-error findings",
    "AmbiguousSelectorError": "a SelectorError",
    "JavaRegexError": "a SelectorError",
    "NoMatchError": "a selector matched nothing: a tool failure",
    "ShellSyntaxError": "the fake device's shell: a failed adb command, as a real shell's",
    "ProtocolError": "adbwire: an answer that is not adb; adb.py makes it a lost device",
    "Overdue": "adbwire: a command past its deadline; adb.py makes it a lost device",
    "Closed": "adbwire: the server hung up; adb.py makes it a lost device",
    "Failed": "adbwire: the server's FAIL; adb.py makes it a DeviceError",
    "TooLarge": "adbwire: a file past the limit; adb.py makes it a DeviceError",
    "TransportFault": "a remote exchange past a bound; remote.py makes it a RemoteFault",
    # A bug, not a user error: it keeps its traceback.
    "CatalogError": "our packaged catalog is malformed: a packaging bug",
}


def _exception_types() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    packages = [(trailblaze.__path__, "trailblaze."), (fakeadb.__path__, "fakeadb.")]
    for info in (i for path, prefix in packages for i in pkgutil.walk_packages(path, prefix)):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found[name] = value
    return found


def test_every_exception_type_is_a_user_error_or_named_as_not_one() -> None:
    types = _exception_types()
    undecided = sorted(
        name
        for name, kind in types.items()
        if not issubclass(kind, TrailblazeError) and name not in NOT_USER_ERRORS
    )
    assert undecided == [], "subclass TrailblazeError, or list why not in NOT_USER_ERRORS"
    wrongly = sorted(
        n for n in NOT_USER_ERRORS if n in types and issubclass(types[n], TrailblazeError)
    )
    assert wrongly == []
    # The user errors the commands raise are all under the root.
    for name in (
        "UsageError",
        "ScopeError",
        "WorkspaceError",
        "ToolchainError",
        "ShardError",
        "RemoteConfigError",
        "YamlError",
        "PlanError",
        "ReplayUsageError",
        "NoDeviceError",
        "AmbiguousDeviceError",
        "AdbMissingError",
    ):
        assert issubclass(types[name], TrailblazeError), name


def test_a_user_error_exits_with_its_code() -> None:
    assert TrailblazeError.exit_code == UsageError.exit_code == EXIT_USAGE


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "--shard", "3/2"], "trailblaze check: --shard '3/2': K must be between 1 and N"),
        (["check", "--remote-cache", "ftp://cache"], "trailblaze check: "),
        (["check", "no-such-trailmap-or-file"], "trailblaze check: "),
        (["report", "merge", "missing.json"], "trailblaze report merge: "),
        (["schema", "nope"], "trailblaze schema: no target trailmap 'nope'"),
    ],
)
def test_a_user_mistake_is_one_line_and_exit_2(
    args: list[str],
    message: str,
    compact_ws: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(compact_ws)
    code = main(args)
    out, err = capsys.readouterr()
    assert code == EXIT_USAGE
    assert out == ""
    assert err.startswith(message), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err


def test_no_traceback_from_the_installed_command_for_a_bad_workspace_table(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path, {"pyproject.toml": "[tool.trailblaze]\nlayout = 'sideways'\n"})
    done = subprocess.run(
        [sys.executable, "-m", "trailblaze", "check", "--workspace", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr.startswith("trailblaze check: "), done.stderr
    assert "Traceback" not in done.stderr
