// Copies a text to the device clipboard through the framework's `mobile_setClipboard`. The
// clipboard lives in the execution context, so a later paste in the same recording sees it
// (and, with TRAILBLAZE_DISABLE_BATCHED_TOOL_EXECUTION=1, does not).
import { trailblaze } from "@trailblaze/scripting";

export interface NotesCopyTextInput {
  /** The text to put on the clipboard. */
  text: string;
}

/** Copy a text to the clipboard, ready to paste into a note. */
export const notes_copyText = trailblaze.tool<NotesCopyTextInput, string>(
  { description: "Copy a text to the clipboard, ready to paste into a note." },
  async (input, ctx) => {
    if (input.text.trim() === "") {
      throw new Error("nothing to copy: the text is empty");
    }
    await ctx.tools.mobile_setClipboard({ text: input.text });
    return `copied ${input.text.length} characters`;
  },
);
