import { createHash } from "node:crypto";
import { copyRun } from "../runs/copyRun";
import { FINAL_STATUSES, type RunItem } from "../runs/types";
import type { PendingDelivery } from "../webhooks/webhookTypes";
import { PART_BYTES } from "./blobParts";
import { asStored } from "./keys";
import { RUN_LIST_ATTRIBUTES } from "./tables";

/**
 * The run item as stored: its keys (the item, the runs index, the active index, pending
 * webhook deliveries), its attributes built field by field, and a run read back from one.
 */

/** Results up to this size stay in the run item; larger ones go to gzipped part items. */
export const INLINE_RESULT_BYTES = PART_BYTES;
/**
 * Parameters are kept as JSON text (exact, whatever their numbers, keys or depth), in the run
 * item up to this size and in gzipped part items beyond: with a 300 KB result and 64 KB of
 * logs the item stays under DynamoDB's 400 KB.
 */
export const INLINE_PARAMS_BYTES = 16_384;

export const runKey = (runId: string) => ({ pk: `RUN#${runId}`, sk: "RUN" });
export const runIdOfKey = (pk: unknown) => String(pk).slice("RUN#".length);
/** The function's runs in the runs index, by run id (ULIDs: by time). Runs written before it have gsi1pk/gsi1sk of these values. */
export const runsIndexKey = (functionId: string, runId: string) => ({ runs_pk: `FNID#${functionId}#RUNS`, runs_sk: runId });
/** The account's runs in the account_runs index, by run id (ULIDs: by time). */
export const accountRunsKey = (accountId: string, runId: string) => ({ acct_runs_pk: `ACCOUNT#${accountId}#RUNS`, acct_runs_sk: runId });

/**
 * Partitions of the active runs in gsi1 (ACTIVE_INDEX): every queued run writes there, so they
 * are spread over several.
 */
export const ACTIVE_SHARDS = 8;
export const activePk = (shard: number) => `ACTIVE#${shard}`;
/**
 * A queued or running run among the active runs of gsi1: in its shard, by deadline. gsi1, whose
 * other keys (`ACCOUNT#…`, `FNID#…`) never start with `ACTIVE#`, rather than an index of its own:
 * DynamoDB adds one index per table update, and the runs index is the other one this version adds.
 */
export const activeIndexKey = (run: RunItem) => ({
  gsi1pk: activePk(createHash("sha256").update(run.run_id).digest().readUInt8(0) % ACTIVE_SHARDS),
  gsi1sk: `${run.deadline_at}#${run.run_id}`,
});

/**
 * A final run that still owes webhook deliveries, in gsi1 by when it ended (see
 * runEndWebhooks.ts): the entry is written by the write that ends the run and removed once the
 * deliveries are items of their own, so an end whose deliveries were never made is found again.
 */
export const PENDING_WEBHOOKS_PK = "WHPEND";
export const pendingWebhooksKey = (run: RunItem) => ({ gsi1pk: PENDING_WEBHOOKS_PK, gsi1sk: `${run.finished_at ?? run.queued_at}#${run.run_id}` });

/** A run's end that still owes deliveries: who it belongs to and what it owes. */
export interface RunWithPendingDeliveries {
  run_id: string;
  account_id: string;
  function_id: string;
  pending: PendingDelivery[];
}

/** Run attributes the runs index keeps (a run as listed). */
export type ListedRun = Pick<RunItem, (typeof RUN_LIST_ATTRIBUTES)[number]>;
/** A projection of the listed attributes, for runs listed through gsi1 (which keeps every attribute). */
export const LISTED_ATTRIBUTES = {
  ProjectionExpression: RUN_LIST_ATTRIBUTES.map((_, i) => `#a${i}`).join(", "),
  ExpressionAttributeNames: Object.fromEntries(RUN_LIST_ATTRIBUTES.map((name, i) => [`#a${i}`, name])),
};

/**
 * A run item as stored: params as JSON text (or in parts), result inline or in parts. Runs
 * written before params_json carry a `params` map.
 */
export type StoredRun = Omit<RunItem, "result_json" | "params"> & {
  params?: Record<string, unknown>;
  params_json?: string | null;
  params_parts?: number;
  result_json?: string | null;
  result_parts?: number;
};

/** Where the run item keeps its params and result: inline text, or the number of part items. */
export interface Blobs {
  params_json: string | null;
  params_parts?: number;
  result_json: string | null;
  result_parts?: number;
}

/**
 * The run item, built field by field (never by spreading the run: a run carrying `pk`, `sk`
 * or any other attribute must not change which item is written, nor add to it). The key
 * attributes come from the key builders alone.
 */
export function runToItem(run: RunItem, blobs: Blobs, expiresAt: number, pending: readonly PendingDelivery[]): Record<string, unknown> {
  const copy = copyRun(run);
  const final = FINAL_STATUSES.includes(copy.status);
  const { params: _params, result_json: _result, ...fields } = copy;
  const item: Record<string, unknown> = {
    ...fields,
    params_json: blobs.params_json,
    result_json: blobs.result_json,
    expires_at: expiresAt,
    ...runKey(copy.run_id),
    ...runsIndexKey(copy.function_id, copy.run_id),
    ...accountRunsKey(copy.account_id, copy.run_id),
    // Only while it may still end: a final write leaves the active index.
    ...(final ? {} : activeIndexKey(copy)),
    // A final write that owes webhook deliveries says so in the same write.
    ...(final && pending.length > 0 ? { ...pendingWebhooksKey(copy), webhooks_pending: pending.map(copyPending) } : {}),
  };
  if (blobs.params_parts !== undefined) item.params_parts = blobs.params_parts;
  if (blobs.result_parts !== undefined) item.result_parts = blobs.result_parts;
  return item;
}

/** A pending delivery, field by field. */
export function copyPending(pending: PendingDelivery): PendingDelivery {
  return { delivery_id: pending.delivery_id, url: pending.url, event: pending.event };
}

/** A run from its stored item, field by field: attributes that are not a run's stay behind. */
export function itemToRun(stored: StoredRun, params: Record<string, unknown>, resultJson: string | null): RunItem {
  return copyRun({ ...(stored as unknown as RunItem), params, result_json: resultJson });
}

/** A run as listed: what the runs index keeps, and blanks (as for a run that has none) for the rest. */
export function listedToRun(item: Record<string, unknown>): RunItem {
  const listed = asStored<ListedRun>(item);
  return copyRun({ ...listed, params: {}, result_json: null, logs: "", request_origin: null, sdk_version: null });
}
