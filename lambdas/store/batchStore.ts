import { BatchGetCommand, BatchWriteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { BatchCounts, BatchItem } from "../batches/types";
import type { RunItem, RunStatus } from "../runs/types";
import { sendConditional, type DocumentSender } from "./dynamo";
import { asStored } from "./keys";
import { listedToRun, runKey, runToItem } from "./runItems";
import { RUN_LIST_ATTRIBUTES } from "./tables";

/** BatchWriteItem's most items a request; BatchGetItem's. */
const WRITE_CHUNK = 25;
const GET_CHUNK = 100;
/** How many BatchWrite/BatchGet requests of one call are in flight at once. */
const PARALLEL_REQUESTS = 8;

/** How many ended runs' states a BatchStore remembers (a few batches' worth; oldest forgotten first). */
const REMEMBERED_ENDS = 20_000;
const ENDED: readonly RunStatus[] = ["succeeded", "failed", "timed_out"];

const batchKey = (batchId: string) => ({ pk: `BATCH#${batchId}`, sk: "BATCH" });

/** A run's status as counted for its batch: its id, status and end. */
export interface RunState {
  run_id: string;
  status: RunStatus;
  finished_at: string | null;
}

/**
 * Batches (POST /functions/{ref}/batch): one item per batch, `BATCH#<batch_id>` / `BATCH`,
 * holding its runs' ids in order (1,000 ids of 30 characters: 30 KB of the 400 KB an item may
 * have), so its runs are read by key (BatchGet), never by a query or an index. Once every run
 * has ended the batch keeps its counts and finished_at, and is read alone from then on.
 * Every write is a single-item write (dynalite has no transactions): the runs are written
 * first, then the batch that names them.
 */
export class BatchStore {
  /**
   * States of runs seen ended, by run id: a run ends once, so a batch being followed reads only
   * its runs still queued or running (GET /batches/{id} while it runs stays cheap).
   */
  private readonly ended = new Map<string, RunState>();

  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
    /** How long batches are kept (as their runs: DynamoDB TTL on AWS). */
    private readonly retentionSeconds: number,
  ) {}

  /**
   * Writes runs as first recorded (queued), 25 to a request, several requests at a time,
   * until DynamoDB has taken every one (UnprocessedItems are sent again). Runs whose params are
   * too large for the item (parts) are written by `putOne` instead.
   */
  async putRuns(runs: readonly RunItem[], inline: (run: RunItem) => boolean, putOne: (run: RunItem) => Promise<void>): Promise<void> {
    const small = runs.filter(inline);
    const large = runs.filter((run) => !inline(run));
    const chunks: RunItem[][] = [];
    for (let i = 0; i < small.length; i += WRITE_CHUNK) chunks.push(small.slice(i, i + WRITE_CHUNK));
    await inParallel(chunks, async (chunk) => {
      let requests: Record<string, unknown>[] | undefined = chunk.map((run) => ({
        PutRequest: { Item: runToItem(run, { params_json: JSON.stringify(run.params), result_json: null }, this.expiry(run.queued_at), []) },
      }));
      for (let attempt = 0; requests && requests.length > 0; attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 1000)));
        const result = await this.doc.send(new BatchWriteCommand({ RequestItems: { [this.table]: requests } }));
        requests = result.UnprocessedItems?.[this.table] as Record<string, unknown>[] | undefined;
      }
    });
    await inParallel(large, putOne);
  }

  /** Records a batch (its runs are written already). */
  async create(batch: BatchItem): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: { ...batchKey(batch.batch_id), ...batchToItem(batch), expires_at: this.expiry(batch.created_at) } }));
  }

  async get(batchId: string): Promise<BatchItem | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: batchKey(batchId), ConsistentRead: true }));
    return Item ? itemToBatch(Item) : undefined;
  }

  /** Notes that every run of the batch has ended (once: a batch ends once), with its final counts. */
  async markFinished(batchId: string, counts: BatchCounts, finishedAt: string): Promise<void> {
    await sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: batchKey(batchId),
        UpdateExpression: "SET finished_at = :at, counts = :counts",
        ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(finished_at)",
        ExpressionAttributeValues: { ":at": finishedAt, ":counts": copyCounts(counts) },
      }),
    );
  }

  /**
   * The status and end of each run, in the order asked (runs with no record are left out): runs
   * seen ended before are not read again.
   */
  async runStates(runIds: readonly string[]): Promise<RunState[]> {
    const unknown = runIds.filter((runId) => !this.ended.has(runId));
    const read = new Map<string, RunState>();
    for (const item of await this.readRuns(unknown, ["run_id", "status", "finished_at"])) {
      const stored = asStored<RunState>(item);
      const state = { run_id: stored.run_id, status: stored.status, finished_at: typeof stored.finished_at === "string" ? stored.finished_at : null };
      read.set(state.run_id, state);
      if (ENDED.includes(state.status)) this.remember(state);
    }
    return runIds.flatMap((runId) => {
      const state = this.ended.get(runId) ?? read.get(runId);
      return state ? [state] : [];
    });
  }

  private remember(state: RunState): void {
    this.ended.set(state.run_id, state);
    if (this.ended.size > REMEMBERED_ENDS) this.ended.delete(this.ended.keys().next().value as string);
  }

  /** The runs as listed (what the runs index keeps of each), in the order asked. */
  async listedRuns(runIds: readonly string[]): Promise<RunItem[]> {
    const items = await this.readRuns(runIds, [...RUN_LIST_ATTRIBUTES]);
    return items.map(listedToRun);
  }

  /** Items of these runs (only `attributes`), 100 keys to a BatchGet, in the order of `runIds`. */
  private async readRuns(runIds: readonly string[], attributes: readonly string[]): Promise<Record<string, unknown>[]> {
    const chunks: string[][] = [];
    for (let i = 0; i < runIds.length; i += GET_CHUNK) chunks.push(runIds.slice(i, i + GET_CHUNK));
    const found = new Map<string, Record<string, unknown>>();
    const projection = {
      ProjectionExpression: attributes.map((_, i) => `#a${i}`).join(", "),
      ExpressionAttributeNames: Object.fromEntries(attributes.map((name, i) => [`#a${i}`, name])),
      ConsistentRead: true,
    };
    await inParallel(chunks, async (chunk) => {
      let keys: Record<string, unknown>[] | undefined = chunk.map(runKey);
      for (let attempt = 0; keys && keys.length > 0; attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 1000)));
        const result = await this.doc.send(new BatchGetCommand({ RequestItems: { [this.table]: { Keys: keys, ...projection } } }));
        for (const item of result.Responses?.[this.table] ?? []) found.set(String(item.run_id), item);
        keys = result.UnprocessedKeys?.[this.table]?.Keys as Record<string, unknown>[] | undefined;
      }
    });
    return runIds.flatMap((id) => {
      const item = found.get(id);
      return item ? [item] : [];
    });
  }

  private expiry(since: string): number {
    return Math.floor(Date.parse(since) / 1000) + this.retentionSeconds;
  }
}

