"use strict";
// The Node side of scripted tools at replay (trailblaze/replay/scripted/ is the other side). One
// child serves one replay thread for many invocations. The protocol is JSON, one message a line:
// the engine writes to our stdin, we write to our stdout. Every message about an invocation
// carries its `id`; invocations nest (a tool's ctx.tools call may be another scripted tool).
//
//   engine -> child  {"type":"hello","runtime":...,"outDir":...}          (first, once)
//   engine -> child  {"type":"invoke","id":1,"session":1,"module":...,"export":...,"tool":...,
//                     "args":{},"context":{}}
//   child -> engine  {"type":"started","id":1,"inputSchema":{...}|null}   (its module is loaded)
//   engine -> child  {"type":"args","id":1,"args":{...}}   (only when it sent an inputSchema:
//                    {"type":"drop","id":1}                 the engine's parse of the arguments)
//   child -> engine  {"type":"call","id":1,"call":1,"tool":"inputText","args":{"text":"hi"}}
//   engine -> child  {"type":"reply","id":1,"call":1,"ok":true,"text":"...","structured":...}
//                    {"type":"reply","id":1,"call":1,"ok":false,"error":"...","kind":"expected"}
//   child -> engine  {"type":"log","id":1,"level":"info"|"console",...,"message":"...","fields":{}}
//   child -> engine  {"type":"result","id":1,"ok":true,"text":"...","structured":...,"memory":{}}
//                    {"type":"result","id":1,"ok":false,"error":"Error: ...","stack":"...","kind":null}
//   child -> engine  {"type":"unrunnable","id":1,"error":"..."}  (cannot load, no such export, ...)
//   child -> engine  {"type":"crash","error":"...","stack":"..."}  (then it exits 70)
//
// Module state. A tool module (and the modules it imports from the compiled tree) is evaluated
// once per session, the engine's name for one trail: the calls of one trail share its top-level
// state, the next trail gets fresh modules, as a reference session gets its own runtime. Globals
// a session added, environment variables it changed and a directory it changed to are undone
// before the next one starts.

const readline = require("node:readline");
const { AsyncLocalStorage } = require("node:async_hooks");
const { pathToFileURL } = require("node:url");
const nodeModule = require("node:module");

const protocolWrite = process.stdout.write.bind(process.stdout);
const stderrWrite = process.stderr.write.bind(process.stderr);
const current = new AsyncLocalStorage();

function send(message) {
  protocolWrite(JSON.stringify(message) + "\n");
}

// What a tool prints (console.*, process.stdout/stderr) is its log, sent with its invocation's id.
// Output from outside any invocation goes to our stderr; it must never reach the protocol stream.
function capture(stream) {
  stream.write = (chunk, encoding, callback) => {
    const done = typeof encoding === "function" ? encoding : callback;
    const invocation = current.getStore();
    if (invocation === undefined) return stderrWrite(chunk, encoding, callback);
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    invocation.print(text);
    if (typeof done === "function") process.nextTick(done);
    return true;
  };
}
capture(process.stdout);
capture(process.stderr);

// Relative imports without an extension (`import { x } from "./helper"`) resolve as a bundler
// would: the compiled `.js` file, then the directory's `index.js`. A package the compiled module
// imports is looked up from where its source is, so the tool's own node_modules still serve it.
// A compiled module imported for a session (`?session=N`) passes the session on to the compiled
// modules it imports, so the whole tree is fresh per session; packages are shared.
const RESOLVE_HOOK = `
let outPrefix = "";
export async function initialize(data) {
  outPrefix = data.outPrefix;
}
function tag(resolved, parentURL) {
  if (!parentURL || !resolved.url.startsWith(outPrefix) || resolved.url.includes("/node_modules/")) {
    return resolved;
  }
  const query = new URL(parentURL).search;
  if (!query || resolved.url.includes("?")) return resolved;
  return { ...resolved, url: resolved.url + query };
}
async function find(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    if (!["ERR_MODULE_NOT_FOUND", "ERR_UNSUPPORTED_DIR_IMPORT"].includes(error?.code)) throw error;
    const relative = specifier.startsWith("./") || specifier.startsWith("../");
    if (relative) {
      for (const suffix of [".js", "/index.js"]) {
        try {
          return await next(specifier + suffix, context);
        } catch {}
      }
    } else if (context.parentURL && context.parentURL.startsWith(outPrefix)) {
      const source = "file:///" + context.parentURL.slice(outPrefix.length).split("?")[0];
      try {
        return await next(specifier, { ...context, parentURL: source });
      } catch {}
    }
    throw error;
  }
}
export async function resolve(specifier, context, next) {
  return tag(await find(specifier, context, next), context.parentURL);
}`;

let runtime;
const invocations = new Map();
let session = null;
let baseline = null;

