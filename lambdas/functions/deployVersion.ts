import type { Deps } from "../deps";
import type { FunctionItem, VersionWithCode } from "./types";

/**
 * Hands a new version to the runtime and records the outcome on the function
 * (`active`, or `failed` with the reason). Returns the record as it now stands.
 */
export async function deployVersion(deps: Pick<Deps, "store" | "runtime" | "log">, fn: FunctionItem, version: VersionWithCode): Promise<FunctionItem> {
  let outcome: { status: FunctionItem["status"]; status_reason: string | null };
  try {
    outcome = await deps.runtime.deploy(fn, version);
  } catch (error) {
    deps.log(`deploy of ${fn.function_id} v${version.version} failed: ${(error as Error).stack ?? error}`);
    outcome = { status: "failed", status_reason: `Deploy failed: ${(error as Error).message}` };
  }
  const updated = await deps.store.functions.setStatus(fn, outcome.status, outcome.status_reason);
  // A newer version replaced this one meanwhile: the record belongs to that deploy now.
  return updated ?? (await deps.store.functions.getByName(fn.account_id, fn.name)) ?? fn;
}

/**
 * Applies a settings-only change of memory or timeout to the runtime (AWS: a new Lambda
 * configuration; local runtimes read them per run and have no `configure`).
 */
export async function configureFunction(deps: Deps, previous: FunctionItem, fn: FunctionItem): Promise<FunctionItem> {
  const changed = previous.memory_mb !== fn.memory_mb || previous.timeout_seconds !== fn.timeout_seconds;
  if (!changed || !deps.runtime.configure) return fn;
  let outcome: { status: FunctionItem["status"]; status_reason: string | null };
  try {
    outcome = await deps.runtime.configure(fn);
  } catch (error) {
    deps.log(`configure of ${fn.function_id} failed: ${(error as Error).stack ?? error}`);
    outcome = { status: "failed", status_reason: `Applying memory/timeout failed: ${(error as Error).message}` };
  }
  return (await deps.store.functions.setStatus(fn, outcome.status, outcome.status_reason)) ?? fn;
}
