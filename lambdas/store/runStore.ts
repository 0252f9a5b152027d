import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { jsonTextDeeperThan } from "../runner/jsonDepth";
import { MAX_JSON_DEPTH } from "../runner/outputLimits";
import { runWithinDepth } from "../runs/resultDepth";
import { copyRun } from "../runs/copyRun";
import { FINAL_STATUSES, type QueueReason, type RunItem } from "../runs/types";
import { type BlobCompressor, fromPartsAsync, split, toPartsAsync } from "./blobParts";
import { queryAll, queryUpTo, scanAll, sendConditional, type DocumentSender } from "./dynamo";
import { asStored } from "./keys";
import { ACTIVE_INDEX, RUNS_INDEX } from "./tables";
import { listRunsPage, type RunListPage, type RunListQuery } from "./runListing";
import type { PendingDelivery } from "../webhooks/webhookTypes";
import {
  INLINE_RESULT_BYTES,
  INLINE_PARAMS_BYTES,
  runKey,
  runIdOfKey,
  runsIndexKey,
  ACTIVE_SHARDS,
  activePk,
  activeIndexKey,
  PENDING_WEBHOOKS_PK,
  LISTED_ATTRIBUTES,
  runToItem,
  copyPending,
  itemToRun,
  listedToRun,
  type RunWithPendingDeliveries,
  type StoredRun,
  type Blobs,
} from "./runItems";

/** Keys in DynamoDB's order (for these ASCII keys, code unit order; never the locale's). */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Which blob of a run a part item holds. */
type PartKind = "RESULT" | "PARAMS";

