import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import { copyRun } from "../runs/copyRun";
import type { RunItem } from "../runs/types";
import { PART_BYTES, fromParts, toParts } from "./blobParts";
import { queryAll, scanAll, sendConditional, type DocumentSender } from "./dynamo";
import { asStored } from "./keys";

/** Results up to this size stay in the run item; larger ones go to gzipped part items. */
const INLINE_RESULT_BYTES = PART_BYTES;
/**
 * Parameters are kept as JSON text (exact, whatever their numbers, keys or depth), in the run
 * item up to this size and in gzipped part items beyond: with a 300 KB result and 64 KB of
 * logs the item stays under DynamoDB's 400 KB.
 */
const INLINE_PARAMS_BYTES = 16_384;

const runKey = (runId: string) => ({ pk: `RUN#${runId}`, sk: "RUN" });
const runIndex = (functionId: string, runId: string) => ({ gsi1pk: `FNID#${functionId}#RUNS`, gsi1sk: runId });

/**
 * A run item as stored: params as JSON text (or in parts), result inline or in parts. Runs
 * written before params_json carry a `params` map.
 */
type StoredRun = Omit<RunItem, "result_json" | "params"> & {
  params?: Record<string, unknown>;
  params_json?: string | null;
  params_parts?: number;
  result_json?: string | null;
  result_parts?: number;
};

/** Where the run item keeps its params and result: inline text, or the number of part items. */
interface Blobs {
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
function runToItem(run: RunItem, blobs: Blobs, expiresAt: number): Record<string, unknown> {
  const { params: _params, result_json: _result, ...fields } = copyRun(run);
  const item: Record<string, unknown> = {
    ...fields,
    params_json: blobs.params_json,
    result_json: blobs.result_json,
    expires_at: expiresAt,
    ...runKey(run.run_id),
    ...runIndex(run.function_id, run.run_id),
  };
  if (blobs.params_parts !== undefined) item.params_parts = blobs.params_parts;
  if (blobs.result_parts !== undefined) item.result_parts = blobs.result_parts;
  return item;
}

/** A run from its stored item, field by field: attributes that are not a run's stay behind. */
function itemToRun(stored: StoredRun, params: Record<string, unknown>, resultJson: string | null): RunItem {
  return copyRun({ ...(stored as unknown as RunItem), params, result_json: resultJson });
}

/** Which blob of a run a part item holds. */
type PartKind = "RESULT" | "PARAMS";

/** Runs: by run_id, and by function newest first (run ids are ULIDs, so they sort by time). */
export class RunStore {
  constructor(
    private readonly doc: DocumentSender,
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

  /** Writes the run item (after its params and result parts, if any); false when `onlyIfActive` did not hold. */
  private async write(run: RunItem, onlyIfActive: boolean): Promise<boolean> {
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
        Item: runToItem(run, blobs, this.expiry(run)),
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
    return Item ? this.decode(Item, { result: true }) : undefined;
  }

  /** The function's latest runs, newest first (without results, and without params kept in parts). */
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
    return Promise.all((Items ?? []).map((item) => this.decode(item, { result: false })));
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
    const params = typeof paramsText === "string" ? (JSON.parse(paramsText) as Record<string, unknown>) : (stored.params ?? {});
    return itemToRun(stored, params, resultText);
  }

  /** Writes `text` as gzipped part items of the run; returns how many. */
  private async writeParts(run: RunItem, kind: PartKind, text: string): Promise<number> {
    const parts = toParts(text);
    for (const [n, data] of parts.entries()) {
      await this.doc.send(
        new PutCommand({ TableName: this.table, Item: { pk: runKey(run.run_id).pk, sk: `${kind}#${n}`, data, expires_at: this.expiry(run) } }),
      );
    }
    return parts.length;
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
    return fromParts(parts.map((p) => p.data as Uint8Array));
  }

  private expiry(run: RunItem): number {
    return Math.floor(Date.parse(run.queued_at) / 1000) + this.retentionSeconds;
  }
}
