import type { z } from "zod";
import type { Deps } from "../deps";
import type { Principal } from "../identity/identity";
import { ApiError } from "../http/errors";
import { FINAL_STATUSES } from "../runs/types";
import type { BatchView } from "../schemas/batchSchemas";
import { isBatchId } from "./batchIds";
import type { BatchCounts, BatchItem } from "./types";

/** One of the principal's batches by id; 404 `batch_not_found` for any other (another account's too). */
export async function ownBatch(deps: Pick<Deps, "store">, principal: Principal, batchId: string): Promise<BatchItem> {
  const batch = isBatchId(batchId) ? await deps.store.batches.get(batchId) : undefined;
  if (!batch || batch.account_id !== principal.account_id) {
    throw new ApiError("batch_not_found", `No batch '${batchId.slice(0, 64)}'`, { batch_id: batchId.slice(0, 64) });
  }
  return batch;
}

/**
 * The batch's counts by status, and finished_at once every run has ended: read from its runs
 * (by key, only their status and end) until then; once they have all ended the batch keeps
 * the final counts, and later reads are one item.
 */
export async function batchStatus(deps: Pick<Deps, "store">, batch: BatchItem, baseUrl: string): Promise<z.infer<typeof BatchView>> {
  let counts = batch.counts;
  let finishedAt = batch.finished_at;
  if (counts === null || finishedAt === null) {
    const states = await deps.store.batches.runStates(batch.run_ids);
    const current: BatchCounts = { queued: 0, running: 0, succeeded: 0, failed: 0, timed_out: 0, canceled: 0 };
    for (const state of states) if (state.status in current) current[state.status as keyof BatchCounts]++;
    counts = current;
    const ended = states.length === batch.run_ids.length && states.every((state) => FINAL_STATUSES.includes(state.status));
    if (ended) {
      finishedAt = states.reduce((last, state) => (state.finished_at !== null && state.finished_at > last ? state.finished_at : last), batch.created_at);
      await deps.store.batches.markFinished(batch.batch_id, counts, finishedAt);
    }
  }
  return {
    batch_id: batch.batch_id,
    function_id: batch.function_id,
    function_name: batch.function_name,
    version: String(batch.version),
    total: batch.run_ids.length,
    counts,
    created_at: batch.created_at,
    finished_at: finishedAt,
    runs_url: `${baseUrl.replace(/\/+$/, "")}/batches/${batch.batch_id}/runs`,
  };
}
