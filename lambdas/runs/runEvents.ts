import { runWithinDepth } from "./resultDepth";
import { runErrorView } from "./toRunView";
import { FINAL_STATUSES, type RunItem } from "./types";

/** One event of `GET /runs/{run_id}/events`. */
export interface RunEvent {
  id: string;
  event: "status" | "log" | "result" | "error";
  data: Record<string, unknown>;
}

/**
 * Where a stream of a run's events stands: the last thing it delivered. The events of a run
 * always come in this order: `status` queued, `status` running (when the run started), `log`
 * events (each carrying the log text from `logOffset` on), the final `status`, then one `result`
 * or `error`. An event id names the cursor after that event, so a stream resumes from any id.
 */
export interface EventCursor {
  phase: "start" | "queued" | "running" | "final" | "end";
  /** How much of the run's log text (UTF-16 code units) was delivered; meaningful from `running` on. */
  logOffset: number;
}

export const START: EventCursor = { phase: "start", logOffset: 0 };

/** A result event carries the result inline up to this many characters of JSON; past it, GET /runs/{id} has it. */
export const MAX_EVENT_RESULT_CHARS = 1024 * 1024;

const FINAL_IDS = new Set(FINAL_STATUSES.map((status) => `status:${status}`));

/**
 * The cursor an event id names, or null when it is not one of ours:
 * `status:queued`, `status:running`, `log:<offset>`, `status:<final status>`, `result`, `error`.
 */
export function parseEventId(id: string): EventCursor | null {
  if (id === "status:queued") return { phase: "queued", logOffset: 0 };
  if (id === "status:running") return { phase: "running", logOffset: 0 };
  const log = /^log:(\d{1,9})$/.exec(id);
  if (log) return { phase: "running", logOffset: Number(log[1]) };
  if (FINAL_IDS.has(id)) return { phase: "final", logOffset: 0 };
  if (id === "result" || id === "error") return { phase: "end", logOffset: 0 };
  return null;
}

/**
 * The events a run has that a stream at `from` has not delivered, and the cursor after them.
 * A pure function of the run's record and, while it runs on this instance, its live log text
 * (`live`, null when there is none): the same record gives the same events and ids wherever,
 * whenever it is read. A final record is the truth: its log text from the cursor on, then its
 * end. The log text of a run that has not ended is only the live one (the store has none yet).
 */
export function nextEvents(run: RunItem, live: string | null, from: EventCursor): { events: RunEvent[]; cursor: EventCursor } {
  const events: RunEvent[] = [];
  let cursor = from;
  const final = FINAL_STATUSES.includes(run.status);
  const started = run.status === "running" || run.started_at !== null || (live !== null && live !== "");
  if (cursor.phase === "start") {
    events.push({ id: "status:queued", event: "status", data: { status: "queued", at: run.queued_at } });
    cursor = { phase: "queued", logOffset: 0 };
  }
  if (cursor.phase === "queued" && started) {
    events.push({ id: "status:running", event: "status", data: { status: "running", at: run.started_at } });
    cursor = { phase: "running", logOffset: 0 };
  }
  const text = final ? run.logs : (live ?? "");
  if (cursor.phase === "running" && text.length > cursor.logOffset) {
    events.push({ id: `log:${text.length}`, event: "log", data: { text: text.slice(cursor.logOffset) } });
    cursor = { phase: "running", logOffset: text.length };
  }
  if (!final) return { events, cursor };
  if (cursor.phase === "queued" || cursor.phase === "running") {
    events.push({ id: `status:${run.status}`, event: "status", data: { status: run.status, at: run.finished_at } });
    cursor = { phase: "final", logOffset: 0 };
  }
  if (cursor.phase === "final") {
    events.push(endEvent(run));
    cursor = { phase: "end", logOffset: 0 };
  }
  return { events, cursor };
}

/** The `result` of a run that succeeded, or the `error` of one that did not. */
function endEvent(stored: RunItem): RunEvent {
  const run = runWithinDepth(stored);
  const about = { run_id: run.run_id, status: run.status, duration_ms: run.duration_ms, finished_at: run.finished_at };
  if (run.status === "succeeded") {
    const json = run.result_json ?? "null";
    const result = json.length <= MAX_EVENT_RESULT_CHARS ? { result: JSON.parse(json) as unknown } : { result_omitted: true };
    return { id: "result", event: "result", data: { ...about, ...result } };
  }
  const error = runErrorView(run.error) ?? { code: run.status === "timed_out" ? "function_timeout" : "function_error", message: `The run ${run.status}` };
  return { id: "error", event: "error", data: { ...about, error } };
}

/** One event in the text/event-stream format (its data is one line of JSON). */
export function formatEvent(event: RunEvent): string {
  return `id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}
