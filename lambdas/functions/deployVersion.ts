import type { Deps } from "../deps";
import type { DeployGuard, DeployResult } from "../runtime/runtime";
import type { FunctionItem, VersionWithCode } from "./types";

type RuntimeDeps = Pick<Deps, "runtime" | "log">;

/**
 * Hands a new version to the runtime and records the outcome on the function
 * (`active`, or `failed` with the reason). Returns the record as it now stands.
 */
export async function deployVersion(deps: Pick<Deps, "store" | "runtime" | "log">, fn: FunctionItem, version: VersionWithCode): Promise<FunctionItem> {
  const outcome = await deployOutcome(deps, fn, version);
  const updated = await deps.store.functions.setStatus(fn, outcome.status, outcome.status_reason);
  // A newer version replaced this one meanwhile: the record belongs to that deploy now.
  return updated ?? (await deps.store.functions.getByName(fn.account_id, fn.name)) ?? fn;
}

/** Deploys the function's latest version again, as stored (see latestVersionOutcome). */
export async function deployLatestVersion(deps: Pick<Deps, "store" | "runtime" | "log">, fn: FunctionItem): Promise<FunctionItem> {
  const outcome = await latestVersionOutcome(deps, fn);
  return (await deps.store.functions.setStatus(fn, outcome.status, outcome.status_reason)) ?? fn;
}

/**
 * Applies a settings-only change of memory or timeout to the runtime (AWS: a new Lambda
 * configuration; local runtimes read them per run and have no `configure`).
 */
export async function configureFunction(deps: Pick<Deps, "store" | "runtime" | "log">, fn: FunctionItem): Promise<FunctionItem> {
  if (!deps.runtime.configure) return fn;
  const outcome = await configureOutcome(deps, fn);
  return (await deps.store.functions.setStatus(fn, outcome.status, outcome.status_reason)) ?? fn;
}

/** Thrown by a deploy job's guard: a newer deploy (or a delete) took the function over; the job stops and records nothing. */
export class DeploySuperseded extends Error {
  override readonly name = "DeploySuperseded";
}

/**
 * What the runtime says of a deploy of `version`; a deploy that throws is `failed` with the
 * reason, but for `guard`'s DeploySuperseded, thrown on.
 */
export async function deployOutcome(deps: RuntimeDeps, fn: FunctionItem, version: VersionWithCode, guard?: DeployGuard): Promise<DeployResult> {
  try {
    return await deps.runtime.deploy(fn, version, guard);
  } catch (error) {
    if (error instanceof DeploySuperseded) throw error;
    deps.log(`deploy of ${fn.function_id} v${version.version} failed: ${(error as Error).stack ?? error}`);
    return { status: "failed", status_reason: `Deploy failed: ${(error as Error).message}` };
  }
}

/**
 * The outcome of deploying the function's latest version as stored; `failed` when the version
 * is gone. A store that cannot be read throws: nothing is known about the deploy then.
 */
export async function latestVersionOutcome(deps: Pick<Deps, "store" | "runtime" | "log">, fn: FunctionItem, guard?: DeployGuard): Promise<DeployResult> {
  const version = await deps.store.versions.get(fn.function_id, fn.latest_version);
  if (!version) return { status: "failed", status_reason: `Version ${fn.latest_version} was lost while it was being deployed` };
  return deployOutcome(deps, fn, version, guard);
}

/** What the runtime says of applying the record's memory and timeout (nothing to do: `active`); as deployOutcome. */
export async function configureOutcome(deps: RuntimeDeps, fn: FunctionItem, guard?: DeployGuard): Promise<DeployResult> {
  if (!deps.runtime.configure) return { status: "active", status_reason: null };
  try {
    return await deps.runtime.configure(fn, guard);
  } catch (error) {
    if (error instanceof DeploySuperseded) throw error;
    deps.log(`configure of ${fn.function_id} failed: ${(error as Error).stack ?? error}`);
    return { status: "failed", status_reason: `Applying memory/timeout failed: ${(error as Error).message}` };
  }
}
