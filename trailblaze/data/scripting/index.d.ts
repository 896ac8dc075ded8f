// Declarations of the public API of `@trailblaze/scripting`, written for trailblaze-doit from the
// SDK's documented surface. Scripted tools (`tools/*.ts`) compile against this file when their
// workspace has no SDK build of its own. `trailblaze/sdk.py` fills in the two marked sections:
// the selector grammar (from the tool catalog) and the SDK's hand-typed author tools.
//
// zod is not imitated: its own declarations come from the pinned npm package, linked next to
// this file as `../node_modules/zod`.

import type * as ZodCore from "zod/v4/core";

export { z } from "zod";

// ---------------------------------------------------------------------------------------------
// Tool maps and the client

/**
 * The tools a scripted tool may call through `ctx.tools` / `client.tools`: one entry
 * `name: { args; result }` per tool. Empty here; each trailmap's `trailblaze-client.d.ts`
 * adds its own tools with `declare module "@trailblaze/scripting" { interface TrailblazeToolMap }`.
 */
export interface TrailblazeToolMap {
/*@BUILT_IN_TOOLS@*/
}

/** The shape of one tool map entry. */
export type TrailblazeToolEntry = { args: unknown; result: unknown };

/** `web_evaluate` takes a function (run in the page), a script, or `{ script }`. */
interface WebEvaluateCall {
  <A extends readonly unknown[], R>(fn: (...args: A) => R | Promise<R>, ...args: A): Promise<R>;
  (script: string): Promise<string>;
  (args: { script: string }): Promise<string>;
}

type ArgsOf<E> = E extends { args: infer A } ? A : never;
type ResultOf<E> = E extends { result: infer R } ? R : never;

/** One async method per tool of the tool map, typed by its entry. */
type TrailblazeToolMethods = {
  [Name in keyof TrailblazeToolMap]: Name extends "web_evaluate"
    ? WebEvaluateCall
    : (args: ArgsOf<TrailblazeToolMap[Name]>) => Promise<ResultOf<TrailblazeToolMap[Name]>>;
};

/** What a successful nested tool call answered. */
export interface TrailblazeCallToolResult {
  success: true;
  textContent: string;
  errorMessage: string;
  structuredContent?: unknown;
}

/**
 * Handed to every tool handler: the typed `tools` namespace through which a tool calls other
 * tools. There is deliberately no untyped `callTool(name, args)` on it.
 */
export interface TrailblazeClient {
  tools: TrailblazeToolMethods;
}

// ---------------------------------------------------------------------------------------------
// The session context

/** Severity of a log line a tool writes. */
export type TrailblazeLogLevel = "debug" | "info" | "warn" | "error";

/** Structured logging from inside a tool; always present on the context. */
export interface TrailblazeLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * The agent memory of the session. Reads see the session's values plus this call's own writes;
 * writes reach the session only when the tool returns without throwing.
 */
export interface TrailblazeMemory {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
  has(key: string): boolean;
  keys(): readonly string[];
  delete(key: string): void;
  /** Replaces `${key}` and `{{key}}` tokens (also `{{memory.key}}`) with memory values. */
  interpolate(template: string): string;
  /** Stores `JSON.stringify(value)`; a value that serializes to nothing deletes the key. */
  setJson<T>(key: string, value: T): void;
  /** The parsed JSON value of a key, or undefined when absent or not JSON. */
  getJson<T = unknown>(key: string): T | undefined;
}

/** The device the session drives. */
export interface TrailblazeDevice {
  platform: "ios" | "android" | "web";
  widthPixels: number;
  heightPixels: number;
  /** The session's driver, e.g. `"android-ondevice-accessibility"`. */
  driverType: string;
  /** Older on-device envelopes named the driver this way; read `driverType`. */
  driver?: string;
  /** Emulator serial or simulator UDID, where the runtime provides one. */
  instanceId?: string;
}

/** The session's target (the trailmap's `target:`) as resolved against the device. */
export interface TrailblazeTarget {
  id: string;
  displayName?: string;
  /** App id candidates of the current platform, in manifest order. */
  appIds: string[];
  /** The candidate found installed when the session started. */
  appId?: string;
  baseUrls?: string[];
  resolvedBaseUrl?: string;
  /** `appId`, else the first of `appIds`, else `options.defaultAppId`. */
  resolveAppId(options?: { defaultAppId?: string }): string | undefined;
  /** `resolvedBaseUrl`, else the first of `baseUrls`, else `options.defaultBaseUrl`. */
  resolveBaseUrl(options?: { defaultBaseUrl?: string }): string | undefined;
}

