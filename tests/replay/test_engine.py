"""The engine on ``ModelDevice`` (no sockets): the per-tool loop, the batch scope, dispatch.

Contracts from upstream's tests (replay.md §1.7): set-then-paste passes with the batch and fails
at the paste without it; attribution keeps the successful prefix; hooks fire before every tool
and after successful ones only; a cancelled run stops between tools; a lost device is fatal.
"""

from __future__ import annotations

import shlex
import threading
from pathlib import Path

import pytest

from fakeadb import FakeDevice, ModelDevice
from trailblaze.check.discover import load_manifests
from trailblaze.replay.arguments import Tokens
from trailblaze.replay.invocation import Hooks, ToolEvent
from trailblaze.replay.scope import KILL_SWITCH, active_scope
from trailblaze.replay.toolsource import ToolSource
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.toolmodel.resolution import Resolver
from trailblaze.workspace import find_workspace, scan

from .support import CLIPBOARD, FAST, OPEN_FORMS, PACKAGE, ROOT, calls, runner

ARGS = """
config:
  args:
    first: string
  memory:
    last: Doe
"""
EMPTY_CLIPBOARD = (
    "device clipboard is empty: no mobile_setClipboard ran before it in this execution context "
    "(batched execution is off (TRAILBLAZE_DISABLE_BATCHED_TOOL_EXECUTION), so every tool has "
    "its own context)"
)


@pytest.fixture
def device(model: FakeDevice) -> ModelDevice:
    return ModelDevice(model, timeout=5)


# -- the batch scope ---------------------------------------------------------------------------


def test_set_then_paste_in_one_recording_shares_one_context(
    device: ModelDevice, model: FakeDevice
) -> None:
    outcome = runner(device).run_recording(calls(CLIPBOARD))

    assert outcome.passed
    assert model.field_value(PACKAGE, "name") == "Jane Doe"
    assert shlex.join(["am", "broadcast", "-a", "clipper.set", "--es", "text", "Jane Doe"]) in (
        model.commands
    )
    assert "input text Jane%sDoe" in model.commands
    assert len({tool.trace_id for tool in outcome.tools}) == 1


@pytest.mark.parametrize("value", ["1", "true", "TRUE", " True ", "yes", "On"])
def test_kill_switch_fails_at_the_paste_with_the_successful_prefix(
    device: ModelDevice, model: FakeDevice, value: str
) -> None:
    outcome = runner(device, env={KILL_SWITCH: value}).run_recording(calls(CLIPBOARD))

    failure = outcome.failure
    assert failure is not None
    assert failure.failed_tool == "mobile_pasteClipboard"
    assert failure.successful == (
        "launchApp",
        "tapOnElementBySelector",
        "mobile_setClipboard",
        "tapOnElementBySelector",
    )
    assert failure.error == EMPTY_CLIPBOARD
    assert failure.kind == "error"
    assert (failure.location.line, failure.location.column) == (20, 11)
    assert len({tool.trace_id for tool in outcome.tools}) == 5  # a fresh context per tool
    assert model.field_value(PACKAGE, "name") == ""


@pytest.mark.parametrize("value", ["0", "no", "", "false", "Off"])
def test_the_kill_switch_off_keeps_batching(device: ModelDevice, value: str) -> None:
    assert runner(device, env={KILL_SWITCH: value}).run_recording(calls(CLIPBOARD)).passed


def test_the_legacy_tools_block_is_one_batch_even_with_the_kill_switch(device: ModelDevice) -> None:
    engine = runner(device, env={KILL_SWITCH: "1"})
    assert engine.run_recording(calls(CLIPBOARD), single_batch=True).passed


@pytest.mark.parametrize("env", [{}, {KILL_SWITCH: "1"}])
def test_the_clipboard_does_not_outlive_the_step_recording(
    device: ModelDevice, env: dict[str, str]
) -> None:
    engine = runner(device, env=env)
    assert engine.run_recording(calls(OPEN_FORMS + "- mobile_setClipboard: {text: Jane}")).passed

    outcome = engine.run_recording(calls("- mobile_pasteClipboard: {}"))

    assert outcome.failure is not None
    assert outcome.failure.error.startswith("device clipboard is empty")


