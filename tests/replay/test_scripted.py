"""Scripted tools at replay: modules compiled by the pinned tsc, run under Node with our runtime.

The engine runs on ``ModelDevice`` (no sockets) against a workspace written here, so each test
shows one behaviour a trail author sees: what the tool's ``ctx`` holds, where its nested calls
run, and how each way of failing is reported (a throw is the tool's failure; a module that cannot
run is "could not run", which a ``runIf`` condition never reads as false).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakeadb import FakeDevice, ModelDevice
from tests.conftest import write_tree
from trailblaze.check.discover import load_manifests
from trailblaze.replay.arguments import Tokens
from trailblaze.replay.scope import KILL_SWITCH
from trailblaze.replay.scripted import ScriptHost
from trailblaze.replay.scripted.host import BLANK_UNKNOWN_TOKENS_ENV
from trailblaze.replay.structured import structured_value
from trailblaze.replay.toolsource import ToolSource
from trailblaze.toolchain.compilers import Compiler
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.toolmodel.resolution import Resolver
from trailblaze.workspace import find_workspace, scan

from .support import PACKAGE, SAMPLE_APP, calls, runner

MANIFEST = f"""\
id: app
target:
  display_name: Sample App
  platforms:
    android:
      app_ids: [com.example.not.installed, {PACKAGE}]
  tools: [app_undefined, app_hello, app_refuse, app_zod, app_client]
"""
HEADER = 'import { trailblaze } from "@trailblaze/scripting";\n'
TOOLS = {
    "app_open.ts": HEADER
    + """
export interface AppOpenInput {
  tab: string;
}

/** Open the installed sample app on a tab. */
export const app_open = trailblaze.tool<AppOpenInput, string>(
  { description: "Open the installed sample app on a tab." },
  async (input, ctx) => {
    const appId = ctx.target?.resolveAppId({ defaultAppId: "com.example.fallback" });
    if (!appId) throw new Error("no app id");
    ctx.logger.info("launching", { appId, device: ctx.device?.instanceId });
    await ctx.tools.launchApp({ appId, launchMode: "RESUME" });
    await ctx.tools.tapOnElementWithText({ text: input.tab });
    ctx.memory.set("opened", `${appId} on ${ctx.device?.widthPixels}x${ctx.device?.heightPixels}`);
    return `opened ${input.tab}`;
  },
);
""",
    "app_type.ts": HEADER
    + """import { fieldSelector } from "./selectors";

/** Type into the Name field. */
export const app_type = trailblaze.tool<{ text: string }, { typed: number }>(async (input, ctx) => {
  await ctx.tools.tapOnElementBySelector({ nodeSelector: fieldSelector("Name") });
  await ctx.tools.inputText({ text: input.text, hideKeyboardAfter: false });
  return { typed: input.text.length };
});
""",
    "selectors.ts": """\
import { selectors } from "@trailblaze/scripting";

export function fieldSelector(hint: string) {
  return selectors.androidAccessibility({ hintTextRegex: hint });
}
""",
    "app_memory.ts": HEADER
    + """
export const app_memory = trailblaze.tool(async (_input, ctx) => {
  const last = ctx.memory.get("last");
  ctx.memory.set("greeting", ctx.memory.interpolate("Hello {{first}} ${memory.last}"));
  ctx.memory.delete("stale");
  return `last=${last} keys=${[...ctx.memory.keys()].sort().join(",")}`;
});
""",
    "app_copy.ts": HEADER
    + """
export const app_copy = trailblaze.tool<{ text: string }, string>(async (input, ctx) => {
  await ctx.tools.mobile_setClipboard({ text: input.text });
  return "copied";
});

export const app_paste = trailblaze.tool(async (_input, ctx) => {
  await ctx.tools.mobile_pasteClipboard({});
  return "pasted";
});
""",
    "app_fail.ts": HEADER
    + """
export const app_fail = trailblaze.tool(async (_input, ctx) => {
  ctx.memory.set("never", "written");
  throw new Error("the promo is not showing");
});
""",
    "app_catch.ts": HEADER
    + """
export const app_catch = trailblaze.tool(async (_input, ctx) => {
  try {
    await ctx.tools.assertVisibleWithText({ text: "Not on this screen" });
    return "visible";
  } catch (e) {
    return `recovered: ${(e as Error).message.split(" (")[0]}`;
  }
});
""",
    "app_compose.ts": HEADER
    + """
export const app_compose = trailblaze.tool(async (_input, ctx) => {
  const apps = await ctx.tools.mobile_listInstalledApps({});
  const typed = await (ctx.tools as any).app_type({ text: "Bo" });
  return { sample: apps.appIds.includes("PACKAGE"), typed: typed.typed };
});
""".replace("PACKAGE", PACKAGE),
    "app_strict.ts": HEADER
    + """
export const app_strict = trailblaze.tool(async (_input, ctx) => {
  await ctx.tools.assertVisibleWithText({ text: "Not on this screen" });
  return "visible";
});
""",
    "app_nested_typo.ts": HEADER
    + """
export const app_nested_typo = trailblaze.tool(async (_input, ctx) => {
  await (ctx.tools as any).tapOnElementWithTxt({ text: "Forms" });
  return "tapped";
});
""",
    "app_ios.ts": HEADER
    + """
export const app_ios = trailblaze.tool({ supportedPlatforms: ["ios"] }, async () => "on iOS");
""",
    "app_crash.ts": HEADER
    + """
export const app_crash = trailblaze.tool(async () => {
  console.error("about to exit");
  process.exit(3);
});
""",
    "app_hang.ts": HEADER
    + """
