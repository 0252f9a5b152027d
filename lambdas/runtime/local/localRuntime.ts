import { ApiError } from "../../http/errors";
import type { Store } from "../../store/store";
import type { Runtime } from "../runtime";
import { runWithLimits } from "./runWithLimits";
import type { ProcessIdentity } from "./unprivilegedUser";
import { type PoolLimits, WorkerPool } from "./workerPool";
import { WorkerProcess } from "./workerProcess";

export interface LocalRuntimeOptions {
  store: Store;
  /** The bundled worker entry (runner + runtime SDK + puppeteer-core). */
  bundlePath: string;
  /** Where browser profiles are made (outside the data dir). */
  profileRoot: string;
  limits: PoolLimits;
  identity: ProcessIdentity;
}

/**
 * The local runtime adapter: warm worker processes per function version (see WorkerPool),
 * each with its own browser. Workers load a version's compiled code from the store when
 * they start, so a deploy has nothing to provision.
 */
export function createLocalRuntime(options: LocalRuntimeOptions): Runtime & { pool: WorkerPool } {
  const startWorker = async (functionId: string, version: number) => {
    const code = await options.store.versions.get(functionId, version);
    if (!code) throw new ApiError("version_not_found", `Version ${version} of ${functionId} is gone`);
    return WorkerProcess.start({
      bundlePath: options.bundlePath,
      profileRoot: options.profileRoot,
      identity: options.identity,
      init: { code: code.js, parameter_style: code.parameter_style ?? "positional", variables: code.variables },
    });
  };
  const pool = new WorkerPool(options.limits, startWorker);
  return {
    pool,
    async deploy() {
      return { status: "active", status_reason: null };
    },
    async invoke(request, hooks) {
      const lease = await pool.acquire(request.fn.function_id, request.version, request.waitMs);
      let reusable = false;
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
        const outcome = await runWithLimits(worker, request.runId, request.params, {
          timeoutMs: request.fn.timeout_seconds * 1000,
          memoryMb: request.fn.memory_mb,
        });
        reusable = outcome.reusable;
        return outcome.result;
      } finally {
        await lease.release(reusable);
      }
    },
    async remove(fn) {
      await pool.removeFunction(fn.function_id);
    },
    close: () => pool.close(),
  };
}
