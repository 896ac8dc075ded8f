// Stand-ins for the AOSP Desk Clock tools (see the NOTICE of tests/data/corpus-code).
import { trailblaze } from "@trailblaze/scripting";

export const clock_android_launchApp = trailblaze.tool<Record<string, never>>(
  { description: "Launch the AOSP Desk Clock." },
  async () => "launched",
);

export const clock_clearAlarms = trailblaze.tool<{ keepDefaults?: boolean }>(
  { description: "Delete every alarm." },
  async () => "cleared",
);
