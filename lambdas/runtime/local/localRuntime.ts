import { ApiError } from "../../http/errors";
import type { Store } from "../../store/store";
import type { Runtime } from "../runtime";
import { LiveRuns } from "./liveRuns";
import type { LocalArtifacts } from "./localArtifacts";
import { runWithLimits } from "./runWithLimits";
import type { Sandbox } from "./sandbox/sandbox";
import { type RuntimeFiles, startSandboxedHost } from "./sandbox/sandboxedHost";
import { WORKER_UIDS } from "./sandbox/workerUids";
import { type PoolLimits, WorkerPool } from "./workerPool";
import { type WorkerOptions, WorkerProcess } from "./workerProcess";

export interface LocalRuntimeOptions {
  store: Store;
  /** The bundles, Chromium's files, and where sandboxes are made (outside the data dir). */
  files: RuntimeFiles;
  sandbox: Sandbox;
  limits: PoolLimits;
  /** Where runs' artifacts are kept; absent: runs keep none. */
  artifacts?: LocalArtifacts;
}

/** Starts worker sandboxes, each under a uid of its own when the service runs as root. */
export function hostStarter(sandbox: Sandbox, files: RuntimeFiles): WorkerOptions["startHost"] {
  return async () => {
    const uid = sandbox.uidPerWorker ? WORKER_UIDS.acquire() : undefined;
    const release = () => {
      if (uid !== undefined) WORKER_UIDS.release(uid);
    };
    try {
      const host = await startSandboxedHost(sandbox, files, uid);
      return { host, release };
    } catch (error) {
      release();
      throw error;
    }
  };
}

/**
 * The local runtime adapter: warm worker processes per function version (see WorkerPool),
 * each in a sandbox of its own with its own browser. Workers load a version's compiled code
 * from the store when they start, so a deploy has nothing to provision.
 */
export function createLocalRuntime(options: LocalRuntimeOptions): Runtime & { pool: WorkerPool; live: LiveRuns } {
  const startHost = hostStarter(options.sandbox, options.files);
  const startWorker = async (functionId: string, version: number) => {
    const code = await options.store.versions.get(functionId, version);
    if (!code) throw new ApiError("version_not_found", `Version ${version} of ${functionId} is gone`);
    return WorkerProcess.start({
      startHost,
      init: { code: code.js, parameter_style: code.parameter_style ?? "positional", variables: code.variables },
    });
  };
  const pool = new WorkerPool(options.limits, startWorker);
  const live = new LiveRuns();
  return {
    pool,
    live,
    async deploy() {
      return { status: "active", status_reason: null };
    },
    async invoke(request, hooks) {
      // No 429 for a busy machine: the admitted run waits for a worker (it stays `queued`, `machine_busy`).
      const lease = await pool.acquire(request.fn.function_id, request.version, Number.POSITIVE_INFINITY, request.fn.account_id, () => {
        void hooks.onWaiting?.("machine_busy");
      });
      let finished: Promise<boolean> = Promise.resolve(false);
      try {
        if (!lease.warm) await hooks.onQueued();
        let worker: WorkerProcess;
        try {
          worker = await lease.worker();
        } catch (error) {
          const message = `The function's worker could not start: ${(error as Error).message}`;
          return { status: "failed", result_json: null, error: { code: "function_crashed", message }, logs: "", duration_ms: 0, browser_ms: 0, peak_memory_mb: null };
        }
        await hooks.onRunning();
        const receiver = options.artifacts?.receiver({ run_id: request.runId, account_id: request.fn.account_id, function_id: request.fn.function_id, attempt: request.attempt ?? 1 });
        const limits = { timeoutMs: request.fn.timeout_seconds * 1000, memoryMb: request.fn.memory_mb };
        const following = live.start(request.runId, worker);
        let run;
        try {
          run = await runWithLimits(worker, request.runId, request.params, limits, {
            artifactsUrl: request.artifactsUrl,
            artifacts: receiver,
            onLog: following.notify,
            secrets: request.secrets?.values ?? {},
          });
        } finally {
          following.end();
          // Every artifact the run kept is recorded before its end is.
          await receiver?.finish();
        }
        finished = run.finished;
        lease.answered();
        return run.result;
      } finally {
        // The slot is given back when the worker is idle again (or gone), not at the answer.
        void finished.then((reusable) => lease.release(reusable));
      }
    },
    watchLogs: (runId, onChange) => live.watch(runId, onChange),
    async remove(fn) {
      await pool.removeFunction(fn.function_id);
    },
    close: () => pool.close(),
  };
}
