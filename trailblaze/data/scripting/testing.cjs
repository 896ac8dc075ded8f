"use strict";
// `@trailblaze/scripting/testing` holds helpers for unit tests of tools (mock clients); a tool that
// needs them at replay cannot run, and loading it says so.
throw new Error(
  "@trailblaze/scripting/testing is not supported at replay: it is for unit tests of tools, " +
    "import it from test files only",
);
