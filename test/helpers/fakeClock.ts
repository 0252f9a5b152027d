import type { Clock } from "../../lambdas/deps";
import type { Timers } from "../../lambdas/schedule/localScheduler";

/** A clock and timers that move only when the test says so. */
export class FakeClock implements Clock, Timers {
  private time: number;
  private nextId = 1;
  private readonly pending = new Map<number, { at: number; callback: () => void }>();

  constructor(start: string) {
    this.time = Date.parse(start);
  }

  now(): Date {
    return new Date(this.time);
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.pending.set(id, { at: this.time + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** Moves time forward to `iso`, running every timer due on the way, in order. */
  async advanceTo(iso: string): Promise<void> {
    const target = Date.parse(iso);
    for (;;) {
      const due = [...this.pending.entries()].filter(([, t]) => t.at <= target).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.time = due[1].at;
      due[1].callback();
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.time = target;
  }
}
