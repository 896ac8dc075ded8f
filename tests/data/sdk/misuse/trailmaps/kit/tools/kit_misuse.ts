// Each line marked `MISUSE: <code>` misuses the SDK once and must give exactly that diagnostic.
import {
  captureViewHierarchy,
  ConditionalActionFailedError,
  runConditionalActions,
  selectors,
  trailblaze,
  z,
  type TrailblazeClient,
  type TrailblazeContext,
  type TrailblazeTypedToolSpec,
} from "@trailblaze/scripting";

const platforms: TrailblazeTypedToolSpec = { supportedPlatforms: ["windows"] }; // MISUSE: TS2322
const flag: TrailblazeTypedToolSpec = { requiresContext: "yes" }; // MISUSE: TS2322
const typo: TrailblazeTypedToolSpec = { descripton: "Sign in." }; // MISUSE: TS2561
const trailhead: TrailblazeTypedToolSpec = { trailhead: { to: 3 } }; // MISUSE: TS2322

export const kit_misuse = trailblaze.tool<{ user: string }>({ description: "Misuse." }, async (input, ctx) => {
  const session = ctx.sessionId; // MISUSE: TS2339
  const appId = ctx.target.resolveAppId(); // MISUSE: TS18048
  ctx.memory.set("n", 1); // MISUSE: TS2345
  await ctx.tools.noSuchTool({}); // MISUSE: TS2339
  await ctx.tools.tapOnElementWithText({ txt: "OK" }); // MISUSE: TS2561
  return `${input.name}`; // MISUSE: TS2339
});

export function others(ctx: TrailblazeContext, client: TrailblazeClient): void {
  ctx.logger.trace("x"); // MISUSE: TS2339
  void client.callTool("tapOnElementWithText", { text: "OK" }); // MISUSE: TS2339
  void selectors.web({ ariaRol: "button" }); // MISUSE: TS2561
  void captureViewHierarchy(client, [{ web: { cssSelector: 1 } }]); // MISUSE: TS2322
  void runConditionalActions(client, [{ id: "a" }]); // MISUSE: TS2739
  void new ConditionalActionFailedError(); // MISUSE: TS2554
  void z.strng(); // MISUSE: TS2551
  void trailblaze.run({ port: 1 }); // MISUSE: TS2353
}
void platforms;
void flag;
void typo;
void trailhead;
