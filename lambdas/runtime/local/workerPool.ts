import { ApiError } from "../../http/errors";
import type { WorkerProcess } from "./workerProcess";

export interface PoolLimits {
  /** Workers (busy or starting) one function may have. */
  perFunction: number;
  /** Worker processes of all functions, idle ones included. */
  total: number;
  /** An idle worker is stopped after this long. */
  idleMs: number;
}

/** A reserved slot: the caller gets a worker from it once, and gives it back once. */
export interface Lease {
  /** True when the slot comes with a warm worker (no start-up to wait for). */
  readonly warm: boolean;
  worker(): Promise<WorkerProcess>;
  /**
   * The run has its answer; the worker resets and is released soon. Until then a new run of
   * the same version waits for it rather than starting another worker (a cold start costs
   * far more than a reset).
   */
  answered(): void;
  /** Returns the worker for reuse (`reusable`) or stops it; frees the slot. */
  release(reusable: boolean): Promise<void>;
}

/**
 * Another account's idle worker used within this long is its own: a busy account past its fair
 * share of the workers does not stop it to make room (that account's next run would start cold).
 */
const KEPT_IDLE_MS = 10_000;

interface Waiter {
  accountId: string;
  functionId: string;
  key: string;
  grant: (lease: Lease) => void;
}

/**
 * Warm workers per function version, scaling from zero up to the caps: an invocation
 * takes an idle worker of its version, or starts one while there is room (stopping
 * another function's idle worker if that makes room), or waits its turn.
 */
