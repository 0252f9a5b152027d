import type { RunCancels } from "../runtime/local/runCancels";
import type { Store } from "../store/store";
import { FINAL_STATUSES } from "../runs/types";

const LOOK_MS = 50;

/**
 * A graceful stop's wait for the runs in progress here: until each has answered and its end is
 * recorded (by whoever invoked it), or until `graceMs` is over, whichever comes first. What is
 * still running then is stopped by the runtime's close as before (and settled at the next start
 * if its end cannot be recorded); queued runs are left as they are.
 */
export async function drainRuns(taken: RunCancels, store: Pick<Store, "runs">, graceMs: number): Promise<void> {
  const deadline = Date.now() + graceMs;
  const ids = await taken.drain(graceMs);
  for (const runId of ids) {
    while (Date.now() < deadline) {
      const run = await store.runs.get(runId).catch(() => undefined);
      if (!run || FINAL_STATUSES.includes(run.status)) break;
      await new Promise((resolve) => setTimeout(resolve, LOOK_MS));
    }
  }
}
