import { cookieDomains, stateFromBytes } from "../../layers/runtime/browserState/browserState";
import { MAX_PROFILE_BYTES } from "../../layers/runtime/sessionProfile";
import { jsonTextDeeperThan } from "../runner/jsonDepth";
import type { Profiles, StagedState } from "./profileBlobs";

/** How long a second writer waits for a profile's lease before ProfileLockedError. */
export const LOCK_WAIT_MS = 30_000;
/** Between two tries of a held lease. */
const LOCK_RETRY_MS = 250;
/** Depth of a saved state's JSON past which it is refused (its IndexedDB values included). */
const MAX_STATE_DEPTH = 64;

export interface RunProfileContext {
  account_id: string;
  function_name: string;
  run_id: string;
  /** The names its runs may open: its version's literal names and its `profiles` setting. */
  allowed: ReadonlySet<string>;
  /** When a lease taken by this run lapses by itself, if the run never gives it back (a crash). */
  leaseUntilMs: number;
  now: () => number;
}

/** A save ready to be kept: its bytes, its cookie domains, its staged state (where the blobs stage). */
interface Prepared {
  bytes: Buffer;
  domains: string[];
  staged?: StagedState;
}

export type OpenAnswer = { ok: true; state: Uint8Array } | { ok: false; code: "profile_not_allowed" | "profile_locked" | "profile_unavailable"; message: string };

/** The service's side of one run's profiles: opens (checks, leases, reads), gathers saves, and keeps them only if the run succeeds. */
export interface RunProfiles {
  open(name: string, persist: boolean): Promise<OpenAnswer>;
  /** A part of a state a session of the run saves; `tooLarge`: the worker found it over the cap. */
  savePart(name: string, data: Buffer, last: boolean, tooLarge: boolean): void;
  /**
   * The run's end: with `succeeded`, each state saved is kept (unless one is over the cap: then
   * none changes, and the answer is the run's failure); then every lease the run took is given
   * back (after the answer where `Profiles.releases` tracks it).
   */
  finish(succeeded: boolean): Promise<{ code: "profile_too_large"; message: string } | undefined>;
}

/** A run's profiles, against the service's store and blobs. */
export function runProfiles(profiles: Profiles, run: RunProfileContext): RunProfiles {
  const leased = new Set<string>();
  const saves = new Map<string, { parts: Buffer[]; bytes: number; complete: boolean; tooLarge: boolean; ready?: Promise<Prepared | undefined> }>();
  /** A complete save, checked (depth, a state) and, where the blobs can, staged; undefined: nothing to keep. */
  const prepare = async (name: string, bytes: Buffer): Promise<Prepared | undefined> => {
    if (jsonTextDeeperThan(bytes.toString("utf8"), MAX_STATE_DEPTH)) return undefined;
    let domains: string[];
    try {
      domains = cookieDomains(stateFromBytes(bytes));
    } catch {
      return undefined; // not a state: nothing kept
    }
    // A stage that fails leaves the whole write to the run's end (which says why if it fails too).
    const staged = profiles.blobs.stage ? await profiles.blobs.stage(run.account_id, name, bytes).catch(() => undefined) : undefined;
    return { bytes, domains, ...(staged ? { staged } : {}) };
  };
  const discard = async (ready: Promise<Prepared | undefined>) => (await ready)?.staged?.discard().catch(() => undefined);
  const notAllowed = (name: string) =>
    `This function may not open the profile '${name}': its code does not pass that name literally to Session.start({ profile }), and its \`profiles\` setting does not list it (set it: PATCH /functions/{ref} with {"profiles": ["${name}"]})`;
  return {
    async open(name, persist) {
      if (!run.allowed.has(name)) return { ok: false, code: "profile_not_allowed", message: notAllowed(name) };
      if (persist && !leased.has(name)) {
        // A run that answered may still be giving this lease back: waited for, not retried.
        await profiles.releases?.settled(run.account_id, name);
        const giveUpAt = run.now() + LOCK_WAIT_MS;
        for (;;) {
          if (await profiles.store.takeLease(run.account_id, name, run.run_id, run.now(), run.leaseUntilMs)) break;
          if (run.now() >= giveUpAt) {
            return { ok: false, code: "profile_locked", message: `The profile '${name}' is in use by another writer (a persist: true session); waited ${LOCK_WAIT_MS / 1000} s` };
          }
          await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
        }
        leased.add(name);
      }
      try {
        return { ok: true, state: (await profiles.blobs.get(run.account_id, name)) ?? new Uint8Array() };
      } catch {
        return { ok: false, code: "profile_unavailable", message: `The profile '${name}' could not be read` };
      }
    },
    savePart(name, data, last, tooLarge) {
      // Only a writer's profile is saved: what a session that did not lease it sends is dropped.
      if (!leased.has(name)) return;
      let save = saves.get(name);
      if (!save || save.complete) {
        // A later session's save of the same profile replaces an earlier one's.
        if (save?.ready) void discard(save.ready);
        save = { parts: [], bytes: 0, complete: false, tooLarge: false };
        saves.set(name, save);
      }
      save.bytes += data.byteLength;
      if (tooLarge || save.bytes > MAX_PROFILE_BYTES) {
        save.tooLarge = true;
        save.parts = [];
      } else {
        save.parts.push(data);
      }
      if (last) {
        save.complete = true;
        // Checked, sealed and written beside the profile's state now, while the run ends: the
        // run's end then only puts it in place (it is kept only if the run succeeds).
        if (!save.tooLarge) save.ready = prepare(name, Buffer.concat(save.parts));
        save.parts = [];
      }
    },
    async finish(succeeded) {
      const released = new Set<string>();
      // Once its state is in place, a lease goes back after the run's answer where the service
      // tracks releases (the next open of it waits for that), else before.
      const release = async (name: string) => {
        released.add(name);
        const giving = profiles.store.releaseLease(run.account_id, name, run.run_id).catch(() => undefined);
        if (profiles.releases) profiles.releases.track(run.account_id, name, giving);
        else await giving;
      };
      try {
        const over = [...saves].find(([, save]) => save.tooLarge);
        if (!succeeded || over) {
          await Promise.all([...saves.values()].map((save) => (save.ready ? discard(save.ready) : undefined)));
          if (!succeeded) return undefined;
          return { code: "profile_too_large", message: `The profile '${(over as [string, unknown])[0]}' would hold more than ${MAX_PROFILE_BYTES} bytes (50 MB): its previous state is kept` };
        }
        for (const [name, save] of saves) {
          const ready = save.ready && (await save.ready);
          if (!ready) continue;
          // The new state is in place (durable) before the lease goes back and before the run answers.
          if (ready.staged) await ready.staged.commit();
          else await profiles.blobs.put(run.account_id, name, ready.bytes);
          const info = { name, bytes: ready.bytes.byteLength, updated_at: new Date(run.now()).toISOString(), last_run_id: run.run_id, last_function: run.function_name, domains: ready.domains };
          await Promise.all([profiles.store.put(run.account_id, info), release(name)]);
        }
        return undefined;
      } finally {
        await Promise.all([...leased].filter((name) => !released.has(name)).map(release));
        leased.clear();
      }
    },
  };
}
