"""Before anything runs: the parse gate, recording choice, NL-only steps, arguments, usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakeadb import FakeDevice, ModelDevice
from trailblaze.cli.main import main
from trailblaze.replay.plan import PlanError, classifier_chain, plan_trail
from trailblaze.replay.run import ReplayRequest, ReplayUsageError, replay
from trailblaze.trail.argbind import Given

from .support import FAST, SAMPLE_APP, trail_text

MIXED = """\
config:
  id: mixed
  args:
    who: string
    greeting:
      type: string
      default: Hello
  memory:
    place: Lisbon
trailhead:
  step: Start
  recording:
    android:
      pressBack: {}
trail:
  - step: Phone and generic recordings
    recording:
      android: [{pressBack: {}}]
      android-phone: [{hideKeyboard: {}}]
  - step: Tablet only
    recording:
      android-tablet: [{pressBack: {}}]
  - step: Only in words
  - step: Done by a person
    recordable: false
  - verify: Nothing to do
    recording:
      android: []
"""


@pytest.mark.parametrize(
    ("given", "chain"),
    [
        (None, ("android-phone", "android")),
        ("android", ("android",)),
        ("android-tablet", ("android-tablet", "android")),
        ("android-phone-large", ("android-phone-large", "android-phone", "android")),
    ],
)
def test_classifier_chain_is_most_specific_first(given: str | None, chain: tuple[str, ...]) -> None:
    assert classifier_chain(given) == chain


def test_a_classifier_that_is_not_android_is_refused() -> None:
    with pytest.raises(PlanError) as caught:
        classifier_chain("ios-iphone")
    assert str(caught.value) == (
        "classifier 'ios-iphone' is not an Android classifier: replay drives Android devices "
        "('android' or 'android-<form factor>', e.g. android-phone)"
    )


def test_each_step_gets_the_most_specific_recording_or_a_reason() -> None:
    plan = plan_trail(
        "mixed.trail.yaml", MIXED, classifier_chain(None), {"who": Given("Ada", "--arg who")}
    )

    assert plan.skip_reason is None
    chosen = [
        (s.step.kind, s.recording.classifier if s.recording else None, s.skip_reason)
        for s in plan.steps
    ]
    assert chosen == [
        ("trailhead", "android", None),
        ("step", "android-phone", None),
        (
            "step",
            None,
            "no recording for android-phone or android (recorded for android-tablet): "
            "needs the AI runner",
        ),
        ("step", None, "no recording: needs the AI runner"),
        ("step", None, "recordable: false: needs the AI runner"),
        ("verify", "android", None),
    ]
    assert plan.tokens.args == {"greeting": "Hello", "who": "Ada"}
    assert plan.tokens.declared == frozenset({"who", "greeting"})
    assert plan.tokens.memory == {"place": "Lisbon"}


def test_a_trail_without_an_android_recording_is_skipped_with_its_reason() -> None:
    web_only = "trail:\n  - step: Open\n    recording:\n      web: [{web_wait: {}}]\n"
    words_only = "trail:\n  - step: Open the app\n"

    tablet_only = web_only.replace("web: [{web_wait: {}}]", "android-tablet: [{pressBack: {}}]")

    assert plan_trail("a.yaml", web_only, ("android",)).skip_reason == (
        "no Android recording (web): recorded for web; replay drives Android devices only"
    )
    assert plan_trail("t.yaml", tablet_only, ("android-phone", "android")).skip_reason == (
        "no recording for android-phone or android (recorded for android-tablet): "
        "needs the AI runner"
    )
    assert plan_trail("b.yaml", words_only, ("android",)).skip_reason == (
        "no recording at all: needs the AI runner"
    )


def test_the_parse_gate_refuses_a_trail_with_its_located_messages() -> None:
    text = trail_text("- pressBack: {}").replace("  - step: step 1", "  - stpe: step 1")

    plan = plan_trail("bad.trail.yaml", text, ("android",))

    assert plan.refused
    assert [f.text for f in plan.findings] == [
        "bad.trail.yaml:2:5: trail[0]: unknown key 'stpe' (did you mean 'step'?)",
        "bad.trail.yaml:2:5: trail[0]: a step needs 'step' or 'verify' text",
    ]


def test_nl_only_steps_are_counted_and_skipped_not_failed(tmp_path: Path) -> None:
    path = tmp_path / "mixed.trail.yaml"
    path.write_text(MIXED, encoding="utf-8")
    device = ModelDevice(FakeDevice.load(SAMPLE_APP))

    run = replay(ReplayRequest(trails=(path,), args=("who=Ada",)), device=device, options=FAST)

    assert run.exit_code == 0
    trail = run.trails[0]
    assert [s.status for s in trail.steps] == [
        "passed", "passed", "skipped", "skipped", "skipped", "passed",
    ]  # fmt: skip
    counts = run.counts()
    assert (counts["steps_skipped"], counts["steps_needing_ai"]) == (3, 3)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--arg", "who"], "--arg 'who': expected NAME=VALUE"),
        (["--arg", "=x"], "--arg '=x': expected NAME=VALUE"),
        (
            ["--arg", "whoo=Ada"],
            "--arg whoo: no trail here declares argument 'whoo' (did you mean 'who'?) "
            "(declared: greeting, who)",
        ),
        (
            ["--classifier", "web"],
            "classifier 'web' is not an Android classifier: replay drives Android devices "
            "('android' or 'android-<form factor>', e.g. android-phone)",
        ),
    ],
)
def test_usage_errors_exit_2_with_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    path = tmp_path / "mixed.trail.yaml"
    path.write_text(MIXED, encoding="utf-8")

    assert main(["replay", str(path), *args]) == 2

    captured = capsys.readouterr()
    assert captured.err == f"trailblaze replay: {message}\n"
    assert captured.out == ""


def test_a_missing_trail_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ReplayUsageError) as caught:
        replay(ReplayRequest(trails=(tmp_path / "nope.trail.yaml",)))
    assert str(caught.value) == f"no trail file or directory '{tmp_path / 'nope.trail.yaml'}'"


def test_no_workspace_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ReplayUsageError) as caught:
        replay(ReplayRequest(workspace=tmp_path))
    assert str(caught.value).startswith(f"'{tmp_path}' is not a workspace")


def test_a_refused_trail_needs_no_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.trail.yaml"
    path.write_text("trail:\n  - step: A\n    recording: [pressBack]\n", encoding="utf-8")

    assert main(["replay", str(path), "--no-color"]) == 1

    assert capsys.readouterr().out.splitlines() == [
        f"REFUSED {path}",
        f"  {path}:3:16: trail[0].recording: expected a mapping, found a list",
        "trailblaze replay: 1 trail: 0 passed, 0 failed, 1 refused, 0 skipped",
        "  steps: 0 passed, 0 failed, 0 skipped (0 need the AI runner)",
        "FAILED (exit 1)",
    ]


def test_a_directory_replays_the_trails_under_it(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.trail.yaml").write_text(trail_text("- pressBack: {}"), encoding="utf-8")
    (tmp_path / "a.trail.yaml").write_text(trail_text("- hideKeyboard: {}"), encoding="utf-8")
    (tmp_path / "notes.yaml").write_text("not: a trail\n", encoding="utf-8")
    device = ModelDevice(FakeDevice.load(SAMPLE_APP))

    run = replay(ReplayRequest(trails=(tmp_path,)), device=device, options=FAST)

    assert [Path(t.path).name for t in run.trails] == ["a.trail.yaml", "b.trail.yaml"]
    assert run.exit_code == 0


def test_a_directory_without_trails_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ReplayUsageError) as caught:
        replay(ReplayRequest(trails=(tmp_path,)))
    assert str(caught.value) == f"no trail files under '{tmp_path}'"