def test_the_scope_is_active_during_the_recording_and_closed_after(device: ModelDevice) -> None:
    seen: list[bool] = []
    hooks = Hooks(before=lambda event: seen.append(active_scope() is not None))

    runner(device, hooks=hooks).run_recording(calls(OPEN_FORMS))

    assert seen == [True, True]
    assert active_scope() is None


# -- the per-tool loop -------------------------------------------------------------------------


def test_a_failure_keeps_the_prefix_and_skips_the_rest(device: ModelDevice) -> None:
    outcome = runner(device).run_recording(
        calls(OPEN_FORMS + "- assertVisibleWithText: {text: Nope}\n- tapOnPoint: {x: 1, y: 1}")
    )

    failure = outcome.failure
    assert failure is not None
    assert failure.successful == ("launchApp", "tapOnElementBySelector")
    assert failure.failed_tool == "assertVisibleWithText"
    assert failure.kind == "expected"
    assert failure.error == (
        "text 'Nope' is not visible (waited 0.3s; the screen shows 'Name', 'Email', "
        "'Accept Terms', 'Submit', 'Clear All', 'Taps', 'Forms', 'Lists')"
    )
    assert [(t.tool, t.status) for t in outcome.tools] == [
        ("launchApp", "passed"),
        ("tapOnElementBySelector", "passed"),
        ("assertVisibleWithText", "failed"),
        ("tapOnPoint", "skipped"),
    ]
    assert outcome.tools[3].detail == "not run: assertVisibleWithText failed"


def test_hooks_fire_before_every_tool_and_after_successful_ones(device: ModelDevice) -> None:
    order: list[str] = []
    hooks = Hooks(
        before=lambda e: order.append(f"before {e.tool}"),
        after=lambda e: order.append(f"after {e.tool} {e.result.status if e.result else None}"),
    )

    runner(device, hooks=hooks).run_recording(
        calls(OPEN_FORMS + "- assertVisibleWithText: {text: Nope}\n- pressBack: {}")
    )

    assert order == [
        "before launchApp",
        "after launchApp passed",
        "before tapOnElementBySelector",
        "after tapOnElementBySelector passed",
        "before assertVisibleWithText",
    ]


def test_a_hook_that_raises_is_reported_and_replay_goes_on(device: ModelDevice) -> None:
    def broken(event: ToolEvent) -> None:
        raise RuntimeError(f"snapshot store full at {event.tool}")

    outcome = runner(device, hooks=Hooks(before=broken, after=broken)).run_recording(
        calls(OPEN_FORMS)
    )

    assert outcome.passed
    assert outcome.tools[0].hook_errors == (
        "before-hook: RuntimeError: snapshot store full at launchApp",
        "after-hook: RuntimeError: snapshot store full at launchApp",
    )


def test_cancellation_stops_between_tools(device: ModelDevice, model: FakeDevice) -> None:
    cancel = threading.Event()
    hooks = Hooks(after=lambda event: cancel.set())

    outcome = runner(device, hooks=hooks, cancel=cancel).run_recording(
        calls(OPEN_FORMS + "- tapOnPoint: {x: 10, y: 10}")
    )

    assert outcome.cancelled
    assert outcome.failure is None
    assert [(t.tool, t.status, t.detail) for t in outcome.tools] == [
        ("launchApp", "passed", f"launched {PACKAGE} (RESUME)"),
        ("tapOnElementBySelector", "cancelled", "cancelled before it started"),
        ("tapOnPoint", "cancelled", "cancelled before it started"),
    ]
    assert not [c for c in model.commands if c.startswith("input tap")]


def test_cancellation_interrupts_a_waiting_tool(device: ModelDevice) -> None:
    cancel = threading.Event()
    slow = FAST.__class__(find_timeout=60, poll_interval=0.02, settle=0)
    timer = threading.Timer(0.2, cancel.set)
    timer.start()
    try:
        outcome = runner(device, cancel=cancel, options=slow).run_recording(
            calls("- assertVisibleWithText: {text: Never shows}")
        )
    finally:
        timer.cancel()

    assert outcome.cancelled
    assert (outcome.tools[0].status, outcome.tools[0].detail) == (
        "cancelled",
        "cancelled while it ran",
    )


