"""The reference's run flags on `trailblaze replay` and `doit replay`: `--tags`, `--memory` and
`--secret` (`--driver` is test_drivers'), replayed through real adbutils against the fake adb
server.

The secret tests grep every byte of every output (console, JSON, JUnit, the log records and a log
file, every file the run left, and doit's) for the value, in a run that passes and in one that
fails at the step holding the secret, and look for the marker where the value would be.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fakeadb import FakeAdbServer, FakeDevice
from fakeadb.spec import CommandOverride
from tests.conftest import write_tree
from trailblaze.cli.main import main
from trailblaze.replay.flags import parse_memory, parse_secrets, parse_tags
from trailblaze.replay.request import ReplayUsageError

from .support import OPEN_FORMS, PACKAGE, ROOT, child_env

SECRET = "Zq-hunter 2-Zq"
"""Holds a space, which `adb shell input text` gets as `%s`: that form must not show either."""
MARKER = "[secret:password]"

MANIFEST = f"""\
id: app
target:
  display_name: Sample App
  platforms:
    android:
      app_ids: [{PACKAGE}]
"""
PEEK = """\
import { trailblaze } from "@trailblaze/scripting";

/** What a scripted tool sees of the trail's memory. */
export const app_peek = trailblaze.tool(async (_input, ctx) => {
  const env = (globalThis as any).process.env;
  return `keys=${[...ctx.memory.keys()].sort().join(",")} password=${ctx.memory.get("password")}`
    + ` env=${env.password} path=${env.PATH !== undefined}`;
});
"""


ECHO = """\
import { trailblaze } from "@trailblaze/scripting";

