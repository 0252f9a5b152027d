import type { z } from "zod";
import { ownBatch } from "../batches/batchStatus";
import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { json } from "../http/response";
import { type BatchRun, BatchRunsQuery } from "../schemas/batchSchemas";

/** GET /batches/{batch_id}/runs?limit=&cursor=: the batch's runs in the order of its items, a page at a time. */
export const listBatchRuns = defineRoute({ query: BatchRunsQuery }, async ({ params, principal, query }, deps) => {
  const batch = await ownBatch(deps, principal, params.batch_id ?? "");
  const from = startOf(query.cursor, batch.run_ids);
  const ids = batch.run_ids.slice(from, from + query.limit);
  const runs = new Map((await deps.store.batches.listedRuns(ids)).map((run) => [run.run_id, run]));
  const items: z.infer<typeof BatchRun>[] = [];
  ids.forEach((runId, offset) => {
    const run = runs.get(runId);
    if (!run) return;
    items.push({
      index: from + offset,
      run_id: run.run_id,
      status: run.status,
      queued_at: run.queued_at,
      started_at: run.started_at,
      finished_at: run.finished_at,
      duration_ms: run.duration_ms,
      error: run.error && { code: run.error.code, message: run.error.message },
    });
  });
  const end = from + ids.length;
  return json(200, { items, next_cursor: end < batch.run_ids.length ? Buffer.from(String(end), "utf8").toString("base64url") : null });
});

/** Where a page starts: 0, or the position a next_cursor of this batch names (else 400). */
function startOf(cursor: string | undefined, runIds: readonly string[]): number {
  if (cursor === undefined) return 0;
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const position = /^[1-9]\d{0,3}$/.test(text) ? Number(text) : Number.NaN;
  if (!(position > 0 && position < runIds.length) || Buffer.from(text, "utf8").toString("base64url") !== cursor) {
    throw new ApiError("invalid_request", "cursor is not a next_cursor this API returned for this batch", { field: "cursor" });
  }
  return position;
}
