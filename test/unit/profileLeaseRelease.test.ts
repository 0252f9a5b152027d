/**
 * A run's profile lease goes back after its answer (runProfiles' finish with LeaseReleases), on
 * the real store over dynalite and the local sealed files: the run's end does not wait for the
 * lease's write, and the next writer of the profile on the same service waits for that write
 * and then takes the lease at its first try (no retry), reading the state the first run saved.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { LeaseReleases } from "../../lambdas/profiles/leaseReleases";
import { createLocalProfileBlobs } from "../../lambdas/profiles/localProfileBlobs";
import type { Profiles } from "../../lambdas/profiles/profileBlobs";
import { ProfileStore } from "../../lambdas/profiles/profileStore";
import { runProfiles } from "../../lambdas/profiles/runProfiles";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";

/** A ProfileStore whose lease releases wait for `open()`, and which counts lease takes. */
class GatedStore extends ProfileStore {
  takes = 0;
  #open!: () => void;
  readonly gate = new Promise<void>((resolve) => (this.#open = resolve));
  #entered!: () => void;
  /** Resolves when a release reached the store (held at the gate until `open()`). */
  readonly releasing = new Promise<void>((resolve) => (this.#entered = resolve));
  open(): void {
    this.#open();
  }
  override async takeLease(...args: Parameters<ProfileStore["takeLease"]>): Promise<boolean> {
    this.takes++;
    return super.takeLease(...args);
  }
  override async releaseLease(...args: Parameters<ProfileStore["releaseLease"]>): Promise<void> {
    this.#entered();
    await this.gate;
    return super.releaseLease(...args);
  }
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

let memory: MemoryStore;
let dir: string;
beforeAll(async () => {
  memory = await startMemoryStore();
  dir = await mkdtemp(path.join(tmpdir(), "browserfn-lease-"));
});
afterAll(async () => {
  await memory?.close();
  await rm(dir, { recursive: true, force: true });
});

jest.setTimeout(20_000);

it("answers a run before its lease is given back; the next writer waits for that release, takes the lease at once and reads the saved state", async () => {
  const store = new GatedStore(memory.doc, memory.table);
  const releases = new LeaseReleases();
  const profiles: Profiles = { store, blobs: await createLocalProfileBlobs(dir), releases };
  const context = (run_id: string) => ({ account_id: "acct", function_name: "fn", run_id, allowed: new Set(["shop"]), leaseUntilMs: Date.now() + 60_000, now: () => Date.now() });

  const first = runProfiles(profiles, context("run-1"));
  expect(await first.open("shop", true)).toEqual({ ok: true, state: new Uint8Array() });
  const state = Buffer.from(JSON.stringify({ cookies: [{ name: "sid", value: "v1", domain: "example.com", path: "/", httpOnly: true, secure: true }], origins: [] }));
  first.savePart("shop", state, true, false);
  // The run's end: the state in place and the record written, without waiting for the lease's release.
  // (Before, finish waited for the release, held here at the gate: this never resolved.)
  expect(await first.finish(true)).toBeUndefined();
  await store.releasing;
  expect((await store.get("acct", "shop"))?.last_run_id).toBe("run-1");
  // The lease is still held (its release waits at the gate): the state was in place first.
  expect((await memory.scan()).filter((item) => item.pk === "PROFILE#acct#shop" && item.sk === "LEASE").map((item) => item.owner)).toEqual(["run-1"]);

  // The next writer waits for the release under way (not a retry of a held lease)...
  const takesBefore = store.takes;
  const second = runProfiles(profiles, context("run-2"));
  const opening = second.open("shop", true);
  const early = await Promise.race([opening.then(() => "opened"), nextTurn().then(nextTurn).then(() => "waiting")]);
  expect(early).toBe("waiting");
  expect(store.takes).toBe(takesBefore);
  // ...then takes the lease at its first try and reads what the first run saved.
  store.open();
  const opened = await opening;
  expect(opened.ok && Buffer.from(opened.state).equals(state)).toBe(true);
  expect(store.takes).toBe(takesBefore + 1);
  await second.finish(true);
  await releases.drain();
  // Both leases are back: a third writer takes it at once.
  expect(await store.takeLease("acct", "shop", "run-3", Date.now(), Date.now() + 1000)).toBe(true);
});
