import type { FunctionItem } from "../../functions/types";
import type { RunProfileGrant } from "../../runner/lambdaPackage";
import type { Store } from "../../store/store";
import { profilesOf } from "../profileSettings";
import { type ProfileObjects, profileStateKey } from "./profileObjects";

/**
 * The most profiles one run on AWS gets URLs for (its code's literal names first, then its
 * `profiles` setting's, each in name order): the URLs ride in the run's event, which the run
 * workflow carries (256 KB with the parameters). Names past it cannot be opened on AWS.
 */
export const MAX_PROFILES_PER_AWS_RUN = 16;

export interface GrantDeps {
  store: Pick<Store, "versions" | "profiles" | "profileStates">;
  objects: ProfileObjects;
}

/** One run attempt that is about to start. */
export interface GrantedRun {
  runId: string;
  attempt: number;
  /** When its writer's leases lapse by themselves (a run whose end nobody records): after its deadline. */
  leaseUntilMs: number;
  nowMs: number;
  /** How long its URLs stay valid. */
  expiresInSeconds: number;
}

/** Who holds a lease taken for a run's attempt (each attempt leases and releases its own). */
export const leaseOwner = (runId: string, attempt: number) => `${runId}#${attempt}`;

/**
 * What one run of `fn` at `version` may do with profiles on AWS, decided by the trusted side
 * before the run starts (its runner cannot ask mid-run): the names its code gives literally
 * (found at deploy) and those of its `profiles` setting get a GET URL of their current state;
 * those it may write (a literal name opened with `persist`, and every name of the setting, since
 * a computed name's `persist` cannot be known) have their writer's lease taken now, one try
 * each: held, the run gets a POST form for a new state object; held by another run, the name is
 * `locked`. The names leased are written down first (the run's lease list), so whoever ends
 * the run gives each back. Undefined when the run may open no profile.
 */
export async function grantRunProfiles(deps: GrantDeps, fn: FunctionItem, version: number, run: GrantedRun): Promise<RunProfileGrant[] | undefined> {
  const meta = await deps.store.versions.meta(fn.function_id, version);
  const setting = profilesOf(fn);
  const literal = [...(meta?.profile_names ?? [])].sort();
  const names = [...new Set([...literal, ...[...setting].sort()])].slice(0, MAX_PROFILES_PER_AWS_RUN);
  if (names.length === 0) return undefined;
  // A version stored before `profile_writes` was found at deploy: each of its literal names may be written.
  const writes = new Set([...(meta?.profile_writes ?? meta?.profile_names ?? []), ...setting]);
  const writable = names.filter((name) => writes.has(name));
  if (writable.length > 0) {
    await deps.store.profileStates.putLeases(run.runId, run.attempt, { account_id: fn.account_id, function_name: fn.name, names: writable }, run.nowMs);
  }
  const owner = leaseOwner(run.runId, run.attempt);
  const leased = new Set<string>();
  for (const name of writable) {
    if (await deps.store.profiles.takeLease(fn.account_id, name, owner, run.nowMs, run.leaseUntilMs)) leased.add(name);
  }
  const states = await deps.store.profileStates.stateKeys(fn.account_id);
  return Promise.all(
    names.map(async (name): Promise<RunProfileGrant> => {
      const current = states.get(name);
      return {
        name,
        get: current ? await deps.objects.signGet(current, run.expiresInSeconds) : null,
        put: leased.has(name) ? await deps.objects.signPut(profileStateKey(fn.account_id, name, run.runId, run.attempt), run.expiresInSeconds) : null,
        locked: writes.has(name) && !leased.has(name),
      };
    }),
  );
}
