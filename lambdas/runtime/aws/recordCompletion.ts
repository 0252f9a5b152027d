import { timingSafeEqual } from "node:crypto";
import { finishRun, type FinishRunDeps } from "../../runs/finishRun";
import { FINAL_STATUSES } from "../../runs/types";
import type { Store } from "../../store/store";
import type { InvokeResult } from "../runtime";
import { completionEnding, type DestinationEvent, functionNameOf, runEventOf } from "./completionEvent";

export interface RunCompletionDeps extends FinishRunDeps {
  store: Pick<Store, "runs" | "meters" | "limits">;
}

/**
 * The run-completion Lambda: the async-invocation destination (on success and on failure) of
 * every function's Lambda. Each event ends one run: its final record is written and metered
 * with finishRun, only if the run is still active (a run ends once: a retried event, or a run
 * the API settled meanwhile, changes nothing), and its concurrency lease is given back.
 * Events that name no known run, a run of another function, or carry the wrong completion
 * token (forged: any code that may invoke this Lambda could send one) are logged and dropped.
 * Store failures throw, so that Lambda retries the event.
 */
export function makeRunCompletionHandler(deps: RunCompletionDeps) {
  return async (event: DestinationEvent): Promise<void> => {
    const runEvent = runEventOf(event);
    if (!runEvent) {
      deps.log(`run completion: an event without a run: ${JSON.stringify(event).slice(0, 500)}`);
      return;
    }
    const run = await deps.store.runs.get(runEvent.run_id);
    if (!run) {
      deps.log(`run completion: no run ${runEvent.run_id}`);
      return;
    }
    if (run.completion_token !== undefined && !sameSecret(run.completion_token, runEvent.completion_token)) {
      deps.log(`run completion: the event for run ${run.run_id} does not carry its completion token`);
      return;
    }
    const functionArn = event.requestContext?.functionArn;
    if (functionArn !== undefined && !functionNameOf(functionArn).endsWith(run.function_id)) {
      deps.log(`run completion: run ${run.run_id} belongs to ${run.function_id}, not to ${functionArn}`);
      return;
    }
    if (!FINAL_STATUSES.includes(run.status)) {
      // The duration is the service's own measure, from the run's recorded start to now; the
      // runner's report of its browser time is bounded by it.
      const startedAt = Date.parse(run.started_at ?? run.queued_at);
      const duration_ms = Math.max(0, deps.clock.now().getTime() - startedAt);
      const limits = { timeout_seconds: Math.round(runEvent.timeout_ms / 1000), memory_mb: run.memory_mb };
      const ending = completionEnding(event, limits, duration_ms);
      const result: InvokeResult = {
        status: ending.status,
        result_json: ending.result_json,
        error: ending.error,
        logs: ending.logs,
        duration_ms,
        browser_ms: ending.browser_ms,
        peak_memory_mb: ending.peak_memory_mb,
      };
      await finishRun(deps, run, result, "now");
    }
    await deps.store.limits.release(run.account_id, run.run_id);
  };
}

/** Compares two secrets in time that does not depend on where they differ. */
function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