export class WorkerPool {
  private readonly idle = new Map<string, WorkerProcess[]>();
  private readonly busy = new Set<WorkerProcess>(); // started and leased
  private readonly starting = new Set<Promise<unknown>>(); // workers being started for a lease
  private readonly removed = new Set<string>(); // deleted functions: their workers are not kept
  private readonly active = new Map<string, number>(); // busy or starting, by function id
  private readonly activeByAccount = new Map<string, number>(); // busy or starting, by account
  private readonly finishing = new Map<string, number>(); // answered but not yet released, by version key
  private readonly accountOf = new Map<string, string>(); // whose each version key is (for the idle ones)
  private processes = 0; // every worker process, idle ones included, and those starting
  private readonly waiters: Waiter[] = [];
  private readonly reaper: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly limits: PoolLimits,
    private readonly startWorker: (functionId: string, version: number) => Promise<WorkerProcess>,
  ) {
    this.reaper = setInterval(() => this.reapIdle(), Math.max(1000, Math.min(limits.idleMs / 2, 10_000)));
    this.reaper.unref();
  }

  /**
   * Reserves a worker slot for a version, waiting up to `waitMs` (default: as long as it takes;
   * 429 past a finite one). `onWait` is called once when it has to wait. Freed slots go to the
   * waiting account that has the fewest workers now (then the longest waiting): one account's
   * backlog never holds every worker while another account waits.
   */
  acquire(functionId: string, version: number, waitMs = Number.POSITIVE_INFINITY, accountId = "", onWait?: () => void): Promise<Lease> {
    const key = `${functionId}#${version}`;
    const lease = this.tryGrant(accountId, functionId, key);
    if (lease) return Promise.resolve(lease);
    onWait?.();
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: Waiter = { accountId, functionId, key, grant: (granted) => {
        clearTimeout(timer);
        resolve(granted);
      } };
      if (Number.isFinite(waitMs)) {
        timer = setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          reject(
            new ApiError(
              "concurrency_limit_exceeded",
              `Every worker of this machine is busy (at most ${this.limits.perFunction} per function, ${this.limits.total} in all); try again shortly`,
              { per_function: this.limits.perFunction, total: this.limits.total, waiting_for: "machine_busy" },
              { "retry-after": "1" },
            ),
          );
        }, waitMs);
      }
      this.waiters.push(waiter);
    });
  }

  /** Runs waiting for a worker now. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Stops the idle workers of a function (busy ones stop when they are released). */
  async removeFunction(functionId: string): Promise<void> {
    this.removed.add(functionId);
    const stopping: Promise<void>[] = [];
    for (const [key, workers] of this.idle) {
      if (!key.startsWith(`${functionId}#`)) continue;
      this.forgetIdle(key);
      stopping.push(...workers.map((worker) => this.stop(worker, "function deleted")));
    }
    await Promise.all(stopping);
  }

  /** Counts of worker processes (for tests and metrics). */
  get size(): { processes: number; idle: number } {
    return { processes: this.processes, idle: [...this.idle.values()].reduce((n, list) => n + list.length, 0) };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.reaper);
    const all = [...this.idle.values()].flat();
    this.idle.clear();
    // Busy workers too: their runs end as crashed, and no browser outlives the service.
    for (const worker of this.busy) await worker.kill("service stopping");
    await Promise.all(all.map((worker) => this.stop(worker, "service stopping")));
    // And workers still starting: each is stopped as soon as it is up (see lease).
    await Promise.allSettled([...this.starting]);
  }

  private tryGrant(accountId: string, functionId: string, key: string): Lease | undefined {
    if (this.closed) throw new ApiError("service_unavailable", "The service is stopping");
    if ((this.active.get(functionId) ?? 0) >= this.limits.perFunction) return undefined;
    const idle = this.idle.get(key);
    let worker: WorkerProcess | undefined;
    while (!worker && idle && idle.length > 0) {
      const candidate = idle.pop();
      if (candidate?.alive) worker = candidate;
      else if (candidate) void this.stop(candidate, "dead while idle");
    }
    if (!worker) {
      if ((this.finishing.get(key) ?? 0) > 0) return undefined; // one of its workers is idle in a moment
      if (this.processes >= this.limits.total && !this.evictOneIdle(accountId)) return undefined;
      this.processes++;
    }
    this.active.set(functionId, (this.active.get(functionId) ?? 0) + 1);
    this.activeByAccount.set(accountId, (this.activeByAccount.get(accountId) ?? 0) + 1);
    return this.lease(accountId, functionId, key, worker);
  }

  private lease(accountId: string, functionId: string, key: string, warm: WorkerProcess | undefined): Lease {
    let worker: Promise<WorkerProcess> | undefined = warm ? Promise.resolve(warm) : undefined;
    if (warm) this.busy.add(warm);
    let released = false;
    let answered = false;
    const [fnId, version] = [functionId, Number(key.split("#")[1])];
    return {
      warm: warm !== undefined,
      worker: () => {
        if (!worker) {
          worker = this.startWorker(fnId, version).then(async (started) => {
            if (this.closed) {
              // The service stopped while this one was starting: it must not outlive it.
              await started.kill("service stopping");
              throw new ApiError("service_unavailable", "The service is stopping");
            }
            this.busy.add(started);
            return started;
          });
          const starting = worker;
          this.starting.add(starting);
          void starting.then(
            () => this.starting.delete(starting),
            () => this.starting.delete(starting),
          );
        }
        return worker;
      },
      answered: () => {
        if (answered || released) return;
        answered = true;
        this.finishing.set(key, (this.finishing.get(key) ?? 0) + 1);
      },
      release: async (reusable) => {
        if (released) return;
        released = true;
        if (answered) {
          const left = (this.finishing.get(key) ?? 1) - 1;
          if (left > 0) this.finishing.set(key, left);
          else this.finishing.delete(key);
        }
        this.active.set(functionId, (this.active.get(functionId) ?? 1) - 1);
        const accountLeft = (this.activeByAccount.get(accountId) ?? 1) - 1;
        if (accountLeft > 0) this.activeByAccount.set(accountId, accountLeft);
        else this.activeByAccount.delete(accountId);
        const started = worker ? await worker.catch(() => undefined) : undefined;
        if (started) this.busy.delete(started);
        const keep = reusable && started?.alive && !this.closed && !this.removed.has(functionId);
        if (!started) this.processes--;
        else if (keep) {
          this.idle.set(key, [...(this.idle.get(key) ?? []), started]);
          this.accountOf.set(key, accountId);
        }
        else await this.stop(started, "released as not reusable");
        this.pump();
      },
    };
  }

  private async stop(worker: WorkerProcess | undefined, reason: string): Promise<void> {
    if (!worker) return;
    this.processes--;
    await worker.kill(reason);
    this.pump();
  }

  /**
   * Stops one idle worker to make room for `accountId`: its own, one idle for a while, or, while
   * the account holds fewer workers than its fair share (the total over the accounts using
   * workers now), another account's. Past its share an account waits for a worker to be freed.
   */
  private evictOneIdle(accountId: string): boolean {
    const now = Date.now();
    const underShare = (this.activeByAccount.get(accountId) ?? 0) < this.fairShare(accountId, now);
    for (const [key, workers] of this.idle) {
      const owner = this.accountOf.get(key) ?? "";
      const index = workers.findIndex((worker) => owner === accountId || underShare || now - worker.lastUsed > KEPT_IDLE_MS);
      if (index === -1) continue;
      const [victim] = workers.splice(index, 1);
      if (workers.length === 0) this.forgetIdle(key);
      if (victim) {
        // stop() counts the process down before it awaits anything, so the room is free now.
        void this.stop(victim, "evicted to make room");
        return true;
      }
    }
    return false;
  }

  /** A version with no idle worker left: whose it was is told again when one is kept. */
  private forgetIdle(key: string): void {
    this.idle.delete(key);
    this.accountOf.delete(key);
  }

  /** Workers one account may hold while others use theirs: the total over the accounts busy, waiting, or with a worker idle since lately (`accountId` among them). */
  private fairShare(accountId: string, now: number): number {
    const accounts = new Set([accountId, ...this.activeByAccount.keys(), ...this.waiters.map((waiter) => waiter.accountId)]);
    for (const [key, workers] of this.idle) {
      const owner = this.accountOf.get(key);
      if (owner !== undefined && workers.some((worker) => now - worker.lastUsed <= KEPT_IDLE_MS)) accounts.add(owner);
    }
    return Math.max(1, Math.floor(this.limits.total / accounts.size));
  }

  /** Grants freed slots: each time to the waiter whose account has the fewest workers now, the longest waiting first among equals. */
  private pump(): void {
    for (;;) {
      if (this.closed) return;
      const order = this.waiters
        .map((waiter, index) => ({ waiter, index, load: this.activeByAccount.get(waiter.accountId) ?? 0 }))
        .sort((a, b) => a.load - b.load || a.index - b.index);
      let granted = false;
      for (const { waiter } of order) {
        const lease = this.tryGrant(waiter.accountId, waiter.functionId, waiter.key);
        if (!lease) continue;
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.grant(lease);
        granted = true;
        break;
      }
      if (!granted) return;
    }
  }

  private reapIdle(): void {
    const cutoff = Date.now() - this.limits.idleMs;
    for (const [key, workers] of this.idle) {
      const keep = workers.filter((worker) => worker.lastUsed > cutoff && worker.alive);
      for (const worker of workers) if (!keep.includes(worker)) void this.stop(worker, "idle");
      if (keep.length > 0) this.idle.set(key, keep);
      else this.forgetIdle(key);
    }
  }
}
