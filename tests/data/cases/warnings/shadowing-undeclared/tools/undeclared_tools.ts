// The module's pressBack loses to the framework's as surely as a declared one: it should be
// warned about the same way.
// expect: 7:1 warning shadowed-tool scripted tool 'pressBack' has the name of a framework tool, which wins
// xfail: only tools the manifest declares (target.tools, a platform's tools) are compared with the framework's names; a module's tool found in tools/ is shadowed silently (toolmodel/resolution.py)
import { trailblaze } from "@trailblaze/scripting";

export const pressBack = trailblaze.tool<Record<string, never>, string>(
  { description: "Go back, twice." },
  async () => "back twice",
);
