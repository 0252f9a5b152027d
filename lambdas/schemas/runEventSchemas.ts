import { z } from "zod";

/** `GET /runs/{run_id}/events`: where to resume, for clients that cannot send Last-Event-ID. */
export const RunEventsQuery = z.object({
  last_event_id: z.string().optional().describe("the id of the last event received, when the Last-Event-ID header cannot be sent (the header wins when both are)"),
});
export type RunEventsQuery = z.infer<typeof RunEventsQuery>;

/** The body of `GET /runs/{run_id}/events` (text/event-stream). */
export const RunEventStream = z
  .string()
  .describe(
    "Server-sent events, each `id:`, `event:` and one `data:` line of JSON: status {status, at} (queued, running, then the final status), " +
      "log {text} (console output, id log:<offset into the run's log text>), then one result {run_id, status, result, duration_ms, finished_at} " +
      "or error {run_id, status, error, duration_ms, finished_at}; the stream ends after it. Ids: status:<status>, log:<offset>, result, error.",
  )
  .meta({ id: "RunEventStream" });

/** The body of `GET /runs/{run_id}/live` (text/event-stream). */
export const RunLiveStream = z
  .string()
  .describe(
    "Server-sent events: `frame` {data, url, width, height, at} while the run goes (data: a JPEG of the page being driven, base64, at most 200 KB; " +
      "width and height in CSS pixels; at most 5 per second, only when the page changes), then one `end` {run_id, status} when the run ends. " +
      "On AWS the stream is long-polled (reconnect until `end`): frames at most once a second, each with an `id:` to send back as Last-Event-ID (docs/deploy.md).",
  )
  .meta({ id: "RunLiveStream" });
