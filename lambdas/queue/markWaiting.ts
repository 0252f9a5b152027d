import type { Deps } from "../deps";
import type { QueueReason, RunItem } from "../runs/types";

/**
 * Says on a queued run's record what it waits for (`plan_concurrency`: a slot of its plan;
 * `machine_busy`: a worker of this machine), only while it is still queued. A failure is
 * logged: the run waits and starts all the same.
 */
export async function markWaiting(deps: Pick<Deps, "store" | "log">, run: Pick<RunItem, "run_id">, reason: QueueReason): Promise<void> {
  await deps.store.runs.setQueueReason(run.run_id, reason).catch((error: unknown) => {
    deps.log(`run ${run.run_id}: noting that it waits (${reason}) failed: ${(error as Error).message}`);
  });
}
