"use strict";
// `selectors`, and the SDK's conditional actions with the view hierarchy they read, in our
// `@trailblaze/scripting` runtime.

const { CouldNotRunError } = require("./context.cjs");

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

exports.selectors = selectors;
exports.ConditionalActionFailedError = ConditionalActionFailedError;
exports.captureViewHierarchy = captureViewHierarchy;
exports.runConditionalActions = runConditionalActions;