def test_a_device_lost_mid_recording_is_fatal(device: ModelDevice, model: FakeDevice) -> None:
    model.faults.disconnect_after = 3
    engine = runner(device)

    outcome = engine.run_recording(calls(OPEN_FORMS + "- pressBack: {}\n- pressBack: {}"))

    assert outcome.failure is not None
    assert outcome.failure.kind == "fatal"
    assert outcome.failure.successful == ("launchApp",)
    assert outcome.failure.error == "device lost: emulator-5554: connection to the device was lost"
    assert [t.status for t in outcome.tools] == ["passed", "failed", "skipped", "skipped"]


# -- dispatch: parse, don't cast ---------------------------------------------------------------


def test_arguments_that_do_not_parse_fail_with_the_schema_message(device: ModelDevice) -> None:
    outcome = runner(device).run_recording(calls('- eraseText:\n    charactersToErase: "nine"'))

    assert outcome.failure is not None
    assert outcome.failure.error == (
        "invalid arguments for 'eraseText': t.trail.yaml:6:32: charactersToErase: expected an "
        "integer, found the quoted string 'nine'"
    )
    assert outcome.failure.kind == "error"


def test_unknown_and_missing_arguments_are_named(device: ModelDevice) -> None:
    outcome = runner(device).run_recording(calls("- inputText:\n    txt: hi"))

    assert outcome.failure is not None
    assert outcome.failure.error == (
        "invalid arguments for 'inputText': t.trail.yaml:5:11: missing required key 'text' in "
        "'inputText'; t.trail.yaml:6:13: unknown key 'txt' (did you mean 'text'?)"
    )


def test_enum_values_replay_in_any_case(device: ModelDevice, model: FakeDevice) -> None:
    # The reference decodes enums case-insensitively (its change #203): so does replay.
    outcome = runner(device).run_recording(
        calls(
            f"- launchApp: {{appId: {PACKAGE}, launchMode: force_restart}}\n- swipe: {{direction: up}}"
        )
    )

    assert outcome.passed, outcome.failure
    assert outcome.tools[0].detail == f"launched {PACKAGE} (FORCE_RESTART)"
    assert any(c.startswith("input swipe ") for c in model.commands)


def test_enum_values_from_tokens_replay_in_any_case(device: ModelDevice) -> None:
    recording = f"- launchApp: {{appId: {PACKAGE}, launchMode: '{{{{args.mode}}}}'}}"
    tokens = Tokens({"mode": "Resume"}, frozenset({"mode"}))
    outcome = runner(device, tokens=tokens).run_recording(
        calls(recording, config="config:\n  args:\n    mode: string\n")
    )

    assert outcome.passed, outcome.failure
    assert outcome.tools[0].detail == f"launched {PACKAGE} (RESUME)"


def test_a_quoted_number_for_a_number_argument_is_converted(device: ModelDevice) -> None:
    # The check gives a `quoted-number` warning for it; the recording still replays.
    outcome = runner(device).run_recording(calls("- wait: {timeToWaitInSeconds: '0'}"))

    assert outcome.passed, outcome.failure


def test_a_number_the_runtime_would_not_convert_stays_a_string(device: ModelDevice) -> None:
    outcome = runner(device).run_recording(calls("- eraseText: {charactersToErase: '007'}"))

    assert outcome.failure is not None
    assert "expected an integer, found the quoted string '007'" in outcome.failure.error


def test_schema_defaults_are_applied(device: ModelDevice, model: FakeDevice) -> None:
    model.apps[PACKAGE].values["name"] = "old"
    # launchApp's launchMode defaults to REINSTALL: stop, clear data, launch.
    outcome = runner(device).run_recording(calls(f"- launchApp: {{appId: {PACKAGE}}}"))

    assert outcome.passed
    assert outcome.tools[0].detail == f"launched {PACKAGE} (REINSTALL)"
    assert f"pm clear {PACKAGE}" in model.commands
    assert model.field_value(PACKAGE, "name") == ""


