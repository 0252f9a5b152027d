import type { Clock } from "../deps";
import type { InvokeResult } from "../runtime/runtime";
import { isStoreUnavailable } from "../store/dynamo";
import type { Store } from "../store/store";
import { whenStoreIsBack } from "../store/whenStoreIsBack";
import type { WebhookOutbox } from "../webhooks/webhookOutbox";
import { copyRun, runError } from "./copyRun";
import { FINAL_STATUSES, type RunItem } from "./types";

export interface FinishRunDeps {
  store: Pick<Store, "runs" | "meters">;
  clock: Clock;
  log: (line: string) => void;
  /** Webhook events of runs' ends (absent: none are sent). */
  webhooks?: WebhookOutbox;
}

/**
 * Ends a run: writes its final record, unless the stored run is final already, and meters it
 * only when this call was the one that ended it, so a run ends and is counted once whoever
 * records it (startRun when the runtime answers, the AWS run recorder, a restart).
 * Returns the run as it ended: this ending, or the one recorded before it.
 *
 * `meter: "later"` (the API's path) counts the run without making the caller wait (see
 * MeterStore.recordRunLater); `"now"` waits for the count (a Lambda that returns next would
 * be frozen before a deferred count is written). A failed count is logged, never thrown: the
 * run is recorded either way.
 *
 * With `"later"`, a store that cannot be reached (isStoreUnavailable) does not lose the
 * ending: the caller gets it at once and it is written, and counted, in the background once
 * the store answers again (recordWhenBack). On AWS (`"now"`) the error is thrown, and the
 * completion event is retried.
 */
export async function finishRun(deps: FinishRunDeps, run: RunItem, result: InvokeResult, meter: "later" | "now" = "later"): Promise<RunItem> {
  const final = endedRun(run, result, deps.clock.now().toISOString());
  if (meter === "now") return record(deps, final, "now");
  try {
    return await record(deps, final, "later");
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    deps.log(`run ${final.run_id} ended while the store is unavailable (${(error as Error).message}); recording it when the store is back`);
    recordWhenBack(deps, final);
    return final;
  }
}

/**
 * The run as it ended, field by field: who it is (ids, account, function, params, times)
 * from the stored run, how it ended from the runtime's result, when it ended from the
 * service's clock. Nothing else of either object is kept (never `{ ...run, ...result }`: a
 * result carrying `pk`, `account_id` or `function_id` would write another record).
 */
export function endedRun(run: RunItem, result: InvokeResult, finishedAt: string): RunItem {
  return {
    ...copyRun(run),
    status: result.status,
    result_json: result.result_json,
    error: runError(result.error),
    logs: result.logs,
    finished_at: finishedAt,
    duration_ms: result.duration_ms,
    browser_ms: result.browser_ms,
    peak_memory_mb: result.peak_memory_mb,
  };
}

async function record(deps: FinishRunDeps, final: RunItem, meter: "later" | "now"): Promise<RunItem> {
  // The deliveries this end owes are written by the same conditional write (webhookOutbox.ts).
  const pending = (await deps.webhooks?.pendingFor(final)) ?? [];
  if (!(await deps.store.runs.putIfActive(final, pending))) {
    const stored = await deps.store.runs.get(final.run_id);
    return stored && FINAL_STATUSES.includes(stored.status) ? stored : final;
  }
  if (pending.length > 0) {
    // On AWS (`now`) before the Lambda returns; locally without making the caller wait.
    const queued = deps.webhooks?.runEnded(final, pending);
    if (meter === "now") await queued;
  }
  const onError = (error: unknown) => deps.log(`metering run ${final.run_id} failed: ${(error as Error).stack ?? error}`);
  if (meter === "now") await deps.store.meters.recordRun(final).catch(onError);
  else deps.store.meters.recordRunLater(final, onError);
  return final;
}

/**
 * Writes a run's end once the store answers again (in the background, so the caller gets
 * the outcome at once). Bounded: a store down for longer, or a service that stops meanwhile,
 * leaves the run active, and settleInterruptedRuns ends it at the next start.
 */
function recordWhenBack(deps: FinishRunDeps, final: RunItem): void {
  whenStoreIsBack(() => record(deps, final, "later"), {
    done: () => deps.log(`run ${final.run_id}: its end is recorded now that the store is back`),
    gaveUp: (error) => deps.log(`run ${final.run_id}: recording its end failed for good: ${(error as Error).message}`),
  });
}
