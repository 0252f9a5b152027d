import { z } from "zod";
import { DateTime } from "./dateTime";
import type { RunStatus as RunStatusType, RunTrigger as RunTriggerType } from "../runs/types";

export const RunStatus = z
  .enum(["queued", "running", "succeeded", "failed", "timed_out", "canceled"] as const satisfies readonly RunStatusType[])
  .meta({ id: "RunStatus" });

export const RunTrigger = z
  .enum(["http", "schedule", "mcp", "batch"] as const satisfies readonly RunTriggerType[])
  .describe("What started the run: an HTTP invocation, the function's schedule, an MCP client's tools/call, or an item of a batch (POST /functions/{ref}/batch)")
  .meta({ id: "RunTrigger" });

/** A failed run's error as the API shows it. */
export const RunErrorView = z
  .object({
    code: z.string().describe("An error code of the API, e.g. function_error, function_timeout, function_crashed"),
    message: z.string(),
    stack: z.string().optional().describe("The stack of the user's code (function_error), frames as automation.ts:LINE:COLUMN; at most 16,384 characters"),
  })
  .meta({ id: "RunError" });

/** One ended attempt of a run. */
export const RunAttemptView = z
  .object({
    attempt: z.int().min(1),
    status: z.enum(["succeeded", "failed", "timed_out", "canceled"]),
    error: RunErrorView.pick({ code: true, message: true }).nullable(),
    started_at: DateTime.nullable(),
    finished_at: DateTime,
    duration_ms: z.number().nullable(),
  })
  .meta({ id: "RunAttempt" });

/** `GET /runs/{run_id}`. */
export const RunView = z
  .object({
    run_id: z.string(),
    function_id: z.string(),
    function_name: z.string(),
    version: z.string(),
    trigger: RunTrigger,
    status: RunStatus,
    params: z.record(z.string(), z.unknown()).describe("The parameters as the run was called with them: the automation's defaults are not filled in (an omitted parameter is absent)"),
    result: z.unknown().describe("The automation's return value once it succeeded; null before and on failure"),
    error: RunErrorView.nullable(),
    logs: z.string().describe("Console output, as written"),
    queued_at: DateTime,
    started_at: DateTime.nullable(),
    finished_at: DateTime.nullable(),
    duration_ms: z.number().nullable(),
    browser_ms: z.number().describe("Browser-session time in ms"),
    peak_memory_mb: z.number().nullable(),
    attempt: z.int().min(1).describe("Which attempt of the run this is (1 unless it was retried); while it waits for a retry, the attempt it waits to start"),
    max_attempts: z.int().min(1).describe("How many attempts the run may have: its function's retries.max_attempts for an async call, a schedule or a batch item; 1 for a sync call"),
    attempts: z
      .array(RunAttemptView)
      .describe("Each attempt that ended, oldest first; the last is the run's own outcome once it ended. Logs of a run with max_attempts over 1 start each attempt with a `--- attempt N of M ---` line"),
    queue_reason: z
      .enum(["plan_concurrency", "machine_busy", "retry_backoff"])
      .optional()
      .describe(
        "Only while the run is `queued`: what it waits for. `plan_concurrency`: every run the account's plan allows at a time is in progress (it starts when one ends, round-robin between the account's functions); `machine_busy`: its plan admitted it, but every worker of this machine is busy (local service; workers are shared fairly between accounts); `retry_backoff`: an attempt failed and the next one starts once its backoff has passed (`retry_at`)",
      ),
    batch_id: z.string().optional().describe("The batch the run is an item of (trigger batch); absent for any other run"),
    retry_at: DateTime.optional().describe("Only while it waits for its next attempt (queue_reason `retry_backoff`): when that attempt may start"),
  })
  .meta({ id: "Run" });

/** One entry of `GET /functions/{ref}/logs`. */
export const LogEntry = z
  .object({
    timestamp: DateTime.describe("When the run started (when it was queued, while it has not)"),
    status: RunStatus,
    duration: z.number().nullable().describe("ms; null while it goes on"),
    run_id: z.string(),
    version: z.string(),
    trigger: RunTrigger,
    error: RunErrorView.pick({ code: true, message: true }).nullable(),
  })
  .meta({ id: "LogEntry" });

/** `GET /functions/{ref}/logs`, newest first. */
export const LogList = z.object({ items: z.array(LogEntry) }).meta({ id: "LogList" });

/** One run of `GET /runs`: what the list shows (GET /runs/{run_id} has its params, result and logs). */
export const RunListItem = RunView.pick({
  run_id: true,
  function_id: true,
  function_name: true,
  version: true,
  trigger: true,
  status: true,
  queued_at: true,
  started_at: true,
  finished_at: true,
  duration_ms: true,
})
  .extend({ error: RunErrorView.pick({ code: true, message: true }).nullable() })
  .meta({ id: "RunListItem" });

/** `GET /runs`, newest first. */
export const RunList = z
  .object({ items: z.array(RunListItem), next_cursor: z.string().nullable().describe("Pass it as `cursor` for older runs; null when there are none") })
  .meta({ id: "RunList" });

/** 202 answer of an invocation whose run goes on: where to find its result later. */
export const AcceptedRun = z
  .object({
    run_id: z.string(),
    status: z.enum(["queued", "running"]).describe("`queued`: it waits for a slot of the plan's concurrency (or a worker of the machine) and starts as soon as one frees; `running`: it started"),
    status_url: z.string().describe("GET it (GET /runs/{run_id}) for the run and, once it ended, its result; also the Location header"),
  })
  .meta({ id: "AcceptedRun" });
