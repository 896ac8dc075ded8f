"use strict";
// `@trailblaze/scripting/sub-process`: the SDK's full profile, the same as the package itself.
const profile = require("./index.cjs").__profiles.full;

exports.trailblaze = profile.trailblaze;
exports.tool = profile.tool;
exports.run = profile.run;
exports.fromMeta = profile.fromMeta;
exports.selectors = profile.selectors;
exports.ConditionalActionFailedError = profile.ConditionalActionFailedError;
exports.captureViewHierarchy = profile.captureViewHierarchy;
exports.runConditionalActions = profile.runConditionalActions;
exports.z = profile.z;
