import type { z } from "zod";
import { type HttpResult, json } from "../http/response";
import type { AcceptedBatch } from "../schemas/batchSchemas";
import type { BatchItem } from "./types";

/** 202 to a batch: its id, its runs' ids in the order of its items, and where to follow it (also Location). */
export function acceptedBatch(batch: Pick<BatchItem, "batch_id" | "run_ids">, baseUrl: string): HttpResult {
  const statusUrl = `${baseUrl.replace(/\/+$/, "")}/batches/${batch.batch_id}`;
  const body: z.infer<typeof AcceptedBatch> = { batch_id: batch.batch_id, run_ids: [...batch.run_ids], status_url: statusUrl };
  return json(202, body, { location: statusUrl });
}