/** The envelope of a live session, as an MCP-registered (imperative) tool receives it. */
export interface TrailblazeContext {
  /** The daemon's HTTP address on the host path; absent on device. */
  baseUrl?: string;
  /** `"ondevice"` inside the on-device runtime. */
  runtime?: "ondevice";
  sessionId: string;
  /** Identifies this one tool call; valid only while it runs. */
  invocationId: string;
  device: TrailblazeDevice;
  target?: TrailblazeTarget;
  memory: TrailblazeMemory;
  logger: TrailblazeLogger;
}

/** The context of a call, read from an MCP request's `_meta`; undefined when it carries none. */
export declare function fromMeta(
  meta: unknown,
  logger?: TrailblazeLogger,
): TrailblazeContext | undefined;

// ---------------------------------------------------------------------------------------------
// Declaring tools

/** What the handler of a typed tool receives as its second argument. */
export interface ToolContext {
  tools: TrailblazeToolMethods;
  memory: TrailblazeMemory;
  device?: TrailblazeDevice;
  target?: TrailblazeTarget;
}

/** The input of a tool that takes no arguments. */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface EmptyInput {}

/** Where a trailhead tool leaves the app. */
export interface TrailheadSpec {
  /** The waypoint the tool ends on. */
  to?: string;
  /** Whether the destination is only known at run time. */
  dynamic?: boolean;
}

/** The spec of a typed tool, `trailblaze.tool<I, O>(spec, handler)`. */
export interface TrailblazeTypedToolSpec {
  description?: string;
  supportedPlatforms?: ReadonlyArray<"web" | "android" | "ios" | "desktop">;
  /** The tool refuses to run outside a live session. */
  requiresContext?: boolean;
  /** The tool needs the host (it cannot run on the device). */
  requiresHost?: boolean;
  supportedDrivers?: readonly string[];
  surfaceToLlm?: boolean;
  isRecordable?: boolean;
  /** A JSON Schema the arguments are validated against before the handler runs. */
  inputSchema?: Record<string, unknown>;
  trailhead?: TrailheadSpec;
}

/**
 * What `trailblaze.tool<I, O>(...)` returns: a handler the runtime calls with the arguments, the
 * session context (when there is one) and the client.
 */
export type TypedToolDefinition<TInput = Record<string, never>, TResult = string> = (
  args: TInput,
  ctx: TrailblazeContext | undefined,
  client: TrailblazeClient,
) => Promise<TResult>;

/** A zod schema (zod 4, the SDK's own version; `zod/v3` schemas are not declared: loading
 * zod 3's declarations too would slow every compile of every trailmap's tools). */
type AnyZodSchema = ZodCore.$ZodType;

/** The spec of an imperative tool, `trailblaze.tool(name, spec, handler)`. */
export interface TrailblazeToolSpec {
  description?: string;
  /** A zod raw shape (`{ text: z.string() }`) or a zod schema. */
  inputSchema?: Record<string, AnyZodSchema> | AnyZodSchema;
  outputSchema?: Record<string, AnyZodSchema> | AnyZodSchema;
  /** Raw advertisement metadata, e.g. `"trailblaze/supportedDrivers"`. */
  _meta?: Record<string, unknown>;
}

/** The MCP shape of a tool result. */
interface TrailblazeToolResult {
  content: Array<{ type: "text"; text: string } | Record<string, unknown>>;
  isError?: boolean;
  structuredContent?: unknown;
}

/** The handler of an imperative tool. */
export type TrailblazeToolHandler = (
  args: Record<string, unknown>,
  ctx: TrailblazeContext | undefined,
  client: TrailblazeClient,
) => Promise<TrailblazeToolResult> | TrailblazeToolResult;

/** Options of the MCP server `run()` starts. */
export interface RunOptions {
  name?: string;
  version?: string;
}

/** A typed tool from its handler alone. */
export declare function tool<TInput = Record<string, never>, TResult = string>(
  handler: (input: TInput, ctx: ToolContext) => Promise<TResult>,
): TypedToolDefinition<TInput, TResult>;
/** A typed tool with a spec. */
export declare function tool<TInput = Record<string, never>, TResult = string>(
  spec: TrailblazeTypedToolSpec,
  handler: (input: TInput, ctx: ToolContext) => Promise<TResult>,
): TypedToolDefinition<TInput, TResult>;
/** An imperative tool, registered with the MCP server when `run()` starts it. */
export declare function tool(
  name: string,
  spec: TrailblazeToolSpec,
  handler: TrailblazeToolHandler,
): void;

/** Starts the MCP server with every imperative tool declared so far. */
export declare function run(options?: RunOptions): Promise<void>;

