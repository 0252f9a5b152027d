import { KMSClient } from "@aws-sdk/client-kms";
import { SFNClient } from "@aws-sdk/client-sfn";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { Deps } from "../../deps";
import { createS3ProfileObjects } from "../../profiles/aws/profileObjects";
import { createS3OutcomeBucket } from "../../runtime/aws/outcomeBucket";
import { createRunStarter } from "../../runtime/aws/runExecutions";
import { createQueuedEndWatch } from "../../runtime/aws/runEnds/queuedRunEnd";
import { RunEndWaiter } from "../../runtime/aws/runEnds/runEndWaiter";
import { WAIT_QUEUE_TAGS } from "../../runtime/aws/runEnds/waitQueueNames";
import { createRunDataKeys } from "../../secrets/runEnvelope/runDataKeys";
import { type AwsConfig, readAwsEnv } from "../awsConfig";
import { createAwsSecretBox, createAwsWebhookOutbox, createRunBucketClient } from "../awsDeps";
import { createRouteBase } from "./routeBase";

/**
 * The `invoke` routes (lib/routeRoles.ts) and the scheduled-run target: they start runs. The
 * table, Step Functions (StartExecution), S3 (the run's presigned uploads, its profiles' URLs),
 * KMS (the function's secrets, sealed for its Lambda), the webhook queue (runs they end) and
 * this container's wait queue (SQS). No Lambda client: runs are invoked by the workflow (#23.12).
 */
export function createInvokeRouteDeps(config: AwsConfig, holder = "invoke routes'"): Deps {
  const base = createRouteBase(config, holder);
  const { store } = base;
  const bucketClient = createRunBucketClient(config.region);
  const endNotices = config.waitQueueUrlPrefix
    ? new RunEndWaiter({
        sqs: new SQSClient({ region: config.region, retryMode: "standard", maxAttempts: 3 }),
        urlPrefix: config.waitQueueUrlPrefix,
        tags: { ...WAIT_QUEUE_TAGS, "browserfn:table-prefix": config.tablePrefix },
        log: base.log,
      })
    : undefined;
  const invoke = createRunStarter({
    // Standard retries are safe: an execution's name is its run id, and a repeated start of the same execution is a no-op.
    stepFunctions: new SFNClient({ region: config.region, retryMode: "standard", maxAttempts: 5 }),
    stateMachineArn: config.runtime.stateMachineArn,
    outcomes: createS3OutcomeBucket(bucketClient, config.runtime.runBucket),
    runs: store.runs,
    // A run's profiles: leases taken and URLs signed before it starts (lambdas/profiles/aws).
    profiles: { store, objects: createS3ProfileObjects(bucketClient, config.runtime.runBucket, config.secretsKeyArn) },
    functionPrefix: config.runtime.functionPrefix,
    executionRoleId: config.runtime.executionRoleId,
    // A run's secrets under the function's data key, kept here 5 minutes: its Lambda makes one Decrypt per run.
    runDataKeys: createRunDataKeys(new KMSClient({ region: config.region }), config.secretsKeyArn),
    // This container's wait queue: a waiting call hears its run's end instead of reading the record (runEnds/).
    ...(endNotices ? { endNotices } : {}),
  });
  return {
    ...base,
    // A failed attempt is queued again by the run recorder (recordRetry.ts, docs/deploy.md "Retries on AWS").
    runtime: {
      ...base.runtime,
      invoke,
      retries: true,
      // A sync call's queued run is started elsewhere: its end comes to the call's wait queue too (runEnds/queuedRunEnd.ts).
      ...(endNotices ? { watchQueuedEnd: createQueuedEndWatch({ endNotices, runs: store.runs }) } : {}),
      // A canceled run's Lambda invocation runs on: its slot stays taken until its lease lapses (awsRunCancel).
      canceledRunsRunOn: true,
    },
    secretBox: createAwsSecretBox(config.region, { secretsKeyArn: config.secretsKeyArn, functionPrefix: config.runtime.functionPrefix, executionRoleId: config.runtime.executionRoleId }),
    webhooks: createAwsWebhookOutbox(store, config.region, config.webhookQueueUrl),
  };
}

export const invokeRouteDeps = (): Deps => createInvokeRouteDeps(readAwsEnv(process.env));

/** The scheduled-run target's deps: those of the invoke routes (it starts runs the same way). */
export const scheduledRunDeps = (): Deps => createInvokeRouteDeps(readAwsEnv(process.env), "scheduled-run");
