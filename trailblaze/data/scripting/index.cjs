"use strict";
// trailblaze-doit's runtime of `@trailblaze/scripting`, the module scripted tools import.
//
// Written for replay: a scripted tool runs in a Node child process started by the Python engine
// (trailblaze/replay/scripted.py), and `host.cjs` drives it. Every `ctx.tools.X(args)` call goes
// back to the engine over the child's pipes and runs there, in the recording's execution context.
// The names and call forms follow the public API of `@trailblaze/scripting`: `trailblaze.tool`
// (typed bare handler, typed with a spec, imperative `(name, spec, handler)`), `trailblaze.run`,
// `fromMeta`, `selectors`, and the handler's context (`tools`, `memory`, `device`, `target`,
// `logger`).

const STATE_KEY = Symbol.for("trailblaze-doit.scripting.state");
const TYPED = Symbol.for("trailblaze-doit.scripting.typedTool");
const DRAIN_DELTA = Symbol.for("trailblaze.memory.drainDelta");
const META_KEY_TRAILBLAZE = "trailblaze";
const BLANK_UNKNOWN_TOKENS_ENV_VAR = "TRAILBLAZE_MEMORY_BLANK_UNKNOWN_TOKENS";
const MEMORY_TOKEN_PREFIX = "memory.";
const VALID_PLATFORMS = new Set(["ios", "android", "web"]);

/** One state per process, whichever way (require or import) the module was loaded. */
const state = (globalThis[STATE_KEY] ??= { imperative: new Map(), bridge: null });

/** A failure the engine must read as "could not run", not as the tool's own failure. */
class CouldNotRunError extends Error {
  constructor(message) {
    super(message);
    this.name = "CouldNotRunError";
    this.trailblazeKind = "error";
  }
}

// ---- trailblaze.tool ------------------------------------------------------------------------

function defineTypedTool(handler, spec) {
  if (typeof handler !== "function") {
    throw new TypeError(
      "trailblaze.tool<I, O>(handler): argument must be a function. Got: " +
        (handler == null ? String(handler) : typeof handler) + ".",
    );
  }
  const adapter = async (args, ctx, client) => {
    const input = args != null && typeof args === "object" && !Array.isArray(args) ? args : {};
    const toolContext = {
      tools: client ? client.tools : createToolsProxy(noDispatch),
      memory: ctx && ctx.memory ? ctx.memory : createMemory(undefined),
      device: ctx ? ctx.device : undefined,
      target: ctx ? ctx.target : undefined,
      logger: ctx && ctx.logger ? ctx.logger : noopLogger,
    };
    return handler(input, toolContext);
  };
  Object.defineProperty(adapter, TYPED, { value: { spec: spec ?? {} } });
  return adapter;
}

/**
 * `tool(handler)`, `tool(spec, handler)` (typed: returns the tool, exported by the module) or
 * `tool(name, spec, handler)` (imperative: registers the tool under `name`).
 */
function tool(arg0, arg1, arg2) {
  if (typeof arg0 === "function") return defineTypedTool(arg0, undefined);
  if (
    typeof arg0 === "object" && arg0 !== null && !Array.isArray(arg0) &&
    typeof arg1 === "function" && arg2 === undefined
  ) {
    return defineTypedTool(arg1, arg0);
  }
  if (typeof arg0 === "string" && arg0.length > 0 && typeof arg2 === "function") {
    state.imperative.set(arg0, { name: arg0, spec: arg1 ?? {}, handler: arg2 });
    return undefined;
  }
  throw new TypeError(
    "trailblaze.tool: expected (handler), (spec, handler) or (name, spec, handler); got (" +
      [arg0, arg1, arg2].map((a) => (a === null ? "null" : typeof a)).join(", ") + ")",
  );
}

/**
 * `await trailblaze.run()` ends a module of imperative tools. Here the engine calls the
 * registered tools itself, so there is no server to start: it resolves at once.
 */
async function run(_options) {
  return undefined;
}

const trailblaze = { tool, run };

// ---- the client: ctx.tools.X(args) -----------------------------------------------------------

/** Names the runtime itself probes (await, inspection): never tool calls. */
const NOT_TOOLS = new Set([
  "then", "catch", "finally", "constructor", "toJSON", "toString", "valueOf", "inspect",
  "asymmetricMatch", "$$typeof", "nodeType", "tagName",
]);

function noDispatch(name) {
  return Promise.reject(
    new CouldNotRunError(`ctx.tools.${name}(): no Trailblaze session to run it in`),
  );
}

