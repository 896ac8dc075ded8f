"""``runIf`` at replay time, on the bundled Corner Shop model behind the fake adb server.

The shop shows a promo banner ("Not now") on its first start; the bundled trails dismiss it
with a ``runIf``. Malformed trees are rejected before anything runs, with the messages of the
shared validator, the same ones ``trailblaze check`` prints.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakeadb import FakeAdbServer, FakeDevice
from tests.conftest import write_tree
from trailblaze.check.run import run_check
from trailblaze.cli.main import main
from trailblaze.options import CheckOptions
from trailblaze.replay.results import TrailResult
from trailblaze.replay.run import ReplayRequest, replay
from trailblaze.toolchain.compilers import Compiler
from trailblaze.workspace import find_workspace

from .support import BUNDLED_MODEL, FAST, trail_text

SHOP = "com.example.shop"
OPEN_SHOP = f"""
config:
  target: shop
trailhead:
  step: Open the shop
  recording:
    android:
      launchApp: {{appId: {SHOP}, launchMode: RESUME}}
"""
NOT_NOW = "{androidAccessibility: {textRegex: Not now}}"
DISMISS = f"{{tapOnElementBySelector: {{nodeSelector: {NOT_NOW}}}}}"
CART = "{tapOnElementWithAccessibilityText: {accessibilityText: Cart}}"


@pytest.fixture
def model() -> FakeDevice:
    """The bundled Corner Shop phone; conftest's ``server`` serves it."""
    return FakeDevice.load(BUNDLED_MODEL)


def replay_on(server: FakeAdbServer, tmp_path: Path, *recordings: str) -> TrailResult:
    from trailblaze.replay.adb import connect  # noqa: PLC0415

    path = tmp_path / "popup.trail.yaml"
    path.write_text(trail_text(*recordings, config=OPEN_SHOP), encoding="utf-8")
    device = connect(None, port=server.port, timeout=5)
    run = replay(ReplayRequest(trails=(path,)), device=device, options=FAST)
    return run.trails[0]


def test_popup_present_is_dismissed(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path
) -> None:
    trail = replay_on(
        server,
        tmp_path,
        f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: [{DISMISS}]}}",
        "- assertNotVisibleWithText: {text: Not now}",
    )

    assert trail.status == "passed"
    runif = trail.steps[1].tools[0]
    assert runif.detail == (
        "selector matched Button 'Not now' id=com.example.shop:id/promo_dismiss "
        "[40,2200][500,2340]: ran then (1 call(s))"
    )
    assert [(c.position, c.tool, c.status) for c in runif.children] == [
        ("runIf.then[0]", "tapOnElementBySelector", "passed")
    ]
    assert "promo_dismissed" in model.apps[SHOP].flags


def test_popup_absent_skips_the_branch(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path
) -> None:
    model.apps[SHOP].flags.add("promo_dismissed")

    trail = replay_on(
        server, tmp_path, f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: [{DISMISS}]}}"
    )

    assert trail.status == "passed"
    runif = trail.steps[1].tools[0]
    assert runif.detail == "selector matched nothing: condition false, no else branch"
    assert [(c.position, c.status, c.detail) for c in runif.children] == [
        ("runIf.then[0]", "skipped", "branch not taken")
    ]
    assert not [c for c in server.commands["emulator-5554"] if c.startswith("input tap")]


def test_the_else_branch_runs_when_the_condition_is_false(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path
) -> None:
    model.apps[SHOP].flags.add("promo_dismissed")

    trail = replay_on(
        server,
        tmp_path,
        f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: [{DISMISS}], else: [{CART}]}}",
    )

    assert trail.status == "passed"
    assert [(c.position, c.status) for c in trail.steps[1].tools[0].children] == [
        ("runIf.else[0]", "passed"),
        ("runIf.then[0]", "skipped"),
    ]
    assert model.current_screen == f"{SHOP}/cart"


