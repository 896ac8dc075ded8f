"""Our switches fail closed: one reader (`options.env_switch`), the usual spellings, and any other
value a usage error naming the variable, through every entry point that reads one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_python, write_tree
from trailblaze.cli.main import main
from trailblaze.errors import UsageError
from trailblaze.options import (
    DISABLE_ENV,
    REMOTE_READ_ONLY_ENV,
    REQUIRE_ENV,
    CheckOptions,
    env_flag,
    env_switch,
    in_ci,
    typecheck_required,
)

ON = ["1", "true", "TRUE", "True", "yes", "Yes", "on", "ON", " 1 ", "\tyes\n"]
OFF = ["0", "false", "FALSE", "no", "No", "off", "OFF", " 0 ", "false "]
BAD = ["2", "y", "n", "enable", "disabled", "truee", "1.0", "on off", "\x1b[31mtrue", "-1"]
SWITCHES = [DISABLE_ENV, REQUIRE_ENV, REMOTE_READ_ONLY_ENV]
SPELLINGS = "use 1/0, true/false, yes/no or on/off (any case)"


@pytest.mark.parametrize("value", ON)
def test_the_on_spellings_are_on(value: str) -> None:
    assert env_switch("TRAILBLAZE_X", {"TRAILBLAZE_X": value}) is True
    assert env_flag("TRAILBLAZE_X", {"TRAILBLAZE_X": value}) is True


@pytest.mark.parametrize("value", OFF)
def test_the_off_spellings_are_off(value: str) -> None:
    assert env_switch("TRAILBLAZE_X", {"TRAILBLAZE_X": value}) is False
    assert env_flag("TRAILBLAZE_X", {"TRAILBLAZE_X": value}) is False


@pytest.mark.parametrize("env", [{}, {"TRAILBLAZE_X": ""}, {"TRAILBLAZE_X": "  "}])
def test_unset_or_blank_is_no_setting(env: dict[str, str]) -> None:
    assert env_switch("TRAILBLAZE_X", env) is None
    assert env_flag("TRAILBLAZE_X", env) is False


@pytest.mark.parametrize("value", BAD)
def test_any_other_value_is_a_usage_error_naming_the_variable(value: str) -> None:
    with pytest.raises(UsageError) as raised:
        env_flag("TRAILBLAZE_X", {"TRAILBLAZE_X": value})
    assert str(raised.value) == f"TRAILBLAZE_X={value!r} is not a switch: {SPELLINGS}"
    assert "\n" not in str(raised.value)
    assert "\x1b" not in str(raised.value)


def test_a_long_value_is_shown_cut() -> None:
    with pytest.raises(UsageError, match=r"^TRAILBLAZE_X='xxxxxxxxxx+\.\.\.' is not a switch"):
        env_flag("TRAILBLAZE_X", {"TRAILBLAZE_X": "x" * 5000})


@pytest.mark.parametrize(
    ("value", "on"),
    [
        ("true", True),
        ("1", True),
        ("TRUE", True),
        ("yes", True),
        ("woodpecker", True),  # some CI systems set a name of their own
        ("", False),
        ("  ", False),
        ("0", False),
        ("false", False),
        ("False", False),
        ("no", False),
        ("off", False),
    ],
)
def test_ci_is_read_as_ci_systems_set_it(value: str, on: bool) -> None:
    assert in_ci({"CI": value}) is on
    assert typecheck_required(None, {"CI": value}) is on
    assert in_ci({}) is False


def test_the_require_switch_wins_over_ci_and_the_command_line_over_both() -> None:
    assert typecheck_required(None, {"CI": "true", REQUIRE_ENV: "no"}) is False
    assert typecheck_required(None, {REQUIRE_ENV: "on"}) is True
    assert typecheck_required(False, {REQUIRE_ENV: "on"}) is False
    # A bad value is an error even where the command line decides.
    with pytest.raises(UsageError, match=REQUIRE_ENV):
        typecheck_required(True, {REQUIRE_ENV: "sure"})


def test_read_only_yes_means_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REMOTE_READ_ONLY_ENV, "yes")
    assert CheckOptions.from_env().remote_read_only is True
    monkeypatch.setenv(REMOTE_READ_ONLY_ENV, "off")
    assert CheckOptions.from_env(remote_read_only=True).remote_read_only is True
    assert CheckOptions.from_env().remote_read_only is False
    monkeypatch.setenv(REMOTE_READ_ONLY_ENV, "sometimes")
    with pytest.raises(UsageError, match=REMOTE_READ_ONLY_ENV):
        CheckOptions.from_env(remote_read_only=True)  # the flag does not hide a bad value


@pytest.mark.parametrize("name", SWITCHES)
def test_trailblaze_check_refuses_a_bad_switch_before_any_work(
    name: str,
    compact_ws: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_tree(compact_ws, {"trailmaps/app/trails/t.trail.yaml": "config: {target: app}\n"})
    monkeypatch.setenv(name, "maybe")
    code = main(["check", str(compact_ws)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == f"trailblaze check: {name}='maybe' is not a switch: {SPELLINGS}\n"
    assert not (compact_ws / ".trailblaze").exists()  # nothing was written, nothing checked


def test_doit_check_refuses_a_bad_switch_in_one_line(compact_ws: Path) -> None:
    write_tree(
        compact_ws,
        {
            "trailmaps/app/trails/t.trail.yaml": "config: {target: app}\n",
            "dodo.py": "from trailblaze.doit_tasks import DOIT_CONFIG, task_check  # noqa: F401\n",
        },
    )
    done = run_python(compact_ws, "-m", "doit", "check", env={DISABLE_ENV: "maybe"})
    assert done.returncode == 2, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert f"{DISABLE_ENV}='maybe' is not a switch: {SPELLINGS}" in said
    assert "Traceback" not in said
    assert not (compact_ws / ".trailblaze" / "typegate").exists()
