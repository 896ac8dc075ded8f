// The input type comes from a module that does not exist: calls of the tool cannot be checked.
// expect: 4:28 tool TS2307 Cannot find module './shapes'
import { trailblaze } from "@trailblaze/scripting";
import type { Shape } from "./shapes";

export const unresolved_draw = trailblaze.tool<Shape, string>(
  { description: "Draw a shape." },
  async () => "drawn",
);
