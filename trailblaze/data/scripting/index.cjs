"use strict";
// trailblaze-doit's runtime of `@trailblaze/scripting`, the module scripted tools import.
//
// Written for replay: scripted tools run in a Node child process started by the Python engine
// (trailblaze/replay/scripted/), and `host.cjs` drives it. Every `ctx.tools.X(args)` call goes
// back to the engine over the child's pipes and runs there, in the recording's execution context.
// The names, call forms and semantics follow the public API of `@trailblaze/scripting`, every
// runtime export of it: `trailblaze.tool` (typed bare handler, typed with a spec, imperative
// `(name, spec, handler)`), `trailblaze.run`, `tool`, `run`, `fromMeta`, `selectors`, `z`,
// `captureViewHierarchy`, `runConditionalActions`, `ConditionalActionFailedError`, the handler's
// context (`tools`, `memory`, `device`, `target`, `logger`) and client (`tools`, `callTool`), and
// the `in-process` / `sub-process` profiles (`testing` is for unit tests: replay refuses it).

const STATE_KEY = Symbol.for("trailblaze-doit.scripting.state");
const TYPED = Symbol.for("trailblaze-doit.scripting.typedTool");
const DRAIN_DELTA = Symbol.for("trailblaze.memory.drainDelta");
const META_KEY_TRAILBLAZE = "trailblaze";
const BLANK_UNKNOWN_TOKENS_ENV_VAR = "TRAILBLAZE_MEMORY_BLANK_UNKNOWN_TOKENS";
const MEMORY_TOKEN_PREFIX = "memory.";
const VALID_PLATFORMS = new Set(["ios", "android", "web"]);

/** One state per process, whichever way (require or import) the module was loaded. */
const state = (globalThis[STATE_KEY] ??= { imperative: new Map() });

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

// ---- the client: ctx.tools.X(args) -----------------------------------------------------------

/** Names the runtime itself probes (await, inspection, coercion): never tool calls. */
const NOT_TOOLS = new Set([
  "then", "catch", "finally", "constructor", "prototype", "__proto__", "toString", "valueOf",
  "toJSON", "inspect", "asymmetricMatch", "$$typeof", "nodeType", "tagName",
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
      if (prop.trim() === "") {
        throw new Error(
          `client.tools[${JSON.stringify(prop)}]: tool name must not be empty or whitespace-only.`,
        );
      }
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
    if (first === null || typeof first !== "object") {
      throw new Error(
        `client.tools.${name}: expected a function, script string, or { script } object as ` +
          `the first argument; got ${first === null ? "null" : typeof first}.`,
      );
    }
  }
  return first === undefined || first === null ? {} : first;
}

/**
 * The third handler argument: `tools.X(args)` resolves to X's typed result (its structured
 * content, else its text); `callTool(name, args)` to the whole envelope. `dispatch` sends the
 * call to the engine (host.cjs); without one, every call says there is no session.
 */
function createClient(ctx, dispatch) {
  const callTool = async (name, args) => {
    if (typeof dispatch !== "function" || ctx === undefined) return noDispatch(name);
    return dispatch(String(name), args ?? {});
  };
  const unwrap = async (name, args) => {
    const result = await callTool(name, args);
    const structured = result.structuredContent;
    return structured !== undefined && structured !== null ? structured : result.textContent;
  };
  return { callTool, tools: createToolsProxy(unwrap) };
}

// ---- input validation ---------------------------------------------------------------------------

/**
 * The JSON Schema of a tool's declared input, or null when it declares none: a typed tool's
 * `spec.inputSchema` (a JSON Schema literal), an imperative tool's zod `inputSchema` (a raw shape
 * is `z.object(shape).passthrough()`, as the SDK registers it) lowered with `z.toJSONSchema`.
 * The engine parses the call's arguments with it, so a bad field is reported where the trail
 * wrote it. A zod schema that cannot be lowered is only checked by zod (`checkInput`), with a
 * warning, as the SDK skips what it cannot lower.
 */
function inputSchemaOf(tool, name) {
  const declared = tool.spec?.inputSchema;
  if (declared === undefined || declared === null) return null;
  if (tool.typed !== undefined) {
    return typeof declared === "object" && !Array.isArray(declared) ? declared : null;
  }
  const schema = zodInput(declared);
  if (schema === null) return null;
  try {
    return JSON.parse(JSON.stringify(loadZod().toJSONSchema(schema, { io: "input" })));
  } catch (error) {
    console.warn(
      `[trailblaze.tool] tool '${name}': its zod inputSchema cannot be lowered to JSON Schema ` +
        `(${error instanceof Error ? error.message : String(error)}); only zod checks its input`,
    );
    return null;
  }
}

function isZod(value) {
  return value !== null && typeof value === "object" && typeof value.safeParse === "function";
}

