import type { InvokeResult } from "../../runtime/runtime";
import { type RunError, type RunItem, runTimeoutMs } from "../types";

/** The error a canceled run ends with (its record's `error`; a sync caller's 409 `run_canceled`). */
export function canceledError(): RunError {
  return { code: "run_canceled", message: "The run was canceled (POST /runs/{run_id}/cancel)" };
}

/**
 * The end of a run canceled where its code does not run here (still queued, another
 * instance's run, or an AWS run whose workflow is stopped): its logs as stored so far, no
 * result, and the execution time it has had by the service's clock, at most its timeout; `0`
 * for a run that never started. What the code does after this end is neither kept nor metered.
 */
export function canceledEnding(run: RunItem, now: Date): InvokeResult {
  const started = run.started_at === null ? NaN : Date.parse(run.started_at);
  const elapsed = Number.isFinite(started) ? Math.max(0, now.getTime() - started) : 0;
  const timeoutMs = runTimeoutMs(run);
  const duration_ms = Number.isFinite(timeoutMs) ? Math.min(elapsed, Math.max(0, timeoutMs)) : elapsed;
  return { status: "canceled", result_json: null, error: canceledError(), logs: run.logs, duration_ms, browser_ms: run.browser_ms, peak_memory_mb: run.peak_memory_mb };
}