/** The authoring namespace: `trailblaze.tool(...)`, `await trailblaze.run()`. */
export declare const trailblaze: {
  tool: typeof tool;
  run: typeof run;
};

// ---------------------------------------------------------------------------------------------
// Conditional actions and view hierarchies

/** The screen as seen through a fixed set of selectors, resolved once. */
export interface ViewHierarchy {
  visible(selector: TrailblazeNodeSelector): boolean;
  find(selector: TrailblazeNodeSelector): MatchDescriptor | null;
  findAll(selector: TrailblazeNodeSelector): MatchDescriptor[];
}

/** Resolves every selector now; the snapshot answers only for these selectors. */
export declare function captureViewHierarchy(
  client: TrailblazeClient,
  selectors: readonly TrailblazeNodeSelector[],
): Promise<ViewHierarchy>;

/** One "if the screen shows this, do that" rule. */
export interface ConditionalAction {
  readonly id: string;
  readonly description: string;
  readonly condition: (snap: ViewHierarchy) => boolean;
  readonly action: () => Promise<void>;
  /** When given, checked on a fresh snapshot after the action; a false result is a failure. */
  readonly postcondition?: (snap: ViewHierarchy) => boolean;
}

/** A conditional action's predicate or action threw, or its postcondition did not hold. */
export declare class ConditionalActionFailedError extends Error {
  readonly conditionalActionId: string;
  readonly cause: unknown;
  constructor(conditionalActionId: string, message: string, cause?: unknown);
}

/** Runs each action whose condition holds on `presnapshot`; the ids of those that ran. */
export declare function runConditionalActions(
  client: TrailblazeClient,
  conditionalActions: readonly ConditionalAction[],
  presnapshot?: ViewHierarchy,
): Promise<{ handled: string[] }>;

// ---------------------------------------------------------------------------------------------
// Selectors

/*@SELECTOR_TYPES@*/

/** One selector from one driver's matcher: `selectors.web({ ariaRole: "button" })`. */
export declare const selectors: {
  androidAccessibility(args: DriverNodeMatchAndroidAccessibility): TrailblazeNodeSelector;
  androidMaestro(args: DriverNodeMatchAndroidMaestro): TrailblazeNodeSelector;
  web(args: DriverNodeMatchWeb): TrailblazeNodeSelector;
  compose(args: DriverNodeMatchCompose): TrailblazeNodeSelector;
  iosMaestro(args: DriverNodeMatchIosMaestro): TrailblazeNodeSelector;
  iosAxe(args: DriverNodeMatchIosAxe): TrailblazeNodeSelector;
};

// ---------------------------------------------------------------------------------------------
// Results of the installed-apps tools

export interface InstalledApp {
  appId: string;
  isSystemApp: boolean;
  label?: string | null;
  version?: string | null;
  buildNumber?: string | null;
  installPath?: string | null;
}

export interface ListInstalledAppsResult {
  appIds: string[];
}

export interface ListInstalledAppsDetailedResult {
  apps: InstalledApp[];
}

// ---------------------------------------------------------------------------------------------
// The globals every scripting runtime provides (ES2022 itself has none of them). DOM-only globals
// (`document`, `window`, `navigator`, `localStorage`) are left out on purpose: tools run in
// runtimes that lack them.

