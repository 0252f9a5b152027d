import type { Deps } from "../deps";
import type { FunctionItem } from "../functions/types";
import { newRun } from "../runs/newRun";
import { admitRun, type Lease } from "./admitRun";
import { FINAL_STATUSES, type RunItem, type RunTrigger } from "../runs/types";
import { secretsForRun } from "../secrets/functionSecrets";
import { Redactor } from "../secrets/redactor";
import { enqueueRun } from "../queue/enqueueRun";
import { retriesOf } from "../retries/retrySettings";
import { forgetRun, launchRun, type StartedRun } from "./launchRun";

export { RUNNING_MARK_MS, type StartedRun } from "./launchRun";

export interface RunInput {
  fn: FunctionItem;
  /** The plan of the function's account: its limits admit the run. */
  plan: string;
  version: number;
  params: Record<string, unknown>;
  trigger: RunTrigger;
  /** How long the caller waits for the run to start (the sync window); the run queue holds it past that. */
  waitMs: number;
  /** Aborted when the caller stops waiting for the end (see InvokeRequest.signal). */
  signal?: AbortSignal;
  /** The run's id, when the caller chose it first (an idempotency key's claim names it). */
  runId?: string;
  requestOrigin?: string | null;
  sdkVersion?: string | null;
  /** The API's base URL, for the URLs of the run's artifacts (empty: they are relative). */
  baseUrl?: string | null;
  /**
   * When the record says `running`: `at-start` (before startRun resolves: the caller answers
   * at once, or the process may be frozen after it) or `if-long` (only a run still going
   * after RUNNING_MARK_MS: a caller that waits for the end sees no difference, and a short
   * run costs one store write less). Default `at-start`.
   */
  markRunning?: "at-start" | "if-long";
  /**
   * The run is retried as its function's `retries` setting says when it fails (an async call,
   * a schedule, a batch item); false or absent: one attempt (a sync call: its caller sees the
   * failure, even once its window ran out and it answered 202).
   */
  retryable?: boolean;
  /**
   * The run's invocation was counted, and its queued record written, already (an item of a
   * batch): admission takes a slot (or a place in the queue) without counting it again, and the
   * queued record is not written again.
   */
  counted?: boolean;
  /**
   * When its record says it was queued (a batch's item: recorded when the batch was accepted).
   * Its place in the run queue is keyed by it, so that a start finds it there by its record.
   */
  queuedAt?: string;
  /** The batch the run is an item of (recorded on the run as `batch_id`). */
  batchId?: string;
}

/**
 * Starts a run through the runtime, or queues it. The run's record (queued) and its admission
 * under the account's plan are written side by side, so the record exists before the run can
 * start and the caller waits for one store round trip, not two. A run that finds every slot of
 * its plan taken (or runs of its account queued before it) goes to the account's run queue
 * (lambdas/queue) and is started when a slot frees; its `completion` then settles only if it
 * ends in this process. A run refused by a limit (429: the monthly quota, a full queue), or by
 * the runtime before it took the run, is removed again and never started.
 * Resolves once the runtime has the run (`at-start`: and its record says so) or the queue has
 * it; throws (429) when it was refused.
 */
export async function startRun(deps: Deps, input: RunInput): Promise<StartedRun> {
  const { fn, version, params, trigger } = input;
  // The run gets the function's secrets; what is kept of it never shows their values.
  const secrets = await secretsForRun(deps, fn.function_id, fn.has_secrets === true);
  const redactor = new Redactor(Object.values(secrets.values));
  const created = newRun(fn, {
    version,
    trigger,
    params: redactor.value(params),
    queuedAt: input.queuedAt ?? deps.clock.now().toISOString(),
    requestOrigin: input.requestOrigin,
    sdkVersion: input.sdkVersion,
    ...(input.batchId === undefined ? {} : { batchId: input.batchId }),
  });
  const attempts = { attempt: 1, max_attempts: input.retryable === true && deps.runtime.retries === true ? retriesOf(fn).max_attempts : 1 };
  const run: RunItem = { ...created, ...(input.runId ? { run_id: input.runId } : {}), ...attempts };
  const lease = await admitRecorded(deps, run, input);
  if (lease === "queued") {
    // A caller that waits hears the end of a run that another process starts (AWS); watched before the queue has the run.
    const watch = input.signal?.aborted ? null : ((await deps.runtime.watchQueuedEnd?.(run.run_id, input.waitMs, input.signal)) ?? null);
    const queueing = { plan: input.plan, params, baseUrl: input.baseUrl ?? null, counted: input.counted === true, notify: watch?.notify ?? null };
    await enqueueRun(deps, run, queueing).catch(async (error: unknown) => {
      watch?.close();
      // A batch's run keeps its record: the batch ends it with the refusal.
      if (!input.counted) await forgetRun(deps, run);
      throw error;
    });
    const completion = watch ? Promise.race([deps.queue.completionOf(run.run_id), watch.end]) : deps.queue.completionOf(run.run_id);
    input.signal?.addEventListener("abort", () => deps.queue.forget(run.run_id), { once: true });
    if (input.signal?.aborted) deps.queue.forget(run.run_id);
    // Started (by this process or another) or not, or ended (canceled while queued, say): its record says.
    const phase = async (): Promise<"queued" | "running" | RunItem> => {
      const stored = await deps.store.runs.get(run.run_id).catch(() => undefined);
      if (stored && FINAL_STATUSES.includes(stored.status)) return stored;
      return stored?.status === "queued" ? "queued" : "running";
    };
    return { run: { ...run, queue_reason: "plan_concurrency" }, completion, phase };
  }
  return launchRun(deps, {
    run,
    fn,
    params,
    secrets,
    redactor,
    lease,
    waitMs: input.waitMs,
    ...(input.signal ? { signal: input.signal } : {}),
    baseUrl: input.baseUrl ?? null,
    markRunning: input.markRunning ?? "at-start",
  });
}

/**
 * Admits the run and writes its queued record at the same time: its lease, or `queued` when
 * the run must wait in the queue (its record is written then). When either fails, what the
 * other did is undone (the lease refunded, the record removed) and the failure is thrown.
 */
async function admitRecorded(deps: Deps, run: RunItem, input: RunInput): Promise<Lease | "queued"> {
  const admission = { accountId: run.account_id, plan: input.plan, runId: run.run_id, timeoutSeconds: input.fn.timeout_seconds, counted: input.counted === true };
  // A counted run's queued record was written by its batch already.
  const recording = input.counted ? Promise.resolve() : deps.store.runs.put(run);
  const [admitted, recorded] = await Promise.allSettled([admitRun(deps, admission, input.waitMs), recording]);
  if (admitted.status === "fulfilled" && recorded.status === "fulfilled") return admitted.value;
  if (admitted.status === "fulfilled" && admitted.value !== "queued") {
    await admitted.value.release(true).catch((error: unknown) => deps.log(`refunding ${run.run_id} failed: ${(error as Error).message}`));
  }
  if (recorded.status === "fulfilled" && !input.counted) await forgetRun(deps, run);
  throw admitted.status === "rejected" ? admitted.reason : (recorded as PromiseRejectedResult).reason;
}
