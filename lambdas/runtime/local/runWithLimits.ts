import type { InvokeResult } from "../runtime";
import { canceledError } from "../../runs/cancel/canceledEnding";
import { withoutHostPaths } from "./hostPaths";
import { watchMemory } from "./processTree";
import { EVIDENCE_BUDGET_MS } from "../../runner/failureEvidence";
import { type RunOptions, WorkerExit, type WorkerProcess } from "./workerProcess";

const SAMPLE_MS = 200;
/**
 * Time a worker's sandbox gets after its run's answer (at least; or the run's time left) to
 * replace the run's worker process and browser with fresh ones and say it is idle.
 */
const RESET_GRACE_MS = 10_000;
/**
 * Time a worker gets past its run's timeout to answer it: the worker stops the run itself at
 * the timeout, keeps its pages' evidence (EVIDENCE_BUDGET_MS) and answers `function_timeout`
 * with its logs; one that does not (its code blocks the event loop) is stopped after this, its
 * sandbox's host keeps the pages' evidence (within EVIDENCE_BUDGET_MS), and it is killed.
 */
export const TIMEOUT_GRACE_MS = EVIDENCE_BUDGET_MS + 1_500;
/**
 * What a sandbox's file systems may still hold once its run is over and its host has emptied
 * them (the browser's profile and cache, its live shared memory: a few MB). More is files the
 * browser keeps open or a profile a run made grow: the worker is replaced, not reused.
 */
export const FILES_KEPT_MAX_MB = 64;

export interface LimitedRun {
  /** How the run ended, as soon as it did. */
  result: InvokeResult;
  /**
   * Resolves once the worker is ready for another run (true: it is idle and frozen) or gone
   * (false). The limits hold until then: a run ends for the service when its answer is in,
   * and for its worker when nothing of it runs any more.
   */
  finished: Promise<boolean>;
}

/**
 * Runs one invocation on a worker while enforcing the function's limits from outside, for the
 * worker's whole turn (from taking the run until it is idle again, not only until it answers):
 * past `timeoutMs` (plus a short grace after an answer, to reset the browser) the worker is
 * killed (timed_out / function_timeout before the answer); above `memoryMb` (its whole
 * sandbox, its files included) it is killed (function_crashed). A worker whose run left code
 * running, or files its host could not empty (FILES_KEPT_MAX_MB), is replaced.
 */
