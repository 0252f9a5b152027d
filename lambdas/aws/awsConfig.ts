import { z } from "zod";
import { DEFAULT_PLAN, PlanSchema, type Plans } from "../config/plans";
import { DEFAULT_ARTIFACT_RETENTION_DAYS } from "../artifacts/artifacts";
import { DEFAULT_RUN_RETENTION_DAYS } from "../store/store";

/**
 * The environment variables the AWS Lambdas read: the CDK stack sets them, the Lambda entries
 * parse them once per container. One list, so that the two sides cannot drift apart.
 */
export const AWS_ENV = {
  region: "AWS_REGION",
  tablePrefix: "BROWSERFN_TABLE_PREFIX",
  runRetentionDays: "BROWSERFN_RUN_RETENTION_DAYS",
  artifactRetentionDays: "BROWSERFN_ARTIFACT_RETENTION_DAYS",
  plans: "BROWSERFN_PLANS",
  defaultPlan: "BROWSERFN_DEFAULT_PLAN",
  syncWaitSeconds: "BROWSERFN_SYNC_WAIT_SECONDS",
  publicUrl: "BROWSERFN_PUBLIC_URL",
  functionPrefix: "BROWSERFN_FUNCTION_PREFIX",
  executionRoleArn: "BROWSERFN_EXECUTION_ROLE_ARN",
  /** Comma-separated layer version ARNs: the chromium layer, then the runtime layer. */
  layerArns: "BROWSERFN_LAYER_ARNS",
  /** The run workflow (Step Functions): every run is one of its executions. */
  stateMachineArn: "BROWSERFN_RUN_STATE_MACHINE_ARN",
  /** The S3 bucket of run outcomes too big for the workflow (and, later, artifacts). */
  runBucket: "BROWSERFN_RUN_BUCKET",
  /** The KMS key that seals function secrets and webhook signing secrets. */
  secretsKeyArn: "BROWSERFN_SECRETS_KEY_ARN",
  /** The unique id (AROA…) of the functions' execution role: a Lambda's session is `<role id>:<function name>`. */
  executionRoleId: "BROWSERFN_EXECUTION_ROLE_ID",
  /** The SQS queue of webhook deliveries (the delivery Lambda consumes it). */
  webhookQueueUrl: "BROWSERFN_WEBHOOK_QUEUE_URL",
  /** The CloudWatch log group of every function's Lambda. */
  functionLogGroup: "BROWSERFN_FUNCTION_LOG_GROUP",
  scheduleGroup: "BROWSERFN_SCHEDULE_GROUP",
  scheduleNamePrefix: "BROWSERFN_SCHEDULE_NAME_PREFIX",
  scheduleTargetArn: "BROWSERFN_SCHEDULE_TARGET_ARN",
  scheduleRoleArn: "BROWSERFN_SCHEDULE_ROLE_ARN",
  scheduleDeadLetterArn: "BROWSERFN_SCHEDULE_DLQ_ARN",
  oauthIssuer: "BROWSERFN_OAUTH_ISSUER",
  oauthJwksUrl: "BROWSERFN_OAUTH_JWKS_URL",
  /** Comma-separated OAuth client ids whose access tokens are accepted. */
  oauthClientIds: "BROWSERFN_OAUTH_CLIENT_IDS",
  /** The deploy-job Lambda (name or ARN): unset, create and update deploy within the request. */
  deployJobFunction: "BROWSERFN_DEPLOY_JOB_FUNCTION",
  /** The largest memory_mb this AWS account's Lambda allows, when known (otherwise read from its quotas). */
  maxFunctionMemoryMb: "BROWSERFN_MAX_FUNCTION_MEMORY_MB",
  /**
   * `https://sqs.<region>.<suffix>/<account>/<prefix>-wait-`: the waiting routes' wait queues
   * (runtime/aws/runEnds). Unset: routes read the run's record instead, nobody is notified.
   */
  waitQueueUrlPrefix: "BROWSERFN_WAIT_QUEUE_URL_PREFIX",
} as const;

/** What the run recorder and the sweeper need: the table. */
export interface StoreEnvConfig {
  region: string;
  tablePrefix: string;
  runRetentionDays: number;
  artifactRetentionDays: number;
}

/** What the authorizer needs: the table (API keys, accounts) and the OAuth issuer. */
export interface IdentityEnvConfig extends StoreEnvConfig {
  defaultPlan: string;
  /** Null: API keys only. */
  oauth: { issuer: string; jwksUrl: string; clientIds: string[] } | null;
}

