import { DEFAULT_PLAN } from "../config/plans";
import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import { wakeQueue } from "../queue/dispatchQueue";
import { lookUpNext } from "../queue/queueLookAhead";

export interface Lease {
  /** Gives the slot back; `refund` when the run never started (its invocation is not counted). */
  release(refund?: boolean): Promise<void>;
}

/** Extra life of a lease past the run's own limits, before another service may reclaim it. */
const LEASE_MARGIN_MS = 60_000;
/**
 * How long an admitted run may wait for a worker of the machine (local: every worker busy) and
 * still hold its lease: a lease is reclaimed only when its service died, so this is generous.
 */
export const MACHINE_WAIT_ALLOWANCE_MS = 15 * 60_000;

/**
 * The lease of a run in flight: lease ids are run ids. Giving it back wakes the account's queue
 * when runs wait. `lookAhead` (a run that came out of the queue, whose lease set the queue's
 * round-robin cursor to its function): the queue's next run is looked up beside the release, not
 * after it, and the dispatcher takes that answer when the cursor is still there (queueLookAhead.ts).
 */
export function runLease(deps: Deps, accountId: string, runId: string, plan: string, lookAhead?: { functionId: string }): Lease {
  return {
    release: async (refund = false) => {
      const next = lookAhead && !refund ? lookUpNext(deps, accountId, lookAhead.functionId) : undefined;
      // The release's own answer (the item as it is now) is the dispatcher's first look: no read of its own.
      const { queued, item } = await deps.store.limits.release(accountId, runId, refund);
      if (queued > 0) wakeQueue(deps, accountId, { plan, ...(item ? { limits: item } : {}), ...(next ? { next } : {}) });
    },
  };
}

/**
 * Admits a run under its account's plan at once: a slot among the plan's `concurrency` and one
 * of its `invocations_per_month` (unless `counted`), in one conditional write that also requires
 * the account to have no queued run (a new run never starts ahead of them). `queued` when the
 * run must wait in the run queue (every slot taken, or runs queued before it); past the monthly
 * quota: 429 with Retry-After, and nothing is started or counted.
 */
export async function admitRun(
  deps: Deps,
  run: { accountId: string; plan: string; runId: string; timeoutSeconds: number; counted?: boolean },
  waitMs: number,
): Promise<Lease | "queued"> {
  const plan = deps.config.plans[run.plan] ?? deps.config.plans[DEFAULT_PLAN];
  if (!plan) return { release: async () => undefined };
  const limits = { concurrency: plan.concurrency, invocationsPerMonth: plan.invocations_per_month, counted: run.counted === true };
  const now = deps.clock.now();
  const leaseUntil = now.getTime() + waitMs + MACHINE_WAIT_ALLOWANCE_MS + run.timeoutSeconds * 1000 + LEASE_MARGIN_MS;
  if (!deps.queue.enabled) return admitWithin(deps, run, limits, plan.concurrency, waitMs);
  const admission = await deps.store.limits.admit(run.accountId, run.runId, limits, leaseUntil, now);
  if (admission.admitted) return runLease(deps, run.accountId, run.runId, run.plan);
  if (admission.limit === "quota") throw quotaExceeded(run.plan, plan.invocations_per_month, admission.used, now);
  return "queued";
}

/**
 * Admission where no dispatcher starts queued runs (RunQueueState.enabled false: AWS for now):
 * waits up to `waitMs` for a slot, then 429 `concurrency_limit_exceeded`.
 */
async function admitWithin(
  deps: Deps,
  run: { accountId: string; plan: string; runId: string; timeoutSeconds: number },
  limits: { concurrency: number; invocationsPerMonth: number; counted: boolean },
  concurrency: number,
  waitMs: number,
): Promise<Lease> {
  const deadline = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    const now = deps.clock.now();
    const leaseUntil = now.getTime() + waitMs + run.timeoutSeconds * 1000 + LEASE_MARGIN_MS;
    const admission = await deps.store.limits.admit(run.accountId, run.runId, limits, leaseUntil, now);
    if (admission.admitted) return runLease(deps, run.accountId, run.runId, run.plan);
    if (admission.limit === "quota") throw quotaExceeded(run.plan, limits.invocationsPerMonth, admission.used, now);
    if (Date.now() >= deadline) {
      throw new ApiError(
        "concurrency_limit_exceeded",
        `The '${run.plan}' plan allows ${concurrency} runs at a time and they are all in progress`,
        { limit: concurrency, in_flight: admission.inFlight, waiting_for: "plan_concurrency" },
        { "retry-after": "1" },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(25 * 2 ** Math.min(attempt, 3), 200, Math.max(1, deadline - Date.now()))));
  }
}

/** 429 `invocation_quota_exceeded`, retried at the start of the next month. */
export function quotaExceeded(planName: string, limit: number, used: number, now: Date): ApiError {
  return new ApiError(
    "invocation_quota_exceeded",
    `The '${planName}' plan allows ${limit} invocations a month; this month's are used up`,
    { limit, used },
    { "retry-after": String(secondsToNextMonth(now)) },
  );
}

/** Whole seconds from `now` to the start of the next calendar month (UTC), at least 1. */
export function secondsToNextMonth(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
