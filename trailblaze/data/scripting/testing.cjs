"use strict";
// `@trailblaze/scripting/testing` of our runtime: the mock client and context a tool's unit test
// calls the tool's function with, `tool(args, createMockContext(), createMockClient())`. The
// client's `tools` is the runtime's own proxy (the same argument forms, `web_evaluate` included),
// over a dispatch that records the call and answers from the stubs; a stubbed `errorMessage`
// throws with the real client's wording.

const internal = require("./index.cjs").__internal;

const DRIVERS = {
  android: "android-ondevice-accessibility",
  ios: "ios-host",
  web: "playwright-native",
};

function createMockClient() {
  const calls = [];
  const stubs = new Map();
  const dispatch = async (tool, args) => {
    calls.push(Object.freeze({ tool, args }));
    const stub = stubs.get(tool) ?? {};
    if (typeof stub.errorMessage === "string" && stub.errorMessage.length > 0) {
      throw new Error(`trailblaze.client.callTool("${tool}") tool failed: ${stub.errorMessage}`);
    }
    const structured = stub.structuredContent;
    if (structured !== undefined && structured !== null) return structured;
    return typeof stub.textContent === "string" ? stub.textContent : "";
  };
  return {
    tools: internal.createToolsProxy(dispatch),
    get calls() {
      return calls.slice();
    },
    stub(tool, response) {
      if (typeof tool !== "string" || tool.trim() === "") {
        throw new TypeError("client.stub(tool, response): tool must be a non-empty tool name");
      }
      stubs.set(tool, response !== null && typeof response === "object" ? { ...response } : {});
    },
    reset() {
      calls.length = 0;
      stubs.clear();
    },
  };
}

function createMockContext(options) {
  const o = options !== null && typeof options === "object" ? options : {};
  const platform = o.platform ?? "android";
  const device = internal.parseDevice({
    platform,
    widthPixels: o.widthPixels ?? 1080,
    heightPixels: o.heightPixels ?? 2400,
    driverType: o.driverType ?? o.driver ?? DRIVERS[platform],
    instanceId: o.instanceId,
  });
  if (device === undefined) {
    throw new TypeError(
      "createMockContext: platform must be android, ios or web and the sizes numbers; got " +
        JSON.stringify({ platform, widthPixels: o.widthPixels, heightPixels: o.heightPixels }),
    );
  }
  const target =
    o.target === undefined ? undefined : internal.parseTarget({ appIds: [], ...o.target });
  if (o.target !== undefined && target === undefined) {
    throw new TypeError("createMockContext: target needs a string id (and string appIds)");
  }
  return {
    baseUrl: o.baseUrl,
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
