// Declarations of `@trailblaze/scripting/in-process`, written for trailblaze-doit from the SDK's
// documented surface: the slim profile tools run with unless they declare `runtime: subprocess`.
// It offers the package's lightweight API (everything but the MCP server) and its own `tool`,
// `run` and `trailblaze`: `tool` has only the typed forms, and `run()` takes no options (it
// throws at run time: no MCP server is started in-process).

import type { ToolContext, TrailblazeTypedToolSpec, TypedToolDefinition } from "./index.js";

export {
  z,
  fromMeta,
  captureViewHierarchy,
  ConditionalActionFailedError,
  runConditionalActions,
  selectors,
} from "./index.js";
export type {
  TrailblazeContext,
  TrailblazeDevice,
  TrailblazeLogger,
  TrailblazeLogLevel,
  TrailblazeMemory,
  TrailblazeTarget,
  TrailblazeCallToolResult,
  TrailblazeClient,
  TrailblazeToolEntry,
  TrailblazeToolMap,
  ConditionalAction,
  ViewHierarchy,
  Bounds,
  DriverNodeMatchAndroidAccessibility,
  DriverNodeMatchAndroidMaestro,
  DriverNodeMatchCompose,
  DriverNodeMatchIosAxe,
  DriverNodeMatchIosMaestro,
  DriverNodeMatchWeb,
  MatchDescriptor,
  TrailblazeNodeSelector,
  ToolContext,
  EmptyInput,
  TypedToolDefinition,
  TrailblazeTypedToolSpec,
  TrailheadSpec,
} from "./index.js";

/** A typed tool from its handler alone. */
export declare function tool<TInput = Record<string, never>, TResult = string>(
  handler: (input: TInput, ctx: ToolContext) => Promise<TResult>,
): TypedToolDefinition<TInput, TResult>;
/** A typed tool with a spec. */
export declare function tool<TInput = Record<string, never>, TResult = string>(
  spec: TrailblazeTypedToolSpec,
  handler: (input: TInput, ctx: ToolContext) => Promise<TResult>,
): TypedToolDefinition<TInput, TResult>;

/** Unavailable in-process (it throws): in-process tools are registered by the runtime. */
export declare function run(): Promise<void>;

/** The authoring namespace of the slim profile: `trailblaze.tool<I, O>(...)`. */
export declare const trailblaze: {
  tool: typeof tool;
  run: typeof run;
};
