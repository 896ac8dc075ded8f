"""Skips and per-platform files: ``config.skip`` per classifier, legacy per-device files, most
specific classifier first. Nothing skipped is ever sent to the device."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fakeadb import FakeDevice, ModelDevice
from trailblaze.replay.results import RunResult
from trailblaze.replay.run import ReplayRequest, replay

from .support import FAST

LIST = "- mobile_listInstalledApps: {}"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def _unified(tmp_path: Path, skip: str, name: str = "t.trail.yaml") -> Path:
    return _write(
        tmp_path / name,
        f"""
        config:
          skip: {skip}
        trail:
          - step: list the apps
            recording:
              android:
                {LIST}
        """,
    )


def _legacy(path: Path, platform: str, recorded: bool = True) -> Path:
    recording = f"\n    recording:\n      tools:\n      {LIST}" if recorded else ""
    return _write(
        path,
        f"- config:\n    platform: {platform}\n- prompts:\n  - step: list the apps{recording}\n",
    )


def _replay(model: FakeDevice, *trails: Path, classifier: str | None = None) -> RunResult:
    return replay(
        ReplayRequest(trails=trails, classifier=classifier),
        device=ModelDevice(model, timeout=5),
        options=FAST,
    )


@pytest.mark.parametrize(
    ("skip", "reason"),
    [
        ("{android-phone: flaky on phones}", "config.skip.android-phone: flaky on phones"),
        ("{android: no Android build yet}", "config.skip.android: no Android build yet"),
        (
            "{android: general, android-phone: the phone one, ios-iphone: other}",
            "config.skip.android-phone: the phone one",
        ),
    ],
)
def test_config_skip_applies_to_the_device_classifiers_most_specific_first(
    model: FakeDevice, tmp_path: Path, skip: str, reason: str
) -> None:
    run = _replay(model, _unified(tmp_path, skip))

    (trail,) = run.trails
    assert (trail.status, trail.reason) == ("skipped", reason)
    assert [s.reason for s in trail.steps] == [reason]
    assert run.to_json()["trails"][0]["reason"] == reason
    assert model.commands == []
    assert run.exit_code == 0


def test_a_skip_for_another_classifier_does_not_stop_the_trail(
    model: FakeDevice, tmp_path: Path
) -> None:
    run = _replay(model, _unified(tmp_path, "{ios-iphone: iOS only problem, android-tablet: x}"))

    assert run.trails[0].status == "passed"
    assert model.commands == ["getprop ro.product.model", "pm list packages"]


def test_per_device_files_run_only_on_their_platform_most_specific_first(
    model: FakeDevice, tmp_path: Path
) -> None:
    folder = tmp_path / "catalog" / "overlay-tap"
    _write(folder / "blaze.yaml", "- prompts:\n  - step: list the apps\n")
    _legacy(folder / "android-phone.trail.yaml", "android")
    _legacy(folder / "android.trail.yaml", "android")
    _legacy(folder / "ios-iphone.trail.yaml", "ios")
    _legacy(folder / "web.trail.yaml", "web")

    run = _replay(model, folder)

    outcome = {Path(t.path).name: (t.status, t.reason) for t in run.trails}
    assert outcome == {
        "android-phone.trail.yaml": ("passed", None),
        "android.trail.yaml": (
            "skipped",
            "android-phone.trail.yaml replays instead: it is recorded for android-phone, "
            "more specific than android",
        ),
        "blaze.yaml": (
            "skipped",
            "recorded per device: android-phone.trail.yaml replays this trail",
        ),
        "ios-iphone.trail.yaml": (
            "skipped",
            "no Android recording (ios): config.platform is ios; replay drives Android devices "
            "only",
        ),
        "web.trail.yaml": (
            "skipped",
            "no Android recording (web): config.platform is web; replay drives Android devices "
            "only",
        ),
    }
    assert model.commands == ["getprop ro.product.model", "pm list packages"]


def test_another_form_factor_falls_back_to_the_android_file(
    model: FakeDevice, tmp_path: Path
) -> None:
    folder = tmp_path / "trail"
    _legacy(folder / "android-phone.trail.yaml", "android")
    _legacy(folder / "android.trail.yaml", "android")

    run = _replay(model, folder, classifier="android-tablet")

    outcome = {Path(t.path).name: (t.status, t.reason) for t in run.trails}
    assert outcome == {
        "android-phone.trail.yaml": (
            "skipped",
            "a per-device file recorded for android-phone (android-phone.trail.yaml): this "
            "replay drives android-tablet (android-tablet, android)",
        ),
        "android.trail.yaml": ("passed", None),
    }


def test_a_legacy_platform_or_scalar_skip_stops_any_file(model: FakeDevice, tmp_path: Path) -> None:
    ios = _legacy(tmp_path / "contacts.trail.yaml", "ios")
    skipped = _write(
        tmp_path / "later.trail.yaml",
        f"- config:\n    skip: waits for the new build\n- tools:\n  {LIST}\n",
    )

    run = _replay(model, ios, skipped)

    assert [(t.status, t.reason) for t in run.trails] == [
        (
            "skipped",
            "no Android recording (ios): config.platform is ios; replay drives Android devices "
            "only",
        ),
        ("skipped", "config.skip: waits for the new build"),
    ]
    assert model.commands == []


PLATFORM_TRAILS = {
    "web.trail.yaml": """
        config:
          devices:
            web: PLAYWRIGHT_NATIVE
          args:
            url: string
        trail:
          - step: Open the page
            recording:
              web:
                - web_navigate: {url: '{{args.url}}'}
        """,
    "ios.trail.yaml": """
        config:
          devices:
            ios-iphone: IOS_HOST
        trail:
          - step: Open contacts
          - step: Tap Add
            recording:
              ios-iphone:
                - tapOnPoint: {x: 1, y: 2}
        """,
    "desktop.trail.yaml": """
        trail:
          - step: Type a todo
            recording:
              desktop:
                - compose_type: {text: Milk, testTag: todo_input}
        """,
    "words.trail.yaml": "trail:\n  - step: Open the app and look around\n",
    "android.trail.yaml": f"trail:\n  - step: list the apps\n    recording:\n      android:\n        {LIST}\n",
}


def test_trails_for_other_platforms_are_counted_apart_from_those_needing_the_ai_runner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakeadb import FakeAdbServer  # noqa: PLC0415
    from trailblaze.cli.main import main  # noqa: PLC0415

    from .support import SAMPLE_APP  # noqa: PLC0415

    paths = [_write(tmp_path / name, text) for name, text in PLATFORM_TRAILS.items()]
    model = FakeDevice.load(SAMPLE_APP)
    with FakeAdbServer(model) as fake:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(fake.port))
        code = main(
            ["replay", *map(str, paths), "--no-color", "--json", str(tmp_path / "r.json"),
             "--junit", str(tmp_path / "r.xml")]
        )  # fmt: skip

    out = capsys.readouterr().out
    assert code == 0, out
    web = (
        "no Android recording (web): recorded for web, config.devices.web: PLAYWRIGHT_NATIVE; "
        "replay drives Android devices only"
    )
    ios = (
        "no Android recording (ios): recorded for ios-iphone, config.devices.ios-iphone: "
        "IOS_HOST; replay drives Android devices only"
    )
    desktop = (
        "no Android recording (desktop): recorded for desktop; replay drives Android devices only"
    )
    assert f"web.trail.yaml: {web}" in out
    assert f"ios.trail.yaml: {ios}" in out
    assert f"desktop.trail.yaml: {desktop}" in out
    assert "words.trail.yaml: no recording at all: needs the AI runner" in out
    assert (
        "5 trails: 1 passed, 0 failed, 0 refused, 4 skipped (3 no Android recording: desktop 1, "
        "ios 1, web 1; 1 needs the AI runner)"
    ) in out
    # ...and the step line counts the AI runner's steps alone.
    assert "steps: 1 passed, 0 failed, 5 skipped (1 need the AI runner)" in out

    import json  # noqa: PLC0415

    counts = json.loads((tmp_path / "r.json").read_text())["counts"]
    keys = ("steps_needing_ai", "steps_no_android", "trails_needing_ai", "trails_no_android")
    assert {k: counts[k] for k in (*keys, "no_android_platforms")} == {
        "steps_needing_ai": 1,
        "steps_no_android": 4,
        "trails_needing_ai": 1,
        "trails_no_android": 3,
        "no_android_platforms": {"desktop": 1, "ios": 1, "web": 1},
    }
    junit = (tmp_path / "r.xml").read_text()
    assert f'<skipped message="{web}" />' in junit
    assert f'<skipped message="{desktop}" />' in junit
    assert '<skipped message="no recording: needs the AI runner" />' in junit
    assert model.commands[-1] == "pm list packages"


def test_a_legacy_recording_pinned_to_another_platforms_driver_is_not_replayed(
    model: FakeDevice, tmp_path: Path
) -> None:
    # history/db5c7209ab79/trails/playwright-native/search-yahoo/blaze.yaml: a legacy recording
    # has no classifier, and only `driver:` says it is a web one.
    body = "- prompts:\n    - step: Open Yahoo\n      recording:\n        tools:\n"
    web = _write(
        tmp_path / "web" / "blaze.yaml",
        "- config:\n    driver: PLAYWRIGHT_NATIVE\n"
        + body
        + "          - web_navigate: {url: 'https://yahoo.com'}\n",
    )
    android = _write(
        tmp_path / "android" / "blaze.yaml",
        f"- config:\n    driver: ANDROID_ONDEVICE_ACCESSIBILITY\n{body}          {LIST}\n",
    )

    run = _replay(model, web, android)

    assert [(t.status, t.reason) for t in run.trails] == [
        (
            "skipped",
            "no Android recording (web): config.driver: PLAYWRIGHT_NATIVE; replay drives "
            "Android devices only",
        ),
        ("passed", None),
    ]
    assert model.commands == ["getprop ro.product.model", "pm list packages"]
