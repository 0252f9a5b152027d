import type { RouteFactory } from "../http/defineRoute";
import { errorResult } from "../http/errorBody";
import type { HttpResult } from "../http/response";
import { type StreamBody, isStreaming } from "../http/streamBody";

export interface LongPollOptions {
  /** The longest a request waits for a first event (well under API Gateway's 30 s and the Lambda's timeout). */
  waitMs: number;
  /** After the first event, how long more is gathered into the same answer. */
  lingerMs: number;
  /** The `retry:` hint of the answer: how soon the client comes back. */
  retryMs: number;
}

export const LONG_POLL: LongPollOptions = { waitMs: 20_000, lingerMs: 1_000, retryMs: 500 };

/**
 * A route whose streamed body (StreamBody) is answered by long polling, for API Gateway HTTP
 * APIs, which buffer responses: the request waits up to `waitMs` for something new, gathers what
 * comes within `lingerMs` after it (or until the stream ends), and answers it all as one body
 * whose `retry:` line tells the client to reconnect soon, with Last-Event-ID. Other results pass
 * through unchanged (errors before the stream, 204).
 */
export function longPolled(factory: RouteFactory, options: LongPollOptions = LONG_POLL): RouteFactory {
  return (deps) => {
    const handler = factory(deps);
    return async (event, context) => {
      const result = await handler(event, context);
      if (!isStreaming(result)) return result;
      try {
        const body = await drain(result.stream, options);
        const answer: HttpResult = { statusCode: result.statusCode, headers: result.headers, body };
        return answer;
      } catch (error) {
        // Nothing is out yet: the failure gets the API's JSON error like any other.
        return errorResult(error, event.requestContext.requestId, deps.log);
      }
    };
  };
}

/** Reads `stream` for a bounded time into one body, then stops it (every timer released). */
export async function drain(stream: StreamBody, options: LongPollOptions): Promise<string> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  const waitTimer = setTimeout(stop, options.waitMs);
  let lingerTimer: NodeJS.Timeout | undefined;
  const chunks: string[] = [];
  try {
    for await (const chunk of stream.open(controller.signal)) {
      // The stream's own retry hint is replaced by the long poll's.
      if (chunk.startsWith("retry:")) continue;
      chunks.push(chunk);
      lingerTimer ??= setTimeout(stop, options.lingerMs);
    }
  } finally {
    clearTimeout(waitTimer);
    clearTimeout(lingerTimer);
    controller.abort();
  }
  return `retry: ${options.retryMs}\n\n${chunks.join("")}`;
}
