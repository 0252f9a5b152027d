import type { Clock } from "../deps";
import type { Store } from "../store/store";

/**
 * Runs still queued or running when the service starts were cut off by its last stop or
 * crash: each is marked failed (`function_crashed`) and counted, so none is left dangling.
 */
export async function settleInterruptedRuns(store: Store, clock: Clock): Promise<number> {
  let settled = 0;
  for (const run of await store.runs.listActive()) {
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
  }
  return settled;
}
