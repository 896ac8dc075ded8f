// Declarations of `@trailblaze/scripting/testing`, written for trailblaze-doit from how the SDK's
// own samples unit-test a scripted tool: call the tool's function directly with a mock client (it
// records every `client.tools.X(args)` and answers from stubs) and a mock session context, with no
// daemon and no device. A stubbed `errorMessage` makes the call throw as the real client does
// (`trailblaze.client.callTool("X") tool failed: <message>`).

import type {
  TrailblazeClient,
  TrailblazeContext,
  TrailblazeDevice,
  TrailblazeToolMap,
} from "./index.js";

type ResultOf<E> = E extends { result: infer R } ? R : never;

/** One call a tool made through the mock client, in call order. */
export interface MockToolCall {
  /** The tool's name, as in `client.tools.<name>`. */
  readonly tool: string;
  /** The arguments as the tool passed them (`{}` when it passed none). */
  readonly args: Record<string, unknown>;
}

/**
 * What the mock answers for one tool. A non-empty `errorMessage` makes the call throw; otherwise
 * it resolves to `structuredContent` when given, else to `textContent` (`""` by default).
 */
export interface MockToolResponse<Name extends keyof TrailblazeToolMap = keyof TrailblazeToolMap> {
  textContent?: string;
  errorMessage?: string;
  structuredContent?: ResultOf<TrailblazeToolMap[Name]>;
}

/** The client a tool's unit test passes as the tool's third argument. */
export interface MockTrailblazeClient extends TrailblazeClient {
  /** Every call made so far, oldest first. */
  readonly calls: readonly MockToolCall[];
  /** Answer every later call of `tool` with `response`, until `reset()`. */
  stub<Name extends keyof TrailblazeToolMap>(tool: Name, response: MockToolResponse<Name>): void;
  /** Forget the recorded calls and every stub. */
  reset(): void;
}

/** The session's target in a mock context: plain data, resolved as a live session would. */
export interface MockTargetOptions {
  id: string;
  displayName?: string;
  appIds?: string[];
  appId?: string;
  baseUrls?: string[];
  resolvedBaseUrl?: string;
}

/**
 * The mock session: the device's fields (defaults: an Android phone, 1080x2400, on the
 * accessibility driver; `driverType` follows `platform` when not given), the memory's initial
 * values, an optional target and the envelope's ids.
 */
export interface MockContextOptions extends Partial<TrailblazeDevice> {
  memory?: Record<string, string>;
  target?: MockTargetOptions;
  sessionId?: string;
  invocationId?: string;
  baseUrl?: string;
}

/** A client that records every tool call and answers from stubs (success, `""`, by default). */
export declare function createMockClient(): MockTrailblazeClient;

/** A session context for calling a tool's function directly: `tool(args, ctx, client)`. */
export declare function createMockContext(options?: MockContextOptions): TrailblazeContext;
