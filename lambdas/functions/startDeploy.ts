import type { DeployJob, Deps } from "../deps";
import { configureFunction, deployLatestVersion, deployVersion } from "./deployVersion";
import { STALE_DEPLOY_MS } from "./deployLimits";
import type { FunctionItem, VersionWithCode } from "./types";

export { STALE_DEPLOY_MS } from "./deployLimits";

/** The status_reason of a function whose deploy job could not be queued. */
export const ENQUEUE_FAILED_REASON = "The deploy could not be started; send the code again to retry";

/** What the runtime must do for a record just written: deploy its latest version, or apply its memory and timeout to the deployed one. */
export type DeployStep = DeployJob["kind"];

/** True when `fn` says `deploying` but nothing has changed it for STALE_DEPLOY_MS. */
export function isDeployStuck(fn: FunctionItem, now: Date): boolean {
  return fn.status === "deploying" && now.getTime() - Date.parse(fn.updated_at) > STALE_DEPLOY_MS;
}

/**
 * What an update from `current` to `next` asks of the runtime:
 * - a new version is deployed;
 * - a stuck deploy (isDeployStuck), or a failed function sent its code again or given new
 *   memory or timeout, has its latest version deployed again;
 * - new memory or timeout of an active function is applied to its deployed version;
 * - otherwise nothing: either nothing the runtime holds changed, or a deploy is under way and
 *   picks up the record as it stands (see runDeployJob).
 */
export function deployStep(
  current: FunctionItem,
  next: FunctionItem,
  change: { newCode: boolean; codeSent: boolean; now: Date },
): DeployStep | null {
  if (change.newCode) return "deploy";
  const limitsChanged = current.memory_mb !== next.memory_mb || current.timeout_seconds !== next.timeout_seconds;
  if (isDeployStuck(current, change.now)) return "deploy";
  if (current.status === "failed" && (change.codeSent || limitsChanged)) return "deploy";
  if (current.status === "active" && limitsChanged) return "configure";
  return null;
}

/**
 * Starts what `step` asks for `fn` (already written; `deploying` unless the step configures
 * inline). `version` is the new version, when the caller holds it (otherwise the latest is read
 * back). With deploy jobs (AWS) it queues one and returns the record at once; a job that cannot
 * be queued leaves the function `failed`, saying to send the code again. Without (local) it
 * deploys inline and returns the record as the deploy left it.
 */
export async function startDeploy(
  deps: Pick<Deps, "store" | "runtime" | "log" | "deployJobs">,
  fn: FunctionItem,
  step: DeployStep,
  version?: VersionWithCode,
): Promise<FunctionItem> {
  if (!deps.deployJobs) {
    if (step === "configure") return configureFunction(deps, fn);
    return version ? deployVersion(deps, fn, version) : deployLatestVersion(deps, fn);
  }
  const job: DeployJob = {
    kind: step,
    account_id: fn.account_id,
    function_id: fn.function_id,
    name: fn.name,
    version: fn.latest_version,
    ...(fn.deploy_id === undefined ? {} : { deploy_id: fn.deploy_id }),
  };
  try {
    await deps.deployJobs.enqueue(job);
    return fn;
  } catch (error) {
    // The cause goes to the service's log only: it names the service's own AWS resources.
    deps.log(`queueing the ${job.kind} job of ${fn.function_id} v${job.version} failed: ${(error as Error).stack ?? error}`);
    return (await deps.store.functions.setStatus(fn, "failed", ENQUEUE_FAILED_REASON)) ?? fn;
  }
}