/** The zod schema an imperative spec's `inputSchema` stands for, or null. */
function zodInput(declared) {
  if (isZod(declared)) return declared;
  if (typeof declared !== "object" || Array.isArray(declared)) return null;
  const values = Object.values(declared);
  if (!values.every((v) => v === undefined || isZod(v))) return null;
  return loadZod().object(declared).passthrough();
}

/**
 * What an imperative tool's handler receives: its arguments as zod parsed them (defaults,
 * transforms), as the MCP server the SDK registers with hands them over; a typed tool's
 * arguments as the engine parsed them.
 */
function checkInput(tool, name, args) {
  const input = args !== null && typeof args === "object" && !Array.isArray(args) ? args : {};
  if (tool.imperative === undefined) return { ok: true, args: input };
  const schema = tool.spec?.inputSchema == null ? null : zodInput(tool.spec.inputSchema);
  if (schema === null) return { ok: true, args: input };
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, args: parsed.data };
  const issues = (parsed.error?.issues ?? []).map((issue) => {
    const path = Array.isArray(issue.path) && issue.path.length ? issue.path.join(".") : "(root)";
    return `${path}: ${issue.message}`;
  });
  return { ok: false, error: `invalid arguments for '${name}': ${issues.join("; ") || "rejected by its inputSchema"}` };
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

