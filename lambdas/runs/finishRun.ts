import type { Clock } from "../deps";
import type { InvokeResult } from "../runtime/runtime";
import type { Store } from "../store/store";
import { FINAL_STATUSES, type RunItem } from "./types";

export interface FinishRunDeps {
  store: Pick<Store, "runs" | "meters">;
  clock: Clock;
  log: (line: string) => void;
}

/**
 * Ends a run: writes its final record, unless the stored run is final already, and meters it
 * only when this call was the one that ended it, so a run ends and is counted once whoever
 * records it (startRun when the runtime answers, the AWS run-completion Lambda, a restart).
 * Returns the run as it ended: this ending, or the one recorded before it.
 *
 * `meter: "later"` (the API's path) counts the run without making the caller wait (see
 * MeterStore.recordRunLater); `"now"` waits for the count (a Lambda that returns next would
 * be frozen before a deferred count is written). A failed count is logged, never thrown: the
 * run is recorded either way.
 */
export async function finishRun(deps: FinishRunDeps, run: RunItem, result: InvokeResult, meter: "later" | "now" = "later"): Promise<RunItem> {
  const final: RunItem = { ...run, ...result, finished_at: deps.clock.now().toISOString() };
  if (!(await deps.store.runs.putIfActive(final))) {
    const stored = await deps.store.runs.get(run.run_id);
    return stored && FINAL_STATUSES.includes(stored.status) ? stored : final;
  }
  const onError = (error: unknown) => deps.log(`metering run ${final.run_id} failed: ${(error as Error).stack ?? error}`);
  if (meter === "now") await deps.store.meters.recordRun(final).catch(onError);
  else deps.store.meters.recordRunLater(final, onError);
  return final;
}
