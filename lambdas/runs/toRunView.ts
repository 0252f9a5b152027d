import type { RunItem } from "./types";

/** The run of `GET /runs/{run_id}`. */
export function toRunView(run: RunItem) {
  return {
    run_id: run.run_id,
    function_id: run.function_id,
    function_name: run.function_name,
    version: String(run.version),
    trigger: run.trigger,
    status: run.status,
    params: run.params,
    result: run.result_json === null ? null : JSON.parse(run.result_json),
    error: run.error,
    logs: run.logs,
    queued_at: run.queued_at,
    started_at: run.started_at,
    finished_at: run.finished_at,
    duration_ms: run.duration_ms,
    browser_ms: run.browser_ms,
    peak_memory_mb: run.peak_memory_mb,
  };
}

/** One entry of `GET /functions/{ref}/logs`. */
export function toLogEntry(run: RunItem) {
  return {
    timestamp: run.started_at ?? run.queued_at,
    status: run.status,
    duration: run.duration_ms,
    run_id: run.run_id,
    version: String(run.version),
    trigger: run.trigger,
    error: run.error,
  };
}
