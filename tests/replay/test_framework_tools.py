"""Every Android-recordable framework tool of the catalog: replayed, or refused with a reason.

Each supported tool runs on both ``Device`` implementations (``device_factory``: real adbutils
over a socket to the fake adb server, and the socket-free model); the test checks the exact
command lines the device received and what changed on it. Refused tools never reach a device:
the trail is refused before anything is sent.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from fakeadb import FakeDevice, ModelDevice
from trailblaze.replay.arguments import Tokens
from trailblaze.replay.device import Device
from trailblaze.replay.invocation import RecordingOutcome
from trailblaze.replay.run import ReplayRequest, replay
from trailblaze.replay.tools import ANDROID_TOOLS, REFUSED
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.trail.runif import RUNIF

from .conftest import DeviceFactory
from .support import FAST, PACKAGE, calls, parse, runner, trail_text

LAUNCH = f"- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}\n"
FORMS = (
    LAUNCH
    + "- tapOnElementBySelector: {nodeSelector: {containsChild: {androidAccessibility: {textRegex: Forms}}}}\n"
)
NAME = "- tapOnElementBySelector: {nodeSelector: {androidAccessibility: {hintTextRegex: Name}}}\n"


@dataclass(frozen=True)
class Case:
    tool: str
    recording: str
    sent: tuple[str, ...] = ()
    """Command lines the tool must send, in this order (others may come between)."""
    check: Callable[[FakeDevice, RecordingOutcome], bool] | None = None
    """What must hold afterwards (on the device's state or the tool's result)."""
    config: str = ""
    passes: bool = True


def _detail(outcome: RecordingOutcome) -> str:
    return outcome.tools[-1].detail or ""


CASES = [
    Case(
        "android_grantPermissions",
        f"- android_grantPermissions: {{appId: {PACKAGE}, permissions: "
        "[android.permission.CAMERA, android.permission.POST_NOTIFICATIONS]}",
        (
            f"pm grant {PACKAGE} android.permission.CAMERA",
            f"pm grant {PACKAGE} android.permission.POST_NOTIFICATIONS",
        ),
        lambda m, o: (
            m.granted
            == {
                (PACKAGE, "android.permission.CAMERA"),
                (PACKAGE, "android.permission.POST_NOTIFICATIONS"),
            }
        ),
    ),
    Case(
        "android_grantAppOpsPermission",
        f"- android_grantAppOpsPermission: {{appId: {PACKAGE}, permission: SYSTEM_ALERT_WINDOW}}",
        (f"appops set {PACKAGE} SYSTEM_ALERT_WINDOW allow",),
        lambda m, o: m.app_ops == {(PACKAGE, "SYSTEM_ALERT_WINDOW"): "allow"},
    ),
    Case(
        "android_systemUiDemoMode",
        "- android_systemUiDemoMode: {}\n",
        (
            "settings put global sysui_demo_allowed 1",
            "am broadcast -a com.android.systemui.demo -e command enter",
            "am broadcast -a com.android.systemui.demo -e command clock -e hhmm 1200",
        ),
        lambda m, o: m.demo_mode,
    ),
    Case(
        "networkConnection",
        "- networkConnection: {connected: false}",
        ("svc wifi disable", "svc data disable"),
        lambda m, o: m.network == {"wifi": False, "data": False},
    ),
    Case(
        "openUrl",
        "- openUrl: {url: 'https://example.com/?a=1&b=2'}",
        ("am start -a android.intent.action.VIEW -d 'https://example.com/?a=1&b=2'",),
        lambda m, o: m.browser_url == "https://example.com/?a=1&b=2",
    ),
    Case(
        "mobile_listInstalledAppsDetailed",
        "- mobile_listInstalledAppsDetailed: {includeSystemApps: false}",
        ("pm list packages -f -3",),
        lambda m, o: (
            _detail(o).startswith("2 app(s) (third-party): ")
            and {"appId": PACKAGE, "apkPath": f"/data/app/{PACKAGE}/base.apk"}
            in json.loads(_detail(o).split(": ", 1)[1])
        ),
    ),
    Case(
        "dragByPoints",
        "- dragByPoints: {startX: 100, startY: 800, endX: 100, endY: 300}",
        ("input swipe 100 800 100 300 1000",),
    ),
    Case(
        "swipeWithRelativeCoordinates",
        "- swipeWithRelativeCoordinates: {startRelative: '50%, 80%', endRelative: '50%, 20%'}",
        ("wm size", "input swipe 540 1920 540 480 400"),
    ),
    Case(
        "longPressElementWithAccessibilityText",
        LAUNCH
        + "- longPressElementWithAccessibilityText: {accessibilityText: accessibility_tap_button}",
        ("input swipe 540 550 540 550 500",),
    ),
    Case(
        "tapOnAccessibilityNode",
        LAUNCH
        + "- tapOnAccessibilityNode: {contentDescriptionRegex: accessibility_tap_button}\n"
        + "- assertVisibleWithText: {text: Accessibility button tapped}",
        ("input tap 540 550",),
    ),
    Case(
        "takeSnapshot",
        LAUNCH + "- takeSnapshot: {screenName: home}",
        ("screencap -p /data/local/tmp/trailblaze-screen.png",),
        # The fake draws the screen at its size (1080x2400): some KiB of PNG.
        lambda m, o: re.match(r"captured 'home' \(\d{4,6}-byte PNG, ", _detail(o)) is not None,
    ),
    Case(
        "waitForChange",
        LAUNCH + "- waitForChange: {timeoutMs: 100, requireChange: false}",
        ("uiautomator dump /data/local/tmp/trailblaze-uidump.xml",),
        lambda m, o: _detail(o) == "the screen did not change within 0.1s",
    ),
    Case(
        "inputTextRandom",
        FORMS + NAME + "- inputTextRandom: {variable: code, prefix: ID-, digitCount: 4}\n"
        "- assertVisibleWithText: {text: '{{memory.code}}'}",
        ("input text ID-",),
        lambda m, o: (
            len(m.field_value(PACKAGE, "name")) == 7
            and m.field_value(PACKAGE, "name").startswith("ID-")
            and m.field_value(PACKAGE, "name")[3:].isdigit()
        ),
    ),
    Case(
        "mobile_maestro",
        LAUNCH
        + "- mobile_maestro:\n    commands:\n"
        + "      - tapOn: forms\n"
        + "      - tapOn: {id: name_field}\n"
        + "      - inputText: Jane Doe\n"
        + "      - eraseText: {charactersToErase: '4'}\n"
        + "      - hideKeyboard: {}\n"
        + "      - assertVisible: {text: 'jane'}\n"
        + "      - back: {}\n",
        (
            "input tap 324 2300",
            "input tap 540 320",
            "input text Jane%sDoe",
            "input keyevent 123",
            "input keyevent 67 67 67 67",
            "input keyevent 4",
        ),
        lambda m, o: (
            m.field_value(PACKAGE, "name") == "Jane"
            and [c.position for c in o.tools[-1].children][:2]
            == ["mobile_maestro.commands[0]", "mobile_maestro.commands[1]"]
        ),
    ),
]
# Tools that send nothing to the device: they run on the model only.
PURE = [
    Case(
        "assertEquals",
        "- assertEquals: {actual: '{{memory.total}}', expected: '21'}",
        config="config:\n  memory: {total: '21'}",
    ),
    Case(
        "assertNotEquals",
        "- assertNotEquals: {actual: '{{memory.total}}', expected: '21'}",
        config="config:\n  memory: {total: '21'}",
        passes=False,
        check=lambda m, o: (
            o.failure is not None and o.failure.error == "expected a value other than '21', got it"
        ),
    ),
    Case(
        "assertMath",
        "- assertMath: {expression: '{{memory.total}} * 2 + 1.5', expected: '43.5'}",
        config="config:\n  memory: {total: '21'}",
        check=lambda m, o: _detail(o) == "21 * 2 + 1.5 = 43.5",
    ),
    Case(
        "dumpMemory",
        "- dumpMemory: {}",
        config="config:\n  memory: {total: '21', name: Jane}",
        check=lambda m, o: _detail(o) == "memory: name='Jane', total='21'",
    ),
    Case(
        "objectiveStatus",
        "- objectiveStatus: {explanation: the cart is empty, status: COMPLETED}",
        check=lambda m, o: _detail(o) == "objective completed: the cart is empty",
    ),
]


def _run(device: Device, case: Case) -> RecordingOutcome:
    recorded = calls(case.recording, config=case.config)
    memory = dict(parse(trail_text(case.recording, config=case.config)).config.memory)
    return runner(device, tokens=Tokens(memory=memory)).run_recording(recorded)


def _subsequence(sent: list[str], wanted: tuple[str, ...]) -> bool:
    it = iter(sent)
    return all(
        any(line.startswith(w) if w.endswith("-") else line == w for line in it) for w in wanted
    )


@pytest.mark.parametrize("case", CASES, ids=[c.tool for c in CASES])
def test_the_tool_replays_through_both_devices(
    case: Case, device_factory: DeviceFactory, model: FakeDevice
) -> None:
    device = device_factory()
    before = len(model.commands)

    outcome = _run(device, case)

    assert outcome.passed, outcome.failure
    assert case.tool in [t.tool for t in outcome.tools]
    sent = model.commands[before:]
    assert _subsequence(sent, case.sent), sent
    if case.check is not None:
        assert case.check(model, outcome), (_detail(outcome), model.events[-3:])


@pytest.mark.parametrize("case", PURE, ids=[c.tool for c in PURE])
def test_a_tool_that_sends_nothing_replays_on_the_model(case: Case, model: FakeDevice) -> None:
    outcome = _run(ModelDevice(model, timeout=5), case)

    assert outcome.passed is case.passes, outcome.failure
    assert model.commands == []
    if case.check is not None:
        assert case.check(model, outcome), (_detail(outcome), model.events[-3:])


def test_every_android_recordable_tool_is_replayed_or_refused_with_a_reason() -> None:
    catalog = load_catalog()
    android = {
        t.name for t in catalog.recordable_tools() if not t.platforms or "android" in t.platforms
    }
    supported = (set(ANDROID_TOOLS) | {RUNIF}) & android
    assert len(android) == 65
    assert android == supported | set(REFUSED)
    assert not supported & set(REFUSED)
    assert (len(supported), len(REFUSED)) == (49, 16)
    assert all(len(reason) > 40 for reason in REFUSED.values())
    # Every tool added here has a test above (the others have theirs in test_tools and
    # test_engine); a new tool without one fails this line.
    tested = {c.tool for c in (*CASES, *PURE)}
    new = {
        "android_grantPermissions", "android_grantAppOpsPermission", "android_systemUiDemoMode",
        "assertEquals", "assertMath", "assertNotEquals", "dragByPoints", "dumpMemory",
        "inputTextRandom", "longPressElementWithAccessibilityText",
        "mobile_listInstalledAppsDetailed", "mobile_maestro", "networkConnection",
        "objectiveStatus", "openUrl", "swipeWithRelativeCoordinates", "takeSnapshot",
        "tapOnAccessibilityNode", "waitForChange",
    }  # fmt: skip
    assert new <= tested | {"runTrail"}


def _trail(tmp_path: Path, body: str, name: str = "t.trail.yaml") -> Path:
    path = tmp_path / name
    path.write_text(
        "trail:\n  - step: go\n    recording:\n      android:\n"
        + "".join(f"        {line}\n" for line in body.strip("\n").splitlines())
    )
    return path


@pytest.mark.parametrize("tool", sorted(REFUSED))
def test_a_refused_tool_refuses_the_trail_before_anything_is_sent(
    tool: str, model: FakeDevice, tmp_path: Path
) -> None:
    schema = load_catalog().tools[tool]
    samples = {"string": "x", "boolean": True, "integer": 1, "number": 1, "array": []}
    args = {
        name: samples[dict(schema.properties)[name].get("type", "string")]
        for name in schema.required
    }
    args_text = json.dumps(args)
    path = _trail(tmp_path, f"{LAUNCH}- {tool}: {args_text}")

    run = replay(ReplayRequest(trails=(path,)), device=ModelDevice(model, timeout=5), options=FAST)

    (trail,) = run.trails
    assert trail.status == "refused"
    assert model.commands == []
    assert trail.findings == (
        f"t.trail.yaml:6:11: trail[0].recording.android[1]: tool '{tool}' cannot run on "
        f"Android replay: {REFUSED[tool]}",
    ) or trail.findings[0].endswith(REFUSED[tool])


def test_a_refused_tool_inside_a_runif_branch_is_found_through_adb(
    server: object, model: FakeDevice, tmp_path: Path
) -> None:
    from trailblaze.replay.adb import connect  # noqa: PLC0415

    path = _trail(
        tmp_path,
        LAUNCH
        + "- runIf:\n    condition: {selector: {androidAccessibility: {textRegex: Taps}}}\n"
        + "    then:\n      - assertWithAi: {prompt: the cart is empty}",
    )
    device = connect(None, port=server.port, timeout=5)  # type: ignore[attr-defined]

    run = replay(ReplayRequest(trails=(path,)), device=device, options=FAST)

    (trail,) = run.trails
    assert trail.status == "refused"
    assert (
        "tool 'assertWithAi' cannot run on Android replay: it asks a language model"
        in (trail.findings[0])
    )
    assert model.commands == []


def test_an_unknown_maestro_command_refuses_the_trail(model: FakeDevice, tmp_path: Path) -> None:
    path = _trail(
        tmp_path,
        LAUNCH + "- mobile_maestro:\n    commands:\n      - tapOn: Forms\n      - travel: {}",
    )

    run = replay(ReplayRequest(trails=(path,)), device=ModelDevice(model, timeout=5), options=FAST)

    assert run.trails[0].status == "refused"
    assert (
        "mobile_maestro commands[1]: Maestro command 'travel' is not supported"
        in (run.trails[0].findings[0])
    )
    assert model.commands == []


def test_run_trail_replays_another_trail_in_the_same_context(
    device_factory: DeviceFactory, model: FakeDevice, tmp_path: Path
) -> None:
    _trail(tmp_path, FORMS + NAME + "- mobile_setClipboard: {text: Jane}", name="setup.trail.yaml")
    main = _trail(
        tmp_path,
        "- runTrail: {path: setup.trail.yaml}\n- mobile_pasteClipboard: {}\n"
        "- assertVisibleWithText: {text: Jane}",
    )

    run = replay(ReplayRequest(trails=(main,)), device=device_factory(), options=FAST)

    (trail,) = run.trails
    assert trail.status == "passed", trail
    ran = trail.steps[0].tools[0]
    assert ran.detail == "replayed 1 step(s), 4 call(s) of setup.trail.yaml"
    assert [c.position for c in ran.children][-1] == "runTrail(setup.trail.yaml) step 1[3]"
    assert model.field_value(PACKAGE, "name") == "Jane"
    # The paste after runTrail found the clipboard its setup set: one execution context.
    assert model.commands.count("am broadcast -a clipper.set --es text Jane") == 1
    assert model.commands.count("input text Jane") == 1


def test_run_trail_stops_a_cycle_while_it_runs(model: FakeDevice, tmp_path: Path) -> None:
    _trail(tmp_path, "- runTrail: {path: t.trail.yaml}", name="loop.trail.yaml")
    cycle = _trail(tmp_path, "- runTrail: {path: loop.trail.yaml}")

    run = replay(ReplayRequest(trails=(cycle,)), device=ModelDevice(model, timeout=5), options=FAST)

    failure = run.trails[0].steps[0].failure
    assert failure is not None
    assert (
        "runTrail: 't.trail.yaml' would replay itself (t.trail.yaml -> loop.trail.yaml -> "
        "t.trail.yaml)" in failure.error
    )
    assert model.commands == ["getprop ro.product.model"]  # its name, and nothing else


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("broken.trail.yaml", "runTrail: 'broken.trail.yaml' does not pass the parse gate: "),
        ("gone.trail.yaml", "runTrail: no trail file 'gone.trail.yaml' (looked for "),
        ("t.trail.yaml", "runTrail: 't.trail.yaml' would replay itself (t.trail.yaml -> "),
        ("nl.trail.yaml", "runTrail: 'nl.trail.yaml' has nothing to replay: no recording at all"),
        (
            "needs.trail.yaml",
            "runTrail: 'needs.trail.yaml' cannot start, its arguments do not bind: "
            "needs.trail.yaml:1:17: "
            "config.args.who: missing required argument who",
        ),
    ],
)
def test_a_run_trail_that_cannot_replay_refuses_its_caller_before_it_starts(
    model: FakeDevice, tmp_path: Path, target: str, message: str
) -> None:
    (tmp_path / "broken.trail.yaml").write_text("trail:\n  - stepp: x\n")
    (tmp_path / "nl.trail.yaml").write_text("trail:\n  - step: do it by hand\n")
    needs = "config: {args: {who: string}}\ntrail:\n  - step: x\n    recording:\n      android:\n"
    (tmp_path / "needs.trail.yaml").write_text(needs + "        - pressBack: {}\n")
    caller = _trail(tmp_path, LAUNCH + f"- runTrail: {{path: {target}}}")

    run = replay(
        ReplayRequest(trails=(caller,)), device=ModelDevice(model, timeout=5), options=FAST
    )

    (trail,) = run.trails
    assert trail.status == "refused"
    assert trail.findings[0].startswith(f"{caller}:6:11: trail[0].recording.android[1]: {message}")
    assert model.commands == []


def test_maestro_commands_translate_into_the_framework_tools(model: FakeDevice) -> None:
    recording = (
        "- mobile_maestro:\n    commands:\n"
        f"      - launchApp: {{appId: {PACKAGE}, clearState: true}}\n"
        "      - tapOn: {point: '50%,10%'}\n"
        "      - tapOn: Lists\n"
        "      - scrollUntilVisible: {element: Item 30, direction: DOWN}\n"
        "      - swipe: {direction: DOWN}\n"
        "      - swipe: {start: '50%, 80%', end: '50%, 20%', duration: 300}\n"
        "      - pressKey: Enter\n"
        "      - waitForAnimationToEnd: {timeout: 500}\n"
        "      - openLink: 'https://example.com/a b'\n"
        f"      - stopApp: {PACKAGE}\n"
    )

    outcome = runner(ModelDevice(model, timeout=5)).run_recording(calls(recording))

    assert outcome.passed, outcome.failure
    (tool,) = outcome.tools
    assert [c.tool for c in tool.children] == [
        "launchApp", "tapOnPoint", "tapOnElementBySelector", "scrollUntilTextIsVisible",
        "swipe", "swipeWithRelativeCoordinates", "pressKey", "wait", "openUrl", "stopApp",
    ]  # fmt: skip
    sent = model.commands
    wanted = (
        f"am force-stop {PACKAGE}",
        f"pm clear {PACKAGE}",
        f"monkey -p {PACKAGE} -c android.intent.category.LAUNCHER 1",
        "input tap 540 240",
        "input tap 540 2300",
        "input swipe 540 1680 540 720 600",
        "input swipe 540 480 540 2160 400",
        "input swipe 540 1920 540 480 300",
        "input keyevent 66",
        "am start -a android.intent.action.VIEW -d 'https://example.com/a b'",
        f"am force-stop {PACKAGE}",
    )
    assert _subsequence(sent, wanted), sent


def test_extended_wait_until_waits_for_an_element_to_show_and_to_go(
    device_factory: DeviceFactory, model: FakeDevice
) -> None:
    recording = (
        LAUNCH + "- mobile_maestro:\n    commands:\n"
        "      - tapOn: Forms\n"
        "      - extendedWaitUntil: {visible: {id: name_field}, timeout: 2000}\n"
        "      - extendedWaitUntil: {notVisible: Tap Me, timeout: '2000'}\n"
        "      - extendedWaitUntil:\n          visible: accept terms\n"
    )

    outcome = runner(device_factory()).run_recording(calls(recording))

    assert outcome.passed, outcome.failure
    children = outcome.tools[-1].children
    assert [(c.tool, c.position) for c in children[1:]] == [
        ("assertVisibleBySelector", "mobile_maestro.commands[1]"),
        ("assertNotVisibleBySelector", "mobile_maestro.commands[2]"),
        ("assertVisibleBySelector", "mobile_maestro.commands[3]"),
    ]
    assert children[1].detail == (
        f"visible: EditText 'Name' id={PACKAGE}:id/name_field [60,250][1020,390]"
    )


def test_extended_wait_until_fails_after_its_timeout_at_the_call(
    device_factory: DeviceFactory,
) -> None:
    recording = (
        LAUNCH + "- mobile_maestro:\n    commands:\n"
        "      - extendedWaitUntil: {visible: Nowhere, timeout: 400}\n"
        "      - back: {}\n"
    )
    started = time.monotonic()
    outcome = runner(device_factory()).run_recording(calls(recording))
    waited = time.monotonic() - started

    assert outcome.failure is not None
    assert (outcome.failure.location.line, outcome.failure.location.column) == (6, 11)
    assert outcome.failure.error.startswith(
        "mobile_maestro.commands[0] assertVisibleBySelector failed: no element matches "
        '{"androidMaestro":{"textRegex":"Nowhere"}} (waited 0.4s; the screen shows '
    ), outcome.failure.error
    assert 0.4 <= waited < 5
    assert [c.status for c in outcome.tools[-1].children] == ["failed", "skipped"]


def test_extended_wait_until_waits_17_seconds_without_a_timeout_as_maestro_does() -> None:
    from trailblaze.replay.tools.maestro import translate  # noqa: PLC0415

    (call,) = translate(cast(Any, None), [{"extendedWaitUntil": {"notVisible": {"id": "spinner"}}}])

    assert call == (
        "assertNotVisibleBySelector",
        {
            "nodeSelector": {"androidMaestro": {"resourceIdRegex": "(?:.+:id/)?(?:spinner)"}},
            "timeoutMs": 17000,
        },
    )


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("tapOn: {}", "commands[0].tapOn: needs 'text' or 'id' to find the element"),
        ("pressKey: Volume Up", "commands[0].pressKey: key 'Volume Up' is not one Android"),
        ("launchApp: {}", "commands[0].launchApp: needs the appId"),
        ("swipe: {start: '1,2', end: '50%,50%'}", "commands[0].swipe: start and end must both"),
        (
            "extendedWaitUntil: {timeout: 100}",
            "commands[0].extendedWaitUntil: needs one of 'visible' or 'notVisible'",
        ),
        (
            "extendedWaitUntil: {visible: A, notVisible: B}",
            "commands[0].extendedWaitUntil: needs one of 'visible' or 'notVisible' (for both, "
            "write two extendedWaitUntil commands)",
        ),
        (
            "extendedWaitUntil: {visible: A, timeout: soon}",
            "commands[0].extendedWaitUntil.timeout: expected milliseconds (a whole number >= 0), "
            "got 'soon'",
        ),
        (
            "extendedWaitUntil: {visible: A, optional: true}",
            "commands[0].extendedWaitUntil: option 'optional' is not supported by Android replay",
        ),
        ("extendedWaitUntil: {visible: {}}", "commands[0].extendedWaitUntil.visible: needs 'text'"),
    ],
)
def test_a_maestro_command_that_cannot_translate_fails_with_nothing_sent(
    model: FakeDevice, command: str, message: str
) -> None:
    recording = f"- mobile_maestro:\n    commands:\n      - {command}\n"

    outcome = runner(ModelDevice(model, timeout=5)).run_recording(calls(recording))

    assert outcome.failure is not None
    assert outcome.failure.error.startswith(message), outcome.failure.error
    assert model.commands == []


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (
            "assertVisible: {ref: y778, expectedText: Forms}",
            "its 'ref' (such as 'y778') is a content hash that Trailblaze's compact element "
            "listing computes over its own accessibility node tree, by rules the reference this "
            "replay follows does not give (its TrailblazeNode only says 'see the Kotlin doc for "
            "the hashing rules'), so no node of a uiautomator dump can be matched to it; checking "
            "'expectedText' on whichever element carries it would pass a trail without checking "
            "the element it recorded",
        ),
    ],
)
def test_the_model_free_refusal_says_what_the_reference_lacks(
    call: str, reason: str, model: FakeDevice, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = _trail(tmp_path, f"{LAUNCH}- {call}")

    run = replay(ReplayRequest(trails=(path,)), device=ModelDevice(model, timeout=5), options=FAST)

    tool = call.split(":", 1)[0]
    assert run.trails[0].findings == (
        f"t.trail.yaml:6:11: trail[0].recording.android[1]: tool '{tool}' cannot run on "
        f"Android replay: {reason}",
    )
    assert model.commands == []


def test_a_recorded_selector_no_dump_can_answer_refuses_the_trail_before_it_starts(
    model: FakeDevice, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real recording of the corpus: the sample app's bottom bar tab by its collection cell,
    # which the accessibility tree reports and a uiautomator dump does not.
    source = (
        Path(__file__).parent.parent / "data/corpus/head/examples/android-sample-app/trails"
        "/android-ondevice-accessibility/lists/scroll-and-navigate.trail.yaml"
    )
    path = tmp_path / "scroll-and-navigate.trail.yaml"
    path.write_text(source.read_text())
    monkeypatch.chdir(tmp_path)

    run = replay(ReplayRequest(trails=(path,)), device=ModelDevice(model, timeout=5), options=FAST)

    (trail,) = run.trails
    assert trail.status == "refused"
    assert trail.findings == (
        "scroll-and-navigate.trail.yaml:18:11: trail[0].recording.android-phone[0]: tool "
        "'tapOnElementBySelector' nodeSelector: field "
        "'androidAccessibility.collectionItemRowIndex' cannot be resolved from a uiautomator "
        "dump, which is what Android replay reads the screen from, so the element the "
        "recording names cannot be found",
    )
    assert model.commands == []
