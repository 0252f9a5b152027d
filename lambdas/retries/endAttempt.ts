import type { Deps } from "../deps";
import type { FunctionItem } from "../functions/types";
import { enqueueRun } from "../queue/enqueueRun";
import { removeQueued } from "../queue/removeQueued";
import type { InvokeResult } from "../runtime/runtime";
import { finishRun } from "../runs/finishRun";
import type { RunItem } from "../runs/types";
import { DEFAULT_PLAN } from "../config/plans";
import { retriesOf } from "./retrySettings";
import { attemptLogs, nextAttempt, shouldRetry } from "./retryPolicy";
import { ApiError } from "../http/errors";

/** What a retry needs to queue the run again: its real parameters and the API's base URL. */
export interface RetryInput {
  params: Record<string, unknown>;
  baseUrl: string | null;
}

/**
 * Records the end of a run's attempt: the run's end (finishRun: final record, webhooks, meter)
 * unless the attempt failed in a way that is retried and attempts are left (shouldRetry);
 * then the run is queued again for its next attempt (retryRun). Returns the run as recorded:
 * final, or queued for its next attempt. Every attempt's logs start with a header naming it.
 */
export async function endAttempt(
  deps: Deps,
  run: RunItem,
  result: InvokeResult,
  fn: Pick<FunctionItem, "retries" | "timeout_seconds">,
  retry: RetryInput,
  /** As finishRun's: `now` on AWS (the recorder Lambda returns next). */
  meter: "later" | "now" = "later",
): Promise<RunItem> {
  const ending: InvokeResult = { ...result, logs: attemptLogs(run, result.logs) };
  if (!shouldRetry(run, ending)) return finishRun(deps, run, ending, meter);
  const next = nextAttempt(run, ending, { backoffSeconds: retriesOf(fn).backoff_seconds, timeoutSeconds: fn.timeout_seconds }, deps.clock.now());
  let refused: string | undefined;
  const queued = await retryRun(deps, next, ending, retry, (why) => (refused = why));
  if (queued) return queued;
  // A next attempt the queue refused (it is full): the run's logs say why it ends with this one.
  const note = refused === undefined ? "" : `${ending.logs === "" || ending.logs.endsWith("\n") ? "" : "\n"}[browserfn] attempt ${next.attempt ?? 2} of ${next.max_attempts ?? 2} was not run: ${refused}\n`;
  return finishRun(deps, run, note === "" ? ending : { ...ending, logs: `${ending.logs}${note}` }, meter);
}

/**
 * The store side of a retry (the one call the AWS run recorder makes too, with nextAttempt's
 * run), in an order a crash at any point leaves recoverable:
 * 1. the next attempt's queue item, ready at its `retry_at`, with the run's real parameters
 *    (the record keeps them redacted), counted into the run queue in a write that also gives
 *    back the ended attempt's lease (its next attempt takes a lease of the same id, so the
 *    caller must not release it again);
 * 2. the run's record, queued for its next attempt (conditional: only while the run is not
 *    final, so a run canceled meanwhile stays canceled, and its queue item is taken back);
 * 3. the ended attempt's execution metered (not an invocation: the run counted one when it
 *    was called).
 * A service killed between 1 and 2 finds at its next start a run still `running` whose next
 * attempt waits in the queue: settleRun queues it (the backoff, at least a second, keeps the
 * dispatcher off the item until then). Undefined when it could not be queued (the queue is
 * full, or the run ended meanwhile): the caller then ends the run with the attempt's outcome,
 * and releases the lease as for any end.
 */
export async function retryRun(
  deps: Deps,
  next: RunItem,
  ended: InvokeResult,
  retry: RetryInput,
  /** Told why the queue refused the next attempt (its message: a full queue, say). */
  refused?: (why: string) => void,
): Promise<RunItem | undefined> {
  if (!next.retry_at) return undefined;
  try {
    const plan = (await deps.store.accounts.getAccount(next.account_id))?.plan ?? DEFAULT_PLAN;
    await enqueueRun(deps, next, { plan, params: retry.params, baseUrl: retry.baseUrl, counted: true, readyAt: next.retry_at, reason: "retry_backoff", dropLease: true, itemFirst: true });
  } catch (error) {
    deps.log(`run ${next.run_id}: queueing attempt ${next.attempt ?? 2} failed, so it ends with the attempt before: ${(error as Error).message}`);
    if (error instanceof ApiError) refused?.(error.message);
    return undefined;
  }
  if (!(await deps.store.runs.putIfActive(next))) {
    await removeQueued(deps, next, { refund: false }).catch((error: unknown) => deps.log(`run ${next.run_id}: taking its next attempt out of the queue failed: ${(error as Error).message}`));
    return undefined;
  }
  // Metered once it is sure the run goes on (a run that ends here instead is metered whole by finishRun).
  await deps.store.meters
    .recordAttempt(next, ended)
    .catch((error: unknown) => deps.log(`metering attempt ${(next.attempt ?? 2) - 1} of run ${next.run_id} failed: ${(error as Error).message}`));
  return next;
}
