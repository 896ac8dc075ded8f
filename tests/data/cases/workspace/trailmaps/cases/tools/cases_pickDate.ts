// A scripted tool: its input type is TypeScript, so trails that call it are checked against
// CasesPickDateInput by tsc itself (a number, a union of month names, an optional note).
import { trailblaze } from "@trailblaze/scripting";

export interface CasesPickDateInput {
  /** Day of the month, 1 to 31. */
  day: number;
  /** The month, by its three-letter name. */
  month: "JAN" | "FEB" | "MAR" | "APR" | "MAY" | "JUN" | "JUL" | "AUG" | "SEP" | "OCT" | "NOV" | "DEC";
  /** A note to attach to the date. */
  note?: string;
}

/** Pick a date in the date picker of a note. */
export const cases_pickDate = trailblaze.tool<CasesPickDateInput, string>(
  { description: "Pick a date in the date picker of a note." },
  async (input, ctx) => {
    await ctx.tools.tapOnElementWithText({ text: `${input.month} ${input.day}` });
    return `picked ${input.month} ${input.day}`;
  },
);