function describe(error) {
  if (error instanceof Error && typeof error.trailblazeKind === "string") {
    // A failed ctx.tools call or a helper replay lacks, let through by the tool: its own words.
    return { error: String(error.message), stack: safeStack(error) };
  }
  if (error instanceof Error) {
    let name = "Error";
    try {
      if (typeof error.name === "string" && error.name) name = error.name;
    } catch {}
    let message = "";
    try {
      message = String(error.message);
    } catch {
      message = "<unstringifiable error>";
    }
    return { error: message ? `${name}: ${message}` : name, stack: safeStack(error) };
  }
  let text;
  try {
    text = String(error);
  } catch {
    text = "<unstringifiable thrown value>";
  }
  return { error: `a non-Error value was thrown: ${text}`, stack: null };
}

function safeStack(error) {
  try {
    return typeof error.stack === "string" ? error.stack.slice(0, 16384) : null;
  } catch {
    return null;
  }
}

/** The tool's return value as text for the log, and structured when it is not a string. */
function normalize(result) {
  if (result === undefined || result === null) return { text: "" };
  if (typeof result === "string") return { text: result };
  if (typeof result === "object" && Array.isArray(result.content)) {
    const text = result.content
      .filter((c) => c && c.type === "text" && typeof c.text === "string")
      .map((c) => c.text)
      .join("\n");
    return {
      text,
      structured: result.structuredContent,
      isError: result.isError === true,
      meta: result._meta,
    };
  }
  let text;
  try {
    text = JSON.stringify(result);
  } catch {
    text = String(result);
  }
  return { text: text ?? String(result), structured: result };
}

// ---- sessions: fresh modules, globals and environment per trail ------------------------------

function snapshotGlobals() {
  return { keys: new Set(Reflect.ownKeys(globalThis)), env: { ...process.env }, cwd: process.cwd() };
}

function startSession(id) {
  if (session !== null && session.id === id) return session;
  if (session !== null) {
    for (const key of Reflect.ownKeys(globalThis)) {
      if (baseline.keys.has(key)) continue;
      try {
        delete globalThis[key];
      } catch {}
    }
    for (const key of Object.keys(process.env)) {
      if (!(key in baseline.env)) delete process.env[key];
    }
    Object.assign(process.env, baseline.env);
    try {
      process.chdir(baseline.cwd);
    } catch {}
    process.exitCode = undefined;
  }
  runtime.state.imperative = new Map();
  session = { id };
  return session;
}

// ---- one invocation ----------------------------------------------------------------------------

class Invocation {
  constructor(request) {
    this.id = request.id;
    this.request = request;
    this.finished = false;
    this.nextCall = 1;
    this.pending = new Map();
    this.printed = "";
    this.waitingArgs = null;
  }

  send(message) {
    send({ ...message, id: this.id });
  }

  print(text) {
    this.printed += text;
    let newline;
    while ((newline = this.printed.indexOf("\n")) >= 0) {
      this.log("console", this.printed.slice(0, newline));
      this.printed = this.printed.slice(newline + 1);
    }
  }

  log(level, message, fields) {
    this.send({ type: "log", level, message: String(message), fields: fields ?? null });
  }

  finish(message) {
    if (this.finished) return;
    if (this.printed) this.print("\n");
    this.finished = true;
    invocations.delete(this.id);
    for (const waiter of this.pending.values()) {
      waiter.reject(new Error(`ctx.tools.${waiter.tool}(): the tool has already returned`));
    }
    this.pending.clear();
    this.send(message);
  }

  callTool(tool, args) {
    if (this.finished) {
      return Promise.reject(new Error(`ctx.tools.${tool}(): the tool has already returned`));
    }
    const call = this.nextCall++;
    return new Promise((resolve, reject) => {
      this.pending.set(call, { tool, resolve, reject });
      this.send({ type: "call", call, tool, args });
    });
  }

  onReply(message) {
    const waiter = this.pending.get(message.call);
    if (waiter === undefined) return;
    this.pending.delete(message.call);
    if (message.ok) {
      waiter.resolve({
        success: true,
        textContent: typeof message.text === "string" ? message.text : "",
        errorMessage: "",
        structuredContent: message.structured ?? undefined,
      });
      return;
    }
    const error = new Error(`${message.label ?? waiter.tool} failed: ${message.error}`);
    error.trailblazeKind = message.kind ?? "error";
    error.tool = waiter.tool;
    waiter.reject(error);
  }

  /** The arguments the engine parsed with the tool's own input schema (or null: dropped). */
  engineArgs() {
    return new Promise((resolve) => {
      this.waitingArgs = resolve;
    });
  }

  onArgs(message) {
    const waiting = this.waitingArgs;
    this.waitingArgs = null;
    // `args: null`: the engine did not parse them (no schema it can use): the call's own.
    const args = message.args ?? this.request.args ?? {};
    if (waiting !== null) waiting(message.type === "args" ? args : null);
  }