/** A careless tool: logs, prints and throws the text it was given. */
export const app_echo = trailblaze.tool<{ text: string }, string>(async (input, ctx) => {
  ctx.logger.info(`got ${input.text}`);
  console.log(`printing ${input.text}`);
  console.error(`warning about ${input.text}`);
  throw new Error(`could not use ${input.text}`);
});
"""


def trail(*calls: str, tags: str = "", memory: str = "") -> str:
    """A trail of the `app` target: open the Forms tab, then one step of ``calls``."""
    config = "config:\n  target: app\n"
    if tags:
        config += f"  tags: [{tags}]\n"
    if memory:
        config += f"  memory: {{{memory}}}\n"
    opened = "\n".join("        " + line for line in OPEN_FORMS.strip("\n").splitlines())
    step = "\n".join(f"        - {call}" for call in calls)
    return (
        f"{config}trail:\n  - step: Open the forms\n    recording:\n      android:\n{opened}\n"
        f"  - step: Type\n    recording:\n      android:\n{step}\n"
    )


TYPE_SECRET = (
    "tapOnElementBySelector: {nodeSelector: {androidAccessibility: {hintTextRegex: Name}}}",
    'inputText: {text: "{{password}}"}',
)


def workspace(root: Path, trails: dict[str, str]) -> Path:
    files = {
        "trailmaps/app/trailmap.yaml": MANIFEST,
        "trailmaps/app/tools/app_peek.ts": PEEK,
        "trailmaps/app/tools/app_echo.ts": ECHO,
    }
    files.update({f"trailmaps/app/trails/{name}": text for name, text in trails.items()})
    return write_tree(root, files)


def sent(server: FakeAdbServer) -> list[str]:
    return [c for commands in server.commands.values() for c in commands]


@pytest.fixture
def on_server(server: FakeAdbServer, monkeypatch: pytest.MonkeyPatch) -> FakeAdbServer:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
    return server


def replay(ws: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.chdir(ws)
    # The report too (its pages, the logcat the device wrote the typed secret to): every file
    # under the workspace is an output the secret tests grep.
    report = ("--report", str(ws / "report"), "--logcat")
    return main(
        ["replay", "--json", str(ws / "out.json"), "--junit", str(ws / "out.xml"), *report, *args]
    )


# -- --tags ------------------------------------------------------------------------------------


def test_tags_select_trails_with_any_tag_and_count_the_rest_apart(
    on_server: FakeAdbServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    back = "pressBack: {}"
    ws = workspace(
        tmp_path,
        {
            "a.trail.yaml": trail(back, tags="smoke"),
            "b.trail.yaml": trail(back, tags="smoke, slow"),
            "c.trail.yaml": trail(back, tags="nav"),
            "d.trail.yaml": trail(back, tags="slow"),
            "e.trail.yaml": trail(back),
        },
    )

    code = replay(ws, "--tags", "smoke", "--tags", "nav", monkeypatch=monkeypatch)

    out = capsys.readouterr().out
    report = json.loads((ws / "out.json").read_text(encoding="utf-8"))
    ran = [t["path"] for t in report["trails"]]
    assert code == 0
    assert ran == [f"trailmaps/app/trails/{n}.trail.yaml" for n in "abc"]
    assert report["left_out"] == [f"trailmaps/app/trails/{n}.trail.yaml" for n in "de"]
    assert report["counts"]["trails_left_out"] == 2
    assert report["counts"]["trails_skipped"] == 0
    assert "3 passed, 0 failed, 0 refused, 0 skipped; 2 left out by --tags" in out
    assert "d.trail.yaml" not in out.replace("left out", "")


def test_the_comma_form_is_the_same_as_repeating(
    on_server: FakeAdbServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(
        tmp_path,
        {"a.trail.yaml": trail("pressBack: {}", tags="x"), "b.trail.yaml": trail("pressBack: {}")},
    )

    assert replay(ws, "--tags", "x,x", monkeypatch=monkeypatch) == 0

    report = json.loads((ws / "out.json").read_text(encoding="utf-8"))
    assert [t["path"] for t in report["trails"]] == ["trailmaps/app/trails/a.trail.yaml"]


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        (
            ["smok"],
            "--tags: no trail here has the tag 'smok' (did you mean 'smoke'?) (tags here: nav, "
            "smoke)",
        ),
        (
            ["smoke,typo"],
            "--tags: no trail here has the tag 'typo' (tags here: nav, smoke)",
        ),
        (["smoke,"], "--tags 'smoke,': an empty tag (write --tags a,b)"),
    ],
)
def test_a_tag_no_trail_has_is_a_usage_error_before_any_device_work(
    on_server: FakeAdbServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *,
    tags: list[str],
    message: str,
) -> None:
    ws = workspace(
        tmp_path,
        {
            "a.trail.yaml": trail("pressBack: {}", tags="smoke"),
            "b.trail.yaml": trail("pressBack: {}", tags="nav"),
        },
    )

    code = replay(ws, *(f"--tags={t}" for t in tags), monkeypatch=monkeypatch)

    assert code == 2
    assert capsys.readouterr().err == f"trailblaze replay: {message}\n"
    assert sent(on_server) == []
    assert not (ws / "out.json").exists()


def test_a_legacy_per_device_file_has_its_blaze_yaml_tags(
    on_server: FakeAdbServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(
        tmp_path,
        {
            "back/blaze.yaml": "- config:\n    target: app\n    tags: [smoke]\n"
            "- prompts:\n    - step: Go back\n",
            "back/android-phone.trail.yaml": "- config:\n    target: app\n"
            "- tools:\n    - pressBack: {}\n",
            "other/android-phone.trail.yaml": "- config:\n    target: app\n"
            "- tools:\n    - pressBack: {}\n",
        },
    )

    assert replay(ws, "--tags", "smoke", monkeypatch=monkeypatch) == 0

    report = json.loads((ws / "out.json").read_text(encoding="utf-8"))
    statuses = {
        t["path"].removeprefix("trailmaps/app/trails/"): t["status"] for t in report["trails"]
    }
    assert statuses == {"back/android-phone.trail.yaml": "passed", "back/blaze.yaml": "skipped"}
    assert report["left_out"] == ["trailmaps/app/trails/other/android-phone.trail.yaml"]


def test_a_refused_trail_stays_whatever_the_tags(
    on_server: FakeAdbServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A file the parse gate refuses has no tags to read: filtering it out would hide it.
    ws = workspace(
        tmp_path,
        {
            "a.trail.yaml": trail("pressBack: {}", tags="smoke"),
            "broken.trail.yaml": "config:\n  target: app\n  tagz: [smoke]\ntrail: []\n",
        },
    )

    assert replay(ws, "--tags", "smoke", monkeypatch=monkeypatch) == 1

    assert "REFUSED trailmaps/app/trails/broken.trail.yaml" in capsys.readouterr().out


def test_parse_tags() -> None:
    assert parse_tags(["a, b", "c,a"]) == ("a", "b", "c")
    with pytest.raises(ReplayUsageError, match="an empty tag"):
        parse_tags([""])


# -- --memory ----------------------------------------------------------------------------------


def test_memory_seeds_the_trails_memory_over_config_memory(
    on_server: FakeAdbServer,
    model: FakeDevice,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws = workspace(
        tmp_path,
        {
            "a.trail.yaml": trail(
                "tapOnElementBySelector: {nodeSelector: {androidAccessibility: "
                "{hintTextRegex: Name}}}",
                'inputText: {text: "{{memory.salute}} ${who} {{kept}}"}',
                "app_peek: {}",
                memory="salute: Hi, kept: here",
            )
        },
    )

    code = replay(
        ws, "--memory", "salute=Hello", "--memory", "who=Ada=Lovelace", monkeypatch=monkeypatch
    )

    assert code == 0
    assert model.field_value(PACKAGE, "name") == "Hello Ada=Lovelace here"
    report = json.loads((ws / "out.json").read_text(encoding="utf-8"))
    peek = report["trails"][0]["steps"][1]["tools"][2]
    assert peek["detail"] == "keys=kept,salute,who password=undefined env=undefined path=true"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--memory", "salute"], "--memory 'salute': expected NAME=VALUE"),
        (["--memory", "=Hi"], "--memory '=Hi': expected NAME=VALUE"),
        (
            ["--memory", "1st=Hi"],
            "--memory '1st=Hi': '1st' is not a memory name (letters, digits, '_', '.' and '-', "
            "not starting with a digit)",
        ),
        (
            ["--memory", "args.name=Ada"],
            "--memory 'args.name=Ada': 'args.name' cannot be a memory name: tokens read "
            "{{args.x}} as the argument x",
        ),
        (
            ["--memory", "pw=a", "--secret", "pw=b"],
            "--memory and --secret both set 'pw': a name is one or the other",
        ),
    ],
)
def test_bad_memory_is_a_usage_error_before_any_device_work(
    on_server: FakeAdbServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *,
    args: list[str],
    message: str,
) -> None:
    ws = workspace(tmp_path, {"a.trail.yaml": trail("pressBack: {}")})

    assert replay(ws, *args, monkeypatch=monkeypatch) == 2

    assert capsys.readouterr().err == f"trailblaze replay: {message}\n"
    assert sent(on_server) == []


def test_parse_memory_splits_at_the_first_equals_sign_and_the_last_wins() -> None:
    assert parse_memory(["a=1=2", "b=", "a=3"]) == {"a": "3", "b": ""}


# -- --secret ----------------------------------------------------------------------------------


def everything_written(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def assert_hidden(outputs: dict[str, bytes]) -> None:
    """No output holds the secret, in any of the forms it was sent or typed in."""
    for form in (SECRET, SECRET.replace(" ", "%s"), "hunter 2", "hunter%s2"):
        leaks = [name for name, data in outputs.items() if form.encode() in data]
        assert leaks == [], f"{form!r} shows in {leaks}"


@pytest.fixture
def log_file(tmp_path: Path) -> Any:
    """Every log record of the run, at every level, into a file (as a user's logging would)."""
    path = tmp_path / "logs" / "replay.log"
    path.parent.mkdir()
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield path
    root.removeHandler(handler)
    root.setLevel(old_level)
    handler.close()


def secret_outputs(
    ws: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, log: Path
) -> dict[str, bytes]:
    captured = capsys.readouterr()
    outputs = everything_written(ws)
    outputs["stdout"] = captured.out.encode()
    outputs["stderr"] = captured.err.encode()
    outputs["log records"] = caplog.text.encode()
    outputs["log file"] = log.read_bytes()
    return outputs


def test_a_secret_is_typed_but_never_shown(
    on_server: FakeAdbServer,
    model: FakeDevice,
    tmp_path: Path,
    *,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    log_file: Path,
) -> None:
    caplog.set_level(logging.DEBUG)
    ws = workspace(
        tmp_path / "ws",
        {"a.trail.yaml": trail(*TYPE_SECRET, "app_peek: {}", "dumpMemory: {}")},
    )

    # `--secret NAME` alone: the value of the environment variable NAME, off the command line.
    monkeypatch.setenv("password", SECRET)

    code = replay(ws, "--secret", "password", monkeypatch=monkeypatch)

    outputs = secret_outputs(ws, capsys, caplog, log_file)
    # The device got it (its command log and its screen are the device's, not our outputs).
    assert model.field_value(PACKAGE, "name") == SECRET
    assert f"input text {SECRET.replace(' ', '%s')}" in sent(on_server)
    assert code == 0, outputs["stdout"].decode()
    assert_hidden(outputs)
    report = json.loads(outputs["out.json"])
    typed, peek, dumped = report["trails"][0]["steps"][1]["tools"][1:]
    assert typed["detail"] == f"typed '{MARKER}' and hid the keyboard"
    # A scripted tool never holds a secret, as in Trailblaze: not in memory, not in its env.
    assert peek["detail"] == "keys= password=undefined env=undefined path=true"
    assert dumped["detail"] == "memory: password=(secret)"
    assert MARKER.encode() in outputs["out.xml"]
    assert MARKER.encode() in outputs["log records"]


@pytest.mark.parametrize(
    "failing",
    [
        # The assertion's message holds the text it looked for, and the screen shows the value.
        # (Its own short wait: the command line's find timeout is the device's 5 s.)
        (
            "assertVisibleBySelector: {nodeSelector: {androidAccessibility: "
            '{textRegex: "{{memory.password}} is not here"}}, timeoutMs: 200}',
        ),
        # The device refuses the typing: the message quotes the command, value and all.
        (),
        # A scripted tool given the value logs it, prints it and throws it.
        ('app_echo: {text: "{{memory.password}}"}',),
    ],
    ids=["assertion", "device", "scripted"],
)
def test_a_secret_stays_hidden_when_its_step_fails(
    on_server: FakeAdbServer,
    model: FakeDevice,
    tmp_path: Path,
    *,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    log_file: Path,
    failing: tuple[str, ...],
) -> None:
    caplog.set_level(logging.DEBUG)
    if not failing:
        model.faults.overrides.append(
            CommandOverride(match="input text", stderr=f"cannot type {SECRET}")
        )
    ws = workspace(tmp_path / "ws", {"a.trail.yaml": trail(*TYPE_SECRET, *failing)})
    code = replay(ws, "--secret", f"password={SECRET}", monkeypatch=monkeypatch)

    outputs = secret_outputs(ws, capsys, caplog, log_file)
    assert code == 1, outputs["stdout"].decode()
    assert_hidden(outputs)
    report = json.loads(outputs["out.json"])
    failure = report["trails"][0]["steps"][1]["failure"]
    assert MARKER in failure["error"]
    assert MARKER.encode() in outputs["out.xml"]
    assert MARKER.encode() in outputs["stdout"]
    assert MARKER.encode() in outputs["log file"]


def test_a_bad_secret_never_shows_its_value(
    on_server: FakeAdbServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ws = workspace(tmp_path, {"a.trail.yaml": trail("pressBack: {}")})

    assert replay(ws, "--secret", f"pass word={SECRET}", monkeypatch=monkeypatch) == 2

    err = capsys.readouterr().err
    assert err == (
        "trailblaze replay: --secret 'pass word': 'pass word' is not a memory name (letters, "
        "digits, '_', '.' and '-', not starting with a digit)\n"
    )
    assert sent(on_server) == []


def test_parse_secrets() -> None:
    assert parse_secrets(["a=x=y", "b"], {"b": "from env"}) == {"a": "x=y", "b": "from env"}
    with pytest.raises(ReplayUsageError, match=r"^--secret a: the value is empty$"):
        parse_secrets(["a="], {})
    with pytest.raises(ReplayUsageError) as caught:
        parse_secrets(["PW"], {})
    assert str(caught.value) == (
        "--secret PW: no environment variable PW to take its value from (give --secret "
        "PW=VALUE, or set PW)"
    )


def test_doit_replay_takes_the_flags_and_hides_the_secret(
    tmp_path: Path, model: FakeDevice
) -> None:
    ws = workspace(tmp_path / "ws", {"a.trail.yaml": trail(*TYPE_SECRET, tags="smoke")})
    write_tree(ws, {"dodo.py": "from trailblaze.doit_tasks import *  # noqa: F403\n"})
    db = tmp_path / "doit.sqlite3"

    def doit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "doit", "--db-file", str(db), "replay", *args],
            check=False, cwd=ws, env=child_env(server.port, PYTHONPATH=str(ROOT)),
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    refusals = {
        "--memory=salute": "--memory 'salute': expected NAME=VALUE",
        "--tags=smok": "--tags: no trail here has the tag 'smok' (did you mean 'smoke'?)",
        "--secret=NOT_SET_HERE": "--secret NOT_SET_HERE: no environment variable NOT_SET_HERE",
        "--driver=web": "--driver 'web' is not a driver replay has",
    }
    with FakeAdbServer(model) as server:
        for flag, message in refusals.items():
            bad = doit(flag)
            assert bad.returncode != 0, flag
            assert f"doit replay: {message}" in bad.stdout + bad.stderr, flag
        assert sent(server) == []
        done = doit(
            "--tags=smoke", f"--secret=password={SECRET}", "--memory=who=Ada",
            "--driver=ANDROID_ONDEVICE_INSTRUMENTATION",
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert model.field_value(PACKAGE, "name") == SECRET
    outputs = everything_written(tmp_path)
    outputs["stdout"] = done.stdout.encode()
    outputs["stderr"] = done.stderr.encode()
    assert_hidden(outputs)
    scratch = json.loads((ws / ".trailblaze" / "replay.json").read_text(encoding="utf-8"))
    assert (
        scratch["trails"][0]["steps"][1]["tools"][1]["detail"]
        == f"typed '{MARKER}' and hid the keyboard"
    )


def test_a_usage_error_never_shows_a_secret(
    on_server: FakeAdbServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "Zq-missing"

    code = main(["replay", str(missing), "--secret", f"pw={missing.name}"])

    assert code == 2
    assert capsys.readouterr().err == (
        f"trailblaze replay: no trail file or directory '{tmp_path}/[secret:pw]'\n"
    )
