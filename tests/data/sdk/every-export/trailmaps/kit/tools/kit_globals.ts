// The globals the scripting runtimes provide, beyond ES2022.
import { trailblaze } from "@trailblaze/scripting";

export const kit_fetch = trailblaze.tool<{ url: string }>({ requiresHost: true }, async ({ url }) => {
  const parsed = new URL(url);
  parsed.searchParams.set("q", new URLSearchParams({ a: "b" }).toString());
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 1000);
  try {
    const response = await fetch(parsed, { method: "GET", headers: new Headers({ accept: "text/plain" }), signal: controller.signal });
    console.info(response.status, AbortSignal.timeout(10).aborted);
    return response.ok ? await response.text() : new DOMException("failed", "NetworkError").message;
  } finally {
    clearTimeout(timer);
  }
});
