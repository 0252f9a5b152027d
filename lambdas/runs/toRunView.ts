import type { z } from "zod";
import type { LogEntry, RunListItem, RunView } from "../schemas/runSchemas";
import { runWithinDepth } from "./resultDepth";
import type { RunAttempt, RunError, RunItem } from "./types";

/** The longest error stack the API shows (the runner's outcome is cut to this length already). */
export const MAX_STACK_CHARS = 16_384;

/**
 * The stack of the user's code a failed run kept with its error (`RunError.stack`, with the
 * user's frames as `automation.ts:LINE:COLUMN`), at most MAX_STACK_CHARS; undefined when it
 * kept none (a timeout, a crash, a run recorded before stacks were kept).
 */
export function runErrorStack(error: RunError): string | undefined {
  // Read through a wider type: whatever the stored record holds, only a string is a stack.
  const stack = (error as { stack?: unknown }).stack;
  if (typeof stack !== "string" || stack === "") return undefined;
  return stack.length > MAX_STACK_CHARS ? `${stack.slice(0, MAX_STACK_CHARS)}…[truncated]` : stack;
}

/** A run's error as the API shows it, field by field: code, message, and the stack when there is one. */
export function runErrorView(error: RunError | null): { code: string; message: string; stack?: string } | null {
  if (!error) return null;
  const stack = runErrorStack(error);
  return stack === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, stack };
}

/** The run of `GET /runs/{run_id}`, of the documented shape (RunView). */
export function toRunView(stored: RunItem): z.infer<typeof RunView> {
  // Whatever the record holds, no result nested past the cap is parsed, nor written out again.
  const run = runWithinDepth(stored);
  return {
    run_id: run.run_id,
    function_id: run.function_id,
    function_name: run.function_name,
    version: String(run.version),
    trigger: run.trigger,
    status: run.status,
    params: run.params,
    result: run.result_json === null ? null : JSON.parse(run.result_json),
    error: runErrorView(run.error),
    logs: run.logs,
    queued_at: run.queued_at,
    started_at: run.started_at,
    finished_at: run.finished_at,
    duration_ms: run.duration_ms,
    browser_ms: run.browser_ms,
    peak_memory_mb: run.peak_memory_mb,
    attempt: run.attempt ?? 1,
    max_attempts: run.max_attempts ?? 1,
    attempts: attemptsOf(run),
    ...(run.status === "queued" && run.queue_reason ? { queue_reason: run.queue_reason } : {}),
    ...(run.batch_id === undefined ? {} : { batch_id: run.batch_id }),
    ...(run.status === "queued" && run.retry_at ? { retry_at: run.retry_at } : {}),
  };
}

/**
 * The run's ended attempts: those before, then the current one once it ended (its own fields),
 * a canceled one too when it had started (a run canceled while it waited ran no attempt then).
 */
function attemptsOf(run: RunItem): z.infer<typeof RunView>["attempts"] {
  const view = (attempt: RunAttempt) => ({
    attempt: attempt.attempt,
    status: attempt.status,
    error: attempt.error && { code: attempt.error.code, message: attempt.error.message },
    started_at: attempt.started_at,
    finished_at: attempt.finished_at,
    duration_ms: attempt.duration_ms,
  });
  const earlier = (run.attempts ?? []).map(view);
  const status = run.status;
  const ran = status === "succeeded" || status === "failed" || status === "timed_out" || (status === "canceled" && run.started_at !== null);
  if (!run.finished_at || !ran) return earlier;
  const current = { attempt: run.attempt ?? 1, status, error: run.error, started_at: run.started_at, finished_at: run.finished_at, duration_ms: run.duration_ms };
  return [...earlier, view(current)];
}

/** One entry of `GET /functions/{ref}/logs`, of the documented shape (LogEntry). */
export function toLogEntry(run: RunItem): z.infer<typeof LogEntry> {
  return {
    timestamp: run.started_at ?? run.queued_at,
    status: run.status,
    duration: run.duration_ms,
    run_id: run.run_id,
    version: String(run.version),
    trigger: run.trigger,
    // Code and message only: a page of up to 1,000 entries carries no stacks (GET /runs/{id} has it).
    error: run.error && { code: run.error.code, message: run.error.message },
  };
}

/** One item of `GET /runs`, of the documented shape (RunListItem). */
export function toRunListItem(run: RunItem): z.infer<typeof RunListItem> {
  return {
    run_id: run.run_id,
    function_id: run.function_id,
    function_name: run.function_name,
    version: String(run.version),
    trigger: run.trigger,
    status: run.status,
    error: run.error && { code: run.error.code, message: run.error.message },
    queued_at: run.queued_at,
    started_at: run.started_at,
    finished_at: run.finished_at,
    duration_ms: run.duration_ms,
  };
}
