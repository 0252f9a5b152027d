import type { Deps } from "../deps";
import type { FunctionItem } from "../functions/types";
import { ApiError } from "../http/errors";
import type { HttpResult } from "../http/response";
import { requestHash } from "../store/idempotencyStore";
import { acceptedBatch } from "./acceptedBatch";

/** How often a duplicate reads whether the first request's batch is recorded yet. */
const POLL_MS = 50;
/** How long a duplicate waits for the first request to record its batch before 503. */
const SETTLE_MS = 5_000;
/** How old a claim whose batch was never recorded must be to count as abandoned (its service died). */
const ABANDONED_MS = 60_000;

/** What makes two batches the same request: `batch`, the version and every item's parameters, in order. */
export function batchRequestHash(version: number, items: readonly Record<string, unknown>[]): string {
  return requestHash(version, { batch: items });
}

/**
 * Claims an `Idempotency-Key` for a batch (null: go on and create the batch `batchId`), as an
 * invocation's claim does (claimOrReplay), in the same keys of the function: the same key with
 * the same items answers the first batch's 202 again with `Idempotent-Replayed: true`; with
 * other items (or an invocation's parameters), 422 `idempotency_key_reused`. A duplicate that
 * comes while the first request is still writing its batch waits for it (503 past SETTLE_MS);
 * a claim whose batch was never recorded (the first request was refused, or its service died)
 * is given back and claimed again.
 */
export async function claimBatchKey(
  deps: Deps,
  accountId: string,
  fn: FunctionItem,
  key: string,
  claim: { requestHash: string; batchId: string; baseUrl: string },
): Promise<HttpResult | null> {
  const started = Date.now();
  for (;;) {
    const outcome = await deps.store.idempotency.claim(accountId, fn.function_id, key, { request_hash: claim.requestHash, run_id: claim.batchId }, deps.clock.now());
    if (outcome.claimed) return null;
    const first = outcome.first;
    if (first.request_hash !== claim.requestHash) {
      throw new ApiError("idempotency_key_reused", "This Idempotency-Key was used for another request (other items, parameters or version) within 24 h", {
        [first.run_id.startsWith("batch_") ? "batch_id" : "run_id"]: first.run_id,
      });
    }
    const batch = await deps.store.batches.get(first.run_id);
    if (batch && batch.account_id === accountId) {
      const answer = acceptedBatch(batch, claim.baseUrl);
      return { ...answer, headers: { ...answer.headers, "idempotent-replayed": "true" } };
    }
    if (deps.clock.now().getTime() - Date.parse(first.created_at) > ABANDONED_MS) {
      await deps.store.idempotency.release(accountId, fn.function_id, key, first.run_id);
      continue;
    }
    if (Date.now() - started > SETTLE_MS) {
      throw new ApiError("service_unavailable", "The first request with this Idempotency-Key is still recording its batch; try again shortly", {}, { "retry-after": "1" });
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