@pytest.mark.parametrize(
    ("flags", "branch", "detail", "outcomes", "screen"),
    [
        (
            (),
            "runIf.then[0]",
            "assertVisibleWithText succeeded: ran then (1 call(s))",
            [
                ("runIf.condition", "passed"),
                ("runIf.then[0]", "passed"),
                ("runIf.else[0]", "skipped"),
            ],
            f"{SHOP}/home",
        ),
        (
            ("promo_dismissed",),
            "runIf.else[0]",
            "assertVisibleWithText failed as expected: ran else (1 call(s))",
            [
                ("runIf.condition", "failed"),
                ("runIf.else[0]", "passed"),
                ("runIf.then[0]", "skipped"),
            ],
            f"{SHOP}/cart",
        ),
    ],
)
def test_a_tool_condition_takes_then_on_success_and_else_on_an_expected_failure(
    server: FakeAdbServer,
    model: FakeDevice,
    tmp_path: Path,
    *,
    flags: tuple[str, ...],
    branch: str,
    detail: str,
    outcomes: list[tuple[str, str]],
    screen: str,
) -> None:
    model.apps[SHOP].flags.update(flags)
    condition = "{tool: {assertVisibleWithText: {text: Get 10% off your first order}}}"

    trail = replay_on(
        server,
        tmp_path,
        f"- runIf: {{condition: {condition}, then: [{DISMISS}], else: [{CART}]}}",
    )

    assert trail.status == "passed"
    children = trail.steps[1].tools[0].children
    assert children[0].position == "runIf.condition"
    assert [c.position for c in children if c.status == "passed"] == (
        ["runIf.condition", branch] if branch.endswith("then[0]") else [branch]
    )
    assert [(c.position, c.status) for c in children] == outcomes
    assert trail.steps[1].tools[0].detail == detail
    assert model.current_screen == screen
    assert "promo_dismissed" in model.apps[SHOP].flags


def test_a_misspelled_condition_tool_fails_the_step_instead_of_taking_else(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path
) -> None:
    condition = "{tool: {assertVisibleWithTxt: {text: Not now}}}"

    trail = replay_on(
        server,
        tmp_path,
        f"- runIf: {{condition: {condition}, then: [{DISMISS}], else: [{CART}]}}",
    )

    step = trail.steps[1]
    assert (trail.status, step.status) == ("failed", "failed")
    assert step.failure is not None
    assert step.failure.failed_tool == "runIf"
    assert step.failure.error == (
        "runIf.condition: 'assertVisibleWithTxt' could not run, so the condition is neither "
        "true nor false: tool 'assertVisibleWithTxt' is not supported by this device: no tool of "
        "that name in the framework (did you mean 'assertVisibleWithText'?)"
    )
    assert [(c.position, c.status) for c in step.tools[0].children] == [
        ("runIf.condition", "failed"),
        ("runIf.then[0]", "skipped"),
        ("runIf.else[0]", "skipped"),
    ]
    assert model.current_screen == f"{SHOP}/home"


def test_a_condition_tool_with_bad_arguments_fails_the_step(
    server: FakeAdbServer, tmp_path: Path
) -> None:
    condition = "{tool: {assertVisibleWithText: {txt: Not now}}}"

    trail = replay_on(
        server, tmp_path, f"- runIf: {{condition: {condition}, then: [{DISMISS}], else: [{CART}]}}"
    )

    assert trail.steps[1].failure is not None
    assert trail.steps[1].failure.error.startswith(
        "runIf.condition: 'assertVisibleWithText' could not run, so the condition is neither "
        "true nor false: invalid arguments for 'assertVisibleWithText': "
    )


def test_a_selector_field_the_dump_cannot_answer_fails_the_step(
    server: FakeAdbServer, tmp_path: Path
) -> None:
    selector = "{androidAccessibility: {isHeading: true}}"

    trail = replay_on(
        server, tmp_path, f"- runIf: {{condition: {{selector: {selector}}}, then: [{DISMISS}]}}"
    )

    assert trail.steps[1].failure is not None
    assert trail.steps[1].failure.error == (
        "field 'androidAccessibility.isHeading' cannot be resolved from a uiautomator dump"
    )


def test_a_failing_branch_call_is_attributed_to_the_runif(
    server: FakeAdbServer, tmp_path: Path
) -> None:
    trail = replay_on(
        server,
        tmp_path,
        f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: [{{assertVisibleWithText: {{text: Free tea}}}}]}}",
    )

    failure = trail.steps[1].failure
    assert failure is not None
    assert (failure.failed_tool, failure.kind) == ("runIf", "expected")
    assert failure.error.startswith(
        "runIf.then[0] assertVisibleWithText failed: text 'Free tea' is not visible (waited 0.3s"
    )


