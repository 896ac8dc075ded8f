// Stand-ins for the sample app's authoring-reference tools (see the NOTICE of tests/data/corpus-code).
import { trailblaze } from "@trailblaze/scripting";

export const sampleapp_waitForText = trailblaze.tool<{ text: string; timeoutMs?: number }>(
  { description: "Wait until a text is on screen." },
  async (input) => `saw ${input.text}`,
);

export const sampleapp_launchToLoadedContent = trailblaze.tool<Record<string, never>>(
  { description: "Launch the sample app and wait for its content." },
  async () => "loaded",
);
