import { DEFAULT_PLAN } from "../config/plans";
import type { Deps } from "../deps";
import { FINAL_STATUSES, type RunItem } from "../runs/types";
import { endRefused, startBatchRuns } from "./startBatchRuns";

/**
 * At a start of the local service: the runs of batches that its last stop (or crash) left
 * `queued` before they were put in the run queue (no queue item, no lease: settleInterruptedRuns
 * leaves them) are put in it now, each batch's
 * in the order of its items, by startBatchRuns. Their parameters are those their records keep
 * (a function secret's value in them was kept `[redacted]`). A batch whose function is gone or
 * not active ends its runs failed; runs of a batch that was never recorded (its request stopped
 * before its 202) are removed. Resolves once each batch's starting is under way. Called
 * once settleInterruptedRuns has ended what the last stop cut off.
 */
export async function resumeBatches(deps: Deps): Promise<number> {
  const queued = new Map<string, Map<string, RunItem>>();
  for (const run of await deps.store.runs.listActive()) {
    if (run.status !== "queued" || run.batch_id === undefined) continue;
    // In the run queue already (its dispatcher starts it), or admitted: not this one's to start.
    if (await deps.store.queueItems.has({ account_id: run.account_id, function_id: run.function_id, ready_at: run.queued_at, run_id: run.run_id })) continue;
    if (await deps.store.limits.holds(run.account_id, run.run_id)) continue;
    const runs = queued.get(run.batch_id) ?? new Map<string, RunItem>();
    runs.set(run.run_id, run);
    queued.set(run.batch_id, runs);
  }
  let resumed = 0;
  const accounts = new Set<string>();
  for (const [batchId, runs] of queued) {
    const batch = await deps.store.batches.get(batchId);
    if (batch && !accounts.has(batch.account_id)) {
      accounts.add(batch.account_id);
      await releaseEndedLeases(deps, batch.account_id);
    }
    const fn = batch ? await deps.store.functions.getById(batch.function_id) : undefined;
    if (!batch) {
      // Written by a request that stopped before it recorded its batch: it never answered 202.
      for (const run of runs.values()) await deps.store.runs.deleteIfQueued(run.run_id);
      continue;
    }
    if (!fn || fn.status !== "active" || fn.account_id !== batch.account_id) {
      const reason = { code: "function_not_found", message: "The batch's function is no longer there to run" };
      for (const run of runs.values()) await endRefused(deps, run.run_id, reason);
      continue;
    }
    const plan = (await deps.store.accounts.getAccount(batch.account_id))?.plan ?? DEFAULT_PLAN;
    const order = batch.run_ids.flatMap((runId) => {
      const run = runs.get(runId);
      return run ? [{ runId, params: run.params, queuedAt: run.queued_at }] : [];
    });
    resumed += order.length;
    deps.log(`batch ${batchId}: starting its ${order.length} run(s) left queued by the last stop`);
    void startBatchRuns(deps, { fn, plan, version: batch.version, batchId, runs: order, baseUrl: deps.config.publicUrl }).catch((error: unknown) =>
      deps.log(`batch ${batchId}: starting its runs failed: ${(error as Error).stack ?? error}`),
    );
  }
  return resumed;
}

/**
 * Gives back the account's leases whose run has ended or has no record: at a start nothing is
 * in flight yet, and a lease its run's end could not give back as the last stop closed the
 * store would hold a slot until it expired (minutes), holding the resumed batch up.
 */
async function releaseEndedLeases(deps: Deps, accountId: string): Promise<void> {
  for (const leaseId of await deps.store.limits.leaseIds(accountId)) {
    if (!/^run_[0-9a-z]{26}$/.test(leaseId)) continue;
    const run = await deps.store.runs.get(leaseId);
    if (!run || FINAL_STATUSES.includes(run.status)) await deps.store.limits.release(accountId, leaseId);
  }
}
