import type { DeployJob, Deps } from "../deps";
import type { DeployGuard, DeployResult } from "../runtime/runtime";
import { configureOutcome, DeploySuperseded, latestVersionOutcome } from "./deployVersion";
import type { FunctionItem, FunctionStatus } from "./types";

export type DeployJobDeps = Pick<Deps, "store" | "runtime" | "log">;

/**
 * How a deploy job ended: the function is gone (deleted, or another one under its name), a
 * newer version superseded the job, the function is not `deploying` (another run of the job
 * finished it), or the status this run recorded.
 */
export type DeployJobOutcome = "gone" | "superseded" | "not_deploying" | FunctionStatus;

/** Memory or timeout changed while a deploy ran: applied again at most this many times in all. */
const MAX_ROUNDS = 3;

/**
 * Finishes a function left `deploying` by create or update (see startDeploy): re-reads the
 * record, deploys its latest version (`deploy`) or applies its memory and timeout (`configure`)
 * with the settings as they stand now, and records `active` or `failed` with the reason. A
 * runtime that throws is recorded as `failed`; a store that throws fails the job (to be run
 * again). Running a job twice is harmless: the second finds the record no longer `deploying`,
 * or deploys the same version again (the runtime treats an existing function as an update).
 *
 * Settings changed by an update while the runtime worked (updates leave a deploy under way to
 * its job) are applied before the job ends: the record the status write returns is compared
 * with what was applied.
 *
 * A job belongs to one deploy (its deploy_id): before each change the runtime makes it reads
 * the record again, and stops when another deploy (a resend of the code) or a delete took the
 * function over; its status write is conditional on its deploy too. So a job that still runs
 * (a retry, a late event) stops at its next change rather than working alongside the newer
 * deploy's job, and never records over it.
 */
export async function runDeployJob(deps: DeployJobDeps, job: DeployJob): Promise<DeployJobOutcome> {
  const fn = await deps.store.functions.getByName(job.account_id, job.name);
  if (!fn || fn.function_id !== job.function_id) return "gone";
  if (fn.latest_version !== job.version || fn.deploy_id !== job.deploy_id) return "superseded";
  if (fn.status !== "deploying") return "not_deploying";
  const guard: DeployGuard = async () => {
    const now = await deps.store.functions.getByName(job.account_id, job.name);
    if (now?.function_id !== job.function_id || now.latest_version !== job.version || now.deploy_id !== job.deploy_id) {
      throw new DeploySuperseded(`the deploy of ${job.function_id} v${job.version} was superseded`);
    }
  };
  try {
    return await deployAndRecord(deps, job, fn, guard);
  } catch (error) {
    if (!(error instanceof DeploySuperseded)) throw error;
    deps.log(`deploy job ${job.kind} ${job.function_id} v${job.version}: stopped, another deploy or a delete took the function over`);
    return settleUnrecorded(deps, fn);
  }
}

/** Runs the job's step with `guard`, records the outcome, and applies settings changed meanwhile (see runDeployJob). */
async function deployAndRecord(deps: DeployJobDeps, job: DeployJob, fn: FunctionItem, guard: DeployGuard): Promise<DeployJobOutcome> {
  let applied = fn;
  let outcome: DeployResult = job.kind === "deploy" ? await latestVersionOutcome(deps, fn, guard) : await configureOutcome(deps, fn, guard);
  for (let round = 1; ; round++) {
    const recorded = await deps.store.functions.setStatus(applied, outcome.status, outcome.status_reason);
    if (!recorded) return settleUnrecorded(deps, fn);
    if (outcome.status !== "active" || sameLimits(recorded, applied) || !deps.runtime.configure || round >= MAX_ROUNDS) {
      return outcome.status;
    }
    deps.log(
      `${fn.function_id} changed while it deployed: applying memory_mb ${recorded.memory_mb}, timeout_seconds ${recorded.timeout_seconds}`,
    );
    applied = recorded;
    outcome = await configureOutcome(deps, recorded, guard);
  }
}

/**
 * The outcome could not be recorded: a newer version became the latest (its own job deploys
 * it), or the function was deleted while the runtime worked, and what the deploy provisioned
 * after the delete's clean-up is removed again (nothing else would).
 */
async function settleUnrecorded(deps: DeployJobDeps, fn: FunctionItem): Promise<DeployJobOutcome> {
  const now = await deps.store.functions.getByName(fn.account_id, fn.name);
  if (now?.function_id === fn.function_id) return "superseded";
  await deps.runtime.remove(fn);
  return "gone";
}

function sameLimits(a: FunctionItem, b: FunctionItem): boolean {
  return a.memory_mb === b.memory_mb && a.timeout_seconds === b.timeout_seconds;
}
