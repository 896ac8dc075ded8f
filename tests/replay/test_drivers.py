"""`--driver` and `config.devices` pins: the driver a trail replays with is what its scripted
tools see as `ctx.device.driverType`, run through real adbutils against the fake adb server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakeadb import FakeAdbServer
from tests.conftest import write_tree
from trailblaze.cli.main import main
from trailblaze.replay.drivers import driver_key, parse_driver
from trailblaze.replay.request import ReplayUsageError

MANIFEST = """\
id: app
target:
  display_name: App
"""
DRIVER_TOOL = """\
import { trailblaze } from "@trailblaze/scripting";

/** Says which driver it runs under, and fails when it is not the one expected. */
export const app_driver = trailblaze.tool<{ expected?: string }, string>(async (input, ctx) => {
  const driver = ctx.device?.driverType;
  if (input.expected !== undefined && driver !== input.expected) {
    throw new Error(`driverType is ${driver}, expected ${input.expected}`);
  }
  return `driverType=${driver}`;
});
"""
INSTRUMENTATION = "android-ondevice-instrumentation"
ACCESSIBILITY = "android-ondevice-accessibility"


def unified(devices: str = "", expected: str | None = None) -> str:
    config = "config:\n  target: app\n"
    if devices:
        config += f"  devices:\n{devices}"
    args = f"{{expected: {expected}}}" if expected else "{}"
    return (
        f"{config}trail:\n  - step: Ask\n    recording:\n      android:\n"
        f"        - app_driver: {args}\n"
    )


TRAILS = {
    "plain.trail.yaml": unified(),
    # The corpus's contacts trails pin both classifiers; the most specific one counts.
    "pinned.trail.yaml": unified(
        "    android-phone: ANDROID_ONDEVICE_INSTRUMENTATION\n"
        "    android: ANDROID_ONDEVICE_ACCESSIBILITY\n",
        expected=INSTRUMENTATION,
    ),
    "yamlkey.trail.yaml": unified("    android: android-ondevice-instrumentation\n"),
    "legacy.trail.yaml": (
        "- config:\n    target: app\n    driver: ANDROID_ONDEVICE_INSTRUMENTATION\n"
        "- tools:\n    - app_driver: {}\n"
    ),
    "revyl.trail.yaml": unified("    android: REVYL_ANDROID\n"),
    "typo.trail.yaml": unified("    android: ANDROID_ONDEVICE_INSTRUMENTATON\n"),
}


def sent(server: FakeAdbServer) -> list[str]:
    return [c for commands in server.commands.values() for c in commands]


@pytest.fixture
def ws(tmp_path: Path, server: FakeAdbServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
    root = write_tree(
        tmp_path,
        {
            "trailmaps/app/trailmap.yaml": MANIFEST,
            "trailmaps/app/tools/app_driver.ts": DRIVER_TOOL,
            **{f"trailmaps/app/trails/{name}": text for name, text in TRAILS.items()},
        },
    )
    monkeypatch.chdir(root)
    return root


def run(ws: Path, *args: str) -> tuple[int, dict[str, dict[str, Any]]]:
    code = main(["replay", "--json", str(ws / "out.json"), *args])
    report = json.loads((ws / "out.json").read_text(encoding="utf-8"))
    return code, {t["path"].rsplit("/", 1)[1]: t for t in report["trails"]}


def seen(trail: dict[str, Any]) -> str:
    """What the trail's scripted tool answered (or the error it threw)."""
    tool = trail["steps"][0]["tools"][0]
    return str(tool["detail"] or tool["error"])