/** `work` over every element, at most PARALLEL_REQUESTS at a time; rejects with the first failure. */
async function inParallel<T>(elements: readonly T[], work: (element: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < elements.length) {
      const element = elements[next++] as T;
      await work(element);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_REQUESTS, elements.length) }, lane));
}

/** Counts field by field (a batch kept before runs could be canceled has no `canceled`: 0). */
function copyCounts(counts: BatchCounts): BatchCounts {
  return { queued: counts.queued, running: counts.running, succeeded: counts.succeeded, failed: counts.failed, timed_out: counts.timed_out, canceled: counts.canceled ?? 0 };
}

/** The batch item's attributes, field by field (its keys come from batchKey alone). */
function batchToItem(batch: BatchItem): Record<string, unknown> {
  const item: Record<string, unknown> = {
    batch_id: batch.batch_id,
    account_id: batch.account_id,
    function_id: batch.function_id,
    function_name: batch.function_name,
    version: batch.version,
    run_ids: [...batch.run_ids],
    created_at: batch.created_at,
  };
  if (batch.finished_at !== null) item.finished_at = batch.finished_at;
  if (batch.counts !== null) item.counts = copyCounts(batch.counts);
  return item;
}

function itemToBatch(item: Record<string, unknown>): BatchItem {
  const stored = asStored<Partial<BatchItem>>(item);
  const counts = stored.counts && typeof stored.counts === "object" ? copyCounts(stored.counts) : null;
  return {
    batch_id: String(stored.batch_id),
    account_id: String(stored.account_id),
    function_id: String(stored.function_id),
    function_name: String(stored.function_name),
    version: Number(stored.version),
    run_ids: Array.isArray(stored.run_ids) ? stored.run_ids.map(String) : [],
    created_at: String(stored.created_at),
    finished_at: typeof stored.finished_at === "string" ? stored.finished_at : null,
    counts,
  };
}
