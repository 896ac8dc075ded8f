// This trailmap's own runIf, typed in TypeScript: trails that call it are checked against
// RunIfInput by tsc itself.
// expect: nothing
import { trailblaze } from "@trailblaze/scripting";

export interface RunIfInput {
  /** Text that has to be on screen. */
  when: string;
  /** Text to tap then. */
  tap: string;
}

/** Tap something when a text shows. */
export const runIf = trailblaze.tool<RunIfInput, string>(
  { description: "Tap something when a text shows." },
  async (input, ctx) => {
    await ctx.tools.tapOnElementWithText({ text: input.tap });
    return `tapped ${input.tap}`;
  },
);
