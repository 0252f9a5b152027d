import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DeliveryItem, DeliveryStatus, WebhookEvent } from "../webhooks/webhookTypes";
import { queryUpTo, sendConditional, type DocumentSender } from "./dynamo";
import { asStored } from "./keys";

/** Deliveries are kept this long after they were created. */
const RETENTION_SECONDS = 30 * 86_400;

/** A delivery beside its function's versions, by id (ids start with the run's ULID: by time). */
const deliveryKey = (functionId: string, deliveryId: string) => ({ pk: `FNID#${functionId}`, sk: `DLV#${deliveryId}` });
/**
 * Pending deliveries in gsi1 by when they are due, one partition per account: what the local
 * dispatcher polls, account by account, so one account's backlog is never in front of another's
 * (on AWS the queue's own delays schedule attempts, and the entry is only bookkeeping).
 */
const duePk = (accountId: string) => `WHDUE#${accountId}`;
const dueKey = (delivery: DeliveryItem) => ({ gsi1pk: duePk(delivery.account_id), gsi1sk: `${delivery.next_attempt_at}#${delivery.function_id}#${delivery.delivery_id}` });
/** Where deliveries written before the due index had a partition per account were due, all in one. */
const SHARED_DUE_PK = "WHDUE";
/**
 * The accounts that may have pending deliveries: one marker item each, made (or its `seq`
 * counted up) by every new delivery, removed by the dispatcher once it finds none pending.
 */
const DUE_ACCOUNTS_PK = "WHDUEACCT";
const dueAccountKey = (accountId: string) => ({ pk: DUE_ACCOUNTS_PK, sk: accountId });

/** An account that may have pending deliveries, and the count of its marker as read. */
export interface DueAccount {
  account_id: string;
  seq: number;
}

/** Webhook deliveries: one item per event and webhook, with its attempts. */
export class DeliveryStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  /**
   * Writes a new delivery, then marks its account as one with deliveries pending; false when it
   * exists already (materializing a run's end twice is harmless).
   */
  async create(delivery: DeliveryItem): Promise<boolean> {
    const created = await sendConditional(this.doc, new PutCommand({ TableName: this.table, Item: this.toItem(delivery), ConditionExpression: "attribute_not_exists(pk)" }));
    // After the item: a dispatcher that found the account's partition empty before it cannot remove this count.
    await this.doc.send(
      new UpdateCommand({ TableName: this.table, Key: dueAccountKey(delivery.account_id), UpdateExpression: "ADD seq :one", ExpressionAttributeValues: { ":one": 1 } }),
    );
    return created;
  }

  /**
   * Replaces a delivery after an attempt, if nobody recorded one meanwhile (same attempts,
   * still pending): false otherwise, and nothing is written.
   */
  async update(previous: DeliveryItem, next: DeliveryItem): Promise<boolean> {
    return sendConditional(
      this.doc,
      new PutCommand({
        TableName: this.table,
        Item: this.toItem(next),
        ConditionExpression: "attempts = :attempts AND #status = :pending",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":attempts": previous.attempts, ":pending": "pending" },
      }),
    );
  }

  async get(functionId: string, deliveryId: string): Promise<DeliveryItem | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: deliveryKey(functionId, deliveryId), ConsistentRead: true }));
    return Item ? toDelivery(Item) : undefined;
  }

  /** The function's latest `limit` deliveries, newest first. */
  async recent(functionId: string, limit: number): Promise<DeliveryItem[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": deliveryKey(functionId, "").pk, ":prefix": "DLV#" },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (Items ?? []).map(toDelivery);
  }

  /** The accounts that may have pending deliveries (their markers), at most `limit`. */
  async dueAccounts(limit: number): Promise<DueAccount[]> {
    const items = await queryUpTo(this.doc, { TableName: this.table, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": DUE_ACCOUNTS_PK } }, limit);
    return items.map((item) => ({ account_id: String(item.sk), seq: Number(item.seq) || 0 }));
  }

  /** The account's pending deliveries due before `now`, soonest first, at most `limit`. */
  async dueOf(accountId: string, now: Date, limit: number): Promise<DeliveryItem[]> {
    return this.dueIn(duePk(accountId), now, limit);
  }

  /** Pending deliveries written before the due index had a partition per account, due before `now`, soonest first. */
  async dueShared(now: Date, limit: number): Promise<DeliveryItem[]> {
    return this.dueIn(SHARED_DUE_PK, now, limit);
  }

  /**
   * Removes the account's marker when it has no pending delivery at all, unless a delivery was
   * made since the marker was read (its `seq` moved on): true when it was removed.
   */
  async forgetIfIdle(account: DueAccount): Promise<boolean> {
    const { Items } = await this.doc.send(
      new QueryCommand({ TableName: this.table, IndexName: "gsi1", KeyConditionExpression: "gsi1pk = :pk", ExpressionAttributeValues: { ":pk": duePk(account.account_id) }, Limit: 1 }),
    );
    if ((Items ?? []).length > 0) return false;
    return sendConditional(
      this.doc,
      new DeleteCommand({ TableName: this.table, Key: dueAccountKey(account.account_id), ConditionExpression: "seq = :seq", ExpressionAttributeValues: { ":seq": account.seq } }),
    );
  }

  private async dueIn(partition: string, now: Date, limit: number): Promise<DeliveryItem[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :pk AND gsi1sk < :now",
        ExpressionAttributeValues: { ":pk": partition, ":now": now.toISOString() },
        Limit: limit,
      }),
    );
    return (Items ?? []).map(toDelivery).filter((delivery) => delivery.status === "pending");
  }

  /** The item, field by field, with its keys (and its due entry while pending). */
  private toItem(delivery: DeliveryItem): Record<string, unknown> {
    const fields = toDelivery(delivery as unknown as Record<string, unknown>);
    const expiresAt = Math.floor(Date.parse(fields.created_at) / 1000) + RETENTION_SECONDS;
    return {
      ...fields,
      expires_at: expiresAt,
      ...deliveryKey(fields.function_id, fields.delivery_id),
      ...(fields.status === "pending" && fields.next_attempt_at !== null ? dueKey(fields) : {}),
    };
  }
}

/** A delivery from its item, field by field. */
function toDelivery(item: Record<string, unknown>): DeliveryItem {
  const stored = asStored<DeliveryItem>(item);
  return {
    delivery_id: stored.delivery_id,
    account_id: stored.account_id,
    function_id: stored.function_id,
    run_id: stored.run_id,
    event: stored.event as WebhookEvent,
    url: stored.url,
    status: stored.status as DeliveryStatus,
    attempts: stored.attempts,
    last_status_code: stored.last_status_code ?? null,
    last_error: stored.last_error ?? null,
    next_attempt_at: stored.next_attempt_at ?? null,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
  };
}
