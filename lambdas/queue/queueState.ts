import type { RunItem } from "../runs/types";

/**
 * What one process keeps of the run queue (the queue itself is in the store): callers waiting
 * for the end of a queued run (a sync call within its window), which accounts this process is
 * dispatching now (one dispatch loop per account and process; a wake-up during it runs it once
 * more), and the timer of the earliest run that is not ready yet (a retry's backoff).
 */
export class RunQueueState {
  /**
   * False where no dispatcher can start queued runs: admission then waits within the caller's
   * window and answers 429 `concurrency_limit_exceeded` as before the queue.
   */
  readonly enabled: boolean;

  constructor(options: { enabled?: boolean } = {}) {
    this.enabled = options.enabled !== false;
  }

  private readonly waiters = new Map<string, ((run: RunItem) => void)[]>();
  private readonly dispatching = new Map<string, { again: boolean }>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private closed = false;
  /** Background work of the queue in this process (dispatch loops, leases being given back): idle() waits for it. */
  private readonly pending = new Set<Promise<unknown>>();

  /**
   * Counts `work` (started in the background) as this process's queue work until it settles;
   * returns it. A process that is frozen after each event (a Lambda) awaits idle() first.
   */
  track<T>(work: Promise<T>): Promise<T> {
    const tracked = work.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
    return tracked;
  }

  /**
   * Resolves once no queue work of this process is under way: every dispatch loop has ended,
   * and whatever they set off in the same turns (a refused start's lease given back, the
   * dispatch it wakes) too. Never rejects.
   */
  async idle(): Promise<void> {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      if (this.pending.size === 0) return;
      await Promise.allSettled([...this.pending]);
    }
  }

  /** Settles with the run's final record when it ends in this process; never, if it ends elsewhere. */
  completionOf(runId: string): Promise<RunItem> {
    return new Promise((resolve) => {
      this.waiters.set(runId, [...(this.waiters.get(runId) ?? []), resolve]);
    });
  }

  /** Stops waiting for a run (its caller answered): nothing is kept for it. */
  forget(runId: string): void {
    this.waiters.delete(runId);
  }

  /** The run ended here: whoever waits for it gets its final record. */
  ended(run: RunItem): void {
    const waiting = this.waiters.get(run.run_id);
    this.waiters.delete(run.run_id);
    for (const resolve of waiting ?? []) resolve(run);
  }

  /**
   * Runs `loop` for the account unless it is running already in this process, in which case it
   * runs once more after it (a release or an enqueue happened meanwhile).
   */
  exclusive(accountId: string, loop: () => Promise<void>): Promise<void> {
    return this.track(this.loopOnce(accountId, loop));
  }

  private async loopOnce(accountId: string, loop: () => Promise<void>): Promise<void> {
    const running = this.dispatching.get(accountId);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: true };
    this.dispatching.set(accountId, state);
    try {
      while (state.again && !this.closed) {
        state.again = false;
        await loop();
      }
    } finally {
      this.dispatching.delete(accountId);
    }
  }

  /** Calls `wake` at `at` (ISO) for the account, unless an earlier wake-up is set already. */
  wakeAt(accountId: string, at: string, now: Date, wake: () => void): void {
    if (this.closed || this.timers.has(accountId)) return;
    const timer = setTimeout(() => {
      this.timers.delete(accountId);
      wake();
    }, Math.max(0, Date.parse(at) - now.getTime()) + 5);
    timer.unref();
    this.timers.set(accountId, timer);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** No dispatch starts from here on; timers are cleared (the queue stays in the store). */
  close(): void {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
