import { compileCode } from "../code/compileCode";
import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import type { Principal } from "../identity/identity";
import { newVersion } from "./createFunction";
import { checkSchedulable } from "../schedule/checkSchedulable";
import { configureFunction, deployVersion } from "./deployVersion";
import { resolveFunction } from "./resolveFunction";
import { type SettingsPatch, applySettings } from "./settings";
import type { FunctionItem, VersionWithCode } from "./types";

export interface FunctionPatch extends SettingsPatch {
  code?: string;
}

const ATTEMPTS = 30;
/** No update takes this long between writing its version and its record (API Gateway ends requests after 30 s). */
const ABANDONED_VERSION_MS = 2 * 60_000;

/**
 * Updates a function's settings and, with new code, adds a version (code identical to
 * the latest version adds none). Concurrent updates retry on a fresh read; none is lost.
 */
export async function updateFunction(
  deps: Deps,
  principal: Principal,
  ref: string,
  patch: FunctionPatch,
): Promise<FunctionItem> {
  const compiled = patch.code === undefined ? undefined : compileCode(patch.code);
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
    checkSchedulable(deps.scheduler, next, compiled?.variables ?? current.variables ?? []);
    let version: VersionWithCode | undefined;
    let token: string | null = null;
    if (compiled && patch.code !== undefined && compiled.code_sha256 !== current.code_sha256) {
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
        code_sha256: compiled.code_sha256,
        status: "deploying",
        status_reason: null,
      });
    }
    if (await deps.store.functions.replace(current, next)) {
      const updated = version ? await deployVersion(deps, next, version) : await configureFunction(deps, current, next);
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

/** Random, growing waits so racing writers spread out instead of colliding again. */
function backoff(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(200, 5 * 2 ** Math.min(attempt, 6));
  return new Promise((resolve) => setTimeout(resolve, ms));
}
