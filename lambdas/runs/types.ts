export type RunStatus = "queued" | "running" | "succeeded" | "failed" | "timed_out";
export type RunTrigger = "http" | "schedule";

export interface RunError {
  code: string;
  message: string;
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
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  browser_ms: number;
  peak_memory_mb: number | null;
  memory_mb: number;
  request_origin: string | null;
  sdk_version: string | null;
  /**
   * A secret of this run (internal, never shown): the AWS runtime passes it in the function's
   * event, and the run-completion Lambda ends the run only for an event that carries it, so
   * code that can invoke the completion Lambda cannot end another account's runs.
   * Absent on runs recorded before it existed.
   */
  completion_token?: string;
}

export const FINAL_STATUSES: readonly RunStatus[] = ["succeeded", "failed", "timed_out"];
