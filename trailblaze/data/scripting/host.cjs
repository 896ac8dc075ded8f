"use strict";
// The Node side of one scripted-tool invocation at replay (trailblaze/replay/scripted.py is the
// other side). The protocol is JSON, one message a line: the engine writes to our stdin, we write
// to our stdout. Everything the tool itself prints goes to stderr, which the engine keeps as the
// tool's log.
//
//   engine -> tool   {"type":"invoke","module":...,"export":...,"tool":...,"args":{},"context":{}}
//   tool -> engine   {"type":"started"}                   (its module is loaded)
//   tool -> engine   {"type":"call","id":1,"tool":"inputText","args":{"text":"hi"}}
//   engine -> tool   {"type":"reply","id":1,"ok":true,"text":"...","structured":...}
//                    {"type":"reply","id":1,"ok":false,"error":"...","kind":"expected"}
//   tool -> engine   {"type":"log","level":"info","message":"...","fields":{...}}
//   tool -> engine   {"type":"result","ok":true,"text":"...","structured":...,"memory":{...}}
//                    {"type":"result","ok":false,"error":"Error: ...","stack":"...","kind":null}
//   tool -> engine   {"type":"unrunnable","error":"..."}   (cannot load, no such export, ...)

const readline = require("node:readline");
const { pathToFileURL } = require("node:url");
const nodeModule = require("node:module");

const protocolWrite = process.stdout.write.bind(process.stdout);
// The tool's own output must not end up in the protocol stream.
process.stdout.write = process.stderr.write.bind(process.stderr);

function send(message) {
  protocolWrite(JSON.stringify(message) + "\n");
}

// Relative imports without an extension (`import { x } from "./helper"`) resolve as a bundler
// would: the compiled `.js` file, then the directory's `index.js`.
// A package the compiled module imports is looked up from where its source is, so the tool's
// own node_modules still serve it.
const RESOLVE_HOOK = `
let outPrefix = "";
export async function initialize(data) {
  outPrefix = data.outPrefix;
}
export async function resolve(specifier, context, next) {
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
      const source = "file:///" + context.parentURL.slice(outPrefix.length);
      try {
        return await next(specifier, { ...context, parentURL: source });
      } catch {}
    }
    throw error;
  }
}`;

let runtime;
let finished = false;
let nextId = 1;
const pending = new Map();

function describe(error) {
  if (error instanceof Error && typeof error.trailblazeKind === "string") {
    // A failed ctx.tools call or an unavailable helper, let through by the tool: its own words.
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

function finish(message) {
  if (finished) return;
  finished = true;
  send(message);
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

async function invoke(request) {
  const { internal } = runtime;
  internal.state.bridge = {
    callTool(tool, args, _ctx) {
      if (finished) {
        return Promise.reject(new Error(`ctx.tools.${tool}(): the tool has already returned`));
      }
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { tool, resolve, reject });
        send({ type: "call", id, tool, args });
      });
    },
  };
  let namespace;
  try {
    namespace = await import(pathToFileURL(request.module).href);
  } catch (error) {
    const { error: text, stack } = describe(error);
    finish({ type: "unrunnable", error: `cannot load ${request.source}: ${text}`, stack });
    return;
  }
  const exported = namespace[request.export];
  let call;
  if (typeof exported === "function") {
    call = exported;
  } else if (internal.state.imperative.has(request.tool)) {
    call = internal.state.imperative.get(request.tool).handler;
  } else {
    const exports = Object.keys(namespace).filter((k) => typeof namespace[k] === "function");
    const registered = [...internal.state.imperative.keys()];
    const known = [...exports, ...registered.map((n) => `${n} (registered)`)];
    const what = exported === undefined ? "does not export" : "exports no function named";
    finish({
      type: "unrunnable",
      error:
        `${request.source} ${what} '${request.export}'` +
        (known.length ? ` (it has: ${known.join(", ")})` : " (it defines no tools)"),
    });
    return;
  }
  const platforms = exported?.[internal.TYPED]?.spec?.supportedPlatforms;
  const platform = request.context?.device?.platform;
  if (Array.isArray(platforms) && platforms.length > 0 && !platforms.some(
    (p) => String(p).toLowerCase() === platform,
  )) {
    finish({
      type: "unrunnable",
      error: `${request.tool} supports only ${platforms.join(", ")} (its supportedPlatforms), not ${platform}`,
    });
    return;
  }
  send({ type: "started" }); // loaded: the tool's own time starts here
  const envelope = request.context ?? {};
  const memory = internal.createMemory(envelope.memory);
  const ctx = {
    sessionId: String(envelope.sessionId ?? ""),
    invocationId: String(envelope.invocationId ?? ""),
    device: internal.parseDevice(envelope.device),
    target: internal.parseTarget(envelope.target),
    memory,
    logger: internal.createLogger(send, request.tool),
  };
  const client = internal.createClient(ctx);
  try {
    const out = normalize(await call(request.args ?? {}, ctx, client));
    if (out.isError) {
      finish({ type: "result", ok: false, error: out.text || "the tool returned isError", kind: null });
      return;
    }
    const delta = memory[internal.DRAIN_DELTA]();
    // An imperative tool may return its own memory delta in `_meta.trailblaze`, as MCP tools do.
    const own = out.meta && typeof out.meta === "object" ? out.meta.trailblaze : undefined;
    if (own && typeof own === "object") {
      Object.assign(delta.sets, own.memoryDelta ?? {});
      delta.deletions.push(...(Array.isArray(own.memoryDeletions) ? own.memoryDeletions : []));
    }
    finish({ type: "result", ok: true, text: out.text, structured: out.structured ?? null, memory: delta });
  } catch (error) {
    const described = describe(error);
    let kind = null;
    try {
      kind = error && typeof error.trailblazeKind === "string" ? error.trailblazeKind : null;
    } catch {}
    finish({ type: "result", ok: false, error: described.error, stack: described.stack, kind });
  }
}

function onReply(message) {
  const waiter = pending.get(message.id);
  if (waiter === undefined) return;
  pending.delete(message.id);
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

process.on("uncaughtException", (error) => {
  const { error: text, stack } = describe(error);
  finish({ type: "unrunnable", error: `crashed: ${text}`, stack });
  process.exit(70);
});
process.on("unhandledRejection", (reason) => {
  const { error: text, stack } = describe(reason);
  finish({ type: "unrunnable", error: `crashed (unhandled rejection): ${text}`, stack });
  process.exit(70);
});

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
let started = false;
lines.on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (!started && message.type === "invoke") {
    started = true;
    runtime = { internal: require(message.runtime).__internal };
    nodeModule.register("data:text/javascript," + encodeURIComponent(RESOLVE_HOOK), {
      data: { outPrefix: pathToFileURL(message.outDir).href.replace(/\/?$/, "/") },
    });
    invoke(message).finally(() => {
      lines.close();
      process.stdin.destroy();
    });
  } else if (message.type === "reply") {
    onReply(message);
  }
});
lines.on("close", () => {
  if (!finished) {
    // The engine is gone (or never asked): nobody is left to answer the tool's calls.
    finish({ type: "unrunnable", error: started ? "the engine went away" : "no invocation was sent" });
    process.exit(75);
  }
});