export const app_hang = trailblaze.tool(() => new Promise<string>(() => setInterval(() => {}, 1000)));
""",
    "app_syntax.ts": HEADER
    + """
export const app_syntax = trailblaze.tool(async () => {
  return (;
});
""",
    "app_load.ts": HEADER
    + """
throw new Error("broken at load");
export const app_load = trailblaze.tool(async () => "never");
""",
    "app_count.ts": HEADER
    + """import { bump } from "./counter";

let calls = 0;

/** Counts its calls: module state, a global it adds and the environment it changes. */
export const app_count = trailblaze.tool(async () => {
  calls += 1;
  const g = globalThis as any;
  g.appCountLeak = (g.appCountLeak ?? 0) + 1;
  const env = process.env.APP_COUNT_ENV ?? "unset";
  process.env.APP_COUNT_ENV = String(calls);
  const cwd = process.cwd() === "/" ? "moved" : "kept";
  process.chdir("/");
  return `calls=${calls} helper=${bump()} global=${g.appCountLeak} env=${env} cwd=${cwd}`;
});
""",
    "counter.ts": """\
let count = 0;

export function bump(): number {
  count += 1;
  return count;
}
""",
    "app_typed_schema.ts": HEADER
    + """
export const app_typed_schema = trailblaze.tool<{ text: string; times?: number }, string>(
  {
    inputSchema: {
      type: "object",
      properties: { text: { type: "string" }, times: { type: "integer", default: 2 } },
      required: ["text"],
      additionalProperties: false,
    },
  },
  async (input) => `${input.text} x${input.times}`,
);
""",
    "app_zod.js": """\
import { trailblaze, z } from "@trailblaze/scripting";

trailblaze.tool(
  "app_zod",
  {
    description: "Greets someone, loudly when asked.",
    inputSchema: {
      who: z.string().min(2).refine((who) => who !== "Nobody", "Nobody is no one to greet"),
      loud: z.boolean().default(false),
    },
  },
  async (args) => ({ content: [{ type: "text", text: args.loud ? `HI ${args.who}` : `hi ${args.who}` }] }),
);

trailblaze.tool("app_client", {}, async (_args, ctx, client) => {
  const envelope = await client.callTool("assertVisibleWithText", { text: "Forms" });
  ctx.logger.warn("checked", { visible: envelope.success });
  return {
    content: [{ type: "text", text: "ok" }],
    structuredContent: {
      envelope: Object.keys(envelope).sort(),
      success: envelope.success,
      session: ctx.sessionId.startsWith("replay-"),
      invocation: ctx.invocationId.startsWith(ctx.sessionId),
      device: [ctx.device.platform, ctx.device.driverType],
      target: [ctx.target.id, ctx.target.resolveAppId(), ctx.target.resolveBaseUrl({ defaultBaseUrl: " u " })],
      memory: ctx.memory.keys(),
    },
  };
});
""",
    "app_client.yaml": "name: app_client\nscript: app_zod.js\n",
    "app_zod.yaml": """\
name: app_zod
script: app_zod.js
inputSchema:
  who: {type: string}
  loud: {type: boolean, required: false}
""",
    "app_sdk.ts": """\
import * as sdk from "@trailblaze/scripting";
import {
  ConditionalActionFailedError, fromMeta, run, selectors, tool, trailblaze, z,
} from "@trailblaze/scripting";
import * as slim from "@trailblaze/scripting/in-process";
import * as full from "@trailblaze/scripting/sub-process";

/** Every runtime export of the SDK, as a tool sees it at replay. */
export const app_sdk = trailblaze.tool(async (_input, ctx) => {
  const meta = fromMeta({
    trailblaze: {
      sessionId: "s", invocationId: "i", memory: { k: "v" },
      device: { platform: "android", widthPixels: 1, heightPixels: 2, driverType: "d" },
    },
  });
  const failed = new ConditionalActionFailedError("entry", "went wrong", "cause");
  const slimRun = await slim.run().catch((e: Error) => e.message.split(";")[0]);
  let slimImperative = "";
  try {
    (slim.tool as any)("x", {}, async () => "");
  } catch (e) {
    slimImperative = (e as Error).message.split(";")[0];
  }
  let blank = "";
  try {
    (ctx.tools as any)[" "];
  } catch (e) {
    blank = (e as Error).message;
  }
  const envelope = await (ctx.tools as any).assertVisibleWithText({ text: "Forms" });
  return {
    exports: Object.keys(sdk).filter((k) => k !== "default" && !k.startsWith("__")).sort(),
    run: (await run()) ?? null,
    typed: typeof tool(async () => "x"),
    selector: selectors.androidAccessibility({ textRegex: "Forms" }),
    zod: z.object({ a: z.number() }).safeParse({ a: "1" }).success,
    meta: [meta?.device.heightPixels, meta?.memory.get("k"), fromMeta({}) ?? null],
    error: [failed.name, failed.conditionalActionId, failed.message, failed.cause, failed instanceof Error],
    profiles: [full.trailblaze === trailblaze, typeof slim.trailblaze.tool, slimRun, slimImperative],
    awaitingTools: (await (ctx.tools as any)) === ctx.tools,
    blank,
    called: typeof envelope,
  };
});
""",
    "app_conditional.ts": HEADER.replace(
        "{ trailblaze }", "{ captureViewHierarchy, runConditionalActions, selectors, trailblaze }"
    )
    + """
const forms = selectors.androidAccessibility({ textRegex: "Forms" });
const nameField = selectors.androidAccessibility({ hintTextRegex: "Name" });
const promo = selectors.androidAccessibility({ textRegex: "Not on this screen" });

/** Opens the Forms tab when it shows, through the SDK's conditional actions. */
export const app_conditional = trailblaze.tool<{ broken?: boolean }, unknown>(async (input, ctx) => {
  const snap = await captureViewHierarchy(ctx, [forms, nameField, promo]);
  const first = snap.find(forms);
  const outcome = await runConditionalActions(
    ctx,
    [
      {
        id: "dismiss-promo",
        description: "Close the promo",
        condition: (s) => s.visible(promo),
        action: async () => {
          throw new Error("there is no promo");
        },
      },
      {
        id: "open-forms",
        description: "Open the Forms tab",
        condition: (s) => s.visible(forms),
        action: async () => {
          await ctx.tools.tapOnElementWithText({ text: "Forms" });
        },
        postcondition: (s) => !input.broken && s.visible(nameField),
      },
    ],
    snap,
  );
  return { ...outcome, text: first?.matchedText, found: snap.findAll(promo).length };
});
""",
    "app_wait.ts": HEADER
    + """
const promo = { androidAccessibility: { textRegex: "Not on this screen" } };
const forms = { androidAccessibility: { textRegex: "Forms" } };

export const app_wait = trailblaze.tool(async (_input, ctx) => ({
  gone: await ctx.tools.waitUntilNotVisible({ nodeSelector: promo, timeoutMs: 0 }),
  still: await ctx.tools.waitUntilNotVisible({ nodeSelector: forms, timeoutMs: 50 }),
  waited: await ctx.tools.findMatches({ selector: promo, timeoutMs: 50 }),
}));
""",
    "app_shell.ts": HEADER
    + """
/** Ask the device and the host through the SDK's command tools. */
export const app_shell = trailblaze.tool<{ text: string }>(async (input, ctx) => {
  const echoed = await ctx.tools.android_adbShell({ command: ["echo", input.text] });
  const host = await ctx.tools.exec({ argv: ["echo", "from", "the", "host"] });
  let failed = "";
  try {
    await ctx.tools.android_adbShell({ command: ["cat", "/nope"] });
  } catch (e) {
    failed = (e as Error).message;
  }
  return JSON.stringify({ echoed, host, failed });
});
""",
    "app_testing.ts": HEADER
    + """import { createMockClient, createMockContext } from "@trailblaze/scripting/testing";

const inner = trailblaze.tool<{ text: string }>(async (input, ctx) => {
  await ctx.tools.tapOnElementWithText({ text: input.text });
  const apps = await ctx.tools.mobile_listInstalledApps({});
  const code = await ctx.tools.web_evaluate(() => 1 + 1);
  return `${apps.appIds.join("+")} ${String(code)} ${ctx.memory.get("user")} ${ctx.device?.driverType}`;
});

/** A tool that unit-tests another with the testing helpers: nothing reaches the device. */
export const app_testing = trailblaze.tool(async () => {
  const client = createMockClient();
  client.stub("mobile_listInstalledApps", { textContent: "", structuredContent: { appIds: ["a", "b"] } });
  // Plain data for the target (no helpers): the runtime adds them.
  const target = { id: "t" } as never;
  const ctx = createMockContext({ platform: "web", memory: { user: "ann" }, target });
  const result = await inner({ text: "Forms" }, ctx, client);
  const calls = client.calls.map((c) => [c.tool, c.args]);
  client.stub("tapOnElementWithText", { textContent: "", errorMessage: "Text not found" });
  const thrown = await inner({ text: "X" }, createMockContext({ platform: "android" }), client).catch(
    (e: Error) => e.message,
  );
  const count = client.calls.length;
  client.reset();
  return JSON.stringify({
    result, calls, thrown, count, after: client.calls.length,
    target: ctx.target?.resolveAppId({ defaultAppId: "d" }), session: ctx.sessionId,
  });
});
""",
    "app_hello.yaml": """\
name: app_hello
description: Say hello through the imperative form.
script: app_hello.js
inputSchema:
  who:
    type: string
""",
    "app_hello.js": """\
import { trailblaze, z } from "@trailblaze/scripting";

const input = { who: z.string().describe("Who to greet.") };

trailblaze.tool("app_hello", { description: "Say hello.", inputSchema: input }, async (args, ctx, client) => {
  const tapped = await client.tools.tapOnElementWithText({ text: "Forms" });
  return { content: [{ type: "text", text: `hello ${args.who} (${ctx.target.id}): ${tapped.split(" ")[0]}` }] };
});

trailblaze.tool("app_refuse", {}, async () => ({ isError: true, content: [{ type: "text", text: "refused" }] }));

await trailblaze.run();
""",
    "app_refuse.yaml": "name: app_refuse\nscript: app_hello.js\n",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scripted")
    files: dict[str, str | bytes] = {"trailmaps/app/trailmap.yaml": MANIFEST}
    files.update({f"trailmaps/app/tools/{name}": text for name, text in TOOLS.items()})
    return write_tree(root, files)


def open_host(workspace: Path, scratch: Path, timeout: float) -> Iterator[ScriptHost]:
    scripts = ScriptHost(workspace, scratch, timeout=timeout)
    yield scripts
    scripts.close()
    assert not scratch.exists() or list(scratch.iterdir()) == []  # nothing left behind


@pytest.fixture(scope="module")
def host(
    workspace: Path, tsc: Compiler, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ScriptHost]:
    """One host for the module: each tool module is compiled once, as in one replay run."""
    yield from open_host(workspace, tmp_path_factory.mktemp("scratch"), 30.0)


def tool_source(workspace: Path, host: ScriptHost) -> ToolSource:
    ws = find_workspace(workspace, explicit=True)
    manifests = load_manifests(ws, scan(ws))
    catalog = load_catalog()
    resolution = Resolver(manifests.with_dirs(), ws.root, catalog).resolve("app")
    return ToolSource(catalog, resolution, host.for_trailmap(manifests.trailmaps["app"]))


@pytest.fixture
def tools(workspace: Path, host: ScriptHost) -> ToolSource:
    return tool_source(workspace, host)


@pytest.fixture
def device(model: FakeDevice) -> ModelDevice:
    return ModelDevice(model, timeout=5)


def test_a_typed_tool_gets_target_device_memory_and_runs_its_calls_in_the_batch(
    device: ModelDevice, model: FakeDevice, tools: ToolSource
) -> None:
    run = runner(device, tools=tools)
    outcome = run.run_recording(calls("- app_open: {tab: Forms}\n- app_type: {text: Ada}"))

    assert outcome.passed, outcome.failure
    opened, typed = outcome.tools
    assert (opened.detail, typed.detail) == ("opened Forms", '{"typed":3}')
    # ctx.target picked the app id that is installed, not the first one declared.
    assert [(c.position, c.tool, c.status) for c in opened.children] == [
        ("app_open.calls[0]", "launchApp", "passed"),
        ("app_open.calls[1]", "tapOnElementWithText", "passed"),
    ]
    assert opened.children[0].detail == f"launched {PACKAGE} (RESUME)"
    assert [c.tool for c in typed.children] == ["tapOnElementBySelector", "inputText"]
    assert model.field_value(PACKAGE, "name") == "Ada"
    # One execution context for the recording: the scripts' calls share its trace id.
    traces = {t.trace_id for t in (*outcome.tools, *opened.children, *typed.children)}
    assert len(traces) == 1
    assert run.tokens.memory == {"opened": f"{PACKAGE} on 1080x2400"}
    # Starting node and loading the module is startup; the rest, its calls included, is its own.
    assert opened.phases["startup"] > 0
    assert opened.phases["launch"] == opened.children[0].phases["launch"] > 0
    assert opened.logs == (f'[info] launching {{"appId": "{PACKAGE}", "device": "emulator-5554"}}',)


def test_calls_resolve_to_typed_results_and_scripts_compose(
    device: ModelDevice, model: FakeDevice, tools: ToolSource
) -> None:
    outcome = runner(device, tools=tools).run_recording(
        calls("- app_open: {tab: Forms}\n- app_compose: {}")
    )

    assert outcome.passed, outcome.failure
    compose = outcome.tools[1]
    # mobile_listInstalledApps gave {appIds}, the nested scripted tool the object it returned.
    assert compose.detail == '{"sample":true,"typed":2}'
    assert [(c.position, c.tool) for c in compose.children] == [
        ("app_compose.calls[0]", "mobile_listInstalledApps"),
        ("app_compose.calls[1]", "app_type"),
    ]
    assert [c.position for c in compose.children[1].children] == [
        "app_compose.calls[1] › app_type.calls[0]",
        "app_compose.calls[1] › app_type.calls[1]",
    ]
    assert model.field_value(PACKAGE, "name") == "Bo"


def test_memory_reads_the_snapshot_and_a_successful_tool_writes_back(
    device: ModelDevice, tools: ToolSource
) -> None:
    tokens = Tokens(memory={"last": "Doe", "first": "Jane", "stale": "x"})
    run = runner(device, tools=tools, tokens=tokens)
    recording = """
- app_memory: {}
- assertEquals: {actual: "{{memory.greeting}}", expected: Hello Jane Doe}
- app_fail: {}
"""
    outcome = run.run_recording(calls(recording, check=False))

    assert outcome.tools[0].detail == "last=Doe keys=first,greeting,last"
    # A later call reads what the script wrote; the failed tool's write is dropped.
    assert [t.status for t in outcome.tools] == ["passed", "passed", "failed"]
    assert run.tokens.memory == {"last": "Doe", "first": "Jane", "greeting": "Hello Jane Doe"}


@pytest.mark.parametrize(
    ("value", "greeting"),
    [(" Yes ", "Hello  Doe"), ("on", "Hello  Doe"), ("OFF", "Hello {{first}} Doe")],
)
def test_the_blank_unknown_tokens_switch_takes_every_spelling(
    device: ModelDevice,
    *,
    workspace: Path,
    tsc: Compiler,
    tmp_path: Path,
    value: str,
    greeting: str,
) -> None:
    # The switch is read once, in Python, with every spelling; the Node side sees `1` or nothing.
    scripts = ScriptHost(
        workspace,
        tmp_path / "scratch",
        timeout=30.0,
        env={**os.environ, BLANK_UNKNOWN_TOKENS_ENV: value},
    )
    try:
        run = runner(
            device, tools=tool_source(workspace, scripts), tokens=Tokens(memory={"last": "Doe"})
        )
        assert run.run_recording(calls("- app_memory: {}")).passed
    finally:
        scripts.close()
    assert run.tokens.memory["greeting"] == greeting


def test_the_clipboard_set_by_a_script_is_pasted_in_the_same_batch(
    device: ModelDevice, model: FakeDevice, tools: ToolSource
) -> None:
    recording = """
- app_open: {tab: Forms}
- app_copy: {text: Jane Doe}
- tapOnElementBySelector: {nodeSelector: {androidAccessibility: {hintTextRegex: Name}}}
- app_paste: {}
"""
    assert runner(device, tools=tools).run_recording(calls(recording)).passed
    assert model.field_value(PACKAGE, "name") == "Jane Doe"


def test_with_the_kill_switch_the_paste_inside_the_script_finds_no_clipboard(
    device: ModelDevice, model: FakeDevice, tools: ToolSource
) -> None:
    recording = """
- app_open: {tab: Forms}
- app_copy: {text: Jane Doe}
- tapOnElementBySelector: {nodeSelector: {androidAccessibility: {hintTextRegex: Name}}}
- app_paste: {}
"""
    outcome = runner(device, tools=tools, env={KILL_SWITCH: "1"}).run_recording(calls(recording))

    failure = outcome.failure
    assert failure is not None
    assert (failure.failed_tool, failure.successful) == (
        "app_paste",
        ("app_open", "app_copy", "tapOnElementBySelector"),
    )
    assert failure.error.startswith(
        "app_paste.calls[0] mobile_pasteClipboard failed: device clipboard is empty: "
    )
    paste = outcome.tools[3].children[0]
    assert (paste.tool, paste.position, paste.status) == (
        "mobile_pasteClipboard",
        "app_paste.calls[0]",
        "failed",
    )
    assert model.field_value(PACKAGE, "name") == ""


@pytest.mark.parametrize(
    ("tool", "kind", "error"),
    [
        (
            "app_fail",
            "expected",
            "app_fail threw Error: the promo is not showing (at trailmaps/app/tools/app_fail.ts:5:9)",
        ),
        ("app_refuse", "expected", "app_refuse threw refused"),
        (
            "app_strict",
            "expected",
            "app_strict.calls[0] assertVisibleWithText failed: text 'Not on this screen' is not "
            "visible (waited 0.3s; the screen shows 'Sample App')",
        ),
        (
            "app_nested_typo",
            "error",
            "app_nested_typo.calls[0] tapOnElementWithTxt failed: tool "
            "'tapOnElementWithTxt' is not supported by this device: no tool of that name in "
            "trailmap 'app' or the framework (did you mean 'tapOnElementWithText'?)",
        ),
        (
            "app_syntax",
            "error",
            "scripted tool 'app_syntax' could not run: trailmaps/app/tools/app_syntax.ts does not "
            "compile: trailmaps/app/tools/app_syntax.ts:4:11: TS1109: Expression expected.",
        ),
        (
            "app_load",
            "error",
            "scripted tool 'app_load' could not run: cannot load trailmaps/app/tools/app_load.ts: "
            "Error: broken at load (at trailmaps/app/tools/app_load.ts:3:7)",
        ),
        (
            "app_crash",
            "error",
            "scripted tool 'app_crash' could not run: node exited (exit 3) before it returned: "
            "about to exit",
        ),
        (
            "app_ios",
            "error",
            "scripted tool 'app_ios' could not run: app_ios supports only ios (its "
            "supportedPlatforms), not android",
        ),
        (
            "app_undefined",
            "error",
            "scripted tool 'app_undefined' could not run: no module in the trailmap's tools/ "
            "defines it",
        ),
    ],
)
def test_how_a_scripted_tool_fails(
    device: ModelDevice, tools: ToolSource, tool: str, kind: str, error: str
) -> None:
    outcome = runner(device, tools=tools).run_recording(calls(f"- {tool}: {{}}\n- pressBack: {{}}"))

    failure = outcome.failure
    assert failure is not None
    assert (failure.failed_tool, failure.kind, failure.error) == (tool, kind, error)
    assert [t.status for t in outcome.tools] == ["failed", "skipped"]
    if tool == "app_crash":
        assert outcome.tools[0].logs == ("[console] about to exit",)


def test_a_script_may_catch_a_failed_call_and_go_on(device: ModelDevice, tools: ToolSource) -> None:
    outcome = runner(device, tools=tools).run_recording(calls("- app_catch: {}"))

    assert outcome.passed, outcome.failure
    tool = outcome.tools[0]
    assert tool.detail == (
        "recovered: app_catch.calls[0] assertVisibleWithText failed: text 'Not on this screen' "
        "is not visible"
    )
    assert [(c.tool, c.status) for c in tool.children] == [("assertVisibleWithText", "failed")]


def test_an_imperative_tool_of_a_descriptor_runs_with_its_schema(
    device: ModelDevice, model: FakeDevice, tools: ToolSource
) -> None:
    recording = f"- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}\n- app_hello: {{who: Ada}}"
    outcome = runner(device, tools=tools).run_recording(calls(recording))

    assert outcome.passed, outcome.failure
    assert outcome.tools[1].detail == "hello Ada (app): tapped"
    assert model.current_screen == f"{PACKAGE}/forms"

    bad = runner(device, tools=tools).run_recording(calls("- app_hello: {who: [1]}"))
    assert bad.failure is not None
    assert bad.failure.error.startswith("invalid arguments for 'app_hello': ")


RUNIF = """
- launchApp: {{appId: {package}, launchMode: RESUME}}
- runIf:
    condition: {{tool: {{{tool}: {{}}}}}}
    then: [{{tapOnElementWithText: {{text: Forms}}}}]
    else: [{{tapOnElementWithText: {{text: Lists}}}}]
"""


@pytest.mark.parametrize(
    ("tool", "screen"),
    [("app_fail", "lists"), ("app_strict", "lists"), ("app_catch", "forms")],
    ids=["throws", "assertion-fails", "returns"],
)
def test_a_runif_condition_reads_a_throwing_script_as_false(
    device: ModelDevice, model: FakeDevice, tools: ToolSource, tool: str, screen: str
) -> None:
    outcome = runner(device, tools=tools).run_recording(
        calls(RUNIF.format(package=PACKAGE, tool=tool))
    )

    assert outcome.passed, outcome.failure
    assert model.current_screen == f"{PACKAGE}/{screen}"


@pytest.mark.parametrize("tool", ["app_crash", "app_syntax", "app_undefined", "app_opn"])
def test_a_runif_condition_whose_script_cannot_run_fails_the_step(
    device: ModelDevice, model: FakeDevice, tools: ToolSource, tool: str
) -> None:
    outcome = runner(device, tools=tools).run_recording(
        calls(RUNIF.format(package=PACKAGE, tool=tool), check=False)
    )

    failure = outcome.failure
    assert failure is not None
    assert failure.failed_tool == "runIf"
    assert failure.error.startswith(
        f"runIf.condition: '{tool}' could not run, so the condition is neither true nor false: "
    )
    assert [c.status for c in outcome.tools[1].children] == ["failed", "skipped", "skipped"]
    assert model.current_screen == f"{PACKAGE}/taps"


def test_a_script_that_does_not_answer_in_time_is_stopped(
    workspace: Path, device: ModelDevice, tsc: Compiler, tmp_path: Path
) -> None:
    for host in open_host(workspace, tmp_path / "scratch", 2.0):
        started = time.monotonic()
        outcome = runner(device, tools=tool_source(workspace, host)).run_recording(
            calls("- app_hang: {}")
        )

        assert outcome.failure is not None
        assert outcome.failure.error == (
            "scripted tool 'app_hang' could not run: it did not answer within 2 s, so it was "
            "stopped"
        )
        assert time.monotonic() - started < 10


def test_without_node_a_scripted_tool_cannot_run(
    workspace: Path, device: ModelDevice, tsc: Compiler, tmp_path: Path
) -> None:
    for host in open_host(workspace, tmp_path / "scratch", 30.0):
        host.env["PATH"] = str(tmp_path)  # no node there

        outcome = runner(device, tools=tool_source(workspace, host)).run_recording(
            calls("- app_memory: {}")
        )

        assert outcome.failure is not None
        assert outcome.failure.error == (
            "scripted tool 'app_memory' could not run: node is not on PATH (install Node.js 20)"
        )


def test_cancelling_the_run_stops_a_running_script_at_once(
    device: ModelDevice, tools: ToolSource
) -> None:
    cancel = threading.Event()
    timer = threading.Timer(1.0, cancel.set)
    timer.start()
    started = time.monotonic()
    try:
        outcome = runner(device, tools=tools, cancel=cancel).run_recording(
            calls("- app_hang: {}\n- pressBack: {}")
        )
    finally:
        timer.cancel()

    assert outcome.cancelled
    assert [(t.status, t.detail) for t in outcome.tools] == [
        ("cancelled", "cancelled while it ran"),
        ("cancelled", "cancelled"),
    ]
    assert time.monotonic() - started < 10  # not the host's 30 s timeout


def test_a_device_lost_inside_a_script_is_fatal_and_stops_it(
    device: ModelDevice, model: FakeDevice, tools: ToolSource
) -> None:
    outcome = runner(device, tools=tools).run_recording(calls("- app_open: {tab: Forms}"))
    assert outcome.passed
    model.faults.disconnect_after = len(model.commands)  # the next command finds no device

    lost = runner(device, tools=tools).run_recording(calls("- app_type: {text: Ada}"))

    failure = lost.failure
    assert failure is not None
    assert (failure.failed_tool, failure.kind) == ("app_type", "fatal")
    assert failure.error.startswith("app_type.calls[0] tapOnElementBySelector failed: ")
    assert [c.status for c in lost.tools[0].children] == ["failed"]  # inputText never asked


def test_a_script_whose_engine_goes_away_exits(workspace: Path, host: ScriptHost) -> None:
    # The engine killed hard closes the child's stdin: the child must not outlive it.
    module = workspace / "trailmaps/app/tools/app_hang.ts"
    invoke = host.invocation("app_hang", module, host.compiled(module), {}, {})
    messages = [host.hello(), {**invoke, "id": 1, "session": 1}]
    child = subprocess.run(
        ["node", str(host.host_js)],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert child.returncode == 75
    assert json.loads(child.stdout.splitlines()[-1]) == {
        "type": "unrunnable",
        "error": "the engine went away",
        "id": 1,
    }


# -- one child per replay thread ----------------------------------------------------------------


def test_one_child_serves_every_call_and_each_trail_gets_fresh_module_state(
    device: ModelDevice, tools: ToolSource, host: ScriptHost
) -> None:
    started = host.children_started
    first = runner(device, tools=tools).run_recording(calls("- app_count: {}\n- app_count: {}"))
    second = runner(device, tools=tools).run_recording(calls("- app_count: {}"))

    assert first.passed, first.failure
    assert second.passed, second.failure
    # The calls of one trail share the module (and the modules it imports), as one reference
    # session does; the next trail starts from fresh modules, without the globals, the
    # environment and the working directory the last one changed.
    assert [t.detail for t in (*first.tools, *second.tools)] == [
        "calls=1 helper=1 global=1 env=unset cwd=kept",
        "calls=2 helper=2 global=2 env=1 cwd=moved",
        "calls=1 helper=1 global=1 env=unset cwd=kept",
    ]
    assert host.children_started - started <= 1  # none, or one if an earlier test killed it


def test_after_a_child_dies_the_next_call_gets_a_new_one(
    device: ModelDevice, tools: ToolSource, host: ScriptHost
) -> None:
    run = runner(device, tools=tools)
    crashed = run.run_recording(calls("- app_crash: {}"))
    assert crashed.failure is not None
    assert crashed.failure.error.startswith("scripted tool 'app_crash' could not run: node exited")
    started = host.children_started

    again = runner(device, tools=tools).run_recording(calls("- app_count: {}\n- app_memory: {}"))

    assert again.passed, again.failure
    assert again.tools[0].detail == "calls=1 helper=1 global=1 env=unset cwd=kept"
    assert host.children_started == started + 1


def test_two_threads_run_scripts_at_once_in_their_own_children(
    model: FakeDevice, tools: ToolSource, host: ScriptHost
) -> None:
    other = FakeDevice.load(SAMPLE_APP)
    outcomes: dict[str, bool] = {}

    def replay(name: str, fake: FakeDevice) -> None:
        recording = "\n".join(["- app_open: {tab: Forms}", "- app_count: {}"] * 3)
        outcome = runner(ModelDevice(fake, timeout=5), tools=tools).run_recording(calls(recording))
        detail = outcome.tools[-1].detail
        outcomes[name] = outcome.passed and detail is not None and detail.startswith("calls=3 ")

    threads = [
        threading.Thread(target=replay, args=(name, fake))
        for name, fake in (("one", model), ("two", other))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert outcomes == {"one": True, "two": True}


def test_a_child_that_stops_answering_is_replaced_for_the_next_call(
    workspace: Path, device: ModelDevice, tsc: Compiler, tmp_path: Path
) -> None:
    for host in open_host(workspace, tmp_path / "scratch", 2.0):
        source = tool_source(workspace, host)
        hung = runner(device, tools=source).run_recording(calls("- app_hang: {}"))
        assert hung.failure is not None

        after = runner(device, tools=source).run_recording(calls("- app_memory: {}"))

        assert after.passed, after.failure
        assert host.children_started == 2


# -- the input a tool declares ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (
            "app_typed_schema: {text: [1]}",
            "invalid arguments for 'app_typed_schema': t.trail.yaml:5:36: text: expected a "
            "string, found a list",
        ),
        (
            "app_typed_schema: {txt: hi}",
            "invalid arguments for 'app_typed_schema': t.trail.yaml:5:11: missing required key "
            "'text' in 'app_typed_schema'; t.trail.yaml:5:30: unknown key 'txt' (did you mean "
            "'text'?)",
        ),
        (
            "app_zod: {who: Ada, loud: 'yes'}",
            "invalid arguments for 'app_zod': t.trail.yaml:5:37: loud: expected true or false, "
            "found the quoted string 'yes'",
        ),
        (
            "app_zod: {who: A}",
            "invalid arguments for 'app_zod': t.trail.yaml:5:26: who: 'A' is too short",
        ),
        (
            # What JSON Schema cannot say, zod itself checks: the field, not its line.
            "app_zod: {who: Nobody}",
            "scripted tool 'app_zod' could not run: invalid arguments for 'app_zod': who: Nobody "
            "is no one to greet",
        ),
    ],
    ids=["typed-type", "typed-unknown-key", "zod-type", "zod-check", "zod-refinement"],
)
def test_arguments_the_tools_own_schema_refuses_are_a_located_failure(
    device: ModelDevice, tools: ToolSource, call: str, error: str
) -> None:
    outcome = runner(device, tools=tools).run_recording(calls(f"- {call}", check=False))

    failure = outcome.failure
    assert failure is not None
    assert (failure.failed_tool, failure.kind, failure.error) == (
        call.split(":", maxsplit=1)[0],
        "error",
        error,
    )


def test_arguments_the_tools_own_schema_accepts_arrive_parsed_with_defaults(
    device: ModelDevice, tools: ToolSource
) -> None:
    outcome = runner(device, tools=tools).run_recording(
        calls(
            "- app_typed_schema: {text: hi}\n- app_zod: {who: Ada}\n- app_zod: {who: Bo, loud: true}"
        )
    )

    assert outcome.passed, outcome.failure
    assert [t.detail for t in outcome.tools] == ["hi x2", "hi Ada", "HI Bo"]


def test_a_runif_condition_whose_script_gets_bad_arguments_fails_the_step(
    device: ModelDevice, model: FakeDevice, tools: ToolSource
) -> None:
    recording = RUNIF.format(package=PACKAGE, tool="app_zod").replace(
        "{app_zod: {}}", "{app_zod: {who: A}}"
    )
    outcome = runner(device, tools=tools).run_recording(calls(recording, check=False))

    failure = outcome.failure
    assert failure is not None
    assert failure.error.startswith(
        "runIf.condition: 'app_zod' could not run, so the condition is neither true nor false: "
    )
    assert model.current_screen == f"{PACKAGE}/taps"


# -- the SDK's whole runtime API ------------------------------------------------------------------


def test_every_runtime_export_of_the_sdk_works_at_replay(
    device: ModelDevice, tools: ToolSource
) -> None:
    outcome = runner(device, tools=tools).run_recording(
        calls(f"- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}\n- app_sdk: {{}}")
    )

    assert outcome.passed, outcome.failure
    assert json.loads(outcome.tools[1].detail or "") == {
        "exports": [
            "ConditionalActionFailedError",
            "captureViewHierarchy",
            "fromMeta",
            "run",
            "runConditionalActions",
            "selectors",
            "tool",
            "trailblaze",
            "z",
        ],
        "run": None,
        "typed": "function",
        "selector": {"androidAccessibility": {"textRegex": "Forms"}},
        "zod": False,
        "meta": [2, "v", None],
        "error": ["ConditionalActionFailedError", "entry", "went wrong", "cause", True],
        "profiles": [
            True,
            "function",
            "trailblaze.run() is unavailable in the in-process runtime",
            "imperative trailblaze.tool(name, spec, handler) is unavailable in the in-process "
            "runtime",
        ],
        "awaitingTools": True,
        "blank": 'client.tools[" "]: tool name must not be empty or whitespace-only.',
        "called": "string",
    }
    # Awaiting ctx.tools and reading a blank name dispatched nothing.
    assert [c.tool for c in outcome.tools[1].children] == ["assertVisibleWithText"]


def test_conditional_actions_run_on_a_snapshot_of_find_matches(
    device: ModelDevice, model: FakeDevice, tools: ToolSource
) -> None:
    launch = f"- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}\n"
    outcome = runner(device, tools=tools).run_recording(calls(launch + "- app_conditional: {}"))

    assert outcome.passed, outcome.failure
    tool = outcome.tools[1]
    assert json.loads(tool.detail or "") == {"handled": ["open-forms"], "text": "Forms", "found": 0}
    assert model.current_screen == f"{PACKAGE}/forms"
    # One findMatches per selector, the action's tap, then the same selectors to verify.
    assert [c.tool for c in tool.children] == [
        *["findMatches"] * 3,
        "tapOnElementWithText",
        *["findMatches"] * 3,
    ]

    broken = runner(device, tools=tools).run_recording(
        calls(launch + "- app_conditional: {broken: true}")
    )
    assert broken.failure is not None
    assert broken.failure.kind == "expected"
    assert broken.failure.error.startswith(
        "app_conditional threw ConditionalActionFailedError: postcondition not satisfied after "
        'action for conditional "open-forms" (Open the Forms tab) (at '
    )


def test_the_testing_helpers_work_at_replay_and_reach_no_device(
    device: ModelDevice, model: FakeDevice, tools: ToolSource
) -> None:
    before = len(model.events)
    outcome = runner(device, tools=tools).run_recording(calls("- app_testing: {}"))

    assert outcome.passed, outcome.failure
    assert json.loads(outcome.tools[0].detail or "") == {
        "result": "a+b  ann mock-driver",
        "calls": [
            ["tapOnElementWithText", {"text": "Forms"}],
            ["mobile_listInstalledApps", {}],
            ["web_evaluate", {"script": "(() => 1 + 1).apply(null, [])"}],
        ],
        "thrown": 'trailblaze.client.callTool("tapOnElementWithText") tool failed: Text not found',
        "count": 4,
        "after": 0,
        "target": "d",
        "session": "mock-session",
    }
    # The mock answered every call: nothing was dispatched, nothing reached the device.
    assert outcome.tools[0].children == ()
    assert len(model.events) == before


def test_a_script_runs_commands_on_the_device_and_the_host(
    device: ModelDevice, model: FakeDevice, tools: ToolSource
) -> None:
    outcome = runner(device, tools=tools).run_recording(calls("- app_shell: {text: 'a;b'}"))

    assert outcome.passed, outcome.failure
    tool = outcome.tools[0]
    assert json.loads(tool.detail or "") == {
        "echoed": "a;b\n",
        "host": "from the host\n",
        "failed": "app_shell.calls[2] android_adbShell failed: android_adbShell: `cat /nope` "
        "exited with 1 on emulator-5554: cat: /nope: No such file or directory",
    }
    assert [(c.tool, c.status, c.location.text) for c in tool.children] == [
        ("android_adbShell", "passed", "t.trail.yaml:5:11"),
        ("exec", "passed", "t.trail.yaml:5:11"),
        ("android_adbShell", "failed", "t.trail.yaml:5:11"),
    ]
    assert model.commands[-2:] == ["echo 'a;b'", "cat /nope"]


def test_the_sdk_query_tools_answer_without_failing(device: ModelDevice, tools: ToolSource) -> None:
    outcome = runner(device, tools=tools).run_recording(
        calls(f"- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}\n- app_wait: {{}}")
    )

    assert outcome.passed, outcome.failure
    assert json.loads(outcome.tools[1].detail or "") == {"gone": True, "still": False, "waited": []}
    assert [(c.tool, c.status) for c in outcome.tools[1].children] == [
        ("waitUntilNotVisible", "passed"),
        ("waitUntilNotVisible", "passed"),
        ("findMatches", "passed"),
    ]


def test_a_child_is_replaced_after_it_has_served_its_share_of_trails(
    workspace: Path,
    device: ModelDevice,
    tsc: Compiler,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("trailblaze.replay.scripted.host.MAX_SESSIONS", 2)
    for host in open_host(workspace, tmp_path / "scratch", 30.0):
        source = tool_source(workspace, host)
        for _ in range(3):
            assert runner(device, tools=source).run_recording(calls("- app_count: {}")).passed

        assert host.children_started == 2  # the third trail found the first child full


def test_an_imperative_tool_gets_the_whole_context_and_a_client_with_call_tool(
    device: ModelDevice, tools: ToolSource
) -> None:
    recording = f"- launchApp: {{appId: {PACKAGE}, launchMode: RESUME}}\n- app_client: {{}}"
    outcome = runner(device, tools=tools, tokens=Tokens(memory={"k": "v"})).run_recording(
        calls(recording)
    )

    assert outcome.passed, outcome.failure
    client = outcome.tools[1]
    assert structured_value(client.detail) == {
        "envelope": ["errorMessage", "structuredContent", "success", "textContent"],
        "success": True,
        "session": True,
        "invocation": True,
        "device": ["android", "android-ondevice-accessibility"],
        "target": ["app", PACKAGE, "u"],
        "memory": ["k"],
    }
    assert client.logs == ('[warn] checked {"visible": true}',)


def test_every_file_of_the_runtime_is_copied_next_to_the_compiled_tools() -> None:
    from trailblaze.replay.scripted import compiler  # noqa: PLC0415 - its private file list

    shipped = {p.name for p in compiler.data_file("index.cjs").parent.glob("*.cjs")}
    assert shipped == {*compiler._RUNTIME_FILES, "host.cjs"}  # host.cjs runs from the package
