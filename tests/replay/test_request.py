"""A replay's trail arguments: `--arg`, `--args-file`, bound before any device work.

As Trailblaze's `TrailArgBinder` binds them: every declared argument given (the file's value,
an `--arg` of the same name winning) or defaulted, coerced to its declared type, never null. A
trail whose arguments do not bind is refused with a located message, and nothing is sent to a
device for it: these tests run `trailblaze replay` through real adbutils against the fake adb
server and look at what the server received.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fakeadb import FakeAdbServer, FakeDevice
from tests.conftest import REPO_WORKSPACE
from trailblaze.cli.main import main
from trailblaze.replay.request import ReplayUsageError, given_args, read_args_file
from trailblaze.trail.argbind import NULL, Given

from .support import OPEN_FORMS, PACKAGE, ROOT, child_env, trail_text

CONFIG = """
config:
  args:
    name: string
    count:
      type: integer
      default: 2
      required: false
    loud:
      type: boolean
      default: false
    greeting:
      type: string
      default: "{{memory.salute}} {{args.name}}"
  memory:
    salute: Hi
"""
TYPED = (
    OPEN_FORMS
    + """
- tapOnElementBySelector: {nodeSelector: {androidAccessibility: {hintTextRegex: Name}}}
- inputText:
    text: "{{args.greeting}} x{{args.count}} {{args.loud}}"
