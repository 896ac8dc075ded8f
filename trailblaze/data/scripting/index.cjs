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
// the `in-process` / `sub-process` profiles and the `testing` helpers (mock client and context).

const { createMemory, DRAIN_DELTA } = require("./memory.cjs");
const {
  CouldNotRunError, createLogger, fromMeta, noopLogger, parseDevice, parseTarget,
} = require("./context.cjs");
const {
  ConditionalActionFailedError, captureViewHierarchy, runConditionalActions, selectors,
} = require("./conditional.cjs");

const STATE_KEY = Symbol.for("trailblaze-doit.scripting.state");
const TYPED = Symbol.for("trailblaze-doit.scripting.typedTool");

/** One state per process, whichever way (require or import) the module was loaded. */
const state = (globalThis[STATE_KEY] ??= { imperative: new Map() });

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
// Used by host.cjs and testing.cjs (not part of the authoring API).
exports.__internal = {
  state, TYPED, DRAIN_DELTA, CouldNotRunError, createClient, createMemory, createLogger,
  parseDevice, parseTarget, inputSchemaOf, checkInput, createToolsProxy, noopLogger,
};
