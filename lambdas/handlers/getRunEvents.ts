import { defineRoute, type RouteFactory } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { noContent } from "../http/response";
import { EVENT_STREAM_HEADERS, type StreamingResult } from "../http/streamBody";
import { followRunEvents } from "../runs/followRunEvents";
import { ownRun } from "../runs/ownRun";
import { type EventCursor, START, formatEvent, parseEventId } from "../runs/runEvents";
import { RunEventsQuery } from "../schemas/runEventSchemas";

/** How long a client waits before it reconnects, told in the stream (`retry:`). */
export const RECONNECT_MS = 1_000;

/**
 * GET /runs/{run_id}/events: one of the account's runs as it happens, as server-sent events
 * (runs/runEvents.ts has the events and their ids). `Last-Event-ID` (or `last_event_id`) resumes
 * after that event; a stream that has had the run's end already answers 204, which tells an
 * EventSource to stop reconnecting. `pollMs`: how often the store is read for what no live
 * source reports.
 */
export function runEventsRoute(options: { pollMs: number }): RouteFactory {
  return defineRoute({ query: RunEventsQuery }, async ({ params, principal, headers, query }, deps) => {
    const run = await ownRun(deps, principal, params.run_id ?? "");
    const from = resumeFrom(headers["last-event-id"] ?? query.last_event_id);
    if (from.phase === "end") return noContent();
    const result: StreamingResult = {
      statusCode: 200,
      headers: { ...EVENT_STREAM_HEADERS },
      body: "",
      stream: {
        owner: principal.account_id,
        async *open(signal) {
          yield `retry: ${RECONNECT_MS}\n\n`;
          for await (const event of followRunEvents(deps, run, from, { pollMs: options.pollMs, signal })) yield formatEvent(event);
        },
      },
    };
    return result;
  });
}

function resumeFrom(lastEventId: string | undefined): EventCursor {
  if (lastEventId === undefined || lastEventId.trim() === "") return START;
  const cursor = parseEventId(lastEventId.trim());
  if (!cursor) throw new ApiError("invalid_request", "Last-Event-ID is not an event id of this stream", { last_event_id: lastEventId.slice(0, 64) });
  return cursor;
}

/** The route as the local server serves it: the store is read twice a second when nothing live says more. */
export const getRunEvents = runEventsRoute({ pollMs: 500 });