  async run() {
    const request = this.request;
    const { internal } = runtime;
    let namespace;
    try {
      const url = pathToFileURL(request.module).href + `?session=${request.session}`;
      namespace = await import(url);
    } catch (error) {
      const { error: text, stack } = describe(error);
      this.finish({ type: "unrunnable", error: `cannot load ${request.source}: ${text}`, stack });
      return;
    }
    const tool = this.find(namespace);
    if (tool === undefined) return;
    const platforms = tool.spec?.supportedPlatforms;
    const platform = request.context?.device?.platform;
    if (Array.isArray(platforms) && platforms.length > 0 && !platforms.some(
      (p) => String(p).toLowerCase() === platform,
    )) {
      this.finish({
        type: "unrunnable",
        error: `${request.tool} supports only ${platforms.join(", ")} (its supportedPlatforms), not ${platform}`,
      });
      return;
    }
    let args = request.args ?? {};
    const schema = internal.inputSchemaOf(tool, request.tool);
    this.send({ type: "started", inputSchema: schema }); // loaded: the tool's own time starts here
    if (schema !== null) {
      args = await this.engineArgs();
      if (args === null) {
        this.finished = true; // the engine refused the arguments and reported it
        invocations.delete(this.id);
        return;
      }
    }
    const checked = internal.checkInput(tool, request.tool, args);
    if (!checked.ok) {
      this.finish({ type: "unrunnable", error: checked.error });
      return;
    }
    const envelope = request.context ?? {};
    const memory = internal.createMemory(envelope.memory);
    const ctx = {
      sessionId: String(envelope.sessionId ?? ""),
      invocationId: String(envelope.invocationId ?? ""),
      device: internal.parseDevice(envelope.device),
      target: internal.parseTarget(envelope.target),
      memory,
      logger: internal.createLogger((level, message, fields) => this.log(level, message, fields)),
    };
    const client = internal.createClient(ctx, (name, callArgs) => this.callTool(name, callArgs));
    try {
      const out = normalize(await tool.call(checked.args, ctx, client));
      if (out.isError) {
        this.finish({ type: "result", ok: false, error: out.text || "the tool returned isError", kind: null });
        return;
      }
      const delta = memory[internal.DRAIN_DELTA]();
      // An imperative tool may return its own memory delta in `_meta.trailblaze`, as MCP tools do.
      const own = out.meta && typeof out.meta === "object" ? out.meta.trailblaze : undefined;
      if (own && typeof own === "object") {
        Object.assign(delta.sets, own.memoryDelta ?? {});
        delta.deletions.push(...(Array.isArray(own.memoryDeletions) ? own.memoryDeletions : []));
      }
      this.finish({ type: "result", ok: true, text: out.text, structured: out.structured ?? null, memory: delta });
    } catch (error) {
      const described = describe(error);
      let kind = null;
      try {
        kind = error && typeof error.trailblazeKind === "string" ? error.trailblazeKind : null;
      } catch {}
      this.finish({ type: "result", ok: false, error: described.error, stack: described.stack, kind });
    }
  }

  /** The tool to call: the module's export of that name, else a tool it registered by name. */
  find(namespace) {
    const request = this.request;
    const { internal } = runtime;
    const exported = namespace[request.export];
    if (typeof exported === "function") {
      return { call: exported, spec: exported[internal.TYPED]?.spec, typed: exported[internal.TYPED] };
    }
    const registered = runtime.state.imperative.get(request.tool);
    if (registered !== undefined) {
      return { call: registered.handler, spec: registered.spec, imperative: registered };
    }
    const exports = Object.keys(namespace).filter((k) => typeof namespace[k] === "function");
    const names = [...runtime.state.imperative.keys()];
    const known = [...exports, ...names.map((n) => `${n} (registered)`)];
    const what = exported === undefined ? "does not export" : "exports no function named";
    this.finish({
      type: "unrunnable",
      error:
        `${request.source} ${what} '${request.export}'` +
        (known.length ? ` (it has: ${known.join(", ")})` : " (it defines no tools)"),
    });
    return undefined;
  }
}

// ---- the message loop --------------------------------------------------------------------------

function crash(prefix, error) {
  const { error: text, stack } = describe(error);
  send({ type: "crash", error: `${prefix}${text}`, stack });
  process.exit(70);
}
process.on("uncaughtException", (error) => crash("crashed: ", error));
process.on("unhandledRejection", (reason) => crash("crashed (unhandled rejection): ", reason));

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.type === "hello" && runtime === undefined) {
    const loaded = require(message.runtime);
    runtime = { internal: loaded.__internal, state: loaded.__internal.state };
    nodeModule.register("data:text/javascript," + encodeURIComponent(RESOLVE_HOOK), {
      data: { outPrefix: pathToFileURL(message.outDir).href.replace(/\/?$/, "/") },
    });
    baseline = snapshotGlobals();
  } else if (message.type === "invoke" && runtime !== undefined) {
    startSession(message.session);
    const invocation = new Invocation(message);
    invocations.set(message.id, invocation);
    current.run(invocation, () => invocation.run());
  } else if (message.type === "reply") {
    invocations.get(message.id)?.onReply(message);
  } else if (message.type === "args" || message.type === "drop") {
    invocations.get(message.id)?.onArgs(message);
  }
});
lines.on("close", () => {
  // The engine is done with us (0), or gone while tools still wait for it (75).
  const waiting = [...invocations.values()];
  for (const invocation of waiting) {
    invocation.finish({ type: "unrunnable", error: "the engine went away" });
  }
  process.exit(waiting.length === 0 ? 0 : 75);
});
