import { SendMessageBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { DeliveryQueue, DeliveryRef } from "../webhookOutbox";

/** SendMessageBatch takes at most this many messages. */
const BATCH = 10;

/** The message of one delivery: where its item is, nothing else (the delivery Lambda reads the rest from the store). */
export function deliveryMessage(ref: Pick<DeliveryRef, "function_id" | "delivery_id">): string {
  return JSON.stringify({ function_id: ref.function_id, delivery_id: ref.delivery_id });
}

/**
 * New deliveries go to the webhook queue, one message each, for the delivery Lambda. Each
 * message's group is its account (SQS fair queues, on a standard queue): when one account's
 * messages pile up, SQS keeps the other accounts' dwell time low instead of serving the backlog
 * first.
 */
export function createSqsDeliveryQueue(sqs: Pick<SQSClient, "send">, queueUrl: string): DeliveryQueue {
  return {
    async enqueue(deliveries) {
      for (let start = 0; start < deliveries.length; start += BATCH) {
        const entries = deliveries
          .slice(start, start + BATCH)
          .map((ref, i) => ({ Id: String(start + i), MessageBody: deliveryMessage(ref), MessageGroupId: ref.account_id }));
        const { Failed } = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
        if (Failed && Failed.length > 0) throw new Error(`the webhook queue refused ${Failed.length} message(s): ${Failed[0]?.Code ?? "unknown"}`);
      }
    },
  };
}
