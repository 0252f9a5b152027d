import { Duration } from "aws-cdk-lib";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { acknowledge } from "./nag";

/**
 * A dead-letter queue: encrypted, SSL only, messages kept 14 days. `reason` says what it is the
 * dead-letter queue of (cdk-nag's SQS3 asks every queue for one of its own; this one is it).
 */
export function deadLetterQueue(scope: Construct, id: string, reason: string): Queue {
  const queue = new Queue(scope, id, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
  acknowledge(queue, "AwsSolutions-SQS3", reason);
  return queue;
}
