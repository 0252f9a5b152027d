import { DeleteCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { fromParts, toParts } from "../store/blobParts";
import { queryAll, sendConditional, type DocumentSender } from "../store/dynamo";
import { asStored } from "../store/keys";

/**
 * A queued run as the run queue keeps it: what is needed to start it later, and nothing the
 * run record does not say already but its real parameters (the record keeps them redacted).
 *
 * Items of one account share a partition, sorted by function, then by when they are ready,
 * then by run id, so "the oldest ready run of the next function after F" is one query with
 * Limit 1 (round-robin between functions, oldest first within one):
 *
 * | item          | pk                 | sk                                             |
 * |---------------|--------------------|------------------------------------------------|
 * | queued run    | QUEUE#<account>    | RUN#<function_id>#<ready_at>#<run_id>          |
 * | params part   | QUEUE#<account>    | PARAMS#<run_id>#<n> (parameters over one item) |
 */
export interface QueuedRun {
  account_id: string;
  function_id: string;
  run_id: string;
  version: number;
  /** ISO time from which it may start (its queued_at; later for a retry's backoff). */
  ready_at: string;
  /** The validated, unredacted parameters. */
  params: Record<string, unknown>;
  /** The API's base URL when it was queued (for its artifacts' URLs). */
  base_url: string | null;
  /** The run's invocation is counted already (a batch item). */
  counted: boolean;
  /**
   * Where the run's end is to be told (AWS: the wait queue of the sync call that queued it and
   * waits for it, InvokeRequest.notify); absent or null: nobody waits.
   */
  notify?: string | null;
  /**
   * Its parameters are kept in part items (over INLINE_PARAMS_BYTES); false when the item holds
   * them itself, as read by `next` (claim then deletes no part: one query less on the way from a
   * freed slot to the run's start); absent: not known (claim looks for parts).
   */
  parts?: boolean;
}

/** Parameters up to this size stay in the queue item; larger ones go to gzipped part items. */
const INLINE_PARAMS_BYTES = 100_000;

export const queuePk = (accountId: string) => `QUEUE#${accountId}`;
export const queueSk = (run: Pick<QueuedRun, "function_id" | "ready_at" | "run_id">) => `RUN#${run.function_id}#${run.ready_at}#${run.run_id}`;

interface StoredQueuedRun {
  account_id: string;
  function_id: string;
  run_id: string;
  version: number;
  ready_at: string;
  params_json?: string;
  params_parts?: number;
  base_url?: string | null;
  counted?: boolean;
  notify?: string | null;
}

/** The queue items of the run queue (see QueuedRun). */
export class QueueItems {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  /** Writes a queued run (its parameters' parts first, so the item is whole once it is there). */
  async put(run: QueuedRun): Promise<void> {
    const paramsJson = JSON.stringify(run.params);
    let parts: number | undefined;
    if (Buffer.byteLength(paramsJson) > INLINE_PARAMS_BYTES) {
      const chunks = toParts(paramsJson);
      for (const [n, data] of chunks.entries()) {
        await this.doc.send(new PutCommand({ TableName: this.table, Item: { pk: queuePk(run.account_id), sk: `PARAMS#${run.run_id}#${n}`, data } }));
      }
      parts = chunks.length;
    }
    const item: Record<string, unknown> = {
      pk: queuePk(run.account_id),
      sk: queueSk(run),
      account_id: run.account_id,
      function_id: run.function_id,
      run_id: run.run_id,
      version: run.version,
      ready_at: run.ready_at,
      base_url: run.base_url,
      counted: run.counted,
    };
    if (run.notify) item.notify = run.notify;
    if (parts === undefined) item.params_json = paramsJson;
    else item.params_parts = parts;
    await this.doc.send(new PutCommand({ TableName: this.table, Item: item }));
  }

  /**
   * The oldest queued run of the first function after `afterFunction` (by function id; from the
   * first function when none is after it or `afterFunction` is null) that is ready by `now`;
   * a function whose oldest run is not ready yet (a retry's backoff) is passed over. Undefined
   * when no run is ready. `earliest` says when the first run that is not ready will be.
   */
  async next(accountId: string, afterFunction: string | null, now: Date): Promise<{ run?: QueuedRun; earliest?: string }> {
    let earliest: string | undefined;
    const tried = new Set<string>();
    let from = afterFunction === null ? "RUN#" : `RUN#${afterFunction}#~`;
    let wrapped = afterFunction === null;
    // The first look also asks from the start, beside the look past the cursor: with one function
    // queued (the usual case) nothing is past it, and the wrap would be a second round trip.
    let fromStart = wrapped ? undefined : this.first(accountId, "RUN#");
    fromStart?.catch(() => undefined); // awaited at the wrap, if there is one
    for (let step = 0; step < 64; step++) {
      const early = from === "RUN#" ? fromStart : undefined;
      if (early) fromStart = undefined;
      const item = await (early ?? this.first(accountId, from));
      if (!item) {
        if (wrapped) break;
        wrapped = true;
        from = "RUN#";
        continue;
      }
      const stored = asStored<StoredQueuedRun>(item);
      if (tried.has(stored.function_id)) break; // every function with queued runs was looked at
      tried.add(stored.function_id);
      if (Date.parse(stored.ready_at) <= now.getTime()) return { run: await this.decode(stored) };
      if (earliest === undefined || stored.ready_at < earliest) earliest = stored.ready_at;
      from = `RUN#${stored.function_id}#~`;
    }
    return earliest === undefined ? {} : { earliest };
  }

  /** The first queue item of the account's queue from `from` (a sort key) on, if any. */
  private async first(accountId: string, from: string): Promise<Record<string, unknown> | undefined> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
        ExpressionAttributeValues: { ":pk": queuePk(accountId), ":from": from, ":to": "RUN#~" },
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    return Items?.[0];
  }

  /** Deletes a queued run's item (and its parameters' parts); true for the one caller that deleted it. */
  async claim(run: Pick<QueuedRun, "account_id" | "function_id" | "ready_at" | "run_id" | "parts">): Promise<boolean> {
    const claimed = await sendConditional(
      this.doc,
      new DeleteCommand({ TableName: this.table, Key: { pk: queuePk(run.account_id), sk: queueSk(run) }, ConditionExpression: "attribute_exists(pk)" }),
    );
    if (claimed && run.parts !== false) await this.deleteParts(run.account_id, run.run_id);
    return claimed;
  }

  /** True when the run's queue item is there. */
  async has(run: Pick<QueuedRun, "account_id" | "function_id" | "ready_at" | "run_id">): Promise<boolean> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: "pk = :pk AND sk = :sk",
        ExpressionAttributeValues: { ":pk": queuePk(run.account_id), ":sk": queueSk(run) },
        ConsistentRead: true,
      }),
    );
    return (Items ?? []).length > 0;
  }

  /** When a run's queue item is ready, if the run has one (a recovery read: every key of its function's queue). */
  async readyAtOf(run: Pick<QueuedRun, "account_id" | "function_id" | "run_id">): Promise<string | undefined> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      FilterExpression: "run_id = :run",
      ExpressionAttributeValues: { ":pk": queuePk(run.account_id), ":prefix": `RUN#${run.function_id}#`, ":run": run.run_id },
      ProjectionExpression: "ready_at",
      ConsistentRead: true,
    });
    const readyAt = items[0]?.ready_at;
    return typeof readyAt === "string" ? readyAt : undefined;
  }

  /** How many runs the account has queued (a recovery count: reads every key of its queue). */
  async count(accountId: string): Promise<number> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": queuePk(accountId), ":prefix": "RUN#" },
      ProjectionExpression: "sk",
      ConsistentRead: true,
    });
    return items.length;
  }

  private async decode(stored: StoredQueuedRun): Promise<QueuedRun> {
    const text = stored.params_parts ? await this.readParts(stored.account_id, stored.run_id) : (stored.params_json ?? "{}");
    const parsed: unknown = JSON.parse(text);
    const params = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    return {
      account_id: String(stored.account_id),
      function_id: String(stored.function_id),
      run_id: String(stored.run_id),
      version: Number(stored.version),
      ready_at: String(stored.ready_at),
      params,
      base_url: typeof stored.base_url === "string" ? stored.base_url : null,
      counted: stored.counted === true,
      notify: typeof stored.notify === "string" ? stored.notify : null,
      parts: typeof stored.params_parts === "number" && stored.params_parts > 0,
    };
  }

  private async readParts(accountId: string, runId: string): Promise<string> {
    const items = await this.partItems(accountId, runId);
    const index = (sk: unknown) => Number(String(sk).split("#").pop());
    return fromParts(items.sort((a, b) => index(a.sk) - index(b.sk)).map((part) => part.data as Uint8Array));
  }

  private async deleteParts(accountId: string, runId: string): Promise<void> {
    for (const part of await this.partItems(accountId, runId)) {
      await this.doc.send(new DeleteCommand({ TableName: this.table, Key: { pk: part.pk, sk: part.sk } }));
    }
  }

  private partItems(accountId: string, runId: string): Promise<Record<string, unknown>[]> {
    return queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": queuePk(accountId), ":prefix": `PARAMS#${runId}#` },
      ConsistentRead: true,
    });
  }
}
