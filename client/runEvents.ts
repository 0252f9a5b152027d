import { BrowserfnError, NetworkError, errorFromResponse } from "./errors";
import { SseParser } from "./sseParser";
import type { TransportOptions } from "./transport";

/** One event of `GET /runs/{run_id}/events` (docs/api.md has each one's data). */
export type RunEvent =
  | { id: string | null; event: "status"; data: { status: string; at: string | null } }
  | { id: string | null; event: "log"; data: { text: string } }
  | { id: string | null; event: "result"; data: { run_id: string; status: string; result?: unknown; result_omitted?: true; duration_ms: number | null; finished_at: string | null } }
  | { id: string | null; event: "error"; data: { run_id: string; status: string; error: { code: string; message: string; stack?: string }; duration_ms: number | null; finished_at: string | null } };

/** How runEvents follows a run. */
export interface RunEventsOptions {
  /** Resume after this event id (what the last event received had). */
  lastEventId?: string;
  /** Stops following (the generator returns). */
  signal?: AbortSignal;
  /** Failed connections in a row (network, 429, 5xx) before it gives up and throws. Default 5. */
  maxFailures?: number;
}

const EVENT_NAMES = new Set(["status", "log", "result", "error"]);

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done);
  });
}

/**
 * Follows a run's events until its `result` or `error`: reads the stream as it comes, and
 * reconnects with `Last-Event-ID` whenever the body ends before the run's end (on AWS each
 * long-poll answer does; locally a dropped connection), after the stream's `retry:` time. A 204
 * (nothing after the event resumed from) ends it. API errors (401, 404, …) are thrown; network
 * failures, 429 and 5xx are retried up to `maxFailures` times in a row.
 */
export async function* runEvents(transport: TransportOptions, runId: string, options: RunEventsOptions = {}): AsyncGenerator<RunEvent> {
  const doFetch = transport.fetch ?? globalThis.fetch;
  const url = `${transport.baseUrl.replace(/\/+$/, "")}/runs/${encodeURIComponent(runId)}/events`;
  const maxFailures = options.maxFailures ?? 5;
  let lastEventId = options.lastEventId ?? null;
  let retryMs = 1000;
  let failures = 0;
  const { signal } = options;
  while (!signal?.aborted) {
    const headers: Record<string, string> = { accept: "text/event-stream", ...transport.headers };
    if (transport.apiKey) headers.authorization = `Bearer ${transport.apiKey}`;
    if (lastEventId) headers["last-event-id"] = lastEventId;
    let response: Response;
    try {
      response = await doFetch(url, { headers, signal });
    } catch (error) {
      if (signal?.aborted) return;
      if (++failures > maxFailures) {
        const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
        throw new NetworkError({ status: 0, code: "network_error", message: `Could not reach ${transport.baseUrl}: ${cause}` });
      }
      await delay(retryMs, signal);
      continue;
    }
    if (response.status === 204) return;
    if (!response.ok) {
      const error = errorFromResponse(response.status, response.headers, await response.text());
      if ((response.status === 429 || response.status >= 500) && ++failures <= maxFailures) {
        await delay(error.retryAfter !== null ? error.retryAfter * 1000 : retryMs, signal);
        continue;
      }
      throw error;
    }
    if (!response.body) throw new BrowserfnError({ status: response.status, code: "unexpected_response", message: "The event stream has no body" });
    const parser = new SseParser();
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        let read: ReadableStreamReadResult<Uint8Array>;
        try {
          read = await reader.read();
        } catch {
          break; // the connection dropped: resume from the last event
        }
        if (read.done) break;
        for (const parsed of parser.push(decoder.decode(read.value, { stream: true }))) {
          if (!EVENT_NAMES.has(parsed.event)) continue;
          failures = 0;
          lastEventId = parsed.id;
          const event = { id: parsed.id, event: parsed.event, data: JSON.parse(parsed.data) } as RunEvent;
          yield event;
          if (event.event === "result" || event.event === "error") return;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
    retryMs = parser.retryMs ?? retryMs;
    await delay(retryMs, signal);
  }
}