function createToolsProxy(dispatch) {
  return new Proxy(Object.create(null), {
    get(_target, prop) {
      if (typeof prop !== "string" || NOT_TOOLS.has(prop)) return undefined;
      return (first, ...rest) => dispatch(prop, scriptArgs(prop, first, rest));
    },
    has(_target, prop) {
      return typeof prop === "string" && !NOT_TOOLS.has(prop);
    },
  });
}

/** `web_evaluate(fn, ...args)` / `(script)` / `({script})` all become `{script}`. */
function scriptArgs(name, first, rest) {
  if (name === "web_evaluate") {
    if (typeof first === "function") {
      return { script: `(${first.toString()}).apply(null, ${JSON.stringify(rest)})` };
    }
    if (typeof first === "string") return { script: first };
  }
  return first === undefined ? {} : first;
}

function createClient(ctx) {
  const callTool = async (name, args) => {
    if (state.bridge === null || ctx === undefined) return noDispatch(name);
    return state.bridge.callTool(name, args ?? {}, ctx);
  };
  const unwrap = async (name, args) => {
    const result = await callTool(name, args);
    return result.structuredContent !== undefined ? result.structuredContent : result.textContent;
  };
  return { callTool, tools: createToolsProxy(unwrap) };
}

// ---- ctx.memory -------------------------------------------------------------------------------

function blankUnknownTokens() {
  const value = globalThis.process?.env?.[BLANK_UNKNOWN_TOKENS_ENV_VAR];
  return value === "1" || value?.toLowerCase() === "true";
}

/** Reads see the snapshot plus this invocation's writes; writes are flushed on success. */
function createMemory(snapshot) {
  const base = new Map(
    snapshot && typeof snapshot === "object"
      ? Object.entries(snapshot).filter(([, v]) => typeof v === "string")
      : [],
  );
  const DELETED = Symbol("deleted");
  const changes = new Map();
  const get = (key) => {
    if (changes.has(key)) {
      const v = changes.get(key);
      return v === DELETED ? undefined : v;
    }
    return base.get(key);
  };
  const has = (key) => (changes.has(key) ? changes.get(key) !== DELETED : base.has(key));
  const set = (key, value) => {
    changes.set(String(key), String(value));
  };
  const del = (key) => {
    changes.set(String(key), DELETED);
  };
  const keys = () => {
    const visible = new Set(base.keys());
    changes.forEach((v, k) => (v === DELETED ? visible.delete(k) : visible.add(k)));
    return [...visible];
  };
  const warned = new Set();
  const lookup = (name) => {
    if (!name.startsWith(MEMORY_TOKEN_PREFIX)) return get(name);
    return get(name.slice(MEMORY_TOKEN_PREFIX.length)) ?? get(name);
  };
  const interpolate = (template) => {
    const blank = blankUnknownTokens();
    let out = String(template);
    for (const re of [/\$\{([^}]+)\}/g, /\{\{([^}]+)\}\}/g]) {
      out = out.replace(re, (match, name) => {
        const value = lookup(name.trim());
        if (value !== undefined) return value;
        if (!warned.has(match)) {
          warned.add(match);
          console.warn(
            `[trailblaze.memory] Unknown memory token ${match}: no value for '${name}'; ` +
              (blank ? `resolving to "" (${BLANK_UNKNOWN_TOKENS_ENV_VAR} is set)` : "left as is") +
              `. Known keys: ${keys().sort().join(", ")}`,
          );
        }
        return blank ? "" : match;
      });
    }
    return out;
  };
  const setJson = (key, value) => {
    const text = JSON.stringify(value);
    if (text === undefined) del(key);
    else set(key, text);
  };
  const getJson = (key) => {
    const raw = get(key);
    if (raw === undefined) return undefined;
    try {
      return JSON.parse(raw);
    } catch {
      return undefined;
    }
  };
  const drain = () => {
    const sets = Object.create(null);
    const deletions = [];
    changes.forEach((v, k) => {
      if (v === DELETED) {
        if (base.has(k)) deletions.push(k);
      } else if (base.get(k) !== v) {
        sets[k] = v;
      }
    });
    return { sets, deletions };
  };
  const toJSON = () => {
    const out = {};
    for (const k of keys()) out[k] = get(k);
    return out;
  };
  return {
    get, set, has, keys, delete: del, interpolate, setJson, getJson, toJSON, [DRAIN_DELTA]: drain,
  };
}

// ---- ctx.logger -------------------------------------------------------------------------------

const noopLogger = { debug() {}, info() {}, warn() {}, error() {} };