"""
)
NAME_AT = "3:5"  # `name:` in CONFIG, once written as a trail


def write_trail(tmp_path: Path) -> Path:
    path = tmp_path / "greet.trail.yaml"
    path.write_text(trail_text(TYPED, config=CONFIG), encoding="utf-8")
    return path


def sent(server: FakeAdbServer) -> list[str]:
    return [c for commands in server.commands.values() for c in commands]


@pytest.fixture
def on_server(server: FakeAdbServer, monkeypatch: pytest.MonkeyPatch) -> FakeAdbServer:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
    return server


@pytest.mark.parametrize(
    ("args", "file_text", "typed"),
    [
        (["--arg", "name=Jane"], None, "Hi Jane x2 false"),
        (
            ["--arg", "name=Jane", "--arg", "count=007", "--arg", "loud=TRUE"],
            None,
            "Hi Jane x7 true",
        ),
        # The file's values, an --arg of the same name winning; a quoted number for an integer.
        (["--arg", "name=Jane"], "name: Ada\ncount: '5'\n", "Hi Jane x5 false"),
        ([], "name: Ada\nloud: true\ngreeting: Hello\n", "Hello x2 true"),
    ],
)
def test_arguments_bind_to_their_types_with_defaults_and_the_file(
    on_server: FakeAdbServer,
    model: FakeDevice,
    tmp_path: Path,
    *,
    args: list[str],
    file_text: str | None,
    typed: str,
) -> None:
    if file_text is not None:
        (tmp_path / "args.yaml").write_text(file_text, encoding="utf-8")
        args = [*args, "--args-file", str(tmp_path / "args.yaml")]

    assert main(["replay", str(write_trail(tmp_path)), *args]) == 0

    assert model.field_value(PACKAGE, "name") == typed


@pytest.mark.parametrize(
    ("args", "file_text", "message"),
    [
        (
            [],
            None,
            f"{NAME_AT}: config.args.name: missing required argument name: pass --arg "
            "name=VALUE (or put it in an --args-file), or declare a default: to make it optional",
        ),
        (
            ["--arg", "name=Jane", "--arg", "count=abc"],
            None,
            "4:5: config.args.count: argument 'count' (--arg count): expected an integer, "
            "got 'abc'",
        ),
        (
            ["--arg", "name=Jane", "--arg", "count=1.5"],
            None,
            "4:5: config.args.count: argument 'count' (--arg count): expected an integer, "
            "got '1.5'",
        ),
        (
            ["--arg", "name=Jane", "--arg", "loud=yes"],
            None,
            "8:5: config.args.loud: argument 'loud' (--arg loud): expected a boolean "
            "(true or false), got 'yes'",
        ),
        (
            [],
            "name: ~\n",
            f"{NAME_AT}: config.args.name: argument 'name' (--args-file ARGS:1:7): null is not a "
            "value: write '' for an empty text, or leave the argument out to take its default",
        ),
        (
            [],
            "name: [Ada, Jane]\n",
            f"{NAME_AT}: config.args.name: argument 'name' (--args-file ARGS:1:7): expected text, "
            "got a list",
        ),
        (
            [],
            "name: 'Ada {{args.name.}}'\n",
            f"{NAME_AT}: config.args.name: argument 'name' has a malformed argument token "
            "'{{args.name.}}': expected '{{args.<name>}}' in its value",
        ),
    ],
)
def test_arguments_that_do_not_bind_refuse_the_trail_before_any_device_work(
    on_server: FakeAdbServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *,
    args: list[str],
    file_text: str | None,
    message: str,
) -> None:
    args_file = tmp_path / "args.yaml"
    if file_text is not None:
        args_file.write_text(file_text, encoding="utf-8")
        args = [*args, "--args-file", str(args_file)]
    trail = write_trail(tmp_path)

    code = main(["replay", str(trail), "--json", str(tmp_path / "r.json"), *args])

    out = capsys.readouterr().out
    assert code == 1
    assert f"REFUSED {trail}\n  {trail}:{message.replace('ARGS', str(args_file))}\n" in out
    assert sent(on_server) == []


@pytest.mark.parametrize(
    ("file_text", "message"),
    [
        ("name: [Ada\n", "2:1: invalid YAML: "),
        ("- name\n", "1:1: expected a mapping of argument names to values, found a list"),
        (
            "name: Ada\nfirst-name: Ada\n",
            "2:1: 'first-name' is not an argument name (letters, digits and '_', not starting "
            "with a digit)",
        ),
        (
            "name: Ada\nnmae: Ada\n",
            "2:7: no trail here declares argument 'nmae' (did you mean 'name'?)",
        ),
        ("name: Ada\nname: Jane\n", "2:1: duplicate key 'name'"),
    ],
)
def test_a_bad_args_file_is_a_located_usage_error(
    on_server: FakeAdbServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    file_text: str,
    message: str,
) -> None:
    args_file = tmp_path / "args.yaml"
    args_file.write_text(file_text, encoding="utf-8")

    code = main(["replay", str(write_trail(tmp_path)), "--args-file", str(args_file)])

    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith(f"trailblaze replay: --args-file {args_file}:{message}"), err
    assert sent(on_server) == []


def test_a_missing_args_file_is_a_usage_error(
    on_server: FakeAdbServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["replay", str(write_trail(tmp_path)), "--args-file", str(tmp_path / "nope.yaml")])

    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(
        f"trailblaze replay: --args-file {tmp_path / 'nope.yaml'}:1:1: cannot read"
    )
    assert sent(on_server) == []


def test_an_arg_wins_over_the_file_and_values_keep_their_text(tmp_path: Path) -> None:
    path = tmp_path / "args.yaml"
    path.write_text("name: Ada\ncount: 007\nlist: [1, two]\nnothing:\n", encoding="utf-8")

    values = given_args(("name=Jane=Doe",), path)

    assert values == {
        "name": Given("Jane=Doe", "--arg name"),
        "count": Given("007", f"--args-file {path}:2:8"),
        "list": Given([1, "two"], f"--args-file {path}:3:7"),
        "nothing": Given(NULL, f"--args-file {path}:4:9"),
    }
    assert read_args_file(path)["name"] == Given("Ada", f"--args-file {path}:1:7")


def test_an_empty_args_file_gives_no_value(tmp_path: Path) -> None:
    path = tmp_path / "args.yaml"
    path.write_text("# nothing yet\n", encoding="utf-8")
    assert read_args_file(path) == {}


def test_an_arg_name_that_is_not_an_identifier_is_refused() -> None:
    with pytest.raises(ReplayUsageError) as caught:
        given_args(("e-mail=a@b.c",), None)
    assert str(caught.value) == (
        "--arg 'e-mail=a@b.c': 'e-mail' is not an argument name (letters, digits and '_', not "
        "starting with a digit)"
    )


@REPO_WORKSPACE
def test_doit_replay_takes_an_args_file(tmp_path: Path, model: FakeDevice) -> None:
    args_file = tmp_path / "args.yaml"
    args_file.write_text("title: Weekend plans\nemial: ada@example.com\n", encoding="utf-8")
    with FakeAdbServer(model) as server:
        done = subprocess.run(
            [
                sys.executable, "-m", "doit", "--db-file", str(tmp_path / "doit.sqlite3"),
                "replay", "--args-file", str(args_file),
            ],
            check=False, cwd=ROOT, env=child_env(server.port), capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert sent(server) == []
    assert done.returncode != 0
    assert (
        f"--args-file {args_file}:2:8: no trail here declares argument 'emial' "
        "(did you mean 'email'?)"
    ) in done.stdout + done.stderr