def test_nesting_two_levels_works(server: FakeAdbServer, model: FakeDevice, tmp_path: Path) -> None:
    inner = (
        "{runIf: {condition: {tool: {assertVisibleWithText: {text: Get 10% off your first order}}}, "
        f"then: [{DISMISS}]}}}}"
    )

    trail = replay_on(
        server, tmp_path, f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: [{inner}]}}"
    )

    assert trail.status == "passed"
    outer = trail.steps[1].tools[0]
    nested = outer.children[0]
    assert (nested.position, nested.tool, nested.status) == ("runIf.then[0]", "runIf", "passed")
    assert [(c.position, c.status) for c in nested.children] == [
        ("runIf.then[0] › runIf.condition", "passed"),
        ("runIf.then[0] › runIf.then[0]", "passed"),
    ]
    assert "promo_dismissed" in model.apps[SHOP].flags


def test_nesting_three_levels_is_rejected_before_anything_runs(
    server: FakeAdbServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "deep.trail.yaml"
    level3 = "{runIf: {condition: {selector: {androidAccessibility: {textRegex: C}}}, then: [{pressBack: {}}]}}"
    level2 = f"{{runIf: {{condition: {{selector: {{androidAccessibility: {{textRegex: B}}}}}}, then: [{level3}]}}}}"
    path.write_text(
        trail_text(
            "- pressBack: {}",
            f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: [{level2}]}}",
            config=OPEN_SHOP,
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))

    code = main(["replay", str(path), "--no-color"])

    out = capsys.readouterr().out
    assert code == 1
    assert f"REFUSED {path}\n" in out
    assert (
        f"  {path}:16:175: trail[1].recording.android[0].runIf.then[0].runIf.then[0].runIf: "
        "runIf nested more than 2 levels deep\n"
    ) in out
    assert server.commands == {"emulator-5554": []}


# -- malformed trees: the same messages in `trailblaze replay` and `trailblaze check` ----------

MALFORMED = {
    "unknown-key": (
        f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: [{{pressBack: {{}}}}], otherwise: []}}",
        "12:113: trail[0].recording.android[0].runIf: unknown key 'otherwise'; runIf takes "
        "condition, then and else",
    ),
    "missing-condition": (
        "- runIf: {then: [{pressBack: {}}]}",
        "12:11: trail[0].recording.android[0].runIf: missing 'condition' (a selector or a tool call)",
    ),
    "double-condition": (
        f"- runIf: {{condition: {{selector: {NOT_NOW}, tool: {{pressBack: {{}}}}}}, then: [{{pressBack: {{}}}}]}}",
        "12:30: trail[0].recording.android[0].runIf.condition: a condition has either 'selector' "
        "or 'tool', not both",
    ),
    "neither-form": (
        "- runIf: {condition: {visible: Not now}, then: [{pressBack: {}}]}",
        "12:31: trail[0].recording.android[0].runIf.condition: unknown condition 'visible'; a "
        "condition is either 'selector' or 'tool'",
    ),
    "empty-then": (
        f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: []}}",
        "12:94: trail[0].recording.android[0].runIf.then: must not be empty",
    ),
    "then-not-a-list": (
        f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: {{pressBack: {{}}}}}}",
        "12:94: trail[0].recording.android[0].runIf.then: expected a list of tool calls, found a "
        "mapping",
    ),
    "missing-then": (
        f"- runIf: {{condition: {{selector: {NOT_NOW}}}}}",
        "12:11: trail[0].recording.android[0].runIf: missing 'then' (the calls to run when the "
        "condition holds)",
    ),
    "condition-is-runif": (
        "- runIf: {condition: {tool: {runIf: {then: [{pressBack: {}}]}}}, then: [{pressBack: {}}]}",
        "12:38: trail[0].recording.android[0].runIf.condition.tool: a condition tool cannot be runIf",
    ),
    "two-calls-in-one-item": (
        f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: [{{pressBack: {{}}, hideKeyboard: {{}}}}]}}",
        "12:95: trail[0].recording.android[0].runIf.then[0]: expected one tool call "
        "'<tool>: {...}', found 2 keys",
    ),
    "else-of-the-branch-not-taken": (
        f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: [{{pressBack: {{}}}}], else: pressBack}}",
        "12:119: trail[0].recording.android[0].runIf.else: expected a list of tool calls, found a "
        "string",
    ),
}


