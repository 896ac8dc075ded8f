"use strict";
// `@trailblaze/scripting/in-process`: the SDK's slim profile: typed tools only; `run()` and the imperative form throw, as there.
const profile = require("./index.cjs").__profiles.inProcess;

exports.trailblaze = profile.trailblaze;
exports.tool = profile.tool;
exports.run = profile.run;
exports.fromMeta = profile.fromMeta;
exports.selectors = profile.selectors;
exports.ConditionalActionFailedError = profile.ConditionalActionFailedError;
exports.captureViewHierarchy = profile.captureViewHierarchy;
exports.runConditionalActions = profile.runConditionalActions;
exports.z = profile.z;
