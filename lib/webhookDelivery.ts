import { Duration } from "aws-cdk-lib";
import { Alarm, ComparisonOperator, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import type { IRole } from "aws-cdk-lib/aws-iam";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { MAX_DELIVERY_ATTEMPTS } from "../lambdas/webhooks/retrySchedule";
import { deadLetterQueue } from "./deadLetterQueue";

/** The delivery Lambda's timeout: a batch of attempts, each at most 10 s, made side by side. */
export const WEBHOOK_DELIVERY_TIMEOUT = Duration.seconds(60);
/**
 * Receives of a message before it is dead-lettered: one per attempt (each failed attempt hides
 * it until the next is due), and a few more for attempts that could not be made (the store or
 * KMS away) before the retry budget is spent.
 */
export const WEBHOOK_MAX_RECEIVES = MAX_DELIVERY_ATTEMPTS + 7;

/**
 * The webhook outbox on AWS: a queue of deliveries (one message each; whoever records a run's end
 * sends them), consumed by the delivery Lambda, which hides a message until its next attempt is
 * due; messages kept 4 days (the retry schedule spans about 28 hours); a dead-letter queue after
 * WEBHOOK_MAX_RECEIVES receives, and an alarm on it.
 */
export class WebhookDelivery extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly alarm: Alarm;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.deadLetterQueue = deadLetterQueue(this, "DeadLetters", "This is the dead-letter queue of the webhook delivery queue (deliveries whose messages could not be handled).");
    this.queue = new Queue(this, "Queue", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(4),
      // Six times the consumer's timeout, as Lambda's SQS event source asks.
      visibilityTimeout: Duration.seconds(WEBHOOK_DELIVERY_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: WEBHOOK_MAX_RECEIVES },
    });
    this.alarm = new Alarm(this, "DeadLettersAlarm", {
      alarmDescription: "browserfn: the webhook dead-letter queue holds messages (deliveries the delivery Lambda could not handle)",
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: "Maximum" }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }

  /** Sending deliveries: whoever records runs' ends (the routes, the recorder, the sweeper, the scheduled-run target). */
  grantEnqueue(role: IRole): void {
    this.queue.grantSendMessages(role);
  }

  /** The delivery Lambda consumes the queue (batches of 10, failed items reported one by one). */
  connect(consumer: IFunction): void {
    consumer.addEventSource(new SqsEventSource(this.queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 10 }));
  }
}
