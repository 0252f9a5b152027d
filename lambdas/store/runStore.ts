import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import type { RunItem } from "../runs/types";
import { PART_BYTES, fromParts, toParts } from "./blobParts";
import { queryAll, scanAll, sendConditional } from "./dynamo";
import { withoutKeys } from "./keys";

/** Results up to this size stay in the run item; larger ones go to gzipped part items. */
const INLINE_RESULT_BYTES = PART_BYTES;

const runKey = (runId: string) => ({ pk: `RUN#${runId}`, sk: "RUN" });
const runIndex = (functionId: string, runId: string) => ({ gsi1pk: `FNID#${functionId}#RUNS`, gsi1sk: runId });

type StoredRun = Omit<RunItem, "result_json"> & { result_json?: string | null; result_parts?: number };

/** Runs: by run_id, and by function newest first (run ids are ULIDs, so they sort by time). */
export class RunStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    /** How long runs are kept (DynamoDB TTL on AWS). */
    private readonly retentionSeconds: number,
  ) {}

  /** Writes a run as it is now (create, and every status change). */
  async put(run: RunItem): Promise<void> {
    await this.write(run, false);
  }

  /**
   * Writes a run's final record unless the stored run is already final (conditional: a run
   * ends once, whoever records it first). False when it was: nothing of the run item changed.
   */
  async putIfActive(run: RunItem): Promise<boolean> {
    return this.write(run, true);
  }

  /** Removes a run that never started (still queued); a run that went on is left alone. */
  async deleteIfQueued(runId: string): Promise<void> {
    await sendConditional(
      this.doc,
      new DeleteCommand({
        TableName: this.table,
        Key: runKey(runId),
        ConditionExpression: "#status = :queued",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":queued": "queued" },
      }),
    );
  }

  /** Writes the run item (after its result parts, if any); false when `onlyIfActive` did not hold. */
  private async write(run: RunItem, onlyIfActive: boolean): Promise<boolean> {
    const { result_json, ...rest } = run;
    const item: StoredRun = { ...rest, result_json };
    if (result_json && Buffer.byteLength(result_json) > INLINE_RESULT_BYTES) {
      const parts = toParts(result_json);
      for (const [n, data] of parts.entries()) {
        await this.doc.send(
          new PutCommand({ TableName: this.table, Item: { pk: runKey(run.run_id).pk, sk: `RESULT#${n}`, data, expires_at: this.expiry(run) } }),
        );
      }
      item.result_json = null;
      item.result_parts = parts.length;
    }
    return sendConditional(
      this.doc,
      new PutCommand({
        TableName: this.table,
        Item: { ...runKey(run.run_id), ...runIndex(run.function_id, run.run_id), ...item, expires_at: this.expiry(run) },
        ...(onlyIfActive
          ? {
              ConditionExpression: "attribute_not_exists(pk) OR #status IN (:queued, :running)",
              ExpressionAttributeNames: { "#status": "status" },
              ExpressionAttributeValues: { ":queued": "queued", ":running": "running" },
            }
          : {}),
      }),
    );
  }

  async get(runId: string): Promise<RunItem | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: runKey(runId), ConsistentRead: true }));
    if (!Item) return undefined;
    const { result_parts, expires_at: _e, ...stored } = withoutKeys<StoredRun & { expires_at: number }>(Item);
    if (!result_parts) return { ...stored, result_json: stored.result_json ?? null };
    // Paged: a query returns at most 1 MB, and a big result has more parts than that.
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": runKey(runId).pk, ":prefix": "RESULT#" },
      ConsistentRead: true,
    });
    const parts = items.sort((a, b) => Number(String(a.sk).slice(7)) - Number(String(b.sk).slice(7)));
    return { ...stored, result_json: fromParts(parts.map((p) => p.data as Uint8Array)) };
  }

  /** The function's latest runs, newest first (without results). */
  async recent(functionId: string, limit: number): Promise<RunItem[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :pk",
        ExpressionAttributeValues: { ":pk": runIndex(functionId, "").gsi1pk },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (Items ?? []).map((item) => withoutKeys<RunItem>(item));
  }

  /** Runs still queued or running (a full scan: used once at local start-up to settle crashed runs). */
  async listActive(): Promise<RunItem[]> {
    const items = await scanAll(this.doc, {
      TableName: this.table,
      FilterExpression: "sk = :sk AND #status IN (:queued, :running)",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: { ":sk": "RUN", ":queued": "queued", ":running": "running" },
    });
    return items.map((item) => withoutKeys<RunItem>(item));
  }

  private expiry(run: RunItem): number {
    return Math.floor(Date.parse(run.queued_at) / 1000) + this.retentionSeconds;
  }
}
