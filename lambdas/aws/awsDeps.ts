import { createAwsIdentity } from "./awsIdentityDeps";
import { KMSClient } from "@aws-sdk/client-kms";
import { S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";
import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { SFNClient } from "@aws-sdk/client-sfn";
import { SQSClient } from "@aws-sdk/client-sqs";
import { AWS_MAX_BODY_BYTES } from "../config/serviceConfig";
import { DEFAULT_PLAN, storageCapBytes } from "../config/plans";
import { type Deps, systemClock } from "../deps";
import { createAccountQuotaCheck } from "../runtime/aws/accountQuotas";
import { createAwsRuntime } from "../runtime/aws/awsRuntime";
import { createLambdaDeployJobs } from "../runtime/aws/deployJobs";
import { createLambdaClients } from "../runtime/aws/lambdaClient";
import { createAwsScheduler } from "../schedule/awsScheduler";
import { createDocumentClient } from "../store/dynamo";
import { createStore } from "../store/store";
import { createS3OutcomeBucket } from "../runtime/aws/outcomeBucket";
import { createS3ProfileObjects } from "../profiles/aws/profileObjects";
import { s3ProfileRemoval } from "../profiles/aws/s3ProfileRemoval";
import type { RecordRunDeps } from "../runtime/aws/recordRun";
import { createS3UploadedRecordings } from "../recording/aws/uploadedRecordings";
import { createS3LiveWatch } from "../live/aws/s3LiveWatch";
import { awsAttemptRetry } from "../runtime/aws/recordRetry";
import type { SweepDeps } from "../runtime/aws/sweepRuns";
import { createKmsSecretBox, runnerSession } from "../secrets/kmsSecretBox";
import type { SecretBox } from "../secrets/secretBox";
import { lambdaFunctionName } from "../runtime/aws/awsRuntime";
import type { AwsConfig, DispatcherEnvConfig, readRecorderEnv, SecretsEnvConfig, StoreEnvConfig } from "./awsConfig";
import { awsQueueDispatch, awsQueueRecovery, createDispatchStepFunctions, createDispatcherDeps, LambdaQueueState } from "./awsDispatch";
import type { Store } from "../store/store";
import { createSqsDeliveryQueue } from "../webhooks/aws/sqsDeliveryQueue";
import type { DeliveryConsumerDeps } from "../webhooks/aws/deliveryConsumer";
import { DEFAULT_RETRY_BASE_MS } from "../webhooks/retrySchedule";
import { createWebhookOutbox, type WebhookOutbox } from "../webhooks/webhookOutbox";
import { sweptRunsMetricLine } from "../runtime/aws/sweptRunsMetric";
import { AnalysisPool } from "../code/analysis/analysisPool";
import { bundledWorkerScript } from "../code/analysis/analysisWorkerScript";
import { DEFAULT_ANALYSIS_BUDGET } from "../code/analysis/codeAnalysis";
import { RunEndWaiter } from "../runtime/aws/runEnds/runEndWaiter";
import { createRunEndNotifier } from "../runtime/aws/runEnds/notifyRunEnd";
import { createWaitQueueSweep } from "../runtime/aws/runEnds/sweepWaitQueues";
import { WAIT_QUEUE_TAGS } from "../runtime/aws/runEnds/waitQueueNames";

/** The outbox of runs' ends, queueing deliveries on the webhook queue (standard retries: a duplicate message is harmless). */
function createAwsWebhookOutbox(store: Store, region: string, queueUrl: string): WebhookOutbox {
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
  const dispatcher = createDispatcherDeps({ store, clock: systemClock, log, secretBox, webhooks, outcomes, stepFunctions, dispatch: config.dispatch, profileObjects });
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

/** Every port on its AWS adapter: DynamoDB, Lambda, EventBridge Scheduler, API keys + JWTs. */
export function createAwsDeps(config: AwsConfig): Deps {
  const { doc } = createDocumentClient({ region: config.region });
  const store = createStore(doc, config.tablePrefix, { runRetentionDays: config.runRetentionDays, artifactRetentionDays: config.artifactRetentionDays });
  // Deploys, deploy jobs and the account's quotas: the SDK's standard retries.
  const controlPlane = createLambdaClients(config.region).controlPlane;
  const bucketClient = createRunBucketClient(config.region);
  const bucket = createS3OutcomeBucket(bucketClient, config.runtime.runBucket);
  const profileObjects = createS3ProfileObjects(bucketClient, config.runtime.runBucket, config.secretsKeyArn);
  return {
    store,
    // DELETE /profiles/{name}: the profile's state object goes with its record.
    profileBlobs: s3ProfileRemoval(store.profileStates, profileObjects),
    secretBox: createAwsSecretBox(config.region, { secretsKeyArn: config.secretsKeyArn, functionPrefix: config.runtime.functionPrefix, executionRoleId: config.runtime.executionRoleId }),
    webhooks: createAwsWebhookOutbox(store, config.region, config.webhookQueueUrl),
    // Downloads are short-lived presigned URLs the API redirects to: the bytes never pass through a Lambda.
    artifactContent: { open: async (item) => ({ redirect: await bucket.artifactDownloadUrl(item.run_id, item.name, item.content_type) }) },
    identity: createAwsIdentity(store.accounts, config),
    // The run queue: a run past its plan's concurrency is queued; this Lambda dispatches after an
    // enqueue (awaited before it answers: lazyHandlers.ts), the recorder after each release, the
    // sweeper as recovery (docs/deploy.md).
    queue: new LambdaQueueState(),
    runtime: createAwsRuntime({
      // The control plane with the SDK's standard retries (runs are invoked by the workflow, never from here).
      lambda: controlPlane,
      // Standard retries are safe: an execution's name is its run id, and a repeated start of the same execution is a no-op.
      stepFunctions: new SFNClient({ region: config.region, retryMode: "standard", maxAttempts: 5 }),
      stateMachineArn: config.runtime.stateMachineArn,
      outcomes: bucket,
      runs: store.runs,
      // A run's profiles: leases taken and URLs signed before it starts (lambdas/profiles/aws).
      profiles: { store, objects: profileObjects },
      functionPrefix: config.runtime.functionPrefix,
      executionRoleArn: config.runtime.executionRoleArn,
      executionRoleId: config.runtime.executionRoleId,
      layerArns: config.runtime.layerArns,
      logGroup: config.runtime.logGroup,
      // GET /runs/{id}/live: the watch marker and the latest frame in the run bucket, read once a second.
      watchFrames: createS3LiveWatch(bucketClient, config.runtime.runBucket, { pollMs: 1_000, log: (line) => console.error(line) }),
      // This container's wait queue: a waiting call hears its run's end instead of reading the record (runEnds/).
      ...(config.waitQueueUrlPrefix
        ? {
            endNotices: new RunEndWaiter({
              sqs: new SQSClient({ region: config.region, retryMode: "standard", maxAttempts: 3 }),
              urlPrefix: config.waitQueueUrlPrefix,
              tags: { ...WAIT_QUEUE_TAGS, "browserfn:table-prefix": config.tablePrefix },
              log: (line) => console.error(line),
            }),
          }
        : {}),
    }),
    scheduler: createAwsScheduler({
      client: new SchedulerClient({ region: config.region }),
      ...config.schedules,
    }),
    deployJobs: config.deployJobFunction ? createLambdaDeployJobs(controlPlane, config.deployJobFunction) : undefined,
    // The worker bundled beside this Lambda's code (lib/handlerFunction.ts); one request at a
    // time per instance, so one thread, started by the first deploy it reads.
    codeAnalysis: new AnalysisPool({
      script: bundledWorkerScript(__dirname),
      budget: DEFAULT_ANALYSIS_BUDGET,
      maxWorkers: 1,
      log: (line) => console.error(line),
    }),
    checkFunctionSettings: createAccountQuotaCheck({
      client: controlPlane,
      maxMemoryMb: config.maxFunctionMemoryMb,
      clock: systemClock,
      log: (line) => console.error(line),
    }),
    clock: systemClock,
    config: {
      plans: config.plans,
      publicUrl: config.publicUrl,
      syncWaitSeconds: config.syncWaitSeconds,
      maxBodyBytes: AWS_MAX_BODY_BYTES,
      // Artifact downloads are 302s to presigned URLs of the run bucket (virtual-hosted style).
      artifactOrigins: [`https://${config.runtime.runBucket}.s3.${config.region}.amazonaws.com`],
      oauthIssuer: config.oauth?.issuer ?? null,
    },
    log: (line) => console.error(line),
  };
}
