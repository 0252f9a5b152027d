import type { FunctionItem } from "../../lambdas/functions/types";
import { type RunItem, runDeadline } from "../../lambdas/runs/types";

/** A function record as the store keeps it: an active, unscheduled function, then `overrides`. */
export function functionItem(overrides: Partial<FunctionItem> = {}): FunctionItem {
  return {
    account_id: "acct",
    function_id: "fn_00000000000000000000000001",
    name: "scraper",
    description: null,
    status: "active",
    status_reason: null,
    latest_version: 1,
    variables: [],
    schedule: null,
    schedule_timezone: "UTC",
    schedule_params: null,
    next_run_at: null,
    timeout_seconds: 300,
    memory_mb: 1024,
    shared: false,
    reference_workflow_id: null,
    webhooks: [],
    retries: null,
    proxy: null,
    profiles: [],
    recording: "off",
    webhook_secret_sealed: null,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    code_sha256: "0".repeat(64),
    revision: 1,
    ...overrides,
  };
}

/** A run record as the store keeps it: a running HTTP run of `fn`, then `overrides`. */
export function runItem(fn: Pick<FunctionItem, "account_id" | "function_id" | "name" | "memory_mb">, overrides: Partial<RunItem> = {}): RunItem {
  const queuedAt = overrides.queued_at ?? "2026-01-01T00:00:00.000Z";
  return {
    run_id: "run_1",
    account_id: fn.account_id,
    function_id: fn.function_id,
    function_name: fn.name,
    version: 1,
    trigger: "http",
    status: "running",
    params: {},
    result_json: null,
    error: null,
    logs: "",
    queued_at: queuedAt,
    deadline_at: runDeadline(queuedAt, 300),
    started_at: "2026-01-01T00:00:00.000Z",
    finished_at: null,
    duration_ms: null,
    browser_ms: 0,
    peak_memory_mb: null,
    memory_mb: fn.memory_mb,
    request_origin: null,
    sdk_version: null,
    ...overrides,
  };
}