@pytest.fixture(scope="module")
def malformed_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    (root / "trailmaps" / "shop").mkdir(parents=True)
    (root / "trailmaps" / "shop" / "trailmap.yaml").write_text(
        "id: shop\ntarget:\n  display_name: Shop\n", encoding="utf-8"
    )
    for name, (recording, _) in MALFORMED.items():
        path = root / "trailmaps" / "shop" / "trails" / f"{name}.trail.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(trail_text(recording, config=OPEN_SHOP), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def check_messages(malformed_ws: Path) -> dict[str, list[str]]:
    report = run_check(
        find_workspace(malformed_ws, explicit=True), CheckOptions(typecheck=False, install=False)
    )
    messages: dict[str, list[str]] = {}
    for finding in report.findings:
        if finding.kind == "runif":
            messages.setdefault(finding.path, []).append(finding.text)
    return messages


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_tree_is_refused_with_the_check_message(
    name: str,
    malformed_ws: Path,
    check_messages: dict[str, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rel = f"trailmaps/shop/trails/{name}.trail.yaml"
    expected = f"{rel}:{MALFORMED[name][1]}"
    monkeypatch.chdir(malformed_ws)

    code = main(["replay", rel, "--no-color"])

    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[:2] == [f"REFUSED {rel}", f"  {expected}"]
    assert check_messages[rel] == [expected]


# -- the condition's tool by name (upstream's shape) ---------------------------------------------


@pytest.mark.parametrize(
    ("flags", "detail", "screen"),
    [
        ((), "assertVisibleWithText succeeded: ran then (1 call(s))", f"{SHOP}/home"),
        (
            ("promo_dismissed",),
            "assertVisibleWithText failed as expected: ran else (1 call(s))",
            f"{SHOP}/cart",
        ),
    ],
)
def test_a_condition_tool_given_by_name_with_args_runs_like_the_nested_form(
    server: FakeAdbServer,
    model: FakeDevice,
    tmp_path: Path,
    *,
    flags: tuple[str, ...],
    detail: str,
    screen: str,
) -> None:
    model.apps[SHOP].flags.update(flags)
    condition = "{tool: assertVisibleWithText, args: {text: Get 10% off your first order}}"

    trail = replay_on(
        server, tmp_path, f"- runIf: {{condition: {condition}, then: [{DISMISS}], else: [{CART}]}}"
    )

    assert trail.status == "passed"
    runif = trail.steps[1].tools[0]
    assert runif.detail == detail
    assert (runif.children[0].position, runif.children[0].tool) == (
        "runIf.condition",
        "assertVisibleWithText",
    )
    assert model.current_screen == screen


def test_a_condition_tool_by_name_with_bad_arguments_fails_the_step(
    server: FakeAdbServer, tmp_path: Path
) -> None:
    condition = "{tool: assertVisibleWithText, args: {txt: Not now}}"

    trail = replay_on(
        server, tmp_path, f"- runIf: {{condition: {condition}, then: [{DISMISS}], else: [{CART}]}}"
    )

    failure = trail.steps[1].failure
    assert failure is not None
    assert failure.failed_tool == "runIf"
    assert failure.error.startswith(
        "runIf.condition: 'assertVisibleWithText' could not run, so the condition is neither "
        "true nor false: invalid arguments for 'assertVisibleWithText': "
    )


def test_a_key_beside_the_condition_tool_does_not_stop_the_replay(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path
) -> None:
    # A warning in the check (runif-ignored-key), never a refusal: upstream does not forbid it.
    condition = "{tool: {assertVisibleWithText: {text: Not now}}, timeoutMs: 500}"

    trail = replay_on(server, tmp_path, f"- runIf: {{condition: {condition}, then: [{DISMISS}]}}")

    assert trail.status == "passed"
    assert "promo_dismissed" in model.apps[SHOP].flags


# -- a trailmap's own runIf replaces ours --------------------------------------------------------

SHOP_MANIFEST = f"""\
id: shop
target:
  display_name: Corner Shop
  platforms:
    android:
      app_ids: [{SHOP}]
"""
OWN_RUNIF = """\
id: runIf
description: Dismiss a prompt by the text of its button.
parameters:
  - name: button
    type: string
tools:
  - tapOnElementBySelector:
      nodeSelector:
        androidAccessibility:
          textRegex: "{{params.button}}"
"""
SCRIPTED_RUNIF = """\
import { trailblaze } from "@trailblaze/scripting";

/** Dismiss a prompt by the text of its button, when it shows. */
export const runIf = trailblaze.tool<{ button: string }, string>(
  { description: "Dismiss a prompt by the text of its button, when it shows." },
  async (input, ctx) => {
    await ctx.tools.tapOnElementBySelector({
      nodeSelector: { androidAccessibility: { textRegex: input.button } },
    });
    return `dismissed ${input.button}`;
  },
);
"""


def replay_in_workspace(
    server: FakeAdbServer, root: Path, tool: dict[str, str], *recordings: str
) -> TrailResult:
    from trailblaze.replay.adb import connect  # noqa: PLC0415

    write_tree(root, {"trailmaps/shop/trailmap.yaml": SHOP_MANIFEST, **tool})
    path = root / "trailmaps" / "shop" / "trails" / "popup.trail.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(trail_text(*recordings, config=OPEN_SHOP), encoding="utf-8")
    device = connect(None, port=server.port, timeout=5)
    run = replay(ReplayRequest(trails=(path,), workspace=root), device=device, options=FAST)
    return run.trails[0]


def test_a_trailmaps_composed_runif_runs_instead_of_ours(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path
) -> None:
    # Its shape is not ours (no condition, no then): ours would refuse the trail; it is the
    # trailmap's tool that runs, its body tapping the button.
    trail = replay_in_workspace(
        server,
        tmp_path,
        {"trailmaps/shop/tools/runIf.tool.yaml": OWN_RUNIF},
        "- runIf: {button: Not now}",
    )

    assert trail.status == "passed", trail
    runif = trail.steps[1].tools[0]
    assert (runif.tool, runif.status) == ("runIf", "passed")
    assert [c.tool for c in runif.children] == ["tapOnElementBySelector"]
    assert "promo_dismissed" in model.apps[SHOP].flags
    report = run_check(find_workspace(tmp_path, explicit=True), CheckOptions(typecheck=False))
    assert [f.text for f in report.findings if f.fatal] == []


def test_a_trailmaps_composed_runif_refuses_our_shape_by_its_own_arguments(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path
) -> None:
    # Our shape for the trailmap's tool: its arguments are wrong for that tool, and the step
    # fails as any call with bad arguments does; our conditional does not run.
    trail = replay_in_workspace(
        server,
        tmp_path,
        {"trailmaps/shop/tools/runIf.tool.yaml": OWN_RUNIF},
        f"- runIf: {{condition: {{selector: {NOT_NOW}}}, then: [{DISMISS}]}}",
    )

    failure = trail.steps[1].failure
    assert failure is not None
    assert failure.failed_tool == "runIf"
    assert failure.error.startswith("invalid arguments for 'runIf': ")
    assert "promo_dismissed" not in model.apps[SHOP].flags


def test_a_trailmaps_scripted_runif_runs_instead_of_ours(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path, tsc: Compiler
) -> None:
    trail = replay_in_workspace(
        server,
        tmp_path,
        {"trailmaps/shop/tools/conditional.ts": SCRIPTED_RUNIF},
        "- runIf: {button: Not now}",
    )

    assert trail.status == "passed", trail
    runif = trail.steps[1].tools[0]
    assert (runif.tool, runif.status, runif.detail) == ("runIf", "passed", "dismissed Not now")
    assert "promo_dismissed" in model.apps[SHOP].flags


def test_a_runtrail_sub_trail_gets_the_trailmaps_own_runif_as_its_caller_does(
    server: FakeAdbServer, model: FakeDevice, tmp_path: Path
) -> None:
    # A runTrail's trail runs in its caller's tools: the trailmap's runIf, in its own shape,
    # planned without our grammar (which would refuse it, before the caller starts).
    sub = tmp_path / "trailmaps" / "shop" / "trails" / "dismiss.trail.yaml"
    write_tree(
        tmp_path,
        {"trailmaps/shop/trails/dismiss.trail.yaml": trail_text("- runIf: {button: Not now}")},
    )

    trail = replay_in_workspace(
        server,
        tmp_path,
        {"trailmaps/shop/tools/runIf.tool.yaml": OWN_RUNIF},
        f"- runTrail: {{path: {sub.name}}}",
    )

    assert trail.status == "passed", trail
    assert "promo_dismissed" in model.apps[SHOP].flags
