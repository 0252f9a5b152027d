import type { RunStore } from "../../../store/runStore";
import { FINAL_STATUSES, type RunItem } from "../../../runs/types";
import type { QueuedEndWatch, Runtime } from "../../runtime";
import type { RunEndNotices } from "./runEndWaiter";

/** Below this much of a window, nothing is listened for (as runExecutions' FINAL_READ_MARGIN_MS). */
const MIN_WAIT_MS = 250;

/**
 * The AWS runtime's `watchQueuedEnd` (docs/deploy.md, "Waiting for a run"): a sync call whose
 * run waits in the run queue watches its container's wait queue for the run, and the queue item
 * carries that queue's URL (QueuedRun.notify); whoever dispatches the run (this route, the
 * recorder, the sweeper) names it in the execution's input, and the run's recorder sends the end
 * there as for any waited-for run. Once the notice came, the run's record is read once; it
 * settles `end` when it is final. Nothing is read while no notice came: at the window's end the
 * caller reads the run's status once for its 202 (invokeFunction), and the watch is dropped.
 */
export function createQueuedEndWatch(options: { endNotices: RunEndNotices; runs: Pick<RunStore, "get"> }): NonNullable<Runtime["watchQueuedEnd"]> {
  return async (runId, waitMs, signal) => {
    if (waitMs <= MIN_WAIT_MS || signal?.aborted) return null;
    const watch = await options.endNotices.watch(runId);
    if (!watch) return null;
    const closing = new AbortController();
    const stop = () => closing.abort();
    signal?.addEventListener("abort", stop, { once: true });
    const deadlineMs = Date.now() + waitMs;
    const never = new Promise<never>(() => undefined);
    const end = (async (): Promise<RunItem> => {
      try {
        if ((await watch.ended(deadlineMs, closing.signal)) !== "ended" || closing.signal.aborted) return never;
        const run = await options.runs.get(runId).catch(() => undefined);
        return run && FINAL_STATUSES.includes(run.status) ? run : never;
      } finally {
        signal?.removeEventListener("abort", stop);
        watch.close();
      }
    })();
    const result: QueuedEndWatch = { notify: watch.queueUrl, end, close: stop };
    return result;
  };
}
