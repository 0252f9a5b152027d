import type { Clock } from "../deps";
import { settleRun } from "../runs/settleRun";
import type { Store } from "../store/store";
import type { WebhookOutbox } from "../webhooks/webhookOutbox";

/**
 * Runs still queued or running when the service starts were cut off by its last stop or
 * crash: each is settled (settleRun): ended as failed (`function_crashed`), counted and its
 * concurrency lease given back, or removed when it was never admitted, so none is left dangling;
 * except a batch's runs never admitted, which stay queued for resumeBatches to start.
 * With `webhooks`, their ends owe `run.failed` deliveries like any other.
 */
export async function settleInterruptedRuns(store: Store, clock: Clock, webhooks?: WebhookOutbox): Promise<number> {
  let settled = 0;
  const error = { code: "function_crashed", message: "The service stopped while the run was in progress" };
  for (const run of await store.runs.listActive()) {
    // A batch's run that was never admitted waits for its batch to start it (resumeBatches).
    if (run.status === "queued" && run.batch_id !== undefined && !(await store.limits.holds(run.account_id, run.run_id))) continue;
    if ((await settleRun(store, clock, run, error, webhooks)) === "ended") settled++;
  }
  return settled;
}
