// Declarations of `@trailblaze/scripting/testing`, the SDK's helpers for a scripted tool's unit
// test (`bun test`): call the tool's function directly with a mock client (it records every
// `client.tools.X(args)` and answers from stubs) and a mock session context, with no daemon and
// no device. The names, shapes and defaults are the SDK's own (`testing.ts` of
// `@trailblaze/scripting`): a test that compiles and passes against the SDK does here too.

import type {
  MatchDescriptor,
  TrailblazeClient,
  TrailblazeContext,
  TrailblazeDevice,
  TrailblazeTarget,
} from "./index.js";

/** One call a tool made through the mock client, in call order. */
export interface MockCall {
  /** The tool's name, as in `client.tools.<name>`. */
  tool: string;
  /** The arguments as the tool passed them (`{}` when it passed none). */
  args: Record<string, unknown>;
}

/**
 * What the mock answers for one tool. A non-empty `errorMessage` makes the call throw with the
 * real client's wording (`trailblaze.client.callTool("X") tool failed: <message>`); otherwise
 * it resolves to `structuredContent` when it is neither undefined nor null, else `textContent`.
 */
export interface MockStubResponse {
  textContent: string;
  errorMessage?: string;
  structuredContent?: unknown;
}

/** The client a tool's unit test passes as the tool's third argument. */
export type MockTrailblazeClient = TrailblazeClient & {
  /** Every call made so far, oldest first; the array itself, so a test may splice or clear it. */
  calls: MockCall[];
  /** Answer every later call of `toolName` with `response`, until `reset()`. */
  stub(toolName: string, response: MockStubResponse): void;
  /** Forget the recorded calls (in place) and every stub. */
  reset(): void;
};

/** A client that records every tool call and answers from stubs (success, `""`, by default). */
export declare function createMockClient(): MockTrailblazeClient;

/**
 * The mock session. Defaults: ids `"mock-session"` / `"mock-invocation"`, a 1080x2400 device on
 * driver `"mock-driver"` (`device.driver`, the older name, is taken as `driverType` when that is
 * not given), no target, empty memory (non-string values are left out). `runtime: "host"` gives
 * a context without `runtime`, as on the host path.
 */
export interface CreateMockContextOptions {
  platform: TrailblazeDevice["platform"];
  sessionId?: string;
  invocationId?: string;
  baseUrl?: string;
  runtime?: "host" | "ondevice";
  device?: {
    widthPixels?: number;
    heightPixels?: number;
    driverType?: string;
    driver?: string;
    instanceId?: string;
  };
  target?: TrailblazeTarget;
  memory?: Record<string, unknown>;
}

/**
 * A client whose `findMatches` and `waitUntilNotVisible` answer from queues, one answer per
 * call, for flows that look at a changing screen several times; every other tool answers `""`.
 * A call with its queue empty throws, naming the arguments.
 */
export interface QueuedFindMatchesClient extends TrailblazeClient {
  calls: Array<{ tool: string; args: Record<string, unknown> }>;
  /** Append answers for the next `findMatches` calls, one per call. */
  queueFindMatches(responses: Array<MatchDescriptor[]>): void;
  /** Append answers for the next `waitUntilNotVisible` calls, one per call. */
  queueWaitUntilNotVisible(responses: boolean[]): void;
}

/** A client with queued `findMatches` / `waitUntilNotVisible` answers. */
export declare function createQueuedFindMatchesClient(): QueuedFindMatchesClient;

/** A session context for calling a tool's function directly: `tool(args, ctx, client)`. */
export declare function createMockContext(opts: CreateMockContextOptions): TrailblazeContext;
