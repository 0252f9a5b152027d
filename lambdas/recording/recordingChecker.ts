import path from "node:path";
import { Worker } from "node:worker_threads";
import { WORKER_BOOTSTRAP } from "../code/analysis/analysisWorkerScript";

/** A recording to check: its file (rewritten as checked) and the secret values to redact. */
export interface RecordingCheckJob {
  id: number;
  file: string;
  secrets: readonly string[];
}

export type RecordingCheckReply = { id: number; keep: true; bytes: number } | { id: number; keep: false; why: string };

/** The heap a checking thread may use: a 20 MB recording parsed, rebuilt and written again. */
const CHECK_HEAP_MB = 512;

/**
 * Checks recordings on a worker thread of its own (recordingCheckWorker.ts), started for a
 * recording and ended once no check waits. A thread that dies (out of its heap) fails the checks
 * it had, and the next check starts a new one.
 */
export class RecordingChecker {
  private worker: Worker | undefined;
  private next = 1;
  private readonly waiting = new Map<number, (reply: RecordingCheckReply) => void>();

  check(file: string, secrets: readonly string[]): Promise<RecordingCheckReply> {
    const id = this.next++;
    const reply = new Promise<RecordingCheckReply>((resolve) => this.waiting.set(id, resolve));
    this.thread().postMessage({ id, file, secrets: [...secrets] } satisfies RecordingCheckJob);
    return reply;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_BOOTSTRAP, {
      eval: true,
      workerData: { entry: path.join(__dirname, "recordingCheckWorker.ts"), register: require.resolve("tsx/cjs") },
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: CHECK_HEAP_MB },
    });
    worker.unref();
    worker.on("message", (reply: RecordingCheckReply) => {
      const resolve = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      resolve?.(reply);
      // Nothing left to check: the thread goes (a service keeps no idle thread; the next recording starts one).
      if (this.waiting.size === 0 && this.worker === worker) {
        this.worker = undefined;
        void worker.terminate();
      }
    });
    const gone = (why: string) => {
      // A thread ended once idle is no longer the current one: the checks waiting are a newer thread's.
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const [id, resolve] of this.waiting) resolve({ id, keep: false, why: `it could not be checked: ${why}` });
      this.waiting.clear();
    };
    worker.on("error", (error) => gone(error.message));
    worker.on("exit", (code) => gone(`the checking thread exited (code ${code})`));
    this.worker = worker;
    return worker;
  }
}
