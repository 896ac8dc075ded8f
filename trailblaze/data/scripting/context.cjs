"use strict";
// The handler's context in our `@trailblaze/scripting` runtime: `ctx.logger`, `ctx.target`,
// `ctx.device`, `fromMeta`, and the error a helper throws when the engine must read a failure as
// "could not run" rather than the tool's own.

const { createMemory } = require("./memory.cjs");

const META_KEY_TRAILBLAZE = "trailblaze";
const VALID_PLATFORMS = new Set(["ios", "android", "web"]);

/** A failure the engine must read as "could not run", not as the tool's own failure. */
class CouldNotRunError extends Error {
  constructor(message) {
    super(message);
    this.name = "CouldNotRunError";
    this.trailblazeKind = "error";
  }
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

exports.CouldNotRunError = CouldNotRunError;
exports.noopLogger = noopLogger;
exports.createLogger = createLogger;
exports.parseTarget = parseTarget;
exports.parseDevice = parseDevice;
exports.fromMeta = fromMeta;
