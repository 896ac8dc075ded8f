"use strict";
// `ctx.memory` of our `@trailblaze/scripting` runtime: reads see the trail's memory as the engine
// sent it plus this invocation's writes; the writes go back to the engine (drained) only when the
// tool succeeds. The SDK's semantics, token interpolation included.

const DRAIN_DELTA = Symbol.for("trailblaze.memory.drainDelta");
const BLANK_UNKNOWN_TOKENS_ENV_VAR = "TRAILBLAZE_MEMORY_BLANK_UNKNOWN_TOKENS";
const MEMORY_TOKEN_PREFIX = "memory.";

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

exports.DRAIN_DELTA = DRAIN_DELTA;
exports.createMemory = createMemory;
