import { isDeepStrictEqual } from "node:util";
import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import type { Principal } from "../identity/identity";
import { newVersion } from "./createFunction";
import { newDeployId } from "./ids";
import { checkSchedulable } from "../schedule/checkSchedulable";
import { resolveFunction } from "./resolveFunction";
import { type SettingsPatch, applySettings } from "./settings";
import { deployStep, startDeploy } from "./startDeploy";
import type { FunctionItem, VersionWithCode } from "./types";

export interface FunctionPatch extends SettingsPatch {
  code?: string;
}

const ATTEMPTS = 30;
/** No update takes this long between writing its version and its record (API Gateway ends requests after 30 s). */
const ABANDONED_VERSION_MS = 2 * 60_000;

/**
 * Updates a function's settings and, with new code, adds a version (code identical to
 * the latest version adds none, but deploys that version again when its deploy failed or is
 * stuck: see deployStep). Concurrent updates retry on a fresh read; none is lost. With deploy
 * jobs (AWS) it answers `deploying` at once and the job finishes the deploy; the schedule is
 * kept in step here either way (it does not depend on the deploy).
 */
export async function updateFunction(
  deps: Deps,
  principal: Principal,
  ref: string,
  patch: FunctionPatch,
): Promise<FunctionItem> {
  if (patch.code !== undefined) deps.deployLimiter?.take(principal.account_id);
  const compiled = patch.code === undefined ? undefined : await deps.codeAnalysis.compile(patch.code, principal.account_id);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) await backoff(attempt);
    const current = await resolveFunction(deps.store, principal, ref);
    const now = deps.clock.now();
    const next: FunctionItem = {
      ...current,
      ...applySettings(current, patch, principal, deps.config, now),
      updated_at: now.toISOString(),
      revision: current.revision + 1,
    };
    checkSchedulable(
      deps.scheduler,
      next,
      compiled?.variables ?? current.variables ?? [],
      compiled ? compiled.input_schema : current.input_schema,
    );
    const newCode = compiled !== undefined && compiled.code_sha256 !== current.code_sha256;
    const step = deployStep(current, next, { newCode, codeSent: compiled !== undefined, now });
    // Before anything is written: the memory asked for, or carried into a deploy, must be runnable.
    if (step || next.memory_mb !== current.memory_mb) {
      await deps.checkFunctionSettings?.({ memory_mb: next.memory_mb, timeout_seconds: next.timeout_seconds });
    }
    let version: VersionWithCode | undefined;
    let token: string | null = null;
    if (newCode && compiled && patch.code !== undefined) {
      version = newVersion(current.function_id, current.latest_version + 1, compiled, patch.code, now);
      token = await deps.store.versions.create(version);
      if (token === null) {
        // Version N+1 exists but the record is at N: another update is on its way, or one died
        // between the two writes. A version that old has no live writer: remove it, or it
        // would block every later code update.
        await deps.store.versions.removeAbandoned(current.function_id, version.version, new Date(now.getTime() - ABANDONED_VERSION_MS));
        continue;
      }
      Object.assign(next, {
        latest_version: version.version,
        variables: compiled.variables,
        input_schema: compiled.input_schema,
        output_schema: compiled.output_schema,
        warnings: compiled.warnings,
        code_sha256: compiled.code_sha256,
      });
    }
    // An inline configure (local) leaves the status as it is; everything else deploys, as a new
    // deploy (a job of an earlier one stops once it sees it: see runDeployJob).
    if (step === "deploy" || (step === "configure" && deps.deployJobs)) {
      Object.assign(next, { status: "deploying", status_reason: null, deploy_id: newDeployId() });
    }
    // An update that changes nothing keeps updated_at: resending the code while a deploy is
    // under way must not put off the moment it counts as stuck (isDeployStuck).
    if (step === null && !settingsChanged(current, next)) next.updated_at = current.updated_at;
    if (await deps.store.functions.replace(current, next)) {
      const updated = step ? await startDeploy(deps, next, step, version) : next;
      await deps.scheduler.sync(updated);
      return updated;
    }
    if (version && token) await deps.store.versions.deleteVersion(version.function_id, version.version, token);
  }
  throw new ApiError(
    "update_conflict",
    `The function '${ref}' is being changed by other requests; try again`,
    { ref },
    { "retry-after": "1" },
  );
}

/** True when `next` differs from `current` in a setting a request may change (next_run_at follows the schedule). */
function settingsChanged(current: FunctionItem, next: FunctionItem): boolean {
  const keys = ["description", "schedule", "schedule_timezone", "schedule_params", "timeout_seconds", "memory_mb", "shared", "webhooks", "retries", "recording", "proxy", "profiles"] as const;
  return keys.some((key) => !isDeepStrictEqual(current[key], next[key]));
}

/** Random, growing waits so racing writers spread out instead of colliding again. */
function backoff(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(200, 5 * 2 ** Math.min(attempt, 6));
  return new Promise((resolve) => setTimeout(resolve, ms));
}