/** `ctx.logger`: each line goes to the engine (`emit`), which keeps it as the tool's log. */
function createLogger(emit) {
  const log = (level, message, fields) => {
    try {
      emit(level, String(message), fields ?? null);
    } catch {
      // logging never breaks a tool
    }
  };
  return {
    debug: (m, f) => log("debug", m, f),
    info: (m, f) => log("info", m, f),
    warn: (m, f) => log("warn", m, f),
    error: (m, f) => log("error", m, f),
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

// ---- selectors ---------------------------------------------------------------------------------

const selectors = {};
for (const driver of ["androidAccessibility", "androidMaestro", "web", "compose", "iosMaestro", "iosAxe"]) {
  selectors[driver] = (args) => ({ [driver]: args });
}

// ---- conditional actions and the view hierarchy they read ---------------------------------------
// The SDK's semantics: a snapshot is the `findMatches` result of each declared selector (the
// calls run in parallel, each in the tool's batch context); `runConditionalActions` filters the
// catalog once against it (an entry whose postcondition already holds is skipped), then runs the
// applicable actions in order, re-capturing the same selectors to verify a postcondition.

class ConditionalActionFailedError extends Error {
  constructor(conditionalActionId, message, cause = null) {
    super(message);
    this.name = "ConditionalActionFailedError";
    this.conditionalActionId = conditionalActionId;
    this.cause = cause;
    if (typeof Error.captureStackTrace === "function") {
      Error.captureStackTrace(this, ConditionalActionFailedError);
    }
  }
}

const SELECTOR_REGISTRY = Symbol("trailblaze.viewHierarchy.selectorRegistry");

function selectorKey(selector) {
  return JSON.stringify(selector);
}

async function captureViewHierarchy(client, selectorList) {
  if (client === null || typeof client !== "object" || client.tools === undefined) {
    throw new TypeError("captureViewHierarchy(client, selectors): client must be the handler's client (or ctx)");
  }
  if (!Array.isArray(selectorList)) {
    throw new TypeError("captureViewHierarchy(client, selectors): selectors must be an array");
  }
  const owned = selectorList.slice();
  const entries = await Promise.all(
    owned.map(async (selector) => [selectorKey(selector), await client.tools.findMatches({ selector })]),
  );
  const resolved = new Map(entries);
  const matchesFor = (selector) => {
    const matches = resolved.get(selectorKey(selector));
    if (matches === undefined) {
      throw new Error(
        `ViewHierarchy: selector ${JSON.stringify(selector)} was not pre-resolved. ` +
          "Add it to the selectors list passed to captureViewHierarchy(client, [...]).",
      );
    }
    if (!Array.isArray(matches)) {
      throw new CouldNotRunError(
        `ViewHierarchy: findMatches returned ${typeof matches}, not a list of matches`,
      );
    }
    return matches;
  };
  return {
    visible: (selector) => matchesFor(selector).length > 0,
    find: (selector) => {
      const matches = matchesFor(selector);
      return matches.length > 0 ? matches[0] : null;
    },
    findAll: (selector) => matchesFor(selector).slice(),
    [SELECTOR_REGISTRY]: owned,
  };
}

async function reCaptureViewHierarchy(client, base) {
  const owned = base ? base[SELECTOR_REGISTRY] : undefined;
  if (!owned) {
    throw new Error(
      "reCaptureViewHierarchy: cannot refresh this snapshot — it wasn't built via " +
        "captureViewHierarchy(). Build the snapshot via captureViewHierarchy(client, [...selectors]) " +
        "so it can be refreshed, or skip postcondition-style verification.",
    );
  }
  return captureViewHierarchy(client, owned);
}

function describeAction(c) {
  return c.description ? `conditional "${c.id}" (${c.description})` : `conditional "${c.id}"`;
}

function errorText(e) {
  return e instanceof Error ? e.message : String(e);
}

function holds(c, snap, which) {
  const predicate = c[which];
  if (which === "postcondition" && !predicate) return false;
  try {
    return Boolean(predicate(snap));
  } catch (e) {
    throw new ConditionalActionFailedError(
      c.id, `${which} predicate threw for ${describeAction(c)}: ${errorText(e)}`, e,
    );
  }
}

async function runConditionalActions(client, conditionalActions, presnapshot) {
  if (conditionalActions.length === 0) return { handled: [] };
  if (presnapshot === undefined) {
    throw new Error(
      "runConditionalActions: presnapshot is required. Build one via " +
        "`await captureViewHierarchy(client, [...selectors])` and pass it in, where the selectors " +
        "are the ones your condition / postcondition predicates probe.",
    );
  }
  const applicable = conditionalActions.filter(
    (c) => !holds(c, presnapshot, "postcondition") && holds(c, presnapshot, "condition"),
  );
  const handled = [];
  for (const c of applicable) {
    try {
      await c.action();
    } catch (e) {
      if (e instanceof ConditionalActionFailedError) throw e;
      throw new ConditionalActionFailedError(c.id, `action threw for ${describeAction(c)}: ${errorText(e)}`, e);
    }
    if (c.postcondition) {
      const verify = await reCaptureViewHierarchy(client, presnapshot);
      if (!holds(c, verify, "postcondition")) {
        throw new ConditionalActionFailedError(
          c.id, `postcondition not satisfied after action for ${describeAction(c)}`,
        );
      }
    }
    handled.push(c.id);
  }
  return { handled };
}

// ---- zod -----------------------------------------------------------------------------------------

let zod;
/**
 * `z` is zod's: the pinned one the engine links next to this runtime, else the tool's own
 * project's; without either, using it says so.
 */
function loadZod() {
  if (zod !== undefined) return zod;
  const places = [
    () => require("zod"),
    () => require(require.resolve("zod", { paths: [process.cwd()] })),
  ];
  for (const load of places) {
    try {
      zod = load().z;
      return zod;
    } catch {
      // try the next place
    }
  }
  const missing = () => {
    throw new CouldNotRunError(
      "`z` from @trailblaze/scripting needs zod: run `doit toolchain`, or install zod next to the tool",
    );
  };
  zod = new Proxy(function z() {}, { get: missing, apply: missing, construct: missing });
  return zod;
}

// ---- the profiles ----------------------------------------------------------------------------------

/** `@trailblaze/scripting/in-process`: typed tools only, as the SDK's slim profile. */
function inProcessTool(arg0, arg1) {
  if (typeof arg0 === "function") return defineTypedTool(arg0, undefined);
  if (typeof arg0 === "object" && arg0 !== null && !Array.isArray(arg0) && typeof arg1 === "function") {
    return defineTypedTool(arg1, arg0);
  }
  throw new Error(
    "imperative trailblaze.tool(name, spec, handler) is unavailable in the in-process runtime; " +
      "author tools as `export const x = trailblaze.tool<I>(...)`, or declare `runtime: subprocess` " +
      "for tools that need the full MCP runtime.",
  );
}

async function inProcessRun() {
  throw new Error(
    "trailblaze.run() is unavailable in the in-process runtime; in-process tools are registered " +
      "by the synthesized bundle wrapper. Declare `runtime: subprocess` if you need the MCP server.",
  );
}

function profile(toolFn, runFn) {
  return {
    trailblaze: { tool: toolFn, run: runFn },
    tool: toolFn,
    run: runFn,
    fromMeta,
    selectors,
    ConditionalActionFailedError,
    captureViewHierarchy,
    runConditionalActions,
    z: loadZod(),
  };
}

// Named one by one: Node finds a CommonJS module's named exports (for `import { x } from`) in
// assignments like these.
const full = profile(tool, run);
exports.trailblaze = full.trailblaze;
exports.tool = full.tool;
exports.run = full.run;
exports.fromMeta = full.fromMeta;
exports.selectors = full.selectors;
exports.ConditionalActionFailedError = full.ConditionalActionFailedError;
exports.captureViewHierarchy = full.captureViewHierarchy;
exports.runConditionalActions = full.runConditionalActions;
exports.z = full.z;
exports.__profiles = { full, inProcess: profile(inProcessTool, inProcessRun) };
// Used by host.cjs (not part of the authoring API).
exports.__internal = {
  state, TYPED, DRAIN_DELTA, CouldNotRunError, createClient, createMemory, createLogger,
  parseDevice, parseTarget, inputSchemaOf, checkInput,
};
