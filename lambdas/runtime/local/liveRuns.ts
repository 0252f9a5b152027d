import type { LiveLogs } from "../runtime";
import type { WorkerProcess } from "./workerProcess";

interface LiveRun {
  worker: WorkerProcess;
  listeners: Set<() => void>;
  ended: boolean;
}

/**
 * The runs in progress on this instance's workers, for Runtime.watchLogs: who follows each
 * one's console output. The text stays in its worker (logsSoFar, where it is appended); a
 * listener is told when it grows and when the run ends, and every listener is dropped then.
 */
export class LiveRuns {
  private readonly runs = new Map<string, LiveRun>();

  /** A run starts on `worker`; the returned `notify` goes to its worker's onLog, `end` is called once its outcome is in. */
  start(runId: string, worker: WorkerProcess): { notify: () => void; end: () => void } {
    const run: LiveRun = { worker, listeners: new Set(), ended: false };
    this.runs.set(runId, run);
    const notify = () => {
      for (const listener of [...run.listeners]) {
        try {
          listener();
        } catch {
          // One follower's failure is not the run's.
        }
      }
    };
    return {
      notify,
      end: () => {
        if (run.ended) return;
        run.ended = true;
        if (this.runs.get(runId) === run) this.runs.delete(runId);
        notify();
        run.listeners.clear();
      },
    };
  }

  watch(runId: string, onChange: () => void): LiveLogs | undefined {
    const run = this.runs.get(runId);
    if (!run) return undefined;
    run.listeners.add(onChange);
    return {
      // Only this run's text: not the worker's last run's before this one started there, nor its next one's.
      text: () => (run.ended ? "" : run.worker.logsOf(runId)),
      get ended() {
        return run.ended;
      },
      close: () => void run.listeners.delete(onChange),
    };
  }

  /** How many listeners are attached now, over every run (a stream that ended holds none). */
  get watchers(): number {
    let count = 0;
    for (const run of this.runs.values()) count += run.listeners.size;
    return count;
  }
}
