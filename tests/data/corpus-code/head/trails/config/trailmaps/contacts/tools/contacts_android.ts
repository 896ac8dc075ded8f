// Stand-in for the Android Contacts launch tool (see the NOTICE of tests/data/corpus-code).
import { trailblaze } from "@trailblaze/scripting";

export const contacts_android_launchApp = trailblaze.tool<Record<string, never>>(
  { description: "Launch Google or AOSP Contacts, whichever is installed." },
  async () => "launched",
);
