import { createHash } from "node:crypto";
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { MAX_DELIVERY_BODY_BYTES } from "../webhooks/deliveryBody";
import type { DeliveryBodyItem, DeliveryItem, DeliveryStatus, WebhookEvent } from "../webhooks/webhookTypes";
import { queryUpTo, sendConditional, type DocumentSender } from "./dynamo";
import { asStored } from "./keys";

/** Deliveries are kept this long after they were created. */
const RETENTION_SECONDS = 30 * 86_400;

/** A delivery beside its function's versions, by id (ids start with the run's ULID: by time). */
const deliveryKey = (functionId: string, deliveryId: string) => ({ pk: `FNID#${functionId}`, sk: `DLV#${deliveryId}` });
/** The body a run's end sends its webhooks, beside the run (one per run: a run ends once). */
const bodyKey = (runId: string) => ({ pk: `RUN#${runId}`, sk: "WEBHOOK_BODY" });
/** A body past this is not kept (each attempt then builds its own): far below DynamoDB's 400 KB item. */
const MAX_KEPT_BODY_BYTES = MAX_DELIVERY_BODY_BYTES + 16 * 1024;

/**
 * Pending deliveries in gsi1 by when they are due, one partition per account and endpoint (the
 * URL's origin, hashed): what the local dispatcher polls, partition by partition, so neither one
 * account's backlog nor one receiver's is in front of another's (on AWS the queue's own delays
 * schedule attempts, and the entry is only bookkeeping). Deliveries written before there was a
 * partition per endpoint are due in their account's (`WHDUE#<account>`) until their next attempt
 * is recorded, which moves them to their endpoint's.
 */
const duePk = (partition: string) => `WHDUE#${partition}`;
const dueKey = (delivery: DeliveryItem) => ({ gsi1pk: duePk(partitionOf(delivery)), gsi1sk: `${delivery.next_attempt_at}#${delivery.function_id}#${delivery.delivery_id}` });
/** Where deliveries written before the due index had a partition per account were due, all in one. */
const SHARED_DUE_PK = "WHDUE";
/**
 * The partitions that may have pending deliveries: one marker item each, made (or its `seq`
 * counted up) by every new delivery and every retry scheduled, removed by the dispatcher once it
 * finds none pending. Its sort key is the partition: `<account>#<endpoint hash>` (`<account>`
 * alone: a partition of before).
 */
const DUE_ACCOUNTS_PK = "WHDUEACCT";
const dueAccountKey = (partition: string) => ({ pk: DUE_ACCOUNTS_PK, sk: partition });

/** The due partition of a delivery: its account and a hash of its URL's origin. */
export function partitionOf(delivery: Pick<DeliveryItem, "account_id" | "url">): string {
  return `${delivery.account_id}#${createHash("sha256").update(originOf(delivery.url)).digest("hex").slice(0, 16)}`;
}