def test_tokens_are_substituted_before_parsing(device: ModelDevice, model: FakeDevice) -> None:
    tokens = Tokens({"first": "Jane"}, frozenset({"first"}), {"last": "Doe"})
    recording = (
        OPEN_FORMS
        + """
- tapOnElementBySelector: {nodeSelector: {androidAccessibility: {hintTextRegex: Name}}}
- inputText:
    text: "{{args.first}} ${args.first} {{memory.last}} {{last}} {{unknown}}"
"""
    )
    outcome = runner(device, tokens=tokens).run_recording(calls(recording, config=ARGS))

    assert outcome.passed
    assert model.field_value(PACKAGE, "name") == "Jane Jane Doe Doe {{unknown}}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{{args.first}}",
            "unresolved token '{{args.first}}': argument 'first' has no value and no default in "
            "config.args; pass --arg first=VALUE",
        ),
        (
            "${args.nope}",
            "unresolved token '${args.nope}': argument 'nope' is not declared in config.args",
        ),
        (
            "{{memory.who}}",
            "unresolved token '{{memory.who}}': memory value 'who' is not set (config.memory "
            "sets last)",
        ),
    ],
)
def test_an_unresolved_token_fails_the_tool(device: ModelDevice, text: str, message: str) -> None:
    tokens = Tokens({}, frozenset({"first"}), {"last": "Doe"})
    # The parse gate already reports undeclared arguments; the engine must not trust that.
    recording = calls(f'- inputText: {{text: "{text}"}}', config=ARGS, check=False)
    outcome = runner(device, tokens=tokens).run_recording(recording)

    assert outcome.failure is not None
    assert outcome.failure.error == message
    assert outcome.failure.failed_tool == "inputText"


def test_an_unsupported_tool_fails_the_step(device: ModelDevice, model: FakeDevice) -> None:
    outcome = runner(device).run_recording(calls("- web_click: {ref: buy}"))

    assert outcome.failure is not None
    assert outcome.failure.error == (
        "tool 'web_click' is not supported by this device (Android replay does not implement it)"
    )
    assert model.commands == []


def test_an_unknown_tool_is_not_supported_either(device: ModelDevice) -> None:
    outcome = runner(device).run_recording(calls("- assertVisibleWithTxt: {text: Hi}"))

    assert outcome.failure is not None
    assert outcome.failure.error == (
        "tool 'assertVisibleWithTxt' is not supported by this device: no tool of that name in "
        "the framework (did you mean 'assertVisibleWithText'?)"
    )


def test_an_ambiguous_selector_is_a_tool_error(device: ModelDevice, model: FakeDevice) -> None:
    recording = f"""
- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}
- tapOnElementBySelector: {{nodeSelector: {{containsChild: {{androidAccessibility: {{textRegex: Catalog}}}}}}}}
- tapOnElementBySelector:
    nodeSelector:
      androidAccessibility:
        textRegex: "Coffee.*"
"""
    outcome = runner(device).run_recording(calls(recording))

    assert outcome.failure is not None
    assert outcome.failure.kind == "error"
    assert outcome.failure.error == (
        "3 elements match and 0 of them are clickable: TextView 'Coffee' [0,200][1080,360]; "
        "TextView 'Coffee Latte' [0,360][1080,520]; TextView 'Coffee Americano' [0,520][1080,680]"
    )
    assert model.current_screen == f"{PACKAGE}/catalog"


def test_a_selector_field_the_dump_cannot_answer_is_an_error(device: ModelDevice) -> None:
    outcome = runner(device).run_recording(
        calls(
            "- tapOnElementBySelector: {nodeSelector: {androidAccessibility: {collectionItemRowIndex: 2}}}"
        )
    )

    assert outcome.failure is not None
    assert outcome.failure.error == (
        "field 'androidAccessibility.collectionItemRowIndex' cannot be resolved from a "
        "uiautomator dump"
    )


