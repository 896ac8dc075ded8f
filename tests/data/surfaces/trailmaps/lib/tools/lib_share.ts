// Exported to the trailmaps that depend on lib.
import { trailblaze } from "@trailblaze/scripting";

export interface ShareInput {
  /** Whom to share with. */
  recipient: string;
  channel: "email" | "chat";
}

export const lib_share = trailblaze.tool<ShareInput>(
  { description: "Share the current item." },
  async (input) => `shared with ${input.recipient}`,
);
