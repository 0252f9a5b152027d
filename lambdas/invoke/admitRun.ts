import { DEFAULT_PLAN } from "../config/plans";
import type { Deps } from "../deps";
import { ApiError } from "../http/errors";

export interface Lease {
  /** Gives the slot back; `refund` when the run never started (its invocation is not counted). */
  release(refund?: boolean): Promise<void>;
}

/** Extra life of a lease past the run's own limits, before another service may reclaim it. */
const LEASE_MARGIN_MS = 60_000;

/**
 * Admits a run under its account's plan: a slot among the plan's `concurrency` (waiting up
 * to `waitMs` for one) and one of its `invocations_per_month` (not when `counted`: its batch
 * counted it already). Past a limit: 429 with Retry-After, and nothing is started or counted.
 */
export async function admitRun(
  deps: Deps,
  run: { accountId: string; plan: string; runId: string; timeoutSeconds: number; counted?: boolean },
  waitMs: number,
): Promise<Lease> {
  const plan = deps.config.plans[run.plan] ?? deps.config.plans[DEFAULT_PLAN];
  if (!plan) return { release: async () => undefined };
  const limits = { concurrency: plan.concurrency, invocationsPerMonth: plan.invocations_per_month };
  const deadline = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    const now = deps.clock.now();
    const leaseUntil = now.getTime() + waitMs + run.timeoutSeconds * 1000 + LEASE_MARGIN_MS;
    const admission = await deps.store.limits.admit(run.accountId, run.runId, limits, leaseUntil, now, run.counted === true);
    if (admission.admitted) {
      return { release: (refund = false) => deps.store.limits.release(run.accountId, run.runId, refund) };
    }
    if (admission.limit === "quota") {
      throw new ApiError(
        "invocation_quota_exceeded",
        `The '${run.plan}' plan allows ${plan.invocations_per_month} invocations a month; this month's are used up`,
        { limit: plan.invocations_per_month, used: admission.used },
        { "retry-after": String(secondsToNextMonth(now)) },
      );
    }
    if (Date.now() >= deadline) {
      throw new ApiError(
        "concurrency_limit_exceeded",
        `The '${run.plan}' plan allows ${plan.concurrency} runs at a time and they are all in progress`,
        { limit: plan.concurrency, in_flight: admission.inFlight },
        { "retry-after": "1" },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(25 * 2 ** Math.min(attempt, 3), 200, Math.max(1, deadline - Date.now()))));
  }
}

/** Whole seconds from `now` to the start of the next calendar month (UTC), at least 1. */
export function secondsToNextMonth(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