/** What a route handler or the scheduled-run Lambda needs: everything. */
export interface AwsConfig extends IdentityEnvConfig {
  plans: Plans;
  secretsKeyArn: string;
  webhookQueueUrl: string;
  syncWaitSeconds: number;
  publicUrl: string | null;
  /** Null: deploys run within the request. */
  deployJobFunction: string | null;
  /** Null: read from the account's Lambda quotas (see accountQuotas.ts). */
  maxFunctionMemoryMb: number | null;
  runtime: { functionPrefix: string; executionRoleArn: string; executionRoleId: string; layerArns: string[]; stateMachineArn: string; runBucket: string; logGroup: string };
  /** The wait queues' URL prefix (AWS_ENV.waitQueueUrlPrefix); null: no end notices. */
  waitQueueUrlPrefix: string | null;
  schedules: { groupName: string; namePrefix: string; targetArn: string; roleArn: string; deadLetterArn: string };
}

const bucketName = z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "must be an S3 bucket name");
const arn = z.string().regex(/^arn:aws[a-z-]*:[a-z0-9-]+:/, "must be an ARN");
const functionPrefix = z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, "1-40 characters of [A-Za-z0-9_-]");
const roleId = z.string().regex(/^AROA[A-Z0-9]{4,128}$/, "must be an IAM role's unique id (AROA…)");
const queueUrl = z.url({ protocol: /^https$/ }).max(1000);
const waitQueueUrlPrefix = z
  .string()
  .regex(/^https:\/\/sqs\.[a-z0-9-]+\.[a-z0-9.-]+\/[0-9]{12}\/[A-Za-z0-9_-]{1,40}-wait-$/, "must be https://sqs.<region>.<suffix>/<account>/<prefix>-wait-")
  .optional();
const list = (item: z.ZodString) =>
  z
    .string()
    .transform((text) => text.split(",").map((part) => part.trim()).filter((part) => part !== ""))
    .pipe(z.array(item).min(1));

const plansJson = z.string().transform((text, ctx) => {
  try {
    return z.record(z.string(), PlanSchema).parse(JSON.parse(text));
  } catch (error) {
    ctx.addIssue({ code: "custom", message: `not a JSON object of plans: ${(error as Error).message}` });
    return z.NEVER;
  }
});

const StoreEnv = z.object({
  [AWS_ENV.region]: z.string().min(1),
  [AWS_ENV.tablePrefix]: z.string().regex(/^[A-Za-z0-9_.-]{1,200}$/),
  [AWS_ENV.runRetentionDays]: z.coerce.number().int().min(1).max(3650).default(DEFAULT_RUN_RETENTION_DAYS),
  [AWS_ENV.artifactRetentionDays]: z.coerce.number().int().min(1).max(3650).default(DEFAULT_ARTIFACT_RETENTION_DAYS),
});

const IdentityEnv = StoreEnv.extend({
  [AWS_ENV.defaultPlan]: z.string().min(1).default(DEFAULT_PLAN),
  [AWS_ENV.oauthIssuer]: z.url({ protocol: /^https$/ }).optional(),
  [AWS_ENV.oauthJwksUrl]: z.url({ protocol: /^https$/ }).optional(),
  [AWS_ENV.oauthClientIds]: list(z.string().min(1)).optional(),
});

const ServiceEnv = IdentityEnv.extend({
  [AWS_ENV.plans]: plansJson,
  [AWS_ENV.syncWaitSeconds]: z.coerce.number().positive().max(900).default(25),
  [AWS_ENV.publicUrl]: z.url().optional(),
  [AWS_ENV.functionPrefix]: functionPrefix,
  [AWS_ENV.executionRoleArn]: arn,
  [AWS_ENV.layerArns]: list(arn),
  [AWS_ENV.stateMachineArn]: arn,
  [AWS_ENV.runBucket]: bucketName,
  [AWS_ENV.secretsKeyArn]: arn,
  [AWS_ENV.executionRoleId]: roleId,
  [AWS_ENV.webhookQueueUrl]: queueUrl,
  [AWS_ENV.functionLogGroup]: z.string().min(1).max(512),
  [AWS_ENV.scheduleGroup]: z.string().min(1),
  [AWS_ENV.scheduleNamePrefix]: z.string().default(""),
  [AWS_ENV.scheduleTargetArn]: arn,
  [AWS_ENV.scheduleRoleArn]: arn,
  [AWS_ENV.scheduleDeadLetterArn]: arn,
  [AWS_ENV.deployJobFunction]: z
    .string()
    .regex(/^(arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:)?[A-Za-z0-9_-]{1,64}$/, "must be a Lambda function name or ARN")
    .optional(),
  [AWS_ENV.maxFunctionMemoryMb]: z.coerce.number().int().min(128).max(10240).optional(),
  [AWS_ENV.waitQueueUrlPrefix]: waitQueueUrlPrefix,
});

