import { KMSClient } from "@aws-sdk/client-kms";
import { S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DEFAULT_PLAN, storageCapBytes } from "../config/plans";
import { systemClock } from "../deps";
import { createDocumentClient } from "../store/dynamo";
import { createStore } from "../store/store";
import { createS3OutcomeBucket } from "../runtime/aws/outcomeBucket";
import { createS3ProfileObjects } from "../profiles/aws/profileObjects";
import type { RecordRunDeps } from "../runtime/aws/recordRun";
import { createS3UploadedRecordings } from "../recording/aws/uploadedRecordings";
import { awsAttemptRetry } from "../runtime/aws/recordRetry";
import type { SweepDeps } from "../runtime/aws/sweepRuns";
import { createKmsSecretBox, runnerSession } from "../secrets/kmsSecretBox";
import type { SecretBox } from "../secrets/secretBox";
import { createRunDataKeys } from "../secrets/runEnvelope/runDataKeys";
import { lambdaFunctionName } from "../runtime/aws/awsRuntime";
import type { DispatcherEnvConfig, readRecorderEnv, SecretsEnvConfig, StoreEnvConfig } from "./awsConfig";
import { awsQueueDispatch, awsQueueRecovery, createDispatchStepFunctions, createDispatcherDeps } from "./awsDispatch";
import type { Store } from "../store/store";
import { createSqsDeliveryQueue } from "../webhooks/aws/sqsDeliveryQueue";
import type { DeliveryConsumerDeps } from "../webhooks/aws/deliveryConsumer";
import { DEFAULT_RETRY_BASE_MS } from "../webhooks/retrySchedule";
import { createWebhookOutbox, type WebhookOutbox } from "../webhooks/webhookOutbox";
import { sweptRunsMetricLine } from "../runtime/aws/sweptRunsMetric";
import { createRunEndNotifier } from "../runtime/aws/runEnds/notifyRunEnd";
import { createWaitQueueSweep } from "../runtime/aws/runEnds/sweepWaitQueues";

/** The outbox of runs' ends, queueing deliveries on the webhook queue (standard retries: a duplicate message is harmless). */
export function createAwsWebhookOutbox(store: Store, region: string, queueUrl: string): WebhookOutbox {
  const queue = createSqsDeliveryQueue(new SQSClient({ region, retryMode: "standard", maxAttempts: 5 }), queueUrl);
  return createWebhookOutbox({ store, queue, clock: systemClock, log: (line) => console.error(line) });
}

/** The delivery Lambda's deps: the store, KMS (signing secrets), the webhook queue (visibility of retried messages). */
export function createAwsDeliveryDeps(config: StoreEnvConfig & { webhookQueueUrl: string; secretsKeyArn: string }): DeliveryConsumerDeps {
  const { doc } = createDocumentClient({ region: config.region });
  return {
    store: createStore(doc, config.tablePrefix, { runRetentionDays: config.runRetentionDays }),
    secretBox: createKmsSecretBox(new KMSClient({ region: config.region }), config.secretsKeyArn),
    sqs: new SQSClient({ region: config.region }),
    queueUrl: config.webhookQueueUrl,
    clock: systemClock,
    log: (line) => console.error(line),
    // Targets on AWS are always checked: no deployment's webhooks may reach its VPC or the metadata endpoint.
    allowLocalNetwork: false,
    retryBaseMs: DEFAULT_RETRY_BASE_MS,
  };
}

/**
 * The S3 client of the run bucket. `WHEN_REQUIRED`: the SDK would otherwise sign a checksum of
 * the empty body into presigned PUT URLs, and S3 would refuse every upload through them.
 */
