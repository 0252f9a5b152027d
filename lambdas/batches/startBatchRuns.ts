import type { Deps } from "../deps";
import type { FunctionItem } from "../functions/types";
import { ApiError } from "../http/errors";
import { startRun } from "../invoke/startRun";
import { endedRun } from "../runs/finishRun";

/** One item of a batch to start: its run (recorded `queued` already), its checked parameters, and when its record says it was queued. */
export interface BatchRunToStart {
  runId: string;
  params: Record<string, unknown>;
  queuedAt: string;
}

/** A batch whose runs are recorded (queued) and counted, to be started outside its request. */
export interface BatchStart {
  fn: FunctionItem;
  /** The plan of the function's account: its concurrency admits each run. */
  plan: string;
  version: number;
  batchId: string;
  runs: readonly BatchRunToStart[];
  baseUrl: string | null;
  requestOrigin?: string | null;
  sdkVersion?: string | null;
}

/** Items of a batch put in the run queue at a time (each is a few store writes). */
const ENQUEUE_LANES = 8;

/**
 * Starts the runs of a batch, outside the request that created it, through the run queue: each
 * item takes the path a `Prefer: respond-async` invocation takes (startRun), with trigger
 * `batch`, its batch id, and `counted` (the batch reserved its invocation): admitted at once
 * while the plan has free slots, queued after that (the queue starts them as slots free,
 * round-robin with the account's other functions). Items are handed over in their order,
 * ENQUEUE_LANES at a time.
 *
 * A run the queue or the runtime refuses ends `failed` with the refusal's error. When the
 * service stops (`deps.shutdown`) before every item is handed over, the rest stay `queued` and
 * are handed over by the next start (resumeBatches).
 */
export async function startBatchRuns(deps: Deps, batch: BatchStart): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < batch.runs.length && !deps.shutdown?.aborted) {
      const item = batch.runs[next++] as BatchRunToStart;
      await startOne(deps, batch, item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(ENQUEUE_LANES, batch.runs.length)) }, lane));
}

/** Hands one run to the queue (or starts it), or ends it refused. */
async function startOne(deps: Deps, batch: BatchStart, item: BatchRunToStart): Promise<void> {
  // Nobody waits for the run's end here: the queue's notifier keeps nothing for it.
  const waiting = new AbortController();
  try {
    await startRun(deps, {
      fn: batch.fn,
      plan: batch.plan,
      version: batch.version,
      params: item.params,
      trigger: "batch",
      waitMs: 0,
      requestOrigin: batch.requestOrigin ?? null,
      sdkVersion: batch.sdkVersion ?? null,
      markRunning: "at-start",
      signal: waiting.signal,
      baseUrl: batch.baseUrl,
      runId: item.runId,
      queuedAt: item.queuedAt,
      counted: true,
      // A batch's runs are retried as the function's `retries` setting says, as async calls are.
      retryable: true,
      batchId: batch.batchId,
    });
  } catch (error) {
    if (deps.shutdown?.aborted) return;
    await endRefused(deps, item.runId, error);
  } finally {
    waiting.abort();
  }
}

/**
 * Ends a run of a batch that could not be started, failed with why (an ApiError's code and
 * message, or a {code, message} of the caller's; its record stays, as every run's).
 */
export async function endRefused(deps: Deps, runId: string, error: unknown): Promise<void> {
  const reason = refusal(error);
  if (reason.code === "internal_error") deps.log(`batch run ${runId} could not be started: ${(error as Error).stack ?? error}`);
  try {
    const run = await deps.store.runs.get(runId);
    if (!run || run.status !== "queued") return;
    const ending = { status: "failed" as const, result_json: null, error: reason, logs: "", duration_ms: 0, browser_ms: 0, peak_memory_mb: null };
    await deps.store.runs.putIfActive(endedRun(run, ending, deps.clock.now().toISOString()));
  } catch (failure) {
    deps.log(`batch run ${runId}: recording that it could not start failed: ${(failure as Error).message}`);
  }
}

function refusal(error: unknown): { code: string; message: string } {
  if (error instanceof ApiError) return { code: error.code, message: error.message };
  const given = error as { code?: unknown; message?: unknown } | null;
  if (!(error instanceof Error) && typeof given?.code === "string" && typeof given.message === "string") return { code: given.code, message: given.message };
  return { code: "internal_error", message: "The run could not be started inside the service; the run id identifies it in the logs" };
}