def test_pins_pick_the_driver_scripted_tools_see(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, trails = run(ws)

    out = capsys.readouterr().out
    assert code == 1  # the trail pinned to a driver name Trailblaze does not have
    assert seen(trails["plain.trail.yaml"]) == f"driverType={ACCESSIBILITY}"
    assert seen(trails["pinned.trail.yaml"]) == f"driverType={INSTRUMENTATION}"
    assert seen(trails["yamlkey.trail.yaml"]) == f"driverType={INSTRUMENTATION}"
    assert seen(trails["legacy.trail.yaml"]) == f"driverType={INSTRUMENTATION}"
    assert trails["pinned.trail.yaml"]["driver"] == INSTRUMENTATION
    assert trails["plain.trail.yaml"]["driver"] == ACCESSIBILITY
    revyl = trails["revyl.trail.yaml"]
    assert revyl["status"] == "skipped"
    assert revyl["reason"] == (
        "config.devices.android pins revyl-android (a Revyl cloud device), which replay does "
        f"not drive (it drives {ACCESSIBILITY}, {INSTRUMENTATION} over adb; --driver picks one)"
    )
    typo = trails["typo.trail.yaml"]
    assert typo["status"] == "refused"
    assert typo["findings"] == [
        "trailmaps/app/trails/typo.trail.yaml:2:3: config.devices.android: unknown driver "
        "'ANDROID_ONDEVICE_INSTRUMENTATON' (did you mean 'ANDROID_ONDEVICE_INSTRUMENTATION'?) "
        "(Trailblaze's drivers: ANDROID_ONDEVICE_ACCESSIBILITY, "
        "ANDROID_ONDEVICE_INSTRUMENTATION, IOS_HOST, IOS_AXE, PLAYWRIGHT_NATIVE, "
        "PLAYWRIGHT_ELECTRON, REVYL_ANDROID, REVYL_IOS, COMPOSE, ANDROID_HOST)"
    ]
    assert "REFUSED trailmaps/app/trails/typo.trail.yaml" in out


@pytest.mark.parametrize(
    "name", ["android_ondevice_accessibility", "Android-OnDevice-Accessibility"]
)
def test_driver_overrides_every_pin(ws: Path, name: str) -> None:
    code, trails = run(ws, "--driver", name)

    # The pinned trail asserts instrumentation: overridden, its tool fails and says so.
    assert code == 1
    assert seen(trails["pinned.trail.yaml"]) == (
        f"app_driver threw Error: driverType is {ACCESSIBILITY}, expected {INSTRUMENTATION} "
        "(at trailmaps/app/tools/app_driver.ts:7:11)"
    )
    for stem in ("plain", "yamlkey", "legacy", "revyl", "typo"):
        trail = trails[f"{stem}.trail.yaml"]
        assert seen(trail) == f"driverType={ACCESSIBILITY}", stem
        assert trail["driver"] == ACCESSIBILITY


def test_driver_instrumentation_reaches_every_trail(ws: Path) -> None:
    code, trails = run(ws, "--driver", "ANDROID_ONDEVICE_INSTRUMENTATION")

    assert code == 0
    assert {seen(t) for t in trails.values()} == {f"driverType={INSTRUMENTATION}"}


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "android-ondevice-instrumentaton",
            "--driver 'android-ondevice-instrumentaton' is not a driver replay has (did you mean "
            f"'{INSTRUMENTATION}'?)",
        ),
        ("playwright-native", "--driver 'playwright-native' is not driven over adb here"),
        ("REVYL_ANDROID", "--driver 'REVYL_ANDROID' is not driven over adb here"),
    ],
)
def test_an_unknown_driver_is_a_usage_error_before_any_device_work(
    ws: Path,
    server: FakeAdbServer,
    capsys: pytest.CaptureFixture[str],
    *,
    name: str,
    message: str,
) -> None:
    code = main(["replay", "--driver", name])

    assert code == 2
    assert capsys.readouterr().err == (
        f"trailblaze replay: {message} (replay drives: {ACCESSIBILITY}, {INSTRUMENTATION}; "
        "the enum names ANDROID_ONDEVICE_... work too)\n"
    )
    assert sent(server) == []


def test_driver_names() -> None:
    assert driver_key(" ios_host ") == "ios-host"
    assert driver_key("nope") is None
    assert parse_driver(None) is None
    with pytest.raises(ReplayUsageError):
        parse_driver("")