/** The sweeper's settings; throws one message naming every bad or missing variable. */
export function readStoreEnv(env: NodeJS.ProcessEnv): StoreEnvConfig {
  const e = parse(StoreEnv, env);
  return {
    region: e[AWS_ENV.region],
    tablePrefix: e[AWS_ENV.tablePrefix],
    runRetentionDays: e[AWS_ENV.runRetentionDays],
    artifactRetentionDays: e[AWS_ENV.artifactRetentionDays],
  };
}

const SecretsEnv = z.object({ [AWS_ENV.secretsKeyArn]: arn, [AWS_ENV.functionPrefix]: functionPrefix, [AWS_ENV.executionRoleId]: roleId });

/** What opens function secrets: the key, and what names a function's Lambda session (see kmsSecretBox.ts). */
export interface SecretsEnvConfig {
  secretsKeyArn: string;
  functionPrefix: string;
  executionRoleId: string;
}

function toSecretsConfig(e: z.infer<typeof SecretsEnv>): SecretsEnvConfig {
  return { secretsKeyArn: e[AWS_ENV.secretsKeyArn], functionPrefix: e[AWS_ENV.functionPrefix], executionRoleId: e[AWS_ENV.executionRoleId] };
}

/**
 * What a Lambda that starts queued runs needs besides the table (the recorder after a release,
 * the sweeper's recovery): the plans (their concurrency), the run workflow, the run bucket
 * (presigned upload URLs) and what opens and names function secrets.
 */
export interface DispatchEnvConfig {
  plans: Plans;
  stateMachineArn: string;
  runBucket: string;
  secrets: SecretsEnvConfig;
}

const DispatchEnv = StoreEnv.extend({
  [AWS_ENV.plans]: plansJson,
  [AWS_ENV.stateMachineArn]: arn,
  [AWS_ENV.runBucket]: bucketName,
  [AWS_ENV.webhookQueueUrl]: queueUrl,
  [AWS_ENV.waitQueueUrlPrefix]: waitQueueUrlPrefix,
}).extend(SecretsEnv.shape);

function toDispatchConfig(e: z.infer<typeof DispatchEnv>): DispatchEnvConfig {
  return { plans: e[AWS_ENV.plans], stateMachineArn: e[AWS_ENV.stateMachineArn], runBucket: e[AWS_ENV.runBucket], secrets: toSecretsConfig(e) };
}

/**
 * The run recorder's and the sweeper's settings: the table, the webhook queue, what starting
 * queued runs needs, and the wait queues (the recorder notifies them, the sweeper deletes idle ones; null: neither).
 */
export type DispatcherEnvConfig = StoreEnvConfig & { webhookQueueUrl: string; dispatch: DispatchEnvConfig; waitQueueUrlPrefix: string | null };

/**
 * The run recorder's settings: the table, the bucket of uploaded outcomes, what opens secrets
 * (whose values it redacts), the webhook queue, the plans (their storage caps), and what starting queued runs needs.
 */
export function readRecorderEnv(env: NodeJS.ProcessEnv): DispatcherEnvConfig & { runBucket: string; secrets: SecretsEnvConfig; plans: Plans } {
  const e = parse(DispatchEnv, env);
  const dispatch = toDispatchConfig(e);
  return {
    ...readStoreEnv(env),
    runBucket: dispatch.runBucket,
    secrets: dispatch.secrets,
    webhookQueueUrl: e[AWS_ENV.webhookQueueUrl],
    plans: dispatch.plans,
    dispatch,
    waitQueueUrlPrefix: e[AWS_ENV.waitQueueUrlPrefix] ?? null,
  };
}

const WebhookEnv = StoreEnv.extend({ [AWS_ENV.webhookQueueUrl]: queueUrl });

