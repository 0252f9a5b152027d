import type { HttpResult } from "./response";

/**
 * A response body written as it is produced (`text/event-stream`). The local server writes each
 * chunk as it comes and aborts `signal` when the client leaves or the server stops; on AWS,
 * where API Gateway buffers responses, the route's Lambda drains it for a bounded time into a
 * whole body (aws/longPoll.ts).
 */
export interface StreamBody {
  /** Who holds the stream (an account): the local server caps how many one may hold open. */
  owner: string;
  /** The body's chunks, until they end or `signal` aborts; whoever opens it aborts it when done. */
  open(signal: AbortSignal): AsyncIterable<string>;
}

/** A result whose body is streamed: statusCode and headers as usual, `body` unused. */
export type StreamingResult = HttpResult & { stream: StreamBody };

export function isStreaming(result: HttpResult): result is StreamingResult {
  const stream = (result as { stream?: unknown }).stream;
  return typeof stream === "object" && stream !== null && typeof (stream as StreamBody).open === "function";
}

/** The headers of an event stream: no caching, no buffering by a proxy on the way. */
export const EVENT_STREAM_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-store",
  "x-accel-buffering": "no",
};
