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
            "config.platform is ios: this replay drives android-phone (android-phone, android)",
        ),
        "web.trail.yaml": (
            "skipped",
            "config.platform is web: this replay drives android-phone (android-phone, android)",
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
            "config.platform is ios: this replay drives android-phone (android-phone, android)",
        ),
        ("skipped", "config.skip: waits for the new build"),
    ]
    assert model.commands == []
