import { z } from "zod";
import { PlanSchema } from "../config/plans";
import { DateTime } from "./dateTime";

/** `GET /functions/{ref}/metrics`. */
export const FunctionMetrics = z
  .object({
    total_calls: z.int().describe("Runs that ended"),
    success_rate: z.number().describe("Percent (0-100) of them that succeeded"),
    avg_duration: z.number().describe("Mean duration in ms"),
    succeeded_calls: z.int(),
    failed_calls: z.int(),
    timed_out_calls: z.int(),
    skipped_scheduled_runs: z.int().describe("Scheduled firings skipped while the previous scheduled run was going"),
    p50_duration: z.number().nullable().describe("Median duration (ms) of the latest 100 finished runs"),
    p95_duration: z.number().nullable().describe("95th percentile duration (ms) of the latest 100 finished runs"),
    last_called_at: DateTime.nullable().describe("When the latest run (of those counted) was queued"),
  })
  .meta({ id: "FunctionMetrics" });

export const UsageCounters = z
  .object({
    invocations: z.int(),
    execution_ms: z.number(),
    gb_seconds: z.number().describe("memory_mb / 1024 × seconds, 3 decimals"),
    browser_session_ms: z.number(),
    browser_session_seconds: z.number(),
    artifact_bytes: z.int().describe("bytes of artifacts the runs kept (failure evidence, artifacts.save, downloads)"),
  })
  .meta({ id: "UsageCounters" });

/** `GET /usage?month=YYYY-MM`. */
export const UsageReport = z
  .object({
    account: z.string(),
    month: z.string(),
    plan: z.string(),
    limits: PlanSchema.nullable(),
    total: UsageCounters,
    functions: z.array(UsageCounters.extend({ function_id: z.string(), name: z.string().nullable() })),
    remaining: z.object({ invocations: z.int(), concurrency: z.int() }).nullable().describe("The current month only"),
    storage_bytes: z
      .int()
      .describe("Bytes the account holds now, whatever `month`: its runs' artifacts and records (params, result, logs) not yet expired"),
    max_storage_bytes: z.int().describe("The plan's storage cap in bytes (`max_storage_mb`); past it `artifacts.save` fails with `storage_limit_exceeded`"),
  })
  .meta({ id: "UsageReport" });

/** `PUT /accounts/{account}/plan`. */
export const AccountPlan = z.object({ account: z.string(), plan: z.string(), limits: PlanSchema }).meta({ id: "AccountPlan" });
