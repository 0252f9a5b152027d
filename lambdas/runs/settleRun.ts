import type { Clock } from "../deps";
import type { Store } from "../store/store";
import type { WebhookOutbox } from "../webhooks/webhookOutbox";
import { nextAttempt } from "../retries/retryPolicy";
import { endedRun } from "./finishRun";
import { type RunError, type RunItem, runTimeoutMs } from "./types";

/** What settling did to a run: removed (never started), ended, or nothing (it had ended meanwhile). */
export type Settled = "removed" | "ended" | "final" | "waiting" | "requeued";

/** How far a queued run that still waits in the run queue has its deadline moved each time it is found overdue. */
const WAITING_DEADLINE_MS = 24 * 60 * 60_000;

/**
 * Ends a run whose end was lost (a run still waiting in the run queue is left to wait, its
 * deadline moved on: `waiting`) (the service stopped under it locally; on AWS, its workflow
 * ended without recording it, or it passed its deadline): a queued run its account holds no
 * lease for was never admitted (its record is written beside its admission), never started,
 * and is removed; any other is ended `failed` with `error`, metered once, and its lease given
 * back. A run that became final meanwhile keeps its record. With `webhooks`, the end's
 * `run.failed` deliveries are owed as for any other end (webhookOutbox.ts).
 */
export async function settleRun(
  store: Pick<Store, "runs" | "meters" | "limits" | "queueItems" | "queueCounts">,
  clock: Clock,
  run: RunItem,
  error: RunError,
  webhooks?: WebhookOutbox,
): Promise<Settled> {
  if (run.status === "queued") {
    // Waiting in the run queue is no lost end: it starts when a slot frees, and is due later.
    const item = { account_id: run.account_id, function_id: run.function_id, ready_at: run.retry_at ?? run.queued_at, run_id: run.run_id };
    if (await store.queueItems.has(item)) {
      await store.runs.postponeDeadline(run, new Date(clock.now().getTime() + WAITING_DEADLINE_MS).toISOString());
      return "waiting";
    }
    // A run that waits for a retry ran an attempt already: without its queue item it ends failed, never removed.
    if (run.retry_at === undefined && !(await store.limits.holds(run.account_id, run.run_id))) {
      await store.runs.deleteIfQueued(run.run_id);
      return "removed";
    }
  }
  // An attempt that ended and had its next one queued, cut off before its record said so (retryRun).
  const retryAt = run.status === "running" ? await store.queueItems.readyAtOf(run) : undefined;
  if (retryAt !== undefined) return requeue(store, clock, run, retryAt);
  const finishedAt = clock.now();
  const startedAt = Date.parse(run.started_at ?? run.queued_at);
  // At most the run's timeout: a service stopped for a day must not meter a day of execution.
  const timeoutMs = runTimeoutMs(run);
  const elapsed = Number.isFinite(startedAt) ? Math.max(0, finishedAt.getTime() - startedAt) : 0;
  const duration_ms = Number.isFinite(timeoutMs) ? Math.min(elapsed, Math.max(0, timeoutMs)) : 0;
  const ending = { status: "failed" as const, result_json: null, error, logs: run.logs, duration_ms, browser_ms: run.browser_ms, peak_memory_mb: run.peak_memory_mb };
  const final = endedRun(run, ending, finishedAt.toISOString());
  const pending = (await webhooks?.pendingFor(final)) ?? [];
  const ended = await store.runs.putIfActive(final, pending);
  if (ended) await store.meters.recordRun(final);
  if (ended && pending.length > 0) await webhooks?.runEnded(final, pending);
  await store.limits.release(run.account_id, run.run_id);
  return ended ? "ended" : "final";
}

/**
 * Writes a run whose next attempt waits in the run queue (queued at `retryAt`) as that attempt's
 * wait: the attempt that ended is recorded `function_crashed` (its outcome was lost with the
 * process that recorded it). The queueing's count, and its lease's return, are done here if the
 * process died before them (it still holds the lease).
 */
async function requeue(store: Pick<Store, "runs" | "limits" | "queueCounts">, clock: Clock, run: RunItem, retryAt: string): Promise<Settled> {
  const now = clock.now();
  if (await store.limits.holds(run.account_id, run.run_id)) {
    await store.limits.ensureMonth(run.account_id, now);
    // Past max_queued by one at most: this run was queued before its service died.
    await store.queueCounts.enqueue(run.account_id, { quota: 0, maxQueued: Number.MAX_SAFE_INTEGER, counted: true, dropLease: run.run_id }, now.toISOString().slice(0, 7));
  }
  const lost = { status: "failed" as const, result_json: null, error: { code: "function_crashed", message: "The service stopped as this attempt ended; its outcome was lost" }, logs: run.logs, duration_ms: 0, browser_ms: run.browser_ms, peak_memory_mb: run.peak_memory_mb };
  const next = { ...nextAttempt(run, lost, { backoffSeconds: 0, timeoutSeconds: 0 }, now), retry_at: retryAt, deadline_at: new Date(Date.parse(retryAt) + WAITING_DEADLINE_MS).toISOString() };
  return (await store.runs.putIfActive(next)) ? "requeued" : "final";
}
