// The launch tool of the notes trailmap, run by replay under Node: it picks the Pocket Notes
// variant installed on the device (the trailmap's `app_ids`) and launches it through the
// framework's `launchApp`, in the recording's execution context.
import { trailblaze } from "@trailblaze/scripting";

export interface NotesLaunchAppInput {
  /** Start from a fresh install (the app's data cleared) instead of resuming it. */
  clean?: boolean;
}

/** Launch Pocket Notes, from a clean state when asked. */
export const notes_launchApp = trailblaze.tool<NotesLaunchAppInput, string>(
  { description: "Launch Pocket Notes, from a clean state when asked." },
  async (input, ctx) => {
    const appId = ctx.target?.resolveAppId({ defaultAppId: "com.example.notes" });
    if (!appId) {
      throw new Error("no Pocket Notes app id: the trailmap declares none for Android");
    }
    await ctx.tools.launchApp({ appId, launchMode: input.clean ? "REINSTALL" : "RESUME" });
    // Later calls of the trail can say {{memory.notesAppId}}.
    ctx.memory.set("notesAppId", appId);
    return `launched ${appId}`;
  },
);
