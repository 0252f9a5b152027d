import { type RunAttempt, type RunError, type RunItem, runDeadline } from "./types";

/** Runs recorded before deadline_at are given the deadline of the longest timeout a function can have. */
const LONGEST_TIMEOUT_SECONDS = 900;

/** A run's error as its code, message and (when it has one) stack only. */
export function runError(error: RunError | null | undefined): RunError | null {
  if (!error) return null;
  return typeof error.stack === "string" ? { code: error.code, message: error.message, stack: error.stack } : { code: error.code, message: error.message };
}

/**
 * A run, field by field: every field of RunItem by name and nothing else, so an object that
 * carries more (`pk`, `sk`, another account's ids under other names) never passes it on. Every
 * place a run is written or rebuilt goes through this (STYLE.md, rule 11).
 */
export function copyRun(run: RunItem): RunItem {
  return {
    run_id: run.run_id,
    account_id: run.account_id,
    function_id: run.function_id,
    function_name: run.function_name,
    version: run.version,
    trigger: run.trigger,
    status: run.status,
    params: run.params,
    result_json: run.result_json,
    error: runError(run.error),
    logs: run.logs,
    queued_at: run.queued_at,
    deadline_at: typeof run.deadline_at === "string" ? run.deadline_at : runDeadline(run.queued_at, LONGEST_TIMEOUT_SECONDS),
    started_at: run.started_at,
    finished_at: run.finished_at,
    duration_ms: run.duration_ms,
    browser_ms: run.browser_ms,
    peak_memory_mb: run.peak_memory_mb,
    memory_mb: run.memory_mb,
    request_origin: run.request_origin,
    sdk_version: run.sdk_version,
    // Only while it waits: a run that started (or ended) waits for nothing.
    ...(run.status === "queued" && (run.queue_reason === "plan_concurrency" || run.queue_reason === "machine_busy" || run.queue_reason === "retry_backoff")
      ? { queue_reason: run.queue_reason }
      : {}),
    ...(typeof run.batch_id === "string" ? { batch_id: run.batch_id } : {}),
    ...(Number.isInteger(run.attempt) ? { attempt: run.attempt } : {}),
    ...(Number.isInteger(run.max_attempts) ? { max_attempts: run.max_attempts } : {}),
    ...(Array.isArray(run.attempts) ? { attempts: run.attempts.map(copyAttempt) } : {}),
    ...(run.status === "queued" && typeof run.retry_at === "string" ? { retry_at: run.retry_at } : {}),
  };
}

/** An earlier attempt of a run, field by field. */
export function copyAttempt(attempt: RunAttempt): RunAttempt {
  return {
    attempt: Number(attempt.attempt),
    status: attempt.status === "succeeded" || attempt.status === "timed_out" || attempt.status === "canceled" ? attempt.status : "failed",
    error: runError(attempt.error),
    started_at: typeof attempt.started_at === "string" ? attempt.started_at : null,
    finished_at: String(attempt.finished_at),
    duration_ms: typeof attempt.duration_ms === "number" ? attempt.duration_ms : null,
  };
}
