import type { Deps } from "../deps";
import type { RunItem } from "../runs/types";

/**
 * Takes a queued run out of the run queue for good (its record was made final meanwhile: a
 * cancel writes `canceled` on condition that it is `queued`): deletes its queue item and counts
 * it out of the queue, and gives its invocation back unless `refund` is false (it never ran).
 * A run waiting for a retry's attempt is found by its `retry_at`. True when this call removed it; false when a dispatcher had claimed it first (the dispatcher
 * then finds the record not `queued`, does not start it and gives its lease back).
 */
export async function removeQueued(deps: { store: Pick<Deps["store"], "queueItems" | "queueCounts"> }, run: Pick<RunItem, "account_id" | "function_id" | "queued_at" | "run_id" | "retry_at">, options: { refund?: boolean } = {}): Promise<boolean> {
  const claimed = await deps.store.queueItems.claim({ account_id: run.account_id, function_id: run.function_id, ready_at: run.retry_at ?? run.queued_at, run_id: run.run_id });
  // A run waiting for its next attempt (retry_at) ran already: its invocation is never given back.
  if (claimed) await deps.store.queueCounts.dequeued(run.account_id, options.refund !== false && run.retry_at === undefined);
  return claimed;
}