function createLogger(send, toolName) {
  const emit = (level, message, fields) => {
    try {
      send({ type: "log", tool: toolName, level, message: String(message), fields: fields ?? null });
    } catch {
      // logging never breaks a tool
    }
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

// ---- ctx.target, ctx.device, fromMeta ---------------------------------------------------------

function parseTarget(raw) {
  if (typeof raw !== "object" || raw === null) return undefined;
  const { id, appIds } = raw;
  if (typeof id !== "string" || !Array.isArray(appIds)) return undefined;
  if (!appIds.every((a) => typeof a === "string")) return undefined;
  const str = (v) => (typeof v === "string" ? v : undefined);
  const appId = str(raw.appId);
  const resolvedBaseUrl = str(raw.resolvedBaseUrl);
  const baseUrls = Array.isArray(raw.baseUrls) && raw.baseUrls.every((u) => typeof u === "string")
    ? [...raw.baseUrls]
    : undefined;
  const pick = (first, fallback) => {
    if (typeof first === "string" && first.length > 0) return first;
    const value = typeof fallback === "string" ? fallback.trim() : "";
    return value.length > 0 ? value : undefined;
  };
  return {
    id,
    displayName: str(raw.displayName),
    appIds: [...appIds],
    appId,
    baseUrls,
    resolvedBaseUrl,
    // Closures, not `this` methods: `const { resolveAppId } = ctx.target` keeps working.
    resolveAppId: (options) => pick(appId || appIds[0], options?.defaultAppId),
    resolveBaseUrl: (options) => pick(resolvedBaseUrl || baseUrls?.[0], options?.defaultBaseUrl),
  };
}

function parseDevice(raw) {
  if (typeof raw !== "object" || raw === null) return undefined;
  const { platform, widthPixels, heightPixels } = raw;
  const driverType = typeof raw.driverType === "string" ? raw.driverType : raw.driver;
  if (typeof platform !== "string" || !VALID_PLATFORMS.has(platform)) return undefined;
  if (typeof widthPixels !== "number" || typeof heightPixels !== "number") return undefined;
  if (typeof driverType !== "string") return undefined;
  const device = { platform, widthPixels, heightPixels, driverType };
  if (typeof raw.instanceId === "string") device.instanceId = raw.instanceId;
  return device;
}

/** The context carried by `_meta.trailblaze`, or undefined when it is missing or malformed. */
function fromMeta(meta, logger) {
  if (typeof meta !== "object" || meta === null) return undefined;
  const tb = meta[META_KEY_TRAILBLAZE];
  if (typeof tb !== "object" || tb === null) return undefined;
  if (typeof tb.sessionId !== "string" || typeof tb.invocationId !== "string") return undefined;
  const device = parseDevice(tb.device);
  if (device === undefined) return undefined;
  return {
    baseUrl: typeof tb.baseUrl === "string" ? tb.baseUrl : undefined,
    runtime: tb.runtime === "ondevice" ? "ondevice" : undefined,
    sessionId: tb.sessionId,
    invocationId: tb.invocationId,
    device,
    target: parseTarget(tb.target),
    memory: createMemory(tb.memory),
    logger: logger ?? noopLogger,
  };
}

// ---- selectors and the helpers replay does not offer ------------------------------------------

const selectors = {};
for (const driver of ["androidAccessibility", "androidMaestro", "web", "compose", "iosMaestro", "iosAxe"]) {
  selectors[driver] = (args) => ({ [driver]: args });
}

class ConditionalActionFailedError extends Error {
  constructor(message) {
    super(message);
    this.name = "ConditionalActionFailedError";
  }
}

function unavailable(name) {
  return async () => {
    throw new CouldNotRunError(`${name}() is not available in trailblaze-doit replay`);
  };
}

/**
 * `z` is zod's: the pinned one the engine links next to this runtime, else the tool's own
 * project's; without either, using it says so.
 */
function loadZod() {
  const places = [
    () => require("zod"),
    () => require(require.resolve("zod", { paths: [process.cwd()] })),
  ];
  for (const load of places) {
    try {
      return load().z;
    } catch {
      // try the next place
    }
  }
  const missing = () => {
    throw new CouldNotRunError(
      "`z` from @trailblaze/scripting needs zod: run `doit toolchain`, or install zod next to the tool",
    );
  };
  return new Proxy(function z() {}, { get: missing, apply: missing, construct: missing });
}

exports.trailblaze = trailblaze;
exports.tool = tool;
exports.run = run;
exports.fromMeta = fromMeta;
exports.selectors = selectors;
exports.ConditionalActionFailedError = ConditionalActionFailedError;
exports.captureViewHierarchy = unavailable("captureViewHierarchy");
exports.runConditionalActions = unavailable("runConditionalActions");
exports.z = loadZod();
// Used by host.cjs (not part of the authoring API).
exports.__internal = {
  state, TYPED, DRAIN_DELTA, CouldNotRunError, createClient, createMemory, createLogger,
  parseDevice, parseTarget,
};
