import { DEFAULT_PLAN } from "../config/plans";
import type { Deps } from "../deps";
import { MACHINE_WAIT_ALLOWANCE_MS } from "../invoke/admitRun";
import { finishRun } from "../runs/finishRun";
import type { RunItem } from "../runs/types";
import type { LimitItem } from "../store/limitStore";
import { startQueuedRun } from "./startQueuedRun";
import type { LookAhead } from "./queueLookAhead";

/**
 * What the waker knows already, saving the dispatcher a read each: the account's plan (a lease
 * knows the plan it was taken under) and its LIMITS item as the release's write left it.
 */
export interface DispatchHint {
  plan?: string;
  limits?: LimitItem;
  /** The queue's next run, looked up beside the release that woke this (see queueLookAhead.ts). */
  next?: LookAhead;
}

/** Extra life of a lease past the run's own limits (as admitRun's). */
const LEASE_MARGIN_MS = 60_000;
/** Starts per dispatch loop before it yields (a wake-up during it runs it again). */
const MAX_STEPS = 200;

/**
 * Wakes the account's dispatcher in this process: called when a lease is given back with runs
 * queued, after an enqueue, at start-up and by the recovery sweep. Never waits, never throws.
 */
export function wakeQueue(deps: Deps, accountId: string, hint: DispatchHint = {}): void {
  if (deps.queue.isClosed) return;
  let first: DispatchHint | undefined = hint;
  void deps.queue
    .exclusive(accountId, () => {
      // What the waker knew is good for the first loop only; a loop run again reads afresh.
      const known = first ?? {};
      first = undefined;
      return dispatchQueue(deps, accountId, known);
    })
    .catch((error: unknown) => deps.log(`dispatching the run queue of ${accountId} failed: ${(error as Error).stack ?? error}`));
}

/**
 * Starts the account's queued runs while its plan has free slots: each time the oldest ready
 * run of the next function after the one served last (round-robin), by three conditional
 * writes that make it exact whatever other dispatchers (processes, Lambdas) do at the same
 * time: the run's lease is taken (a lease keyed by its run id, only while a slot is free, which
 * also counts it out of the queue), its queue item is deleted (the one deleter starts it; a
 * loser gives back the lease it wrote, and only that one), and its record is read: a record no
 * longer `queued` (canceled) is not started, its lease is given back. Then the run is handed
 * to the runtime (startQueuedRun) without waiting for its end.
 */
export async function dispatchQueue(deps: Deps, accountId: string, hint: DispatchHint = {}): Promise<void> {
  const planName = hint.plan ?? (await deps.store.accounts.getAccount(accountId))?.plan ?? DEFAULT_PLAN;
  const plan = deps.config.plans[planName] ?? deps.config.plans[DEFAULT_PLAN];
  if (!plan) return;
  let known = hint.limits;
  let ahead = hint.next;
  for (let step = 0; step < MAX_STEPS && !deps.queue.isClosed; step++) {
    const now = deps.clock.now();
    const limits = known ?? (await deps.store.limits.read(accountId));
    const lookedUp = ahead;
    known = undefined;
    ahead = undefined;
    if (!limits) return;
    if (await deps.store.limits.removeExpired(accountId, limits, now)) continue;
    if ((limits.queued ?? 0) <= 0) {
      await deps.store.queueCounts.markEmpty(accountId);
      return;
    }
    if (Object.keys(limits.leases ?? {}).length >= plan.concurrency) return; // the next release wakes it
    const cursor = limits.rr_cursor ?? null;
    const { run: queued, earliest } = (lookedUp?.cursor === cursor ? await lookedUp.result : undefined) ?? (await deps.store.queueItems.next(accountId, cursor, now));
    if (!queued) {
      if (earliest) deps.queue.wakeAt(accountId, earliest, now, () => wakeQueue(deps, accountId));
      return;
    }
    const fn = await deps.store.functions.getById(queued.function_id);
    const timeoutMs = (fn?.timeout_seconds ?? 900) * 1000;
    const until = now.getTime() + MACHINE_WAIT_ALLOWANCE_MS + timeoutMs + LEASE_MARGIN_MS;
    if (!(await deps.store.queueCounts.takeLease(accountId, queued.run_id, until, plan.concurrency, queued.function_id))) continue;
    // The record is read beside the claim (one round trip less before the start); only the claimer uses it.
    const [claimed, record] = await Promise.all([deps.store.queueItems.claim(queued), deps.store.runs.get(queued.run_id)]);
    if (!claimed) {
      // Another dispatcher started it (and counted it out of the queue): this lease and count go back.
      await deps.store.queueCounts.returnLease(accountId, queued.run_id, until, true);
      continue;
    }
    if (!record || record.status !== "queued" || !fn) {
      // Canceled (or gone) while it waited: it never starts. A run whose function was deleted ends failed.
      await deps.store.queueCounts.returnLease(accountId, queued.run_id, until, false);
      if (record?.status === "queued") await endOrphan(deps, record);
      continue;
    }
    await startQueuedRun(deps, queued, record, fn, planName);
  }
}

/** A queued run whose function was deleted while it waited: it ends failed, never started. */
async function endOrphan(deps: Deps, run: RunItem): Promise<void> {
  const error = { code: "function_not_found", message: "The function was deleted while the run was queued" };
  await finishRun(deps, run, { status: "failed", result_json: null, error, logs: "", duration_ms: 0, browser_ms: 0, peak_memory_mb: null });
}
