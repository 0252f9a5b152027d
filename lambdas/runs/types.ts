/** A run's status; `canceled` ends a run stopped by POST /runs/{run_id}/cancel. */
export type RunStatus = "queued" | "running" | "succeeded" | "failed" | "timed_out" | "canceled";
/** What a queued run waits for: a slot of its plan's concurrency, or a worker of this machine (local). */
export type QueueReason = "plan_concurrency" | "machine_busy" | "retry_backoff";
/** What started a run: an HTTP invocation, its schedule, an MCP client's `tools/call`, or an item of a batch. */
export type RunTrigger = "http" | "schedule" | "mcp" | "batch";

export interface RunError {
  code: string;
  message: string;
  /** The stack of the user's code (a function_error's), its frames as `automation.ts:LINE:COLUMN`; at most 16,384 characters. */
  stack?: string;
}

/** An attempt of a run that was retried (lambdas/retries): how it ended. */
export interface RunAttempt {
  attempt: number;
  status: "succeeded" | "failed" | "timed_out" | "canceled";
  error: RunError | null;
  started_at: string | null;
  finished_at: string;
  duration_ms: number | null;
}

/** One invocation of a function, as stored. */
export interface RunItem {
  run_id: string;
  account_id: string;
  function_id: string;
  function_name: string;
  version: number;
  trigger: RunTrigger;
  status: RunStatus;
  params: Record<string, unknown>;
  /** The automation's return value as JSON text (absent until it succeeded). */
  result_json: string | null;
  error: RunError | null;
  logs: string;
  queued_at: string;
  /**
   * When the run is overdue (ISO): queued_at + the function's timeout + RUN_DEADLINE_MARGIN_MS.
   * A run still queued or running past it lost its end; the active index orders runs by it.
   */
  deadline_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  browser_ms: number;
  peak_memory_mb: number | null;
  memory_mb: number;
  request_origin: string | null;
  sdk_version: string | null;
  /** While queued: what it waits for (absent once it started, and on runs that never waited). */
  queue_reason?: QueueReason;
  /** The batch the run is an item of (trigger `batch`); absent for any other run. */
  batch_id?: string;
  /** Which attempt this is (1 when absent: runs stored before retries, and runs never retried). */
  attempt?: number;
  /** How many attempts the run may have: its function's `retries.max_attempts` for an async call, a schedule or a batch; 1 otherwise. */
  max_attempts?: number;
  /** The attempts before this one, oldest first (the current attempt is the run's own fields). */
  attempts?: RunAttempt[];
  /** While it waits for its next attempt: when that may start (the ready_at of its queue item). */
  retry_at?: string;
}

export const FINAL_STATUSES: readonly RunStatus[] = ["succeeded", "failed", "timed_out", "canceled"];

/**
 * True for a run that ended refused before its automation started: recorded first, then turned
 * away by a limit (on AWS, Lambda throttled every Invoke of it: recordRun.ts). Its answer is a
 * 429, and its idempotency key is given back, as for a request refused before it had a run.
 */
export function refusedBeforeStart(run: Pick<RunItem, "status" | "error">): boolean {
  return run.status === "failed" && (run.error?.code === "concurrency_limit_exceeded" || run.error?.code === "invocation_quota_exceeded");
}

/**
 * How long past its timeout a run may stay unended before it counts as overdue (the sweeper
 * ends it): longer than the AWS run workflow can last beyond the function's timeout (its invoke
 * margin, throttle waits and every recorder attempt; the dead-letter send after the last one
 * records nothing).
 */
export const RUN_DEADLINE_MARGIN_MS = 12 * 60_000;

/** The timeout (ms) a run was queued under, from its deadline (NaN for a record that has no valid times). */
export function runTimeoutMs(run: Pick<RunItem, "deadline_at" | "queued_at">): number {
  return Date.parse(run.deadline_at) - Date.parse(run.queued_at) - RUN_DEADLINE_MARGIN_MS;
}

/** The deadline_at of a run queued at `queuedAt` under a timeout of `timeoutSeconds`. */
export function runDeadline(queuedAt: string, timeoutSeconds: number): string {
  return new Date(Date.parse(queuedAt) + timeoutSeconds * 1000 + RUN_DEADLINE_MARGIN_MS).toISOString();
}