/** The endpoint's part of a partition (an account's partition of before has none). */
const ENDPOINT_SUFFIX = /#[0-9a-f]{16}$/;

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** A due partition that may have pending deliveries (see partitionOf), whose account, and the count of its marker as read. */
export interface DueAccount {
  partition: string;
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
   * Writes a new delivery, then marks its due partition as one with deliveries pending; false
   * when it exists already (materializing a run's end twice is harmless).
   */
  async create(delivery: DeliveryItem): Promise<boolean> {
    const created = await sendConditional(this.doc, new PutCommand({ TableName: this.table, Item: this.toItem(delivery), ConditionExpression: "attribute_not_exists(pk)" }));
    await this.markDue(delivery);
    return created;
  }

  /** After the item: a dispatcher that found the partition empty before it cannot remove this count. */
  private async markDue(delivery: DeliveryItem): Promise<void> {
    await this.doc.send(
      new UpdateCommand({ TableName: this.table, Key: dueAccountKey(partitionOf(delivery)), UpdateExpression: "ADD seq :one", ExpressionAttributeValues: { ":one": 1 } }),
    );
  }

  /**
   * Replaces a delivery after an attempt, if nobody recorded one meanwhile (same attempts,
   * still pending): false otherwise, and nothing is written.
   */
  async update(previous: DeliveryItem, next: DeliveryItem): Promise<boolean> {
    const updated = await sendConditional(
      this.doc,
      new PutCommand({
        TableName: this.table,
        Item: this.toItem(next),
        ConditionExpression: "attempts = :attempts AND #status = :pending",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":attempts": previous.attempts, ":pending": "pending" },
      }),
    );
    // Still due later: its partition is marked (a delivery of before has just moved to its endpoint's).
    if (updated && next.status === "pending") await this.markDue(next);
    return updated;
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

  /**
   * Keeps the body of a run's deliveries (see DeliveryBodyItem), field by field; false when it
   * is too big to keep. Written again with the same bytes, it changes nothing.
   */
  async putBody(body: DeliveryBodyItem): Promise<boolean> {
    if (typeof body.body !== "string" || Buffer.byteLength(body.body) > MAX_KEPT_BODY_BYTES) return false;
    const fields = toBodyItem(body);
    const expiresAt = Math.floor(Date.parse(fields.created_at) / 1000) + RETENTION_SECONDS;
    await this.doc.send(new PutCommand({ TableName: this.table, Item: { ...fields, expires_at: expiresAt, ...bodyKey(fields.run_id) } }));
    return true;
  }

  /** The kept body of a run's deliveries, or undefined when none was kept. */
  async getBody(runId: string): Promise<DeliveryBodyItem | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: bodyKey(runId), ConsistentRead: true }));
    return Item && typeof Item.body === "string" ? toBodyItem(Item) : undefined;
  }

  /** The due partitions that may have pending deliveries (their markers), at most `limit`. */
  async dueAccounts(limit: number): Promise<DueAccount[]> {
    const items = await queryUpTo(this.doc, { TableName: this.table, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": DUE_ACCOUNTS_PK } }, limit);
    return items.map((item) => {
      const partition = String(item.sk);
      return { partition, account_id: partition.replace(ENDPOINT_SUFFIX, ""), seq: Number(item.seq) || 0 };
    });
  }

  /** The partition's pending deliveries due before `now`, soonest first, at most `limit`. */
  async dueOf(partition: string, now: Date, limit: number): Promise<DeliveryItem[]> {
    return this.dueIn(duePk(partition), now, limit);
  }

  /** Pending deliveries written before the due index had a partition per account, due before `now`, soonest first. */
  async dueShared(now: Date, limit: number): Promise<DeliveryItem[]> {
    return this.dueIn(SHARED_DUE_PK, now, limit);
  }

  /**
   * Removes the partition's marker when it has no pending delivery at all, unless a delivery was
   * made since the marker was read (its `seq` moved on): true when it was removed.
   */
  async forgetIfIdle(account: DueAccount): Promise<boolean> {
    const { Items } = await this.doc.send(
      new QueryCommand({ TableName: this.table, IndexName: "gsi1", KeyConditionExpression: "gsi1pk = :pk", ExpressionAttributeValues: { ":pk": duePk(account.partition) }, Limit: 1 }),
    );
    if ((Items ?? []).length > 0) return false;
    return sendConditional(
      this.doc,
      new DeleteCommand({ TableName: this.table, Key: dueAccountKey(account.partition), ConditionExpression: "seq = :seq", ExpressionAttributeValues: { ":seq": account.seq } }),
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

/** A delivery body from its item (or a body to write), field by field. */
function toBodyItem(item: DeliveryBodyItem | Record<string, unknown>): DeliveryBodyItem {
  const stored = asStored<DeliveryBodyItem>(item as Record<string, unknown>);
  return {
    run_id: String(stored.run_id),
    account_id: String(stored.account_id),
    function_id: String(stored.function_id),
    event: stored.event as WebhookEvent,
    body: String(stored.body),
    created_at: String(stored.created_at),
  };
}
