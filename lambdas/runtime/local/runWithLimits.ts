import type { InvokeResult } from "../runtime";
import { residentMb, watchMemory } from "./processTree";
import { WorkerExit, type WorkerProcess } from "./workerProcess";

const SAMPLE_MS = 200;

/**
 * Runs one invocation on a worker while enforcing the function's limits from outside:
 * past `timeoutMs` the worker is killed (timed_out / function_timeout); above `memoryMb`
 * (the worker's and its browser's memory together) it is killed (function_crashed).
 */
export async function runWithLimits(
  worker: WorkerProcess,
  runId: string,
  params: Record<string, unknown>,
  limits: { timeoutMs: number; memoryMb: number },
): Promise<{ result: InvokeResult; reusable: boolean }> {
  const started = performance.now();
  let ended: "timeout" | "memory" | null = null;
  let memoryAtKill = 0;
  const timer = setTimeout(() => {
    ended ??= "timeout";
    void worker.kill("timeout");
  }, limits.timeoutMs);
  const memory = watchMemory(
    () => residentMb(worker.memoryScope.pids, worker.memoryScope.groups),
    SAMPLE_MS,
    (mb) => {
      if (mb > limits.memoryMb && ended === null) {
        ended = "memory";
        memoryAtKill = mb;
        void worker.kill("out of memory");
      }
    },
  );
  const base = { logs: "", browser_ms: 0, result_json: null };
  try {
    const outcome = await worker.run(runId, params, limits.timeoutMs);
    const duration_ms = Math.round(performance.now() - started);
    const peak_memory_mb = Math.round(memory.peak) || null;
    if (outcome.status === "succeeded") {
      return { result: { ...outcome, status: "succeeded", error: null, duration_ms, peak_memory_mb }, reusable: true };
    }
    const { error, logs, browser_ms } = outcome;
    return {
      result: { status: "failed", result_json: null, error: { code: error.code, message: error.message }, logs, browser_ms, duration_ms, peak_memory_mb },
      reusable: true,
    };
  } catch (error) {
    if (!(error instanceof WorkerExit)) throw error;
    const duration_ms = Math.round(performance.now() - started);
    const peak_memory_mb = Math.round(memory.peak) || null;
    if (ended === "timeout") {
      const message = `The function did not finish within its timeout of ${limits.timeoutMs / 1000} s`;
      return { result: { ...base, status: "timed_out", error: { code: "function_timeout", message }, duration_ms, peak_memory_mb }, reusable: false };
    }
    const message =
      ended === "memory"
        ? `The function ran out of memory: it used ${Math.round(memoryAtKill)} MB, its limit is ${limits.memoryMb} MB`
        : `The function's process crashed: ${error.message}`;
    return { result: { ...base, status: "failed", error: { code: "function_crashed", message }, duration_ms, peak_memory_mb }, reusable: false };
  } finally {
    clearTimeout(timer);
    memory.stop();
  }
}
