/**
 * Profile leases being given back after their runs answered (runProfiles' `finish`): a run's
 * caller does not wait for the lease's write, and a later open of the same profile in this
 * service waits for that write instead of finding the lease held and retrying. The state a run
 * saved is in place before its answer, so the next writer reads it either way.
 */
export class LeaseReleases {
  readonly #pending = new Map<string, Promise<void>>();

  /** Tracks `release` of the lease of `name` in `accountId` until it settles. */
  track(accountId: string, name: string, release: Promise<void>): void {
    const key = JSON.stringify([accountId, name]);
    const settled = release.catch(() => undefined);
    this.#pending.set(key, settled);
    void settled.then(() => {
      if (this.#pending.get(key) === settled) this.#pending.delete(key);
    });
  }

  /** Resolves once no release of that lease is under way. */
  async settled(accountId: string, name: string): Promise<void> {
    await this.#pending.get(JSON.stringify([accountId, name]));
  }

  /** Resolves once every release under way now has settled (the service's close). */
  async drain(): Promise<void> {
    await Promise.all(this.#pending.values());
  }
}