# -- composed YAML tools -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def notes_tools() -> ToolSource:
    ws = find_workspace(ROOT, explicit=True)
    manifests = load_manifests(ws, scan(ws))
    resolver = Resolver(manifests.with_dirs(), ws.root, load_catalog())
    return ToolSource(load_catalog(), resolver.resolve("notes"))


@pytest.mark.parametrize(
    ("args", "expected"), [("{characters: 2}", "Ja"), ("{}", "")], ids=["count", "absent"]
)
def test_a_composed_tool_fills_its_parameters_and_drops_absent_ones(
    device: ModelDevice, model: FakeDevice, notes_tools: ToolSource, args: str, expected: str
) -> None:
    recording = (
        OPEN_FORMS
        + f"""
- tapOnElementBySelector: {{nodeSelector: {{androidAccessibility: {{hintTextRegex: Name}}}}}}
- inputText: {{text: Jane, hideKeyboardAfter: false}}
- notes_clearSearch: {args}
"""
    )
    outcome = runner(device, tools=notes_tools).run_recording(calls(recording))

    assert outcome.passed, outcome.failure
    composed = outcome.tools[-1]
    assert [(c.position, c.status) for c in composed.children] == [
        ("notes_clearSearch.tools[0]", "passed"),
        ("notes_clearSearch.tools[1]", "passed"),
    ]
    assert model.field_value(PACKAGE, "name") == expected
    assert not model.keyboard_shown


def test_a_failing_call_inside_a_composed_tool_fails_it(
    device: ModelDevice, notes_tools: ToolSource
) -> None:
    outcome = runner(device, tools=notes_tools).run_recording(calls("- notes_clearSearch: {}"))

    assert outcome.failure is not None
    assert outcome.failure.failed_tool == "notes_clearSearch"
    assert outcome.failure.error == (
        "notes_clearSearch.tools[0] eraseText failed: no field has the focus, so there is "
        "nothing to erase (tap the field first)"
    )
    assert [c.status for c in outcome.tools[0].children] == ["failed", "skipped"]


def test_a_scripted_tool_needs_the_runs_script_host(
    device: ModelDevice, notes_tools: ToolSource
) -> None:
    # Scripted tools run under Node (test_scripted.py); a bare ToolSource has no host for them.
    outcome = runner(device, tools=notes_tools).run_recording(
        calls("- notes_openNote: {title: Packing list}")
    )

    assert outcome.failure is not None
    assert outcome.failure.error == (
        "scripted tool 'notes_openNote' could not run: replay has no workspace to run it from"
    )


def test_a_class_tool_runs_the_framework_tool_it_registers(
    device: ModelDevice, model: FakeDevice, tmp_path: Path
) -> None:
    # A workspace *.tool.yaml may register a framework class under an id of its own.
    (tmp_path / "trailmaps/app/tools").mkdir(parents=True)
    (tmp_path / "trailmaps/app/trailmap.yaml").write_text("id: app\ntarget: {display_name: App}\n")
    (tmp_path / "trailmaps/app/tools/app_tap.tool.yaml").write_text(
        "id: app_tap\nclass: xyz.block.trailblaze.toolcalls.commands.TapOnElementWithTextTrailblazeTool\n"
    )
    ws = find_workspace(tmp_path, explicit=True)
    resolver = Resolver(load_manifests(ws, scan(ws)).with_dirs(), ws.root, load_catalog())
    tools = ToolSource(load_catalog(), resolver.resolve("app"))
    recording = (
        f"- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}\n"
        "- app_tap: {text: Forms}\n"
        "- assertVisibleBySelector: {nodeSelector: {androidAccessibility: {hintTextRegex: Name}}}\n"
    )
    outcome = runner(device, tools=tools).run_recording(calls(recording))
    assert outcome.passed, outcome.failure
    assert [(t.tool, t.status) for t in outcome.tools] == [
        ("launchApp", "passed"),
        ("app_tap", "passed"),
        ("assertVisibleBySelector", "passed"),
    ]
