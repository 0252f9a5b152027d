import { deferred } from "./deferred";

interface TakenRun {
  controller: AbortController;
  /** True once its code may run (a worker has it): a cancel then waits for the worker to be gone. */
  running: boolean;
  /** Resolves once the run's invoke has answered (its worker and sandbox gone, when it was stopped). */
  ended: Promise<void>;
}

/**
 * The runs this instance's runtime has taken (from `invoke` until it answers), so that a
 * cancel can stop one: `cancel` aborts the run's signal (its invoke returns `canceled` before
 * it starts, or runWithLimits ends its worker, browser and sandbox) and waits for its answer.
 */
export class RunCancels {
  private readonly runs = new Map<string, TakenRun>();

  /** The runtime takes `runId`: `signal` aborts when it is canceled; `end` once its invoke answered. */
  take(runId: string): { signal: AbortSignal; running: () => void; end: () => void } {
    const controller = new AbortController();
    const ended = deferred<void>();
    const run: TakenRun = { controller, running: false, ended: ended.promise };
    this.runs.set(runId, run);
    return {
      signal: controller.signal,
      running: () => {
        run.running = true;
      },
      end: () => {
        if (this.runs.get(runId) === run) this.runs.delete(runId);
        ended.resolve();
      },
    };
  }

  /**
   * Stops the run if this instance has it. `stopped`: its code was running here, and its invoke
   * has answered now (its sandbox gone); `dropped`: it was still waiting for a worker and never
   * starts (its invoke answers `canceled` when the wait ends); `not_here`: no such run here.
   */
  async cancel(runId: string): Promise<"stopped" | "dropped" | "not_here"> {
    const run = this.runs.get(runId);
    if (!run) return "not_here";
    run.controller.abort();
    if (!run.running) return "dropped";
    await run.ended;
    return "stopped";
  }

  /** How many runs are taken now. */
  get size(): number {
    return this.runs.size;
  }

  /**
   * A graceful stop's wait: resolves once every run taken now has answered, or after `ms`,
   * with the ids of those runs (their records are written by whoever invoked them).
   */
  async drain(ms: number): Promise<string[]> {
    const ids = [...this.runs.keys()];
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    await Promise.race([Promise.all([...this.runs.values()].map((run) => run.ended)), timeout]);
    clearTimeout(timer);
    return ids;
  }
}