/** Runs: by run_id, and by function newest first (run ids are ULIDs, so they sort by time). */
export class RunStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
    /** How long runs are kept (DynamoDB TTL on AWS). */
    private readonly retentionSeconds: number,
    /** Where big results and parameters are gzipped (absent: libuv's thread pool, toPartsAsync). */
    private readonly compressor?: BlobCompressor,
  ) {}

  /** Writes a run as it is now (create, and every status change). */
  async put(run: RunItem): Promise<void> {
    await this.write(run, "none");
  }

  /**
   * Writes a run's final record unless the stored run is already final (conditional: a run
   * ends once, whoever records it first). False when it was: nothing of the run item changed.
   * `pending`: the webhook deliveries its end owes, kept on the run item by the same write
   * (an outbox entry that exists exactly when the end does).
   */
  async putIfActive(run: RunItem, pending: readonly PendingDelivery[] = []): Promise<boolean> {
    return this.write(run, "active", pending);
  }

  /**
   * Writes a run's record only if the stored run's status is `expected` (a cancel: a queued run
   * that has not started, or a running one that has not ended). False when it was not.
   */
  async putIfStatus(run: RunItem, expected: "queued" | "running", pending: readonly PendingDelivery[] = []): Promise<boolean> {
    return this.write(run, expected, pending);
  }

  /** Forgets the deliveries a run's end owed (they are delivery items now). */
  async clearPendingDeliveries(runId: string): Promise<void> {
    await sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: runKey(runId),
        UpdateExpression: "REMOVE webhooks_pending, gsi1pk, gsi1sk",
        ConditionExpression: "attribute_exists(webhooks_pending)",
      }),
    );
  }

  /** Ended runs that still owe deliveries, ended at or before `before`, oldest first, at most `limit`. */
  async listPendingDeliveries(before: Date, limit: number): Promise<RunWithPendingDeliveries[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: ACTIVE_INDEX,
        KeyConditionExpression: "gsi1pk = :pk AND gsi1sk < :before",
        ProjectionExpression: "run_id, account_id, function_id, webhooks_pending",
        // `~` sorts after the `#` that follows the time: ends of that very millisecond are in.
        ExpressionAttributeValues: { ":pk": PENDING_WEBHOOKS_PK, ":before": `${before.toISOString()}~` },
        Limit: limit,
      }),
    );
    return (Items ?? []).map((item) => {
      const stored = asStored<RunWithPendingDeliveries & { webhooks_pending?: PendingDelivery[] }>(item);
      const pending = Array.isArray(stored.webhooks_pending) ? stored.webhooks_pending.map(copyPending) : [];
      return { run_id: stored.run_id, account_id: stored.account_id, function_id: stored.function_id, pending };
    });
  }

  /** Removes a run that never started (still queued), with its params' parts; a run that went on is left alone. */
  async deleteIfQueued(runId: string): Promise<void> {
    const deleted = await sendConditional(
      this.doc,
      new DeleteCommand({
        TableName: this.table,
        Key: runKey(runId),
        ConditionExpression: "#status = :queued",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":queued": "queued" },
      }),
    );
    if (!deleted) return;
    const parts = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": runKey(runId).pk, ":prefix": "PARAMS#" },
    });
    for (const part of parts) await this.doc.send(new DeleteCommand({ TableName: this.table, Key: { pk: part.pk, sk: part.sk } }));
  }

  /**
   * Moves a run that is still queued (it waits in the run queue, legitimately) to a later
   * deadline, so the sweeper does not take it for a lost run; false when it is not queued.
   */
  async postponeDeadline(run: RunItem, deadlineAt: string, reason?: QueueReason): Promise<boolean> {
    const moved = { ...copyRun(run), deadline_at: deadlineAt };
    return sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: runKey(run.run_id),
        UpdateExpression: reason ? "SET deadline_at = :deadline, gsi1sk = :sk, queue_reason = :reason" : "SET deadline_at = :deadline, gsi1sk = :sk",
        ConditionExpression: "#status = :queued",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":deadline": deadlineAt, ":sk": activeIndexKey(moved).gsi1sk, ":queued": "queued", ...(reason ? { ":reason": reason } : {}) },
      }),
    );
  }

  /** Notes what a queued run waits for (see markWaiting), only while it is still queued. */
  async setQueueReason(runId: string, reason: QueueReason): Promise<boolean> {
    return sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: runKey(runId),
        UpdateExpression: "SET queue_reason = :reason",
        ConditionExpression: "#status = :queued",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":reason": reason, ":queued": "queued" },
      }),
    );
  }

  /**
   * Writes the run item (after its params and result parts, if any); false when the condition
   * did not hold: `active` (none stored, or queued or running), or exactly that status.
   */
  private async write(run: RunItem, condition: "none" | "active" | "queued" | "running", pending: readonly PendingDelivery[] = []): Promise<boolean> {
    const paramsJson = JSON.stringify(run.params);
    const blobs: Blobs = { params_json: paramsJson, result_json: run.result_json };
    if (Buffer.byteLength(paramsJson) > INLINE_PARAMS_BYTES) {
      blobs.params_parts = await this.writeParts(run, "PARAMS", paramsJson);
      blobs.params_json = null;
    }
    if (run.result_json && Buffer.byteLength(run.result_json) > INLINE_RESULT_BYTES) {
      blobs.result_parts = await this.writeParts(run, "RESULT", run.result_json);
      blobs.result_json = null;
    }
    return sendConditional(
      this.doc,
      new PutCommand({
        TableName: this.table,
        Item: runToItem(run, blobs, this.expiry(run), pending),
        ...(condition === "active"
          ? {
              ConditionExpression: "attribute_not_exists(pk) OR #status IN (:queued, :running)",
              ExpressionAttributeNames: { "#status": "status" },
              ExpressionAttributeValues: { ":queued": "queued", ":running": "running" },
            }
          : condition === "none"
            ? {}
            : { ConditionExpression: "#status = :expected", ExpressionAttributeNames: { "#status": "status" }, ExpressionAttributeValues: { ":expected": condition } }),
      }),
    );
  }

  async get(runId: string): Promise<RunItem | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: runKey(runId), ConsistentRead: true }));
    return Item ? this.decode(Item, { result: true }) : undefined;
  }

  /**
   * The function's latest `limit` runs, newest first, as listed: without params, result, logs,
   * request origin or SDK version (read through the runs index, which keeps none of them).
   */
  async recent(functionId: string, limit: number): Promise<RunItem[]> {
    const { runs_pk } = runsIndexKey(functionId, "");
    const newest = { TableName: this.table, ExpressionAttributeValues: { ":pk": runs_pk }, ScanIndexForward: false };
    const listed = await queryUpTo(this.doc, { ...newest, IndexName: RUNS_INDEX, KeyConditionExpression: "runs_pk = :pk" }, limit);
    if (listed.length === limit) return listed.map(listedToRun);
    // Runs last written before the runs index are listed in gsi1 alone (until they expire).
    const older = await queryUpTo(this.doc, { ...newest, IndexName: "gsi1", KeyConditionExpression: "gsi1pk = :pk", ...LISTED_ATTRIBUTES }, limit);
    const runs = new Map([...older, ...listed].map((item) => [String(item.run_id), listedToRun(item)]));
    return [...runs.values()].sort((a, b) => byText(b.run_id, a.run_id)).slice(0, limit);
  }

  /** A page of an account's runs, newest first, as listed (see runListing.ts). */
  async list(query: RunListQuery): Promise<RunListPage> {
    return listRunsPage(this.doc, this.table, query);
  }

  /**
   * Runs still queued or running whose deadline_at is before `now`, most overdue first, at most
   * `limit`: found through the active index (every shard), then each read itself (consistent,
   * so a run that ended meanwhile is left out).
   */
  async listOverdue(now: Date, limit: number): Promise<RunItem[]> {
    const shards = Array.from({ length: ACTIVE_SHARDS }, (_, shard) => shard);
    const entries = await Promise.all(
      shards.map((shard) =>
        queryUpTo(
          this.doc,
          {
            TableName: this.table,
            IndexName: ACTIVE_INDEX,
            KeyConditionExpression: "gsi1pk = :pk AND gsi1sk < :now",
            ProjectionExpression: "pk, gsi1sk",
            ExpressionAttributeValues: { ":pk": activePk(shard), ":now": now.toISOString() },
          },
          limit,
        ),
      ),
    );
    const due = entries.flat().sort((a, b) => byText(String(a.gsi1sk), String(b.gsi1sk))).slice(0, limit);
    const runs = await Promise.all(due.map((entry) => this.get(runIdOfKey(entry.pk))));
    return runs.filter((run): run is RunItem => run !== undefined && !FINAL_STATUSES.includes(run.status));
  }

  /** Runs still queued or running (a full scan: used once at local start-up to settle crashed runs). */
  async listActive(): Promise<RunItem[]> {
    const items = await scanAll(this.doc, {
      TableName: this.table,
      FilterExpression: "sk = :sk AND #status IN (:queued, :running)",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: { ":sk": "RUN", ":queued": "queued", ":running": "running" },
    });
    return Promise.all(items.map((item) => this.decode(item, { result: true })));
  }

  /** A run from its stored item; the result (and params in parts) read from their parts when `result` is asked for. */
  private async decode(item: Record<string, unknown>, load: { result: boolean }): Promise<RunItem> {
    const stored = asStored<StoredRun>(item);
    const paramsText = stored.params_parts && load.result ? await this.readParts(stored.run_id, "PARAMS") : stored.params_json;
    const resultText = stored.result_parts && load.result ? await this.readParts(stored.run_id, "RESULT") : (stored.result_json ?? null);
    // Parameters are checked to MAX_STORED_DEPTH before a run is made; text nested past the cap (a record no version wrote) is not read.
    const params =
      typeof paramsText === "string" ? (jsonTextDeeperThan(paramsText, MAX_JSON_DEPTH) ? {} : (JSON.parse(paramsText) as Record<string, unknown>)) : (stored.params ?? {});
    // A result nested past the cap (recorded before there was one) is never handed out.
    return runWithinDepth(itemToRun(stored, params, resultText));
  }

  /** Writes `text` as gzipped part items of the run; returns how many. */
  private async writeParts(run: RunItem, kind: PartKind, text: string): Promise<number> {
    const parts = await this.gzipParts(run.account_id, text);
    for (const [n, data] of parts.entries()) {
      await this.doc.send(
        new PutCommand({ TableName: this.table, Item: { pk: runKey(run.run_id).pk, sk: `${kind}#${n}`, data, expires_at: this.expiry(run) } }),
      );
    }
    return parts.length;
  }

  /** `text` gzipped into parts, by the compressor in the account's turn (by libuv's pool when it cannot). */
  private async gzipParts(accountId: string, text: string): Promise<Buffer[]> {
    if (!this.compressor) return toPartsAsync(text);
    const gzipped = await this.compressor.gzip(accountId, text).catch(() => undefined);
    return gzipped ? split(gzipped) : toPartsAsync(text);
  }

  private async readParts(runId: string, kind: PartKind): Promise<string> {
    // Paged: a query returns at most 1 MB, and a big blob has more parts than that.
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": runKey(runId).pk, ":prefix": `${kind}#` },
      ConsistentRead: true,
    });
    const index = (sk: unknown) => Number(String(sk).slice(kind.length + 1));
    const parts = items.sort((a, b) => index(a.sk) - index(b.sk));
    return fromPartsAsync(parts.map((p) => p.data as Uint8Array));
  }

  private expiry(run: RunItem): number {
    return Math.floor(Date.parse(run.queued_at) / 1000) + this.retentionSeconds;
  }
}
