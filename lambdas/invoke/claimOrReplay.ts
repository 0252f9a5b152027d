import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import type { HttpResult } from "../http/response";
import type { RouteRequest } from "../http/defineRoute";
import type { FunctionItem } from "../functions/types";
import { FINAL_STATUSES, refusedBeforeStart } from "../runs/types";
import type { IdempotentRequest } from "../store/idempotencyStore";
import { acceptedResponse, finishedResponse } from "./invokeResponse";
import { isBatchId } from "../batches/batchIds";

/** How often a duplicate request reads the first one's run while it waits for its end. */
const REPLAY_POLL_MS = 100;
/**
 * How long past its own window a duplicate still waits for the first request's start to settle.
 * The first request's window closes before the duplicate's (it came first), so a duplicate sent
 * at about the same time learns of a refusal only just after its own window: it then still
 * answers what its own try gets (one admission attempt), not 503. Never past ANSWER_MARGIN_MS
 * before the handler's deadline (on AWS the window may be 27 s against the Lambda's 29 s).
 */
const SETTLE_GRACE_MS = 1000;
/** How long before the handler's deadline a duplicate stops waiting, to answer in time. */
const ANSWER_MARGIN_MS = 500;
/** How long a `Prefer: respond-async` duplicate waits for the first request's start to settle. */
const ASYNC_SETTLE_MS = 1000;
/**
 * How old a claim whose run has no record must be to be taken as abandoned: its first request
 * would have started or been refused within its window (the service died in between, or giving
 * the key back failed), so the key is given back and claimed again rather than answered 503.
 */
const ABANDONED_CLAIM_MARGIN_MS = 5000;

/**
 * When a duplicate whose first run has not started yet stops waiting and answers 503 (epoch
 * ms): `Prefer: respond-async` promises an answer at once, so ASYNC_SETTLE_MS after it came;
 * otherwise SETTLE_GRACE_MS past its window; in both cases ANSWER_MARGIN_MS before the
 * handler's deadline at the latest.
 */
export function settleDeadline(timing: { started: number; syncMs: number; respondAsync: boolean }, handlerDeadline: number): number {
  const wanted = timing.started + (timing.respondAsync ? Math.min(ASYNC_SETTLE_MS, timing.syncMs) : timing.syncMs + SETTLE_GRACE_MS);
  return Math.min(wanted, handlerDeadline - ANSWER_MARGIN_MS);
}

/**
 * Claims the idempotency key for this request (null: go on and start the run named in
 * `mine`), or answers as the first request under the key did: 422 for another request under
 * the same key; otherwise the first run's answer once it ended, or 202 while it goes on (after
 * the sync window, or at once with `Prefer: respond-async`), with `Idempotent-Replayed: true`.
 * Concurrent duplicates start one run: the claim is a conditional write.
 *
 * A run is replayed only once it can no longer be refused: its record is written `queued` while
 * its plan admission is still pending (startRun), and a refusal removes it and gives the key
 * back. Until the runtime has it (the record says `running`, or the key says `started`) a
 * duplicate waits (until settleDeadline, then 503); when the key comes back, it claims it and
 * goes on to start a run itself, in what is left of its own window. So does a
 * duplicate that finds the run ended refused before it started (a throttled Lambda), or a
 * claim whose run has no record long after its window (abandoned): it gives the key back first.
 */
export async function claimOrReplay(
  deps: Deps,
  request: RouteRequest<unknown, unknown>,
  fn: FunctionItem,
  key: string,
  mine: IdempotentRequest,
  timing: { started: number; syncMs: number; respondAsync: boolean },
): Promise<HttpResult | null> {
  const accountId = request.principal.account_id;
  const giveUpAt = settleDeadline(timing, request.deadline);
  for (;;) {
    const claim = await deps.store.idempotency.claim(accountId, fn.function_id, key, mine, deps.clock.now());
    if (claim.claimed) return null;
    if (claim.first.request_hash !== mine.request_hash) {
      // The key's first request may have been a batch (its claim holds the batch's id).
      const first = claim.first.run_id;
      throw new ApiError("idempotency_key_reused", "This Idempotency-Key was used for another request (other parameters or version) within 24 h", isBatchId(first) ? { batch_id: first } : { run_id: first });
    }
    const run = await deps.store.runs.get(claim.first.run_id);
    const late = Date.now() - timing.started >= timing.syncMs;
    if (!run && deps.clock.now().getTime() - Date.parse(claim.first.created_at) > timing.syncMs + ABANDONED_CLAIM_MARGIN_MS) {
      await deps.store.idempotency.release(accountId, fn.function_id, key, claim.first.run_id);
      continue;
    }
    if (run && FINAL_STATUSES.includes(run.status)) {
      if (refusedBeforeStart(run)) {
        await deps.store.idempotency.release(accountId, fn.function_id, key, run.run_id);
        continue;
      }
      try {
        return replayed(finishedResponse(run));
      } catch (error) {
        if (error instanceof ApiError) Object.assign(error.headers, REPLAYED);
        throw error;
      }
    }
    const started = run !== undefined && (run.status === "running" || claim.first.started);
    if (started && (timing.respondAsync || late)) {
      return replayed(acceptedResponse(run, request.baseUrl));
    }
    if (!started && Date.now() >= giveUpAt) {
      throw new ApiError("service_unavailable", "The first request with this Idempotency-Key is still starting its run; try again shortly", {}, { "retry-after": "1" });
    }
    const pause = started ? REPLAY_POLL_MS : Math.min(REPLAY_POLL_MS, giveUpAt - Date.now());
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, pause)));
  }
}

const REPLAYED = { "idempotent-replayed": "true" };

/** An answer this service built for the first request, marked as replayed. */
function replayed(answer: HttpResult): HttpResult {
  return { ...answer, headers: { ...answer.headers, ...REPLAYED } };
}
