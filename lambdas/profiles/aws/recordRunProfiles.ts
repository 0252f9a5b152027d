import { cookieDomains, stateFromBytes } from "../../../layers/runtime/browserState/browserState";
import { MAX_PROFILE_BYTES } from "../../../layers/runtime/sessionProfile";
import type { Clock } from "../../deps";
import { jsonTextDeeperThan } from "../../runner/jsonDepth";
import type { Store } from "../../store/store";
import { PROFILE_NAME } from "../profileSettings";
import { leaseOwner } from "./grantRunProfiles";
import { type ProfileObjects, profileStateKey } from "./profileObjects";

/** Depth of a saved state's JSON past which it is not kept (as locally: runProfiles.ts). */
const MAX_STATE_DEPTH = 64;
/** How long the recorder holds a lease it renews while it adopts a state. */
const ADOPT_LEASE_MS = 60_000;

export interface RecordProfilesDeps {
  store: Pick<Store, "profiles" | "profileStates">;
  objects: ProfileObjects;
  clock: Clock;
  log: (line: string) => void;
}

/**
 * The names a runner's answer says it could not save, over the cap (untrusted: at most 100
 * valid names; the recorder only acts on names the run leased).
 */
export function reportedTooLargeOf(answer: unknown): string[] {
  const names = typeof answer === "object" && answer !== null ? (answer as { profiles_too_large?: unknown }).profiles_too_large : undefined;
  if (!Array.isArray(names)) return [];
  return names.slice(0, 100).filter((name): name is string => typeof name === "string" && PROFILE_NAME.test(name));
}

/**
 * A run attempt's profiles at its end (the recorder): if it `succeeded`, each profile it leased
 * and saved becomes that save (the object its POST wrote, read back, checked as locally: at
 * most 50 MB, a browser state, nested at most MAX_STATE_DEPTH), its record pointing at the new
 * object and the old one deleted; unless its runner reported a save over the cap, which keeps
 * every previous state and fails the run (the answer). Then every lease goes back and whatever
 * was not adopted is deleted (releaseRunProfiles).
 */
export async function recordRunProfiles(
  deps: RecordProfilesDeps,
  runId: string,
  attempt: number,
  end: { succeeded: boolean; tooLarge: readonly string[] },
): Promise<{ code: "profile_too_large"; message: string } | undefined> {
  const leases = await deps.store.profileStates.leases(runId, attempt);
  if (!leases) return undefined;
  try {
    if (!end.succeeded) return undefined;
    const over = leases.names.find((name) => end.tooLarge.includes(name));
    if (over) return { code: "profile_too_large", message: `The profile '${over}' would hold more than ${MAX_PROFILE_BYTES} bytes (50 MB): its previous state is kept` };
    for (const name of leases.names) await adopt(deps, leases.account_id, leases.function_name, name, runId, attempt);
    return undefined;
  } finally {
    await releaseRunProfiles(deps, runId, attempt);
  }
}

/** Makes the state the run saved into `name` the profile's, if it saved one that passes the checks and still holds the lease. */
async function adopt(deps: RecordProfilesDeps, accountId: string, functionName: string, name: string, runId: string, attempt: number): Promise<void> {
  const key = profileStateKey(accountId, name, runId, attempt);
  const bytes = await deps.objects.read(key, MAX_PROFILE_BYTES);
  if (!bytes) return; // not saved (or over the cap: S3's policy refuses that already)
  const text = Buffer.from(bytes).toString("utf8");
  if (jsonTextDeeperThan(text, MAX_STATE_DEPTH)) return deps.log(`run recorder: the profile '${name}' saved by ${runId} is nested too deeply: not kept`);
  let domains: string[];
  try {
    domains = cookieDomains(stateFromBytes(bytes));
  } catch {
    return deps.log(`run recorder: the profile '${name}' saved by ${runId} is not a browser state: not kept`);
  }
  const now = deps.clock.now().getTime();
  // Still this run's writer (its lease may have lapsed and gone to another run): or nothing changes.
  if (!(await deps.store.profiles.takeLease(accountId, name, leaseOwner(runId, attempt), now, now + ADOPT_LEASE_MS))) {
    return deps.log(`run recorder: the lease of profile '${name}' lapsed before ${runId} ended: its save is not kept`);
  }
  const info = { name, bytes: bytes.byteLength, updated_at: new Date(now).toISOString(), last_run_id: runId, last_function: functionName, domains };
  const replaced = await deps.store.profileStates.adopt(accountId, info, key);
  if (replaced) await deps.objects.remove([replaced]).catch((error: unknown) => deps.log(`run recorder: the replaced state of profile '${name}' was not deleted: ${(error as Error).message}`));
}

/**
 * Ends a run attempt's hold on profiles, whoever ends it (the recorder; the sweeper for a run
 * whose workflow failed or that passed its deadline): each object it could write that is not
 * its profile's current state is deleted, each lease it holds goes back, and its lease list
 * goes. Safe to repeat.
 */
export async function releaseRunProfiles(deps: Pick<RecordProfilesDeps, "store" | "objects">, runId: string, attempt: number): Promise<void> {
  const leases = await deps.store.profileStates.leases(runId, attempt);
  if (!leases) return;
  const current = await deps.store.profileStates.stateKeys(leases.account_id);
  const stale = leases.names.map((name) => profileStateKey(leases.account_id, name, runId, attempt)).filter((key) => ![...current.values()].includes(key));
  await deps.objects.remove(stale);
  await Promise.all(leases.names.map((name) => deps.store.profiles.releaseLease(leases.account_id, name, leaseOwner(runId, attempt))));
  await deps.store.profileStates.removeLeases(runId, attempt);
}
