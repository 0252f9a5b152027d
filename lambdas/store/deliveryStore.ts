import { GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { DeliveryItem, DeliveryStatus, WebhookEvent } from "../webhooks/webhookTypes";
import { sendConditional, type DocumentSender } from "./dynamo";
import { asStored } from "./keys";

/** Deliveries are kept this long after they were created. */
const RETENTION_SECONDS = 30 * 86_400;

/** A delivery beside its function's versions, by id (ids start with the run's ULID: by time). */
const deliveryKey = (functionId: string, deliveryId: string) => ({ pk: `FNID#${functionId}`, sk: `DLV#${deliveryId}` });
/**
 * Pending deliveries in gsi1 by when they are due: what the local dispatcher polls (on AWS the
 * queue's own delays schedule attempts, and the entry is only bookkeeping). One partition: a
 * delivery is written a few times in its life, far below a partition's write rate.
 */
const DUE_PK = "WHDUE";
const dueKey = (delivery: DeliveryItem) => ({ gsi1pk: DUE_PK, gsi1sk: `${delivery.next_attempt_at}#${delivery.function_id}#${delivery.delivery_id}` });

/** Webhook deliveries: one item per event and webhook, with its attempts. */
export class DeliveryStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  /** Writes a new delivery; false when it exists already (materializing a run's end twice is harmless). */
  async create(delivery: DeliveryItem): Promise<boolean> {
    return sendConditional(this.doc, new PutCommand({ TableName: this.table, Item: this.toItem(delivery), ConditionExpression: "attribute_not_exists(pk)" }));
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

  /** Pending deliveries due before `now`, soonest first, at most `limit`. */
  async due(now: Date, limit: number): Promise<DeliveryItem[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :pk AND gsi1sk < :now",
        ExpressionAttributeValues: { ":pk": DUE_PK, ":now": now.toISOString() },
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
