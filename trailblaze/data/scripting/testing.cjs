"use strict";
// `@trailblaze/scripting/testing` of our runtime: the mock clients and context a tool's unit test
// calls the tool's function with, `tool(args, createMockContext({ platform }), createMockClient())`.
// The API and its behaviour are the SDK's (`testing.ts`): the same names, defaults and error
// wording, so a test that passes against the SDK passes here. The mock client's `tools` is the
// runtime's own proxy (the same argument forms, `web_evaluate` included), over a dispatch that
// records the call and answers from the stubs.

const internal = require("./index.cjs").__internal;

function createMockClient() {
  const calls = [];
  const stubs = new Map();
  const dispatch = async (tool, args) => {
    calls.push({ tool, args });
    const stub = stubs.get(tool);
    if (stub && typeof stub.errorMessage === "string" && stub.errorMessage.length > 0) {
      throw new Error(`trailblaze.client.callTool("${tool}") tool failed: ${stub.errorMessage}`);
    }
    const structured = stub ? stub.structuredContent : undefined;
    if (structured !== undefined && structured !== null) return structured;
    return stub && stub.textContent !== undefined ? stub.textContent : "";
  };
  return {
    tools: internal.createToolsProxy(dispatch),
    calls,
    stub(toolName, response) {
      if (typeof toolName !== "string" || toolName.trim() === "") {
        throw new Error("createMockClient: stub() tool name must not be empty or whitespace-only.");
      }
      stubs.set(toolName, response);
    },
    reset() {
      // In place: a test holding `client.calls` sees it cleared.
      calls.length = 0;
      stubs.clear();
    },
  };
}

function createQueuedFindMatchesClient() {
  const calls = [];
  const queues = { findMatches: [], waitUntilNotVisible: [] };
  const forget = { findMatches: "queueFindMatches", waitUntilNotVisible: "queueWaitUntilNotVisible" };
  const dispatch = (name, args) => {
    calls.push({ tool: name, args });
    if (!Object.hasOwn(queues, name)) return "";
    const queue = queues[name];
    if (queue.length === 0) {
      throw new Error(
        `createQueuedFindMatchesClient: no more ${name} responses queued; received ` +
          `call with args=${JSON.stringify(args)}. Did the test forget a ${forget[name]}?`,
      );
    }
    return queue.shift();
  };
  const tools = new Proxy(
    {},
    {
      get(_target, prop) {
        if (typeof prop !== "string") return undefined;
        if (prop === "then" || prop === "catch" || prop === "finally") return undefined;
        return async (args) => dispatch(prop, args ?? {});
      },
    },
  );
  return {
    tools,
    calls,
    queueFindMatches(responses) {
      queues.findMatches.push(...responses);
    },
    queueWaitUntilNotVisible(responses) {
      queues.waitUntilNotVisible.push(...responses);
    },
  };
}

function createMockContext(opts) {
  const o = opts !== null && typeof opts === "object" ? opts : {};
  const d = o.device !== null && typeof o.device === "object" ? o.device : {};
  const device = {
    platform: o.platform,
    widthPixels: d.widthPixels ?? 1080,
    heightPixels: d.heightPixels ?? 2400,
    driverType: d.driverType ?? d.driver ?? "mock-driver",
    driver: d.driver,
    instanceId: d.instanceId,
  };
  // The target as given, as the SDK passes it; plain data also gets the resolve helpers.
  let target = o.target;
  if (
    target !== null && typeof target === "object" && typeof target.resolveAppId !== "function"
  ) {
    target = internal.parseTarget({ appIds: [], ...target }) ?? target;
  }
  return {
    baseUrl: o.baseUrl,
    runtime: o.runtime === "ondevice" ? "ondevice" : undefined,
    sessionId: o.sessionId ?? "mock-session",
    invocationId: o.invocationId ?? "mock-invocation",
    device,
    target,
    memory: internal.createMemory(o.memory),
    logger: internal.noopLogger,
  };
}

exports.createMockClient = createMockClient;
exports.createMockContext = createMockContext;
exports.createQueuedFindMatchesClient = createQueuedFindMatchesClient;
