import type { LiveFrames, LiveLogs } from "../runtime";
import type { ScreenFrame } from "../../live/liveFrames";
import type { WorkerProcess } from "./workerProcess";

interface FrameWatcher {
  onFrame: (frame: ScreenFrame) => void;
  onEnd: () => void;
}

interface LiveRun {
  worker: WorkerProcess;
  listeners: Set<() => void>;
  /** Who watches the run's live view: its worker screencasts only while there is someone. */
  frameWatchers: Set<FrameWatcher>;
  ended: boolean;
}

/**
 * The runs in progress on this instance's workers, for Runtime.watchLogs: who follows each
 * one's console output. The text stays in its worker (logsSoFar, where it is appended); a
 * listener is told when it grows and when the run ends, and every listener is dropped then.
 */
export class LiveRuns {
  private readonly runs = new Map<string, LiveRun>();

  /**
   * A run starts on `worker`; the returned `notify` goes to its worker's onLog, `onFrame` to its
   * onFrame, `end` is called once its outcome is in.
   */
  start(runId: string, worker: WorkerProcess): { notify: () => void; onFrame: (frame: ScreenFrame) => void; end: () => void } {
    const run: LiveRun = { worker, listeners: new Set(), frameWatchers: new Set(), ended: false };
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
      onFrame: (frame) => {
        for (const watcher of [...run.frameWatchers]) {
          try {
            watcher.onFrame(frame);
          } catch {
            // One watcher's failure is not the run's.
          }
        }
      },
      end: () => {
        if (run.ended) return;
        run.ended = true;
        if (this.runs.get(runId) === run) this.runs.delete(runId);
        notify();
        run.listeners.clear();
        const watchers = [...run.frameWatchers];
        run.frameWatchers.clear();
        for (const watcher of watchers) watcher.onEnd();
      },
    };
  }

  /** Watches the live view of the run `runId` on this instance (undefined when it does not run here now). */
  watchFrames(runId: string, onFrame: (frame: ScreenFrame) => void, onEnd: () => void): LiveFrames | undefined {
    const run = this.runs.get(runId);
    if (!run || run.ended) return undefined;
    const watcher: FrameWatcher = { onFrame, onEnd };
    run.frameWatchers.add(watcher);
    if (run.frameWatchers.size === 1) run.worker.watchLive(runId, true);
    return {
      close: () => {
        if (!run.frameWatchers.delete(watcher)) return;
        if (run.frameWatchers.size === 0 && !run.ended) run.worker.watchLive(runId, false);
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