declare global {
  interface Console {
    log(...data: unknown[]): void;
    info(...data: unknown[]): void;
    warn(...data: unknown[]): void;
    error(...data: unknown[]): void;
    debug(...data: unknown[]): void;
  }
  var console: Console;

  /** What `setTimeout` returns: only good for `clearTimeout`. */
  interface TimeoutHandle {
    readonly __trailblazeTimeoutHandleBrand?: never;
  }
  function setTimeout(
    handler: (...args: unknown[]) => unknown,
    timeout?: number,
    ...args: unknown[]
  ): TimeoutHandle;
  function clearTimeout(handle: TimeoutHandle | undefined): void;

  interface URLSearchParams {
    append(name: string, value: string): void;
    delete(name: string): void;
    get(name: string): string | null;
    getAll(name: string): string[];
    has(name: string): boolean;
    set(name: string, value: string): void;
    sort(): void;
    toString(): string;
    forEach(callback: (value: string, key: string, parent: URLSearchParams) => void): void;
    keys(): IterableIterator<string>;
    values(): IterableIterator<string>;
    entries(): IterableIterator<[string, string]>;
    [Symbol.iterator](): IterableIterator<[string, string]>;
  }
  var URLSearchParams: {
    prototype: URLSearchParams;
    new (init?: string | Record<string, string> | string[][] | URLSearchParams): URLSearchParams;
  };

  interface URL {
    hash: string;
    host: string;
    hostname: string;
    href: string;
    readonly origin: string;
    password: string;
    pathname: string;
    port: string;
    protocol: string;
    search: string;
    readonly searchParams: URLSearchParams;
    username: string;
    toString(): string;
    toJSON(): string;
  }
  var URL: {
    prototype: URL;
    new (input: string | URL, base?: string | URL): URL;
    canParse(input: string | URL, base?: string | URL): boolean;
  };

  interface Event {
    readonly type: string;
    readonly target: unknown;
    readonly currentTarget: unknown;
  }
  type AbortSignalEventMap = { abort: Event };
  interface AbortSignal {
    readonly aborted: boolean;
    readonly reason: unknown;
    throwIfAborted(): void;
    onabort: ((this: AbortSignal, ev: Event) => unknown) | null;
    addEventListener<K extends keyof AbortSignalEventMap>(
      type: K,
      listener: (this: AbortSignal, ev: AbortSignalEventMap[K]) => unknown,
    ): void;
    removeEventListener<K extends keyof AbortSignalEventMap>(
      type: K,
      listener: (this: AbortSignal, ev: AbortSignalEventMap[K]) => unknown,
    ): void;
    dispatchEvent(event: Event): boolean;
  }
  /** Not constructible: signals come from a controller or the static factories. */
  var AbortSignal: {
    prototype: AbortSignal;
    abort(reason?: unknown): AbortSignal;
    timeout(milliseconds: number): AbortSignal;
    any(signals: AbortSignal[]): AbortSignal;
  };
  interface AbortController {
    readonly signal: AbortSignal;
    abort(reason?: unknown): void;
  }
  var AbortController: {
    prototype: AbortController;
    new (): AbortController;
  };

  interface DOMException extends Error {
    readonly name: string;
    readonly message: string;
    readonly code: number;
  }
  var DOMException: {
    prototype: DOMException;
    new (message?: string, name?: string): DOMException;
  };

  interface ReadableStream<R = unknown> {
    getReader(): unknown;
    cancel(reason?: unknown): Promise<void>;
    [Symbol.asyncIterator](): AsyncIterableIterator<R>;
  }

  type HeadersInit = Headers | string[][] | Record<string, string>;
  type BodyInit = string | ArrayBuffer | ArrayBufferView | URLSearchParams | ReadableStream<Uint8Array>;

  interface Headers {
    append(name: string, value: string): void;
    delete(name: string): void;
    get(name: string): string | null;
    has(name: string): boolean;
    set(name: string, value: string): void;
    forEach(callback: (value: string, key: string, parent: Headers) => void): void;
    keys(): IterableIterator<string>;
    values(): IterableIterator<string>;
    entries(): IterableIterator<[string, string]>;
    [Symbol.iterator](): IterableIterator<[string, string]>;
  }
  var Headers: {
    prototype: Headers;
    new (init?: HeadersInit): Headers;
  };

  interface RequestInit {
    method?: string;
    headers?: HeadersInit;
    body?: BodyInit | null;
    signal?: AbortSignal;
    redirect?: "follow" | "error" | "manual";
    credentials?: "omit" | "same-origin" | "include";
    cache?: string;
    referrer?: string;
    integrity?: string;
    keepalive?: boolean;
    mode?: string;
  }
  interface Request {
    readonly method: string;
    readonly url: string;
    readonly headers: Headers;
    readonly body: ReadableStream<Uint8Array> | null;
    readonly bodyUsed: boolean;
    readonly signal: AbortSignal;
    clone(): Request;
    text(): Promise<string>;
    json(): Promise<unknown>;
    arrayBuffer(): Promise<ArrayBuffer>;
  }
  var Request: {
    prototype: Request;
    new (input: string | URL | Request, init?: RequestInit): Request;
  };

  interface ResponseInit {
    status?: number;
    statusText?: string;
    headers?: HeadersInit;
  }
  interface Response {
    readonly status: number;
    readonly statusText: string;
    readonly ok: boolean;
    readonly headers: Headers;
    readonly url: string;
    readonly redirected: boolean;
    readonly type: string;
    readonly body: ReadableStream<Uint8Array> | null;
    readonly bodyUsed: boolean;
    clone(): Response;
    text(): Promise<string>;
    json(): Promise<unknown>;
    arrayBuffer(): Promise<ArrayBuffer>;
  }
  var Response: {
    prototype: Response;
    new (body?: BodyInit | null, init?: ResponseInit): Response;
    error(): Response;
    json(data: unknown, init?: ResponseInit): Response;
    redirect(url: string | URL, status?: number): Response;
  };

  function fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
}