export function createRunBucketClient(region: string, overrides: S3ClientConfig = {}): S3Client {
  return new S3Client({ region, requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED", ...overrides });
}

/**
 * The sweeper's deps: the store on DynamoDB, the webhook outbox, and the run queue's dispatcher
 * (its recovery of queued runs no release started, and the release of a run whose workflow
 * ended unrecorded), which starts queued runs as executions of the run workflow.
 */
export function createAwsSweepDeps(config: DispatcherEnvConfig): SweepDeps {
  const { doc } = createDocumentClient({ region: config.region });
  const store = createStore(doc, config.tablePrefix, { runRetentionDays: config.runRetentionDays, artifactRetentionDays: config.artifactRetentionDays });
  const webhooks = createAwsWebhookOutbox(store, config.region, config.webhookQueueUrl);
  const log = (line: string) => console.error(line);
  const bucketClient = createRunBucketClient(config.region);
  const profileObjects = createS3ProfileObjects(bucketClient, config.dispatch.runBucket, config.dispatch.secrets.secretsKeyArn);
  const dispatcher = createDispatcherDeps({
    store,
    clock: systemClock,
    log,
    secretBox: createAwsSecretBox(config.region, config.dispatch.secrets),
    webhooks,
    outcomes: createS3OutcomeBucket(bucketClient, config.dispatch.runBucket),
    stepFunctions: createDispatchStepFunctions(config.region),
    dispatch: config.dispatch,
    profileObjects,
    runDataKeys: createRunDataKeys(new KMSClient({ region: config.region }), config.dispatch.secrets.secretsKeyArn),
  });
  return {
    store,
    clock: systemClock,
    log,
    webhooks,
    // A bare line on stdout (console.log would prefix it): CloudWatch reads it as EMF.
    sweptRuns: (count) => void process.stdout.write(`${sweptRunsMetricLine(config.tablePrefix, count, new Date())}\n`),
    dispatch: awsQueueDispatch(dispatcher),
    sweepQueues: awsQueueRecovery(dispatcher),
    profiles: { store, objects: profileObjects },
    ...(config.waitQueueUrlPrefix ? sweeperWaitQueues(new SQSClient({ region: config.region }), config.waitQueueUrlPrefix, log) : {}),
  };
}

/** The sweeper's part of the wait queues: it deletes idle ones, and tells a waiting route of an end it writes. */
function sweeperWaitQueues(sqs: SQSClient, urlPrefix: string, log: (line: string) => void): Pick<SweepDeps, "sweepWaitQueues" | "notifyEnd"> {
  return {
    sweepWaitQueues: createWaitQueueSweep({ sqs, urlPrefix, now: Date.now, log }),
    notifyEnd: createRunEndNotifier({ sqs, urlPrefix, log }),
  };
}

/**
 * The run recorder's deps: the store on DynamoDB, the bucket of uploaded outcomes, KMS (to
 * redact secrets), the webhook outbox, and the run queue's dispatcher: a release with runs
 * queued starts the next ones from here (executions of the run workflow).
 */
export function createAwsRecorderDeps(config: ReturnType<typeof readRecorderEnv>): RecordRunDeps {
  const { doc } = createDocumentClient({ region: config.region });
  const store = createStore(doc, config.tablePrefix, { runRetentionDays: config.runRetentionDays, artifactRetentionDays: config.artifactRetentionDays });
  const bucketClient = createRunBucketClient(config.region);
  const outcomes = createS3OutcomeBucket(bucketClient, config.runBucket);
  const profileObjects = createS3ProfileObjects(bucketClient, config.runBucket, config.secrets.secretsKeyArn);
  const secretBox = createAwsSecretBox(config.region, config.secrets);
  const webhooks = createAwsWebhookOutbox(store, config.region, config.webhookQueueUrl);
  const log = (line: string) => console.error(line);
  const stepFunctions = createDispatchStepFunctions(config.region);
  const runDataKeys = createRunDataKeys(new KMSClient({ region: config.region }), config.secrets.secretsKeyArn);
  const dispatcher = createDispatcherDeps({ store, clock: systemClock, log, secretBox, webhooks, outcomes, stepFunctions, dispatch: config.dispatch, profileObjects, runDataKeys });
  const storageCap = async (accountId: string) => storageCapBytes(config.plans[(await store.accounts.getAccount(accountId))?.plan ?? DEFAULT_PLAN]);
  return {
    store,
    clock: systemClock,
    log,
    outcomes,
    // Recordings runs upload are checked (and redacted) before they are kept.
    recordings: createS3UploadedRecordings(bucketClient, config.runBucket),
    secretBox,
    webhooks,
    storageCap,
    dispatch: awsQueueDispatch(dispatcher),
    // A failed attempt the function's retries allow again is queued (its parameters read back from its execution's input).
    retry: awsAttemptRetry(dispatcher, stepFunctions),
    profiles: { store, objects: profileObjects },
    // The route waiting for the run hears of its end (a lost notice costs it the rest of its window: no retries needed).
    ...(config.waitQueueUrlPrefix ? { notifyEnd: createRunEndNotifier({ sqs: new SQSClient({ region: config.region }), urlPrefix: config.waitQueueUrlPrefix, log }) } : {}),
  };
}

/** KMS, sealing each function's secrets for its own Lambda's session (kmsSecretBox.ts). */
export function createAwsSecretBox(region: string, config: SecretsEnvConfig): SecretBox {
  const runnerOf = (functionId: string) => runnerSession(config.executionRoleId, lambdaFunctionName(config.functionPrefix, functionId));
  return createKmsSecretBox(new KMSClient({ region }), config.secretsKeyArn, runnerOf);
}
