// The imperative (MCP-registered) form and the rest of index.ts's exports.
import {
  captureViewHierarchy,
  ConditionalActionFailedError,
  fromMeta,
  run,
  runConditionalActions,
  selectors,
  trailblaze,
  z,
  type Bounds,
  type ConditionalAction,
  type DriverNodeMatchAndroidAccessibility,
  type DriverNodeMatchAndroidMaestro,
  type DriverNodeMatchCompose,
  type DriverNodeMatchIosAxe,
  type DriverNodeMatchIosMaestro,
  type DriverNodeMatchWeb,
  type InstalledApp,
  type ListInstalledAppsDetailedResult,
  type ListInstalledAppsResult,
  type MatchDescriptor,
  type RunOptions,
  type TrailblazeCallToolResult,
  type TrailblazeClient,
  type TrailblazeContext,
  type TrailblazeLogger,
  type TrailblazeLogLevel,
  type TrailblazeNodeSelector,
  type TrailblazeToolEntry,
  type TrailblazeToolHandler,
  type TrailblazeToolMap,
  type TrailblazeToolSpec,
  type ViewHierarchy,
} from "@trailblaze/scripting";

const android: DriverNodeMatchAndroidAccessibility = { textRegex: "OK", isClickable: true };
const maestro: DriverNodeMatchAndroidMaestro = { textRegex: "OK", enabled: true };
const web: DriverNodeMatchWeb = { ariaRole: "button", ariaNameRegex: "Submit" };
const compose: DriverNodeMatchCompose = { testTag: "submit" };
const ios: DriverNodeMatchIosMaestro = { accessibilityTextRegex: "OK" };
const axe: DriverNodeMatchIosAxe = { labelRegex: "OK", enabled: true };
const ok: TrailblazeNodeSelector = { androidAccessibility: android, below: { web }, index: 0 };
const all: TrailblazeNodeSelector[] = [
  selectors.androidAccessibility(android),
  selectors.androidMaestro(maestro),
  selectors.web(web),
  selectors.compose(compose),
  selectors.iosMaestro(ios),
  selectors.iosAxe(axe),
  ok,
];

function area(match: MatchDescriptor): number {
  const b: Bounds | null | undefined = match.bounds;
  return b ? (b.right - b.left) * (b.bottom - b.top) : 0;
}

const level: TrailblazeLogLevel = "info";
function log(logger: TrailblazeLogger, message: string): void {
  logger.debug(message);
  logger.info(message, { level });
  logger.warn(message);
  logger.error(message, { cause: "none" });
}

const handler: TrailblazeToolHandler = async (args, ctx: TrailblazeContext | undefined, client: TrailblazeClient) => {
  if (!ctx) return { content: [{ type: "text", text: "no session" }], isError: true };
  log(ctx.logger, `${ctx.sessionId} ${ctx.invocationId} ${ctx.baseUrl ?? ""} ${ctx.runtime ?? ""}`);
  const snapshot: ViewHierarchy = await captureViewHierarchy(client, all);
  const first = snapshot.find(ok);
  const dismiss: ConditionalAction = {
    id: "dismiss",
    description: "Dismiss the dialog",
    condition: (snap) => snap.visible(ok),
    action: async () => {
      await client.tools.tapOnElementBySelector({ nodeSelector: ok });
    },
    postcondition: (snap) => snap.findAll(ok).length === 0,
  };
  try {
    const { handled } = await runConditionalActions(client, [dismiss], snapshot);
    const matches: MatchDescriptor[] = await client.tools.findMatches({ selector: ok, timeoutMs: 500 });
    const gone: boolean = await client.tools.waitUntilNotVisible({ nodeSelector: ok });
    const detailed: ListInstalledAppsDetailedResult = await client.tools.mobile_listInstalledAppsDetailed({ includeSystemApps: false });
    const apps: InstalledApp[] = detailed.apps;
    const listed: ListInstalledAppsResult = await client.tools.mobile_listInstalledApps({});
    await client.tools.exec({ argv: ["true"], timeoutSeconds: 5 });
    await client.tools.android_adbShell({ command: ["echo", "hi"] });
    const title: string = await client.tools.web_evaluate((a: number, b: number) => `${a + b}`, 1, 2);
    const raw: string = await client.tools.web_evaluate("document.title");
    return {
      content: [{ type: "text", text: [handled.join(","), matches.length, gone, apps.length, listed.appIds.length, title, raw, args["x"], first ? area(first) : 0].join(";") }],
      isError: false,
      structuredContent: { handled },
    };
  } catch (error) {
    if (error instanceof ConditionalActionFailedError) {
      return { content: [{ type: "text", text: `${error.conditionalActionId}: ${String(error.cause)}` }], isError: true };
    }
    throw error;
  }
};

const imperative: TrailblazeToolSpec = {
  description: "Dismiss a dialog if one is open.",
  inputSchema: { x: z.string().optional() },
  outputSchema: z.object({ handled: z.array(z.string()) }),
  _meta: { "trailblaze/supportedDrivers": ["android-ondevice-accessibility"] },
};
trailblaze.tool("kit_dismiss", imperative, handler);
trailblaze.tool("kit_ping", { description: "Ping", inputSchema: {} }, async () => ({ content: [{ type: "text", text: "pong" }] }));

const context = fromMeta({ trailblaze: { sessionId: "s", invocationId: "i" } });
const result: TrailblazeCallToolResult = { success: true, textContent: "", errorMessage: "" };
type Entry = TrailblazeToolMap["findMatches"] extends TrailblazeToolEntry ? true : false;
const entryIsAToolEntry: Entry = true;
const options: RunOptions = { name: "kit", version: "1.0.0" };
void context;
void result;
void entryIsAToolEntry;
await run(options);
await trailblaze.run();
