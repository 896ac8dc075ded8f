// A scripted tool of the notes trailmap. Its input type is declared here, in TypeScript, and
// the generated surface refers to it: trails that call `notes_openNote` are type-checked
// against `NotesOpenNoteInput` by tsc itself.
import { trailblaze } from "@trailblaze/scripting";

export interface NotesOpenNoteInput {
  /** Title of the note to open, exactly as shown in the list. */
  title: string;
  /** Pin the note to the top of the list after opening it. */
  pin?: boolean;
}

/** Open a note by its title from the notes list. */
export const notes_openNote = trailblaze.tool<NotesOpenNoteInput, string>(
  { description: "Open a note by its title from the notes list." },
  async (input, ctx) => {
    await ctx.tools.tapOnElementWithText({ text: input.title });
    if (input.pin) {
      await ctx.tools.longPressOnElementWithText({ text: input.title });
    }
    return `opened ${input.title}`;
  },
);
