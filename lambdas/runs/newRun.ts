import type { FunctionItem } from "../functions/types";
import { newRunId } from "./runIds";
import { type RunItem, type RunTrigger, runDeadline } from "./types";

/**
 * A new run of `fn` as first recorded: `queued` at `queuedAt`, due by its timeout and
 * RUN_DEADLINE_MARGIN_MS, nothing run, measured or kept yet. Callers change what differs
 * (startRun adds its completion token; a refused scheduled firing ends it at once).
 */
export function newRun(
  fn: Pick<FunctionItem, "account_id" | "function_id" | "name" | "memory_mb" | "timeout_seconds">,
  run: { version: number; trigger: RunTrigger; params: Record<string, unknown>; queuedAt: string; requestOrigin?: string | null; sdkVersion?: string | null; batchId?: string },
): RunItem {
  return {
    run_id: newRunId(),
    account_id: fn.account_id,
    function_id: fn.function_id,
    function_name: fn.name,
    version: run.version,
    trigger: run.trigger,
    status: "queued",
    params: run.params,
    result_json: null,
    error: null,
    logs: "",
    queued_at: run.queuedAt,
    deadline_at: runDeadline(run.queuedAt, fn.timeout_seconds),
    started_at: null,
    finished_at: null,
    duration_ms: null,
    browser_ms: 0,
    peak_memory_mb: null,
    memory_mb: fn.memory_mb,
    request_origin: run.requestOrigin ?? null,
    sdk_version: run.sdkVersion ?? null,
    ...(run.batchId === undefined ? {} : { batch_id: run.batchId }),
  };
}
