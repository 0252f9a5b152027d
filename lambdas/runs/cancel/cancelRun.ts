import type { Runtime } from "../../runtime/runtime";
import type { Store } from "../../store/store";
import { ApiError } from "../../http/errors";
import type { FinishRunDeps } from "../finishRun";
import { FINAL_STATUSES, type RunItem } from "../types";
import { recordCanceled } from "./recordCanceled";
import { removeQueued } from "../../queue/removeQueued";

export interface CancelDeps extends FinishRunDeps {
  store: FinishRunDeps["store"] & Pick<Store, "queueItems" | "queueCounts">;
  runtime: Pick<Runtime, "cancel">;
}

/** How long a cancel waits for the end of a run stopped here to be recorded by its invoker (same process: milliseconds). */
const RECORD_WAIT_MS = 10_000;
const RECORD_LOOK_MS = 25;

/**
 * POST /runs/{run_id}/cancel, past the account check: ends `run` `canceled` and answers it as
 * it ended; 409 `run_finished` for a run that has ended (before or meanwhile, by itself).
 *
 * First the runtime stops what it runs of the run (Runtime.cancel). Where its code ran here
 * (locally: its worker, browser and sandbox are ended now, its evidence kept) the run's invoker
 * records its end `canceled` with its logs, and this waits for that record. Otherwise (still
 * queued, dropped by the runtime before it started, another local service's run, or AWS, where
 * the runtime has stopped its workflow) it is recorded `canceled` here by a write conditional
 * on its stored status being still the one read: a queued run never starts (whoever would start
 * it finds it no longer queued), and what a running one's code does afterwards is discarded.
 */
export async function cancelRun(deps: CancelDeps, first: RunItem): Promise<RunItem> {
  // Ended already, canceled too: nothing to cancel.
  if (FINAL_STATUSES.includes(first.status)) throw runFinished(first);
  let run = first;
  // A run that moves on between the read and the write (starts, or ends) is looked at again.
  for (let attempt = 0; attempt < 3 && !FINAL_STATUSES.includes(run.status); attempt++) {
    const stopped = (await deps.runtime.cancel?.(run.run_id)) ?? "not_here";
    if (stopped === "stopped") {
      const ended = await recordedEnd(deps, run.run_id);
      if (ended) return answer(ended);
    }
    const canceled = await recordCanceled(deps, run, run.status === "queued" ? "queued" : "running");
    if (canceled) {
      // Its place in the run queue goes back at once (a dispatcher that claimed it first finds it
      // canceled, starts nothing and gives its slot back). Its invocation stays counted.
      if (run.status === "queued") await removeQueued(deps, run, { refund: false }).catch((error: unknown) => deps.log(`run ${run.run_id}: taking it out of the run queue failed: ${(error as Error).message}`));
      return canceled;
    }
    run = (await deps.store.runs.get(run.run_id)) ?? run;
  }
  return answer(run);
}

/** The canceled run, or 409 `run_finished` for a run that ended otherwise. */
function answer(run: RunItem): RunItem {
  if (run.status === "canceled") return run;
  if (!FINAL_STATUSES.includes(run.status)) throw new ApiError("update_conflict", `Run ${run.run_id} kept changing while it was canceled; try again`, { run_id: run.run_id });
  throw runFinished(run);
}

function runFinished(run: RunItem): ApiError {
  return new ApiError("run_finished", `Run ${run.run_id} has already ended (${run.status}): there is nothing to cancel`, { run_id: run.run_id, status: run.status });
}

/** The run's final record once its invoker has written it (null if that takes longer than RECORD_WAIT_MS). */
async function recordedEnd(deps: CancelDeps, runId: string): Promise<RunItem | null> {
  for (let waited = 0; waited < RECORD_WAIT_MS; waited += RECORD_LOOK_MS) {
    const run = await deps.store.runs.get(runId);
    if (run && FINAL_STATUSES.includes(run.status)) return run;
    await new Promise((resolve) => setTimeout(resolve, RECORD_LOOK_MS));
  }
  return null;
}
