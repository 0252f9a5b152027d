import { DEFAULT_PLAN, maxQueuedOf } from "../config/plans";
import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import { quotaExceeded } from "../invoke/admitRun";
import type { QueueReason, RunItem } from "../runs/types";
import { wakeQueue } from "./dispatchQueue";

/** How long past its queueing a queued run's record says it is due (the sweeper postpones it while it waits: settleRun). */
export const QUEUED_DEADLINE_MS = 24 * 60 * 60_000;

/** Retry-After of a `queue_full` answer: the queue moves as runs end, not at a known time. */
const QUEUE_FULL_RETRY_SECONDS = 5;

/**
 * Puts a recorded run (status `queued`) into its account's run queue: counts it (`queued` + 1
 * and its invocation, unless `counted`) within the plan's `max_queued` and monthly quota, then
 * writes its queue item, and wakes the account's dispatcher. Past `max_queued`: 429
 * `queue_full`; past the quota: 429 `invocation_quota_exceeded`; either way nothing is left
 * counted or queued (the caller removes the record).
 */
export async function enqueueRun(
  deps: Deps,
  run: RunItem,
  options: {
    plan: string;
    params: Record<string, unknown>;
    baseUrl: string | null;
    counted: boolean;
    /** When it may start (default: its queued_at; a retry's attempt: after its backoff). */
    readyAt?: string;
    /** What its record says it waits for (default `plan_concurrency`). */
    reason?: QueueReason;
    /** The run holds its lease (a retry of its ended attempt): given back by the same write that queues it. */
    dropLease?: boolean;
    /**
     * The queue item (with the real parameters) is written before the run is counted, and the
     * record is left for the caller to write (a retry: lambdas/retries/endAttempt.ts). A crash
     * between the steps then leaves the item that settleRun needs to queue the run again.
     */
    itemFirst?: boolean;
    /** Where the run's end is to be told (QueuedRun.notify: the wait queue of the sync call that waits for it). */
    notify?: string | null;
  },
): Promise<void> {
  const plan = deps.config.plans[options.plan] ?? deps.config.plans[DEFAULT_PLAN];
  if (!plan) throw new Error(`no plan '${options.plan}' and no default plan`);
  const now = deps.clock.now();
  const readyAt = options.readyAt ?? run.queued_at;
  const account = run.account_id;
  await deps.store.limits.ensureMonth(account, now);
  const limits = { quota: plan.invocations_per_month, maxQueued: maxQueuedOf(plan), counted: options.counted, ...(options.dropLease ? { dropLease: run.run_id } : {}) };
  const item = {
    account_id: account,
    function_id: run.function_id,
    run_id: run.run_id,
    version: run.version,
    ready_at: readyAt,
    params: options.params,
    base_url: options.baseUrl,
    counted: options.counted,
    ...(options.notify ? { notify: options.notify } : {}),
  };
  if (options.itemFirst) await deps.store.queueItems.put(item);
  if ((await deps.store.queueCounts.enqueue(account, limits, now.toISOString().slice(0, 7))) !== "counted") {
    if (options.itemFirst) await deps.store.queueItems.claim(item);
    const read = await deps.store.limits.read(account);
    const used = read?.invocations ?? 0;
    if (!options.counted && used >= plan.invocations_per_month) throw quotaExceeded(options.plan, plan.invocations_per_month, used, now);
    throw new ApiError(
      "queue_full",
      `The '${options.plan}' plan queues at most ${limits.maxQueued} runs, and as many wait already; try again once some have started`,
      { limit: limits.maxQueued, queued: read?.queued ?? limits.maxQueued, concurrency: plan.concurrency },
      { "retry-after": String(QUEUE_FULL_RETRY_SECONDS) },
    );
  }
  if (options.itemFirst) {
    wakeQueue(deps, account);
    return;
  }
  try {
    await deps.store.queueItems.put(item);
  } catch (error) {
    await deps.store.queueCounts.unenqueue(account, options.counted).catch((undo: unknown) => deps.log(`run ${run.run_id}: uncounting it from the queue failed: ${(undo as Error).message}`));
    throw error;
  }
  // The record says what it waits for and is not overdue while it waits (one write, conditional
  // on `queued`: the dispatcher may have started it meanwhile).
  await deps.store.runs
    .postponeDeadline(run, new Date(Date.parse(readyAt) + QUEUED_DEADLINE_MS).toISOString(), options.reason ?? "plan_concurrency")
    .catch((error: unknown) => deps.log(`run ${run.run_id}: noting that it waits failed: ${(error as Error).message}`));
  wakeQueue(deps, account);
}
