import type { Deps } from "../deps";
import type { FunctionItem } from "../functions/types";
import { ApiError } from "../http/errors";
import { startRun } from "../invoke/startRun";
import { endedRun } from "../runs/finishRun";
import type { RunItem } from "../runs/types";

/** One item of a batch to start: its run (recorded `queued` already) and its checked parameters. */
export interface BatchRunToStart {
  runId: string;
  params: Record<string, unknown>;
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

/**
 * How long one start waits for a slot of the plan before it tries again (admitRun polls
 * meanwhile): a lease taken for a run is held this long past its timeout at worst.
 */
const SLOT_WAIT_MS = 30_000;

/**
 * Starts the runs of a batch, outside the request that created it, on the path a
 * `Prefer: respond-async` invocation takes (startRun, marked running at start), each with
 * trigger `batch`, its batch id, and `counted` (the batch reserved its invocation).
 *
 * THE ONE PLACE TO REPLACE once the durable run queue lands: there, "enqueue each run" takes
 * the place of this loop. Until then, the plan's concurrency refuses runs past it, so the
 * batch starts its runs in order through as many lanes as the plan allows runs at a time:
 * each lane starts a run (waiting for a slot, and trying again while the account's other runs
 * hold them all), waits for its end, then takes the next. The account's other calls compete
 * for the same slots through admission as before.
 *
 * A run the runtime refuses (not a full plan) ends `failed` with the refusal's error. When the
 * service stops (`deps.shutdown`), the lanes stop taking runs: those not started stay `queued`
 * and are started again by the next start (resumeBatches).
 */
export async function startBatchRuns(deps: Deps, batch: BatchStart): Promise<void> {
  const planConcurrency = deps.config.plans[batch.plan]?.concurrency ?? 1;
  let next = 0;
  const lane = async () => {
    while (next < batch.runs.length && !deps.shutdown?.aborted) {
      const item = batch.runs[next++] as BatchRunToStart;
      const completion = await startOne(deps, batch, item);
      if (completion) await completion;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(planConcurrency, batch.runs.length)) }, lane));
}

/** Starts one run (its completion), or ends it refused (null); null too when the service is stopping. */
async function startOne(deps: Deps, batch: BatchStart, item: BatchRunToStart): Promise<Promise<RunItem> | null> {
  for (;;) {
    if (deps.shutdown?.aborted) return null;
    try {
      const { completion } = await startRun(deps, {
        fn: batch.fn,
        plan: batch.plan,
        version: batch.version,
        params: item.params,
        trigger: "batch",
        waitMs: SLOT_WAIT_MS,
        requestOrigin: batch.requestOrigin ?? null,
        sdkVersion: batch.sdkVersion ?? null,
        markRunning: "at-start",
        baseUrl: batch.baseUrl,
        runId: item.runId,
        counted: true,
        batchId: batch.batchId,
      });
      return completion;
    } catch (error) {
      if (deps.shutdown?.aborted) return null;
      if (error instanceof ApiError && error.code === "concurrency_limit_exceeded") continue;
      await endRefused(deps, item.runId, error);
      return null;
    }
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