export async function runWithLimits(
  worker: WorkerProcess,
  runId: string,
  params: Record<string, unknown>,
  limits: { timeoutMs: number; memoryMb: number },
  options: RunOptions = { artifactsUrl: "" },
  /** Aborted by a cancel: the run is stopped as a stuck one is (evidence, then its sandbox killed) and ends `canceled`. */
  cancel?: AbortSignal,
): Promise<LimitedRun> {
  const started = performance.now();
  let ended: "timeout" | "memory" | "canceled" | null = null;
  let answered = false;
  let memoryAtKill = 0;
  // Until the answer: the run's timeout. After it: the time left, for the reset (see below).
  // A worker that has not answered by then is stuck: its host keeps the pages' evidence first.
  let timer = setTimeout(() => {
    ended ??= "timeout";
    void worker.captureEvidence(EVIDENCE_BUDGET_MS).then(() => worker.kill("timeout"));
  }, limits.timeoutMs + TIMEOUT_GRACE_MS);
  // A sample over the limit is read again exactly before it stops the run (samples may be estimates).
  const memory = watchMemory(
    async () => {
      const mb = await worker.memoryMb();
      return mb > limits.memoryMb ? worker.memoryMb(true) : mb;
    },
    SAMPLE_MS,
    (mb) => {
      // Also while the host keeps a stuck run's evidence (ended "timeout"): its pages still run.
      if (mb > limits.memoryMb && ended !== "memory") {
        if (ended === null) {
          ended = "memory";
          memoryAtKill = mb;
        }
        void worker.kill("out of memory");
      }
    },
  );
  // A cancel before the answer: the host keeps the pages' evidence, then the sandbox goes.
  const onCancel = () => {
    if (answered || ended !== null) return;
    ended = "canceled";
    void worker.captureEvidence(EVIDENCE_BUDGET_MS, "canceled").then(() => worker.kill("canceled"));
  };
  const stop = () => {
    clearTimeout(timer);
    memory.stop();
    cancel?.removeEventListener("abort", onCancel);
  };
  let turn;
  try {
    turn = await worker.run(runId, params, limits.timeoutMs, limits.memoryMb, options);
  } catch (error) {
    stop();
    if (!(error instanceof WorkerExit)) throw error;
    // Its worker died before the run reached it (the service stopping under it): a crash, as for any run whose worker dies.
    const crashed = { logs: "", browser_ms: 0, result_json: null, duration_ms: 0, peak_memory_mb: null, status: "failed" as const };
    return { result: { ...crashed, error: { code: "function_crashed", message: `The function's process crashed: ${withoutHostPaths(error.message)}` } }, finished: Promise.resolve(false) };
  }
  if (cancel?.aborted) onCancel();
  else cancel?.addEventListener("abort", onCancel, { once: true });
  const finished = turn.idle.then(
    ({ leftover }) => leftover.length === 0 && ended === null && worker.filesMb() <= FILES_KEPT_MAX_MB,
    () => false,
  );
  void finished.then(stop);
  try {
    const outcome = await turn.done;
    answered = true;
    // The reset after the answer gets the run's time left, and at least a short grace.
    clearTimeout(timer);
    const left = Math.max(RESET_GRACE_MS, limits.timeoutMs - (performance.now() - started));
    timer = setTimeout(() => void worker.kill("its run's code kept running past the timeout"), left);
    const duration_ms = Math.round(performance.now() - started);
    const peak_memory_mb = Math.round(memory.peak) || null;
    if (outcome.status === "succeeded") {
      const { result_json, logs, browser_ms } = outcome;
      return { result: { status: "succeeded", result_json, error: null, logs, browser_ms, duration_ms, peak_memory_mb }, finished };
    }
    const { logs, browser_ms } = outcome;
    // Out of memory is the supervisor's to say here (it samples and kills): a worker's own claim is a crash, named for the limit.
    const error = outcome.error.code === "out_of_memory" ? { code: "function_crashed" as const, message: `The function ran out of memory: its limit is ${limits.memoryMb} MB` } : outcome.error;
    // The worker stopped the run at its timeout itself (and kept its evidence): timed out.
    const status = error.code === "function_timeout" ? "timed_out" : "failed";
    const message = error.code === "function_timeout" ? `The function did not finish within its timeout of ${limits.timeoutMs / 1000} s` : error.message;
    return {
      result: { status, result_json: null, error: error.code === "function_error" && error.stack !== undefined ? { code: error.code, message, stack: error.stack } : { code: error.code, message }, logs, browser_ms, duration_ms: Math.min(duration_ms, limits.timeoutMs), peak_memory_mb },
      finished,
    };
  } catch (error) {
    if (!(error instanceof WorkerExit)) throw error;
    const duration_ms = Math.round(performance.now() - started);
    const peak_memory_mb = Math.round(memory.peak) || null;
    // What the run logged until it was stopped, as streamed while it ran.
    const base = { logs: worker.logsSoFar, browser_ms: 0, result_json: null, duration_ms, peak_memory_mb };
    if (ended === "canceled") {
      // Answered once the sandbox is gone: nothing of the run's code runs any more.
      await worker.kill("canceled");
      return { result: { ...base, logs: worker.logsSoFar, status: "canceled", error: canceledError() }, finished };
    }
    if (ended === "timeout") {
      const message = `The function did not finish within its timeout of ${limits.timeoutMs / 1000} s`;
      return { result: { ...base, duration_ms: Math.min(duration_ms, limits.timeoutMs), status: "timed_out", error: { code: "function_timeout", message } }, finished };
    }
    const outOfMemory = ended === "memory" || (await worker.hitMemoryLimit());
    const message = outOfMemory
      ? `The function ran out of memory: it used ${Math.round(Math.max(memoryAtKill, memory.peak))} MB, its limit is ${limits.memoryMb} MB`
      : `The function's process crashed: ${withoutHostPaths(error.message)}`;
    return { result: { ...base, status: "failed", error: { code: "function_crashed", message } }, finished };
  }
}
