import { createHash } from "node:crypto";

/** Where profiles' states are kept in the run bucket (no lifecycle expiry: a profile lasts until deleted). */
export const PROFILE_PREFIX = "profiles/";

/**
 * The object a run's attempt saves profile `name` into: a new key per save, under the account's
 * folder (a hash of its id) and the profile's name. The profile's record points at the state
 * its last adopted save wrote (profileStateRecords.ts); a save is never written over the state
 * others read.
 */
export function profileStateKey(accountId: string, name: string, runId: string, attempt = 1): string {
  const account = createHash("sha256").update(accountId).digest("hex").slice(0, 32);
  return `${PROFILE_PREFIX}${account}/${name}/${attempt > 1 ? `${runId}-attempt-${attempt}` : runId}.json`;
}
