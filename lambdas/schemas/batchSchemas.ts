import { z } from "zod";
import { MAX_BATCH_ITEMS } from "../batches/types";
import { limitParam } from "../http/limit";
import { DateTime } from "./dateTime";
import { RunErrorView, RunStatus } from "./runSchemas";

/** The body of `POST /functions/{ref}/batch` (checked by checkBatchItems, for its precise codes). */
export const BatchRequest = z
  .object({
    items: z
      .array(z.record(z.string(), z.unknown()).describe("One run's parameters, as the body of POST /functions/{ref}"))
      .min(1)
      .max(MAX_BATCH_ITEMS)
      .describe(`1..${MAX_BATCH_ITEMS} parameter objects, one run each, checked all before any starts`),
  })
  .meta({ id: "BatchRequest" });

/** 202 to a batch. */
export const AcceptedBatch = z
  .object({
    batch_id: z.string().describe("batch_ + 26 lowercase ULID characters"),
    run_ids: z.array(z.string()).describe("The runs' ids, in the order of the items"),
    status_url: z.string().describe("GET it (GET /batches/{batch_id}) for the counts by status; also the Location header"),
  })
  .meta({ id: "AcceptedBatch" });

/** How many of a batch's runs are in each status. */
export const BatchCounts = z
  .object({
    queued: z.int(),
    running: z.int(),
    succeeded: z.int(),
    failed: z.int(),
    timed_out: z.int(),
    canceled: z.int(),
  })
  .meta({ id: "BatchCounts" });

/** `GET /batches/{batch_id}`. */
export const BatchView = z
  .object({
    batch_id: z.string(),
    function_id: z.string(),
    function_name: z.string(),
    version: z.string(),
    total: z.int().describe("How many runs (items) the batch has"),
    counts: BatchCounts,
    created_at: DateTime,
    finished_at: DateTime.nullable().describe("When its last run ended, once every run has; null before"),
    runs_url: z.string().describe("GET /batches/{batch_id}/runs"),
  })
  .meta({ id: "Batch" });

/** One run of `GET /batches/{batch_id}/runs`. */
export const BatchRun = z
  .object({
    index: z.int().describe("The run's item in the batch's items (0-based)"),
    run_id: z.string(),
    status: RunStatus,
    queued_at: DateTime,
    started_at: DateTime.nullable(),
    finished_at: DateTime.nullable(),
    duration_ms: z.number().nullable(),
    error: RunErrorView.pick({ code: true, message: true }).nullable(),
  })
  .meta({ id: "BatchRun" });

/** `GET /batches/{batch_id}/runs`, in the order of the items. */
export const BatchRunList = z
  .object({
    items: z.array(BatchRun),
    next_cursor: z.string().nullable().describe("Pass as cursor for the next page; null on the last"),
  })
  .meta({ id: "BatchRunList" });

/** `GET /batches/{batch_id}/runs?limit=&cursor=`. */
export const BatchRunsQuery = z.object({
  limit: limitParam(MAX_BATCH_ITEMS, 100),
  cursor: z.string().optional().describe("next_cursor of the previous page"),
});
export type BatchRunsQuery = z.infer<typeof BatchRunsQuery>;
