// Written for trailblaze-doit from the documented API of @trailblaze/scripting: the typed
// authoring forms, with every field of their spec and every member of their context.
import {
  trailblaze,
  tool,
  z,
  type EmptyInput,
  type ToolContext,
  type TrailblazeMemory,
  type TrailblazeTarget,
  type TrailblazeDevice,
  type TrailblazeTypedToolSpec,
  type TrailheadSpec,
  type TypedToolDefinition,
} from "@trailblaze/scripting";

export interface SignInInput {
  /** Who signs in. */
  user: string;
  remember?: boolean;
}

const trailhead: TrailheadSpec = { to: "home", dynamic: false };

const spec: TrailblazeTypedToolSpec = {
  description: "Sign in.",
  supportedPlatforms: ["android", "ios", "web", "desktop"],
  requiresContext: true,
  requiresHost: false,
  supportedDrivers: ["android-ondevice-accessibility"],
  surfaceToLlm: true,
  isRecordable: true,
  inputSchema: { type: "object", properties: { user: { type: "string" } } },
  trailhead,
};

export const kit_signIn: TypedToolDefinition<SignInInput, string> = trailblaze.tool<SignInInput>(
  spec,
  async (input, ctx: ToolContext) => {
    const memory: TrailblazeMemory = ctx.memory;
    memory.set("user", input.user);
    memory.setJson("remember", { value: input.remember ?? false });
    const remembered = memory.getJson<{ value: boolean }>("remember")?.value;
    const known: readonly string[] = memory.keys();
    if (memory.has("user") && known.length > 0) memory.delete("stale");
    const greeting: string = memory.interpolate("hello ${user} {{memory.user}}");
    const device: TrailblazeDevice | undefined = ctx.device;
    const platform: "ios" | "android" | "web" | undefined = device?.platform;
    const size = device ? device.widthPixels * device.heightPixels : 0;
    const driver: string | undefined = device?.driverType ?? device?.driver;
    const serial: string | undefined = device?.instanceId;
    const target: TrailblazeTarget | undefined = ctx.target;
    const appId = ctx.target?.resolveAppId({ defaultAppId: "com.example" }) ?? target?.appId;
    const url = target?.resolveBaseUrl({ defaultBaseUrl: "https://example.com" });
    const ids: string[] = target?.appIds ?? [];
    const names = [target?.id, target?.displayName, target?.resolvedBaseUrl, ...(target?.baseUrls ?? [])];
    await ctx.tools.tapOnElementWithText({ text: greeting });
    const installed = await ctx.tools.mobile_listInstalledApps({});
    return [platform, size, driver, serial, appId, url, ids.length, names.length, remembered, installed.appIds[0]].join(",");
  },
);

/** A tool without a spec: the handler alone. */
export const kit_bare = tool(async (_input: EmptyInput, ctx) => `${ctx.memory.keys().length}`);

/** The typed form with an output type. */
export const kit_count = trailblaze.tool<{ n: number }, { doubled: number }>(
  { description: "Double a number." },
  async ({ n }) => ({ doubled: n * 2 }),
);

// zod is the real package: its own API, types and inference.
const Schema = z.object({ query: z.string().min(1), limit: z.number().int().optional() });
export type Query = z.infer<typeof Schema>;
export const kit_search = trailblaze.tool<Query>({ description: "Search." }, async (q) => {
  const parsed = Schema.safeParse(q);
  return parsed.success ? parsed.data.query : "invalid";
});
