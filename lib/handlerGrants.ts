import { type IRole, PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { RouteSpec } from "../lambdas/routes/routeSpecs";
import { ROUTE_SPECS } from "../lambdas/routes/routeSpecs";

/** What each of browserfn's own Lambdas may do on the table, and their physical names. */

/** What the store does on DynamoDB from a handler (Scan is only used by the local service). */
export const DATA_ACTIONS = [
  "dynamodb:GetItem",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:DeleteItem",
  "dynamodb:Query",
  "dynamodb:BatchWriteItem",
  // A batch's counts and runs are read by key (GET /batches/{id}).
  "dynamodb:BatchGetItem",
];
/**
 * The run recorder reads a run (and its parts), writes its end, meters it and frees its lease;
 * then, as the run queue's dispatcher, claims the next queued run (deletes its queue item).
 */
export const RECORDER_DATA_ACTIONS = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query", "dynamodb:DeleteItem"];
/** The deploy job reads a function and its version (and code parts), and records the deploy's outcome. */
export const DEPLOY_JOB_DATA_ACTIONS = ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem"];
/** The sweeper does what the recorder does, finds overdue runs (the active-runs index) and removes never-started ones. */
export const SWEEPER_DATA_ACTIONS = RECORDER_DATA_ACTIONS;
/** The webhook delivery Lambda reads a delivery, its function and its run (and the run's parts), and records each attempt. */
export const WEBHOOK_DELIVERY_DATA_ACTIONS = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"];
/** The authorizer reads keys and accounts, and creates the account of a new OAuth subject. */
export const AUTHORIZER_DATA_ACTIONS = ["dynamodb:GetItem", "dynamodb:PutItem"];

/**
 * The partitions (pk prefixes, lambdas/store/tables.ts) each trusted-but-narrow Lambda may
 * PutItem into (#23.9): none of them may write an API key (`KEY#`), a batch or an idempotency
 * claim. The authorizer creates accounts only; the recorder and the sweeper write runs (and
 * their parts and artifacts, `RUN#`), webhook deliveries (`FNID#`), the account's limits, usage
 * and storage (`ACCOUNT#`) and, as the run queue's dispatchers, queue items (`QUEUE#`) and the
 * writer's leases of the profiles of the runs they start (`PROFILE#`); the
 * delivery Lambda writes deliveries (`FNID#`).
 */
export const PUT_PARTITIONS = {
  authorizer: ["ACCOUNT#*"],
  recorder: ["RUN#*", "FNID#*", "ACCOUNT#*", "QUEUE#*", "PROFILE#*"],
  webhookDelivery: ["FNID#*"],
} as const;

/**
 * Grants `actions` on the table `resources`; PutItem among them only into items whose partition
 * key matches `putPartitions` (the `dynamodb:LeadingKeys` condition: ForAllValues, and every
 * single-item call has one leading key).
 */
export function grantTableActions(role: IRole, actions: readonly string[], resources: string[], putPartitions: readonly string[]): void {
  const others = actions.filter((action) => action !== "dynamodb:PutItem");
  if (others.length > 0) role.addToPrincipalPolicy(new PolicyStatement({ actions: others, resources }));
  if (others.length === actions.length) return;
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ["dynamodb:PutItem"],
      resources: resources.filter((resource) => !resource.includes("/index/")),
      conditions: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": [...putPartitions] } },
    }),
  );
}

/** Physical names of browserfn's own Lambdas (checked against the function prefix). */
export function handlerFunctionNames(prefix: string) {
  return {
    route: (spec: RouteSpec) => `${prefix}-api-${spec.operationId}`,
    authorizer: `${prefix}-authorizer`,
    routeNotFound: `${prefix}-route-not-found`,
    scheduledRun: `${prefix}-scheduled-run`,
    runRecorder: `${prefix}-run-recorder`,
    runSweeper: `${prefix}-run-sweeper`,
    deployJob: `${prefix}-deploy-job`,
    webhookDelivery: `${prefix}-webhook-delivery`,
    stackCleanup: `${prefix}-stack-cleanup`,
    runnerRollout: `${prefix}-runner-rollout`,
    runnerRolloutTrigger: `${prefix}-runner-rollout-trigger`,
    all: () => [
      ...ROUTE_SPECS.map((spec) => `${prefix}-api-${spec.operationId}`),
      `${prefix}-authorizer`,
      `${prefix}-route-not-found`,
      `${prefix}-scheduled-run`,
      `${prefix}-run-recorder`,
      `${prefix}-run-sweeper`,
      `${prefix}-deploy-job`,
      `${prefix}-webhook-delivery`,
      `${prefix}-stack-cleanup`,
      `${prefix}-runner-rollout`,
      `${prefix}-runner-rollout-trigger`,
    ],
  };
}
