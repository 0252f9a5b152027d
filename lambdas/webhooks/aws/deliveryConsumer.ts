import { ChangeMessageVisibilityCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { z } from "zod";
import { FUNCTION_ID_PATTERN } from "../../schemas/functionSchemas";
import { type AttemptDeps, attemptDelivery } from "../attemptDelivery";

export interface DeliveryConsumerDeps extends AttemptDeps {
  sqs: Pick<SQSClient, "send">;
  queueUrl: string;
}

/** SQS's longest visibility timeout (12 h): a message hidden longer comes back early and is hidden again. */
const MAX_VISIBILITY_SECONDS = 43_200;
/** A delivery due within this long is attempted now. */
const DUE_SLACK_MS = 1_000;

const DeliveryMessage = z.strictObject({ function_id: z.string().regex(FUNCTION_ID_PATTERN), delivery_id: z.string().regex(/^msg_[0-9a-z]{26}_[0-9]$/) });

/**
 * The delivery Lambda (SQS event source, batch item failures reported). For each message: read
 * the delivery; when it is pending and due, attempt it (attemptDelivery: the same code as
 * locally). A delivery still pending afterwards keeps its message: hidden until its next
 * attempt is due (ChangeMessageVisibility) and reported as a failure, so SQS brings it back
 * then. Each attempt is one receive of the message; after the queue's maxReceiveCount it goes to
 * the dead-letter queue (the retry budget is spent well before, unless the attempts themselves
 * keep failing). Messages that are not a delivery's are dropped (logged).
 */
export function makeDeliveryConsumer(deps: DeliveryConsumerDeps) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failures: { itemIdentifier: string }[] = [];
    await Promise.all(
      (event.Records ?? []).map(async (record) => {
        try {
          if (!(await handle(deps, record.body, record.receiptHandle))) failures.push({ itemIdentifier: record.messageId });
        } catch (error) {
          deps.log(`webhook delivery message ${record.messageId}: ${(error as Error).message}; it comes back after its visibility timeout`);
          failures.push({ itemIdentifier: record.messageId });
        }
      }),
    );
    return { batchItemFailures: failures };
  };
}

/** True when the message is done with (delivered, failed, gone, or not a delivery's). */
async function handle(deps: DeliveryConsumerDeps, body: string, receiptHandle: string): Promise<boolean> {
  const parsed = DeliveryMessage.safeParse(parseJson(body.slice(0, 1_000)));
  if (!parsed.success) {
    deps.log("webhook delivery: a message that names no delivery was dropped");
    return true;
  }
  let delivery = await deps.store.deliveries.get(parsed.data.function_id, parsed.data.delivery_id);
  if (!delivery || delivery.status !== "pending") return true;
  const dueAt = () => Date.parse(delivery?.next_attempt_at ?? "") || 0;
  if (dueAt() - deps.clock.now().getTime() <= DUE_SLACK_MS) delivery = await attemptDelivery(deps, delivery);
  if (delivery.status !== "pending") return true;
  const waitSeconds = Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.ceil((dueAt() - deps.clock.now().getTime()) / 1000)));
  await deps.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: deps.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: waitSeconds }));
  return false;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
