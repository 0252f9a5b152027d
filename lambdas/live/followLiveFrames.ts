/**
 * The live view of a run as server-sent events (`GET /runs/{run_id}/live`): a `frame` event
 * for each frame of the page being driven (Runtime.watchFrames: parsed and at most 5 per
 * second), then one `end` event when the run ends. Watching is what makes the run's browser
 * screencast; the watcher is released on every way out. A slow reader gets the newest frame,
 * never a backlog.
 */
import type { Runtime } from "../runtime/runtime";
import type { Store } from "../store/store";
import { FINAL_STATUSES, type RunItem } from "../runs/types";
import type { ScreenFrame } from "./liveFrames";

export interface LiveDeps {
  store: Pick<Store, "runs">;
  runtime: Pick<Runtime, "watchFrames">;
}

/** One server-sent event (its text). */
function event(name: string, data: object): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The frame as it is sent: its fields by name, and when it reached the service (and its id, when it has one). */
function frameEvent(frame: ScreenFrame, at: Date): string {
  const text = event("frame", { data: frame.data, url: frame.url, width: frame.width, height: frame.height, at: at.toISOString() });
  return frame.id === undefined ? text : `id: ${frame.id}\n${text}`;
}

/** `after`: the watcher's Last-Event-ID (the last frame it got: not sent again where frames have ids). */
export async function* followLiveFrames(deps: LiveDeps, first: RunItem, options: { pollMs: number; signal: AbortSignal; now: () => Date; after?: string }): AsyncGenerator<string> {
  const { signal } = options;
  let run = first;
  /** The newest frame not yet sent, and when it came (a slow reader skips the ones before it). */
  let latest: { frame: ScreenFrame; at: Date } | undefined;
  let ended = false;
  let wake: (() => void) | null = null;
  const poke = () => wake?.();
  signal.addEventListener("abort", poke);
  let watching: ReturnType<NonNullable<Runtime["watchFrames"]>>;
  try {
    for (;;) {
      if (FINAL_STATUSES.includes(run.status)) break;
      watching ??= deps.runtime.watchFrames?.(
        run.run_id,
        (frame) => {
          latest = { frame, at: options.now() };
          poke();
        },
        () => {
          ended = true;
          poke();
        },
        options.after,
      );
      if (latest) {
        const { frame, at } = latest;
        latest = undefined;
        yield frameEvent(frame, at);
        continue;
      }
      if (signal.aborted) return;
      // The run's end here: its final record follows, read below.
      const waitMs = ended ? 50 : watching ? 2_000 : options.pollMs;
      const woken = await new Promise<"poke" | "timer">((resolve) => {
        if (latest || signal.aborted) return resolve("poke");
        const timer = setTimeout(() => resolve("timer"), waitMs);
        wake = () => {
          clearTimeout(timer);
          resolve("poke");
        };
      });
      wake = null;
      if (signal.aborted) return;
      if (woken === "poke" && latest) continue;
      const stored = await deps.store.runs.get(run.run_id).catch(() => run);
      if (!stored) break;
      run = stored;
      // Ended here, but no final record yet after a while: the stream ends all the same.
      if (ended && !FINAL_STATUSES.includes(run.status)) ended = false;
    }
    yield event("end", { run_id: run.run_id, status: run.status });
  } finally {
    signal.removeEventListener("abort", poke);
    watching?.close();
  }
}
