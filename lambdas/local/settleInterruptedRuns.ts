import type { Clock } from "../deps";
import type { Store } from "../store/store";

/**
 * Runs still queued or running when the service starts were cut off by its last stop or
 * crash: each is marked failed (`function_crashed`), counted and its concurrency lease given
 * back, so none is left dangling. A queued run whose account holds no lease for it was never
 * admitted (its record is written beside its admission): it never started, and is removed.
 */
export async function settleInterruptedRuns(store: Store, clock: Clock): Promise<number> {
  let settled = 0;
  for (const run of await store.runs.listActive()) {
    if (run.status === "queued" && !(await store.limits.holds(run.account_id, run.run_id))) {
      await store.runs.deleteIfQueued(run.run_id);
      continue;
    }
    const finished = {
      ...run,
      status: "failed" as const,
      error: { code: "function_crashed", message: "The service stopped while the run was in progress" },
      finished_at: clock.now().toISOString(),
    };
    if (await store.runs.putIfActive(finished)) {
      await store.meters.recordRun(finished);
      settled++;
    }
    await store.limits.release(run.account_id, run.run_id);
  }
  return settled;
}
