import type { FunctionItem } from "../functions/types";
import { FunctionStore } from "./functionStore";

/** How many function records the cache keeps (least recently used go first). */
const CACHE_ENTRIES = 1_000;

/**
 * Function records kept in memory, for a process that is the only writer of its store (the
 * local service: its dynalite data dir cannot be opened by a second one). Every write goes
 * through this object and drops the record it touches, so a read is never staler than the
 * store; an invocation then reads its function without a store round trip.
 *
 * A read that raced a write does not fill the cache: each write bumps `generation`, and a
 * read only keeps what it fetched when no write happened while it was in flight.
 * Missing records are not cached, so unknown names cost no memory. Cached records are frozen:
 * they are shared by every reader.
 */
export class CachedFunctionStore extends FunctionStore {
  private readonly byName = new Map<string, FunctionItem>();
  private readonly nameById = new Map<string, string>();
  private generation = 0;

  override async getByName(accountId: string, name: string): Promise<FunctionItem | undefined> {
    const key = cacheKey(accountId, name);
    const cached = this.byName.get(key);
    if (cached) {
      this.byName.delete(key);
      this.byName.set(key, cached);
      return cached;
    }
    const generation = this.generation;
    const fn = await super.getByName(accountId, name);
    if (fn && generation === this.generation) this.remember(key, Object.freeze(fn));
    return fn;
  }

  override async getById(functionId: string): Promise<FunctionItem | undefined> {
    const key = this.nameById.get(functionId);
    const cached = key === undefined ? undefined : this.byName.get(key);
    if (cached?.function_id === functionId) return this.getByName(cached.account_id, cached.name);
    return super.getById(functionId);
  }

  override async create(fn: FunctionItem): Promise<boolean> {
    return this.writing(fn, () => super.create(fn));
  }

  override async replace(previous: FunctionItem, next: FunctionItem): Promise<boolean> {
    return this.writing(previous, () => super.replace(previous, next));
  }

  override async setStatus(fn: FunctionItem, status: FunctionItem["status"], reason: string | null, onlyIfDeploying = false): Promise<FunctionItem | undefined> {
    return this.writing(fn, () => super.setStatus(fn, status, reason, onlyIfDeploying));
  }

  override async setWebhookSecret(fn: FunctionItem, sealed: string, onlyIfUnset: boolean): Promise<boolean> {
    return this.writing(fn, () => super.setWebhookSecret(fn, sealed, onlyIfUnset));
  }

  override async markHasSecrets(fn: FunctionItem): Promise<boolean> {
    return this.writing(fn, () => super.markHasSecrets(fn));
  }

  override async setNextRun(fn: FunctionItem, nextRunAt: string | null): Promise<void> {
    return this.writing(fn, () => super.setNextRun(fn, nextRunAt));
  }

  override async delete(fn: FunctionItem): Promise<boolean> {
    return this.writing(fn, () => super.delete(fn));
  }

  /** Drops the record before and after the write, whatever its outcome. */
  private async writing<T>(fn: FunctionItem, write: () => Promise<T>): Promise<T> {
    this.forget(fn);
    try {
      return await write();
    } finally {
      this.forget(fn);
    }
  }

  private forget(fn: FunctionItem): void {
    this.generation++;
    this.byName.delete(cacheKey(fn.account_id, fn.name));
  }

  private remember(key: string, fn: FunctionItem): void {
    this.byName.set(key, fn);
    this.nameById.set(fn.function_id, key);
    if (this.byName.size > CACHE_ENTRIES) {
      const oldest = this.byName.keys().next().value;
      if (oldest !== undefined) this.byName.delete(oldest);
    }
    if (this.nameById.size > CACHE_ENTRIES * 2) this.nameById.clear();
  }
}

function cacheKey(accountId: string, name: string): string {
  return `${accountId}\u0000${name}`;
}
