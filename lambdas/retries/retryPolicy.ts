import { MAX_LOG_BYTES } from "../runner/outputLimits";
import type { InvokeResult } from "../runtime/runtime";
import { copyRun, runError } from "../runs/copyRun";
import { type RunItem, runDeadline } from "../runs/types";

/** The longest wait between two attempts, however many came before (API.md: at most 1 h). */
export const MAX_BACKOFF_MS = 60 * 60_000;

/** Error codes of a failed attempt that run again (a timeout is `timed_out`, retried too). */
const RETRIED_ERRORS: readonly string[] = ["function_error", "function_crashed"];

/**
 * Whether a run's attempt that ended with `result` runs again: only a run that may have more
 * attempts (its `max_attempts`, fixed when it was created: 1 for a sync call), and only for a
 * failure of its code (function_error, function_crashed) or a timeout. Never for a success, a
 * cancel, a refusal or invalid parameters (their codes are not retried), nor a service error.
 */
export function shouldRetry(run: Pick<RunItem, "attempt" | "max_attempts">, result: Pick<InvokeResult, "status" | "error">): boolean {
  const attempt = run.attempt ?? 1;
  if (attempt >= (run.max_attempts ?? 1)) return false;
  if (result.status === "timed_out") return true;
  return result.status === "failed" && result.error !== null && RETRIED_ERRORS.includes(result.error.code);
}

/** The wait before attempt `attempt + 1` after attempt `attempt` failed: base, doubled per attempt, at most 1 h. */
export function backoffMs(attempt: number, baseSeconds: number): number {
  return Math.min(MAX_BACKOFF_MS, baseSeconds * 1000 * 2 ** Math.max(0, attempt - 1));
}

/** The header line that starts each attempt's logs in a run that may have more than one. */
export function attemptHeader(attempt: number, maxAttempts: number): string {
  return `--- attempt ${attempt} of ${maxAttempts} ---\n`;
}

/**
 * The logs of a run's current attempt as the record keeps them: those of its earlier attempts
 * (each under its header), then this attempt's header and its own logs; the oldest are cut
 * first when the whole passes MAX_LOG_BYTES. A run of one attempt only keeps its logs as written.
 */
export function attemptLogs(run: Pick<RunItem, "attempt" | "max_attempts" | "logs">, logs: string): string {
  const maxAttempts = run.max_attempts ?? 1;
  if (maxAttempts <= 1) return logs;
  const attempt = run.attempt ?? 1;
  const earlier = attempt > 1 ? run.logs : "";
  const whole = `${earlier}${earlier === "" || earlier.endsWith("\n") ? "" : "\n"}${attemptHeader(attempt, maxAttempts)}${logs}`;
  if (Buffer.byteLength(whole, "utf8") <= MAX_LOG_BYTES) return whole;
  const bytes = Buffer.from(whole, "utf8");
  return `…[earlier logs cut]\n${bytes.subarray(bytes.length - MAX_LOG_BYTES + 64).toString("utf8")}`;
}

/**
 * The run as it waits for its next attempt (pure): status `queued` (queue_reason
 * `retry_backoff`) until `retry_at`, the ended attempt appended to `attempts`, its logs kept,
 * the attempt's own outcome fields cleared for the next one. `result` is the ended attempt's
 * (its logs as attemptLogs made them).
 */
export function nextAttempt(run: RunItem, result: InvokeResult, settings: { backoffSeconds: number; timeoutSeconds: number }, now: Date): RunItem {
  const attempt = run.attempt ?? 1;
  const retryAt = new Date(now.getTime() + backoffMs(attempt, settings.backoffSeconds)).toISOString();
  const ended = {
    attempt,
    status: result.status,
    error: runError(result.error),
    started_at: run.started_at,
    finished_at: now.toISOString(),
    duration_ms: result.duration_ms,
  };
  return {
    ...copyRun(run),
    status: "queued",
    queue_reason: "retry_backoff",
    attempt: attempt + 1,
    attempts: [...(run.attempts ?? []), ended],
    retry_at: retryAt,
    logs: result.logs,
    result_json: null,
    // The failed attempt's error is in `attempts`; the attempt to come has none yet.
    error: null,
    started_at: null,
    finished_at: null,
    duration_ms: null,
    // Overdue only well past its next attempt's time (settleRun moves it on while its queue item waits).
    deadline_at: runDeadline(retryAt, settings.timeoutSeconds),
  };
}
