// A scripted tool whose input type is declared here, in TypeScript: the surface refers to it.
import { trailblaze } from "@trailblaze/scripting";

export interface FillFormInput {
  /** Field labels to the text to type into them. */
  fields: Record<string, string>;
  /** Submit the form after filling it. */
  submit?: boolean;
  mode?: "fast" | "careful";
}

/** Fill the form on screen. */
export const app_fillForm = trailblaze.tool<FillFormInput, string>(
  { description: "Fill the form on screen." },
  async (input, ctx) => {
    for (const [label, text] of Object.entries(input.fields)) {
      await ctx.tools.tapOnElementWithText({ text: label });
      await ctx.tools.inputText({ text });
    }
    return input.submit ? "submitted" : "filled";
  },
);
