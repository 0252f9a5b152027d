import type { LeaseReleases } from "./leaseReleases";
import type { ProfileStore } from "./profileStore";

/** Where profiles' states are kept, encrypted at rest. Adapters: sealed files in the data dir (local); S3 with KMS (AWS, not built yet). */
export interface ProfileBlobs {
  /** The profile's state, or null when it has none. */
  get(accountId: string, name: string): Promise<Uint8Array | null>;
  /** Replaces the state whole (a failed write keeps the previous one). */
  put(accountId: string, name: string, state: Uint8Array): Promise<void>;
  remove(accountId: string, name: string): Promise<void>;
  /**
   * Optional: seals and writes `state` beside the profile's current one without replacing it,
   * so that replacing it later (`commit`) is one quick step; `discard` removes it. Where an
   * adapter has none, the state is written whole by `put` when it is kept.
   */
  stage?(accountId: string, name: string, state: Uint8Array): Promise<StagedState>;
}

/** A state written beside a profile's current one (ProfileBlobs.stage). */
export interface StagedState {
  /** Makes it the profile's state (a failure keeps the previous one). */
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/** What the service keeps of profiles: their records and leases (store), their states (blobs). */
export interface Profiles {
  store: ProfileStore;
  blobs: ProfileBlobs;
  /** Where given, a run's leases are given back after its answer (tracked here); else before it. */
  releases?: LeaseReleases;
}
