import { PolicyStatement, type Role } from "aws-cdk-lib/aws-iam";
import type { RouteSpec } from "../lambdas/routes/routeSpecs";
import type { FunctionRuntime } from "./functionRuntime";
import { acknowledge } from "./nag";
import type { RunPipeline } from "./runPipeline";
import type { Scheduling } from "./scheduling";
import type { SecretsKey } from "./secretsKey";
import type { WebhookDelivery } from "./webhookDelivery";
import type { WaitQueues } from "./waitQueues";

/**
 * The authenticated routes, grouped by what they touch beyond the table (#23.9). Each group has
 * a role of its own (lib/handlers.ts), so `GET /runs` cannot delete a function's Lambda, pass the
 * scheduler role, start a run workflow or use the secrets key. The grouping follows the ports
 * each route's code reaches (lambdas/deps.ts):
 *
 * - `invoke`: starts runs (the runtime: StartExecution, upload URLs presigned), opens and seals
 *   secrets for the run's own Lambda (KMS), queues webhooks of runs it ends (SQS), and waits
 *   for a run's end on its container's wait queue (SQS, `<prefix>-wait-*` only);
 * - `cancel`: stops a run's workflow (StopExecution) and queues its `run.canceled` webhook;
 * - `functions`: deploys through the deploy job (InvokeFunction), deletes a function's Lambda,
 *   checks the account's Lambda quotas, manages its schedule (and passes the scheduler role), and
 *   seals its webhook signing secret (KMS);
 * - `secrets`: seals and opens function secrets and webhook signing secrets (KMS);
 * - `artifacts`: presigns artifact downloads (S3 GetObject under artifacts/);
 * - `profiles`: deletes a profile's state object (S3 DeleteObject under profiles/);
 * - `live`: watches a run live: writes its watch marker and reads its latest frame (S3 PutObject
 *   of `live/<run id>/watch`, GetObject of `live/<run id>/latest.jpg`; lambdas/live/aws);
 * - `data`: the table only.
 */
export const ROUTE_GROUPS = {
  invoke: ["invokePost", "invokeGet", "mcp", "createBatch"],
  cancel: ["cancelRun"],
  functions: ["createFunction", "updateFunction", "forkFunction", "deleteFunction"],
  secrets: ["putSecret", "rotateWebhookSecret"],
  artifacts: ["getArtifact"],
  profiles: ["deleteProfile"],
  live: ["getRunLive"],
  data: [
    "listFunctions",
    "getFunctionInfo",
    "getFunctionOpenapi",
    "listVersions",
    "getVersion",
    "listRuns",
    "getRun",
    "getRunEvents",
    "listArtifacts",
    "getLogs",
    "getMetrics",
    "getBatch",
    "listBatchRuns",
    "deleteSecret",
    "listSecrets",
    "listDeliveries",
    "getUsage",
    "listProfiles",
    "getProfile",
    "setAccountPlan",
    "createApiKey",
    "listApiKeys",
    "deleteApiKey",
  ],
} as const satisfies Record<string, readonly string[]>;

export type RouteGroup = keyof typeof ROUTE_GROUPS;
export const ROUTE_GROUP_NAMES = Object.keys(ROUTE_GROUPS) as RouteGroup[];

/** The group of an authenticated route; throws for a route no group names (a new route must be placed). */
export function routeGroupOf(spec: Pick<RouteSpec, "operationId">): RouteGroup {
  const groups = ROUTE_GROUP_NAMES.filter((group) => (ROUTE_GROUPS[group] as readonly string[]).includes(spec.operationId));
  if (groups.length !== 1) {
    throw new Error(`Route ${spec.operationId} is in ${groups.length} route groups (lib/routeRoles.ts): place it in exactly one, by what it touches`);
  }
  return groups[0] as RouteGroup;
}

/** What the route groups' grants need from the rest of the stack. */
export interface RouteGrantTargets {
  runtime: FunctionRuntime;
  scheduling: Scheduling;
  pipeline: RunPipeline;
  secretsKey: SecretsKey;
  webhooks: WebhookDelivery;
  /** The deploy job's ARN (by name: its Lambda is made after the roles). */
  deployJobArn: string;
  /** The waiting routes' wait queues (lib/waitQueues.ts). */
  waitQueues: WaitQueues;
}

/** Grants each group's role what its routes touch beyond the table (see ROUTE_GROUPS), and nothing else. */
export function grantRouteGroups(roles: Record<RouteGroup, Role>, targets: RouteGrantTargets): void {
  const { invoke, cancel, functions, secrets, artifacts, profiles, live } = roles;
  // invoke: start runs (and presign their uploads and their profiles' URLs), open the function's secrets and seal them for its Lambda.
  targets.pipeline.grantStartRuns(invoke);
  targets.pipeline.grantSignProfiles(invoke, targets.secretsKey);
  targets.secretsKey.grantSealAndOpen(invoke);
  // A run's secrets go to its Lambda under the function's data key (lambdas/secrets/runEnvelope).
  targets.secretsKey.grantRunDataKeys(invoke);
  // The sync calls wait for their run's end on their container's wait queue (only these routes wait).
  targets.waitQueues.grantWait(invoke);
  // cancel: stop a run's workflow.
  targets.pipeline.grantStopRuns(cancel);
  // functions: deploys run in the deploy job; the routes only delete a function's Lambda.
  targets.runtime.grantDelete(functions);
  // The pre-flight check of a function's memory against the account's Lambda quotas; the action takes no resource.
  functions.addToPolicy(new PolicyStatement({ actions: ["lambda:GetAccountSettings"], resources: ["*"] }));
  acknowledge(functions, "AwsSolutions-IAM5[Resource::*]", "lambda:GetAccountSettings (the pre-flight check of a function's memory against the account's Lambda quotas) has no resource-level permissions: it is granted on * by AWS's design.");
  functions.addToPolicy(new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [targets.deployJobArn] }));
  targets.scheduling.grantManage(functions);
  // A function's webhook signing secret is sealed when it is created or updated.
  targets.secretsKey.grantSealAndOpen(functions);
  targets.secretsKey.grantSealAndOpen(secrets);
  targets.pipeline.grantDownloadArtifacts(artifacts);
  targets.pipeline.grantDeleteProfileStates(profiles);
  targets.pipeline.grantWatchLive(live);
  // Whoever ends a run queues its webhooks: a run ended by an invocation, or canceled.
  for (const sender of [invoke, cancel]) targets.webhooks.grantEnqueue(sender);
}