/** The sweeper's settings: the table, the webhook queue (it queues deliveries of ends left in the outbox), and what starting queued runs needs. */
export function readSweeperEnv(env: NodeJS.ProcessEnv): DispatcherEnvConfig {
  const e = parse(DispatchEnv, env);
  return { ...readStoreEnv(env), webhookQueueUrl: e[AWS_ENV.webhookQueueUrl], dispatch: toDispatchConfig(e), waitQueueUrlPrefix: e[AWS_ENV.waitQueueUrlPrefix] ?? null };
}

const DeliveryEnv = WebhookEnv.extend({ [AWS_ENV.secretsKeyArn]: arn });

/** The delivery Lambda's settings: the table, the webhook queue, the key that opens signing secrets. */
export function readDeliveryEnv(env: NodeJS.ProcessEnv): StoreEnvConfig & { webhookQueueUrl: string; secretsKeyArn: string } {
  const e = parse(DeliveryEnv, env);
  return { ...readStoreEnv(env), webhookQueueUrl: e[AWS_ENV.webhookQueueUrl], secretsKeyArn: e[AWS_ENV.secretsKeyArn] };
}

/** The authorizer's settings; throws one message naming every bad or missing variable. */
export function readIdentityEnv(env: NodeJS.ProcessEnv): IdentityEnvConfig {
  return toIdentityConfig(parse(IdentityEnv, env));
}

/** A handler's settings; throws one message naming every bad or missing variable. */
export function readAwsEnv(env: NodeJS.ProcessEnv): AwsConfig {
  const e = parse(ServiceEnv, env);
  return {
    ...toIdentityConfig(e),
    plans: e[AWS_ENV.plans],
    secretsKeyArn: e[AWS_ENV.secretsKeyArn],
    webhookQueueUrl: e[AWS_ENV.webhookQueueUrl],
    syncWaitSeconds: e[AWS_ENV.syncWaitSeconds],
    publicUrl: e[AWS_ENV.publicUrl] ?? null,
    deployJobFunction: e[AWS_ENV.deployJobFunction] ?? null,
    maxFunctionMemoryMb: e[AWS_ENV.maxFunctionMemoryMb] ?? null,
    waitQueueUrlPrefix: e[AWS_ENV.waitQueueUrlPrefix] ?? null,
    runtime: {
      functionPrefix: e[AWS_ENV.functionPrefix],
      executionRoleArn: e[AWS_ENV.executionRoleArn],
      executionRoleId: e[AWS_ENV.executionRoleId],
      layerArns: e[AWS_ENV.layerArns],
      stateMachineArn: e[AWS_ENV.stateMachineArn],
      runBucket: e[AWS_ENV.runBucket],
      logGroup: e[AWS_ENV.functionLogGroup],
    },
    schedules: {
      groupName: e[AWS_ENV.scheduleGroup],
      namePrefix: e[AWS_ENV.scheduleNamePrefix],
      targetArn: e[AWS_ENV.scheduleTargetArn],
      roleArn: e[AWS_ENV.scheduleRoleArn],
      deadLetterArn: e[AWS_ENV.scheduleDeadLetterArn],
    },
  };
}

function toIdentityConfig(e: z.infer<typeof IdentityEnv>): IdentityEnvConfig {
  const issuer = e[AWS_ENV.oauthIssuer];
  const jwksUrl = e[AWS_ENV.oauthJwksUrl];
  const clientIds = e[AWS_ENV.oauthClientIds];
  return {
    region: e[AWS_ENV.region],
    tablePrefix: e[AWS_ENV.tablePrefix],
    runRetentionDays: e[AWS_ENV.runRetentionDays],
    artifactRetentionDays: e[AWS_ENV.artifactRetentionDays],
    defaultPlan: e[AWS_ENV.defaultPlan],
    oauth: issuer && jwksUrl && clientIds ? { issuer, jwksUrl, clientIds } : null,
  };
}

function parse<T extends z.ZodType>(schema: T, env: NodeJS.ProcessEnv): z.infer<T> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`Invalid Lambda environment:\n  ${problems.join("\n  ")}`);
  }
  const oauth = [AWS_ENV.oauthIssuer, AWS_ENV.oauthJwksUrl, AWS_ENV.oauthClientIds].filter((name) => env[name]);
  if (oauth.length > 0 && oauth.length < 3) {
    throw new Error(
      `Invalid Lambda environment:\n  set all of ${AWS_ENV.oauthIssuer}, ${AWS_ENV.oauthJwksUrl} and ${AWS_ENV.oauthClientIds}, or none (API keys only)`,
    );
  }
  return result.data;
}
