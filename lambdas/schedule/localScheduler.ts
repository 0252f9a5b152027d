import type { Clock } from "../deps";
import { nextRunAt } from "../functions/schedule";
import type { FunctionItem } from "../functions/types";
import type { Store } from "../store/store";
import { lastFiring, nextFiring } from "./cronTimes";
import type { Scheduler } from "./scheduler";

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Timers are re-armed at least this often, so clock jumps and long delays stay exact. */
const MAX_DELAY_MS = 60 * 60 * 1000;

export interface LocalSchedulerOptions {
  store: Store;
  clock: Clock;
  timers?: Timers;
  /** Fires one due time of a function (runScheduled); the claim inside makes it run once. */
  fire: (functionId: string, scheduledFor: string) => Promise<unknown>;
  log: (line: string) => void;
}

/**
 * The in-process scheduler: one timer per scheduled function, armed for its next due time.
 * On start it runs at most one firing missed while the service was down, then resumes.
 */
export class LocalScheduler implements Scheduler {
  private readonly timers: Timers;
  private readonly armed = new Map<string, unknown>();
  private readonly firing = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly options: LocalSchedulerOptions) {
    this.timers = options.timers ?? systemTimers;
  }

  /** Arms every scheduled function, after firing the latest missed due time of each (if any). */
  async start(): Promise<void> {
    const functions = await this.options.store.functions.listEverywhere();
    for (const fn of functions.filter((f) => typeof f.schedule === "string")) {
      await this.catchUp(fn);
      this.arm(fn);
    }
  }

  check(schedule: string, timezone: string): void {
    nextRunAt(schedule, timezone, this.options.clock.now());
  }

  async sync(fn: FunctionItem): Promise<void> {
    this.disarm(fn.function_id);
    if (fn.schedule) this.arm(fn);
  }

  async remove(fn: FunctionItem): Promise<void> {
    this.disarm(fn.function_id);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const id of [...this.armed.keys()]) this.disarm(id);
    await Promise.allSettled([...this.firing]);
  }

  /** Functions with an armed timer (for tests and diagnostics). */
  get scheduled(): string[] {
    return [...this.armed.keys()];
  }

  private async catchUp(fn: FunctionItem): Promise<void> {
    if (!fn.schedule) return;
    const now = this.options.clock.now();
    const missed = lastFiring(fn.schedule, fn.schedule_timezone, now);
    if (!missed) return;
    const [latest] = await this.options.store.schedules.latest(fn.function_id, 1);
    const since = Math.max(Date.parse(fn.updated_at), latest ? Date.parse(latest.scheduled_for) : 0);
    if (missed.getTime() > since) this.fire(fn.function_id, missed.toISOString());
  }

  private arm(fn: FunctionItem, after?: Date): void {
    if (this.closed || !fn.schedule) return;
    const now = this.options.clock.now();
    const due = nextFiring(fn.schedule, fn.schedule_timezone, after && after > now ? after : now);
    if (!due) return;
    const delay = due.getTime() - now.getTime();
    const handle = this.timers.setTimeout(() => {
      this.armed.delete(fn.function_id);
      if (delay > MAX_DELAY_MS) return this.arm(fn);
      this.fire(fn.function_id, due.toISOString());
      this.arm(fn, due);
    }, Math.min(delay, MAX_DELAY_MS));
    this.armed.set(fn.function_id, handle);
  }

  private disarm(functionId: string): void {
    const handle = this.armed.get(functionId);
    if (handle !== undefined) this.timers.clearTimeout(handle);
    this.armed.delete(functionId);
  }

  private fire(functionId: string, scheduledFor: string): void {
    const firing = this.options
      .fire(functionId, scheduledFor)
      .catch((error: unknown) => this.options.log(`schedule ${functionId} @ ${scheduledFor}: ${(error as Error).stack ?? error}`));
    this.firing.add(firing);
    void firing.finally(() => this.firing.delete(firing));
  }
}
