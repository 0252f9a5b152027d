import type { Runtime } from "../runtime/runtime";
import type { Store } from "../store/store";
import { type EventCursor, type RunEvent, nextEvents } from "./runEvents";
import { FINAL_STATUSES, type RunItem } from "./types";

export interface FollowDeps {
  store: Pick<Store, "runs">;
  runtime: Pick<Runtime, "watchLogs">;
}

export interface FollowOptions {
  /** How often the store is read while nothing live says the run moved on. */
  pollMs: number;
  /** Ends the events (the client left, the server stops, a long poll's time is up). */
  signal: AbortSignal;
}

/** While the run's output is followed live, the store is still read this often (its status may change without output). */
const LIVE_POLL_MS = 2_000;
/** Once the run ended here, how often the store is read until its final record is in (then every pollMs). */
const ENDED_POLL_MS = 100;
const ENDED_LOOKS = 50;

/**
 * The events of a run from `from` on, as they happen, ending after its `result` or `error` (or
 * when `signal` aborts, or the run's record is gone). While the run goes on on this instance,
 * its log text comes live from the runtime (Runtime.watchLogs) as the worker writes it;
 * otherwise, and for everything else, from the store, read every `pollMs`. The runtime's
 * listener and the timer are released on every way out.
 */
export async function* followRunEvents(deps: FollowDeps, first: RunItem, from: EventCursor, options: FollowOptions): AsyncGenerator<RunEvent> {
  const { signal } = options;
  let run = first;
  let cursor = from;
  let changed = false;
  let endedLooks = 0;
  let wake: (() => void) | null = null;
  const onChange = () => {
    changed = true;
    wake?.();
  };
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  let live: ReturnType<NonNullable<Runtime["watchLogs"]>>;
  try {
    for (;;) {
      if (live === undefined && !FINAL_STATUSES.includes(run.status)) live = deps.runtime.watchLogs?.(run.run_id, onChange);
      const next = nextEvents(run, live && !live.ended ? live.text() : null, cursor);
      cursor = next.cursor;
      for (const event of next.events) yield event;
      if (cursor.phase === "end" || signal.aborted) return;
      const waitMs = !live ? options.pollMs : !live.ended ? LIVE_POLL_MS : endedLooks++ < ENDED_LOOKS ? ENDED_POLL_MS : options.pollMs;
      const woken = await new Promise<"change" | "timer">((resolve) => {
        if (changed || signal.aborted) return resolve("change");
        const timer = setTimeout(() => resolve("timer"), waitMs);
        wake = () => {
          clearTimeout(timer);
          resolve("change");
        };
      });
      wake = null;
      changed = false;
      if (signal.aborted) return;
      // Live output needs no store read; a timer, or the run's end here, does.
      if (woken === "change" && live && !live.ended) continue;
      try {
        const stored = await deps.store.runs.get(run.run_id);
        if (!stored) return;
        run = stored;
      } catch {
        // The store is away for a moment: the next look tries again.
      }
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    live?.close();
  }
}
