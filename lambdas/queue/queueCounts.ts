import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { isConditionFailed, queryAll, sendConditional, type DocumentSender } from "../store/dynamo";
import { limitKey } from "../store/limitStore";
import { ACTIVE_INDEX } from "../store/tables";

/**
 * The run queue's counters, on the account's LIMITS item beside its leases (limitStore.ts), so
 * that each step is one conditional write on one item (dynalite has no transactions):
 * `queued` (runs waiting), `rr_cursor` (the function served last) and, while runs wait, a
 * sparse gsi1 entry (`QUEUED#<shard>` / account: queuedShardPk) through which the recovery sweep
 * finds the accounts that have queued runs without a scan.
 */
export const QUEUED_ACCOUNTS_PK = "QUEUED";

/**
 * The sweep's list is spread over this many gsi1 partitions (`QUEUED#<n>`, n from the account
 * id): gsi1 keeps every attribute, so each write of a marked LIMITS item (every lease taken and
 * given back while runs wait) is also a write to its index partition. With one `QUEUED`
 * partition every busy account's admissions met in one index partition, whose throttling holds
 * back the table's writes too (#23.6).
 */
export const QUEUED_SHARDS = 16;

/** The gsi1 partition of an account's entry in the sweep's list. */
export function queuedShardPk(accountId: string): string {
  let hash = 0;
  for (let i = 0; i < accountId.length; i++) hash = (hash * 31 + accountId.charCodeAt(i)) >>> 0;
  return `${QUEUED_ACCOUNTS_PK}#${hash % QUEUED_SHARDS}`;
}

export type CountResult = "counted" | "quota" | "queue_full";

export class QueueCounts {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  /**
   * Counts a run into the queue: `queued` + 1 and (unless `counted`) one invocation of the month,
   * only while the queue has room and the month's quota is not used up. The item must exist and
   * be of this month (LimitStore.ensureMonth). `dropLease`: the lease of that id goes in the same
   * write (a retry's run gives back its ended attempt's lease as it is queued again: lambdas/retries).
   */
  async enqueue(accountId: string, limits: { quota: number; maxQueued: number; counted: boolean; dropLease?: string }, month: string): Promise<CountResult> {
    const { counted, dropLease } = limits;
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: limitKey(accountId),
          UpdateExpression: `SET gsi1pk = :marker, gsi1sk = :account ADD queued :one${counted ? "" : ", invocations :one"}${dropLease === undefined ? "" : " REMOVE leases.#drop"}`,
          ...(dropLease === undefined ? {} : { ExpressionAttributeNames: { "#drop": dropLease } }),
          ConditionExpression: `month_key = :month AND (attribute_not_exists(queued) OR queued < :max)${counted ? "" : " AND invocations < :quota"}`,
          ExpressionAttributeValues: {
            ":marker": queuedShardPk(accountId),
            ":account": accountId,
            ":one": 1,
            ":month": month,
            ":max": limits.maxQueued,
            ...(counted ? {} : { ":quota": limits.quota }),
          },
        }),
      );
      return "counted";
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      return "queue_full"; // the caller reads the item to tell the quota from a full queue
    }
  }

  /** Undoes `enqueue` (the queue item could not be written): `queued` - 1, and the invocation unless `counted`. */
  async unenqueue(accountId: string, counted: boolean): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: limitKey(accountId),
        UpdateExpression: counted ? "ADD queued :minus" : "ADD queued :minus, invocations :minus",
        ExpressionAttributeValues: { ":minus": -1 },
      }),
    );
  }

  /**
   * Takes the lease of a queued run: only while a slot is free and no lease of this run exists
   * (two dispatchers cannot both take it), and counts the run out of the queue in the same write.
   * The cursor moves to its function (round-robin). False when the condition did not hold.
   */
  async takeLease(accountId: string, runId: string, until: number, concurrency: number, functionId: string): Promise<boolean> {
    return sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: limitKey(accountId),
        UpdateExpression: "SET leases.#run = :until, rr_cursor = :fn ADD queued :minus",
        ConditionExpression: "attribute_not_exists(leases.#run) AND size(leases) < :concurrency",
        ExpressionAttributeNames: { "#run": runId },
        ExpressionAttributeValues: { ":until": until, ":fn": functionId, ":minus": -1, ":concurrency": concurrency },
      }),
    );
  }

  /**
   * Gives back a lease taken by takeLease whose run was not started (another dispatcher claimed
   * it, or it was canceled), only if it is still the one this caller wrote (`until`); `requeued`:
   * the run is still waiting, so `queued` counts it again.
   */
  async returnLease(accountId: string, runId: string, until: number, requeued: boolean): Promise<void> {
    await sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: limitKey(accountId),
        UpdateExpression: requeued ? "REMOVE leases.#run ADD queued :one" : "REMOVE leases.#run",
        ConditionExpression: "leases.#run = :until",
        ExpressionAttributeNames: { "#run": runId },
        ExpressionAttributeValues: { ":until": until, ...(requeued ? { ":one": 1 } : {}) },
      }),
    );
  }

  /** A queued run left the queue without a lease (canceled): `queued` - 1, and its invocation back with `refund`. */
  async dequeued(accountId: string, refund: boolean): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: limitKey(accountId),
        UpdateExpression: refund ? "ADD queued :minus, invocations :minus" : "ADD queued :minus",
        ExpressionAttributeValues: { ":minus": -1 },
      }),
    );
  }

  /** The account has no queued run: it leaves the sweep's list (unless one was queued meanwhile). */
  async markEmpty(accountId: string): Promise<void> {
    await sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: limitKey(accountId),
        UpdateExpression: "REMOVE gsi1pk, gsi1sk",
        ConditionExpression: "attribute_not_exists(queued) OR queued <= :zero",
        ExpressionAttributeValues: { ":zero": 0 },
      }),
    );
  }

  /** Sets `queued` to the number of queue items counted by recovery, if it is still what was read. */
  async correct(accountId: string, seen: number, actual: number): Promise<boolean> {
    return sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: limitKey(accountId),
        UpdateExpression: "SET queued = :actual",
        ConditionExpression: seen === 0 ? "attribute_not_exists(queued) OR queued = :seen" : "queued = :seen",
        ExpressionAttributeValues: { ":actual": actual, ":seen": seen },
      }),
    );
  }

  /**
   * The accounts that have (or had, until their dispatcher saw the queue empty) queued runs: every
   * shard, and the single `QUEUED` partition of items marked before the shards.
   */
  async accountsWithQueued(): Promise<string[]> {
    const partitions = [QUEUED_ACCOUNTS_PK, ...Array.from({ length: QUEUED_SHARDS }, (_, n) => `${QUEUED_ACCOUNTS_PK}#${n}`)];
    const accounts = new Set<string>();
    for (const pk of partitions) {
      const items = await queryAll(this.doc, {
        TableName: this.table,
        IndexName: ACTIVE_INDEX,
        KeyConditionExpression: "gsi1pk = :pk",
        ExpressionAttributeValues: { ":pk": pk },
        ProjectionExpression: "gsi1sk",
      });
      for (const item of items) accounts.add(String(item.gsi1sk));
    }
    return [...accounts];
  }
}
