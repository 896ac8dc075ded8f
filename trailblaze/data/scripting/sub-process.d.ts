// Declarations of `@trailblaze/scripting/sub-process`, written for trailblaze-doit from the SDK's
// documented surface: the full profile of tools that declare `runtime: subprocess`. Its `tool`,
// `run` and `trailblaze` are the package's own (typed and imperative tools, the MCP server);
// besides them it offers only the types of declaring tools and running the server.

import type { TrailblazeToolHandler } from "./index.js";

export { trailblaze, run, tool } from "./index.js";
export type {
  RunOptions,
  TrailblazeToolHandler,
  TrailblazeToolSpec,
  TrailblazeTypedToolSpec,
  TrailheadSpec,
  ToolContext,
  EmptyInput,
  TypedToolDefinition,
} from "./index.js";

/** The MCP shape of what an imperative tool's handler returns. */
export type TrailblazeToolResult = Awaited<ReturnType<TrailblazeToolHandler>>;
