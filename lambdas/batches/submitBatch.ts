import { DEFAULT_PLAN, maxQueuedOf } from "../config/plans";
import type { Deps } from "../deps";
import type { RouteRequest } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import type { HttpResult } from "../http/response";
import { resolveFunction } from "../functions/resolveFunction";
import { secondsToNextMonth } from "../invoke/admitRun";
import { idempotencyKey, invokedVersion } from "../invoke/invokedVersion";
import { newRun } from "../runs/newRun";
import type { RunItem } from "../runs/types";
import { secretsForRun } from "../secrets/functionSecrets";
import { Redactor } from "../secrets/redactor";
import { INLINE_PARAMS_BYTES } from "../store/runItems";
import { acceptedBatch } from "./acceptedBatch";
import { newBatchId } from "./batchIds";
import { checkBatchItems } from "./checkBatchItems";
import { batchRequestHash, claimBatchKey } from "./claimBatchKey";
import { startBatchRuns } from "./startBatchRuns";
import type { BatchItem } from "./types";

/**
 * POST /functions/{ref}/batch: every item is checked first (400 and nothing written when one is
 * bad); the month's quota is reserved for all of them at once (429 and nothing written when it
 * cannot cover them); then every run is recorded `queued` and the batch that names them, and
 * the answer is 202 with their ids. The runs start outside the request (startBatchRuns), as the
 * run queue's work of this process: on AWS the route awaits it before it answers.
 */
export async function submitBatch(request: RouteRequest<unknown, unknown>, deps: Deps, body: unknown): Promise<HttpResult> {
  const fn = await resolveFunction(deps.store, request.principal, request.params.ref ?? "");
  if (fn.status !== "active") {
    throw new ApiError("function_not_ready", `Function '${fn.name}' is ${fn.status}${fn.status_reason ? `: ${fn.status_reason}` : ""}`, { status: fn.status });
  }
  const { version, variables, schema } = await invokedVersion(deps, fn, request.headers["x-function-version"]);
  const items = checkBatchItems(body, variables, schema);
  const key = idempotencyKey(request.headers["idempotency-key"]);
  const accountId = request.principal.account_id;
  const batchId = newBatchId();
  if (key !== null) {
    const replay = await claimBatchKey(deps, accountId, fn, key, { requestHash: batchRequestHash(version, items), batchId, baseUrl: request.baseUrl });
    if (replay) return replay;
  }
  // A batch refused or not recorded gives its key back: a retry may create it.
  const giveKeyBack = async () => {
    if (key !== null) await deps.store.idempotency.release(accountId, fn.function_id, key, batchId).catch(() => undefined);
  };
  const planName = deps.config.plans[request.principal.plan] ? request.principal.plan : DEFAULT_PLAN;
  const plan = deps.config.plans[planName];
  const now = deps.clock.now();
  if (plan) {
    // The run queue must have room for what cannot start at once: checked before anything is
    // counted (a batch that does not fit is refused whole; one that meets a queue filled
    // meanwhile ends the items that found no room failed with queue_full).
    const limitItem = await deps.store.limits.read(accountId).catch(async (error: unknown) => {
      await giveKeyBack();
      throw error;
    });
    const inFlight = Object.values(limitItem?.leases ?? {}).filter((until) => until > now.getTime()).length;
    const room = maxQueuedOf(plan) - Math.max(0, limitItem?.queued ?? 0) + Math.max(0, plan.concurrency - inFlight);
    if (items.length > room) {
      await giveKeyBack();
      throw new ApiError(
        "queue_full",
        `The '${planName}' plan queues at most ${maxQueuedOf(plan)} runs; this batch needs room for ${items.length} and there is room for ${Math.max(0, room)}`,
        { limit: maxQueuedOf(plan), queued: limitItem?.queued ?? 0, concurrency: plan.concurrency, requested: items.length },
        { "retry-after": "5" },
      );
    }
    const reservation = await deps.store.limits.reserveInvocations(accountId, items.length, plan.invocations_per_month, now).catch(async (error: unknown) => {
      await giveKeyBack();
      throw error;
    });
    if (!reservation.reserved) {
      await giveKeyBack();
      throw new ApiError(
        "invocation_quota_exceeded",
        `The '${planName}' plan allows ${plan.invocations_per_month} invocations a month; ${reservation.used} are used, and this batch needs ${items.length}`,
        { limit: plan.invocations_per_month, used: reservation.used, requested: items.length },
        { "retry-after": String(secondsToNextMonth(now)) },
      );
    }
  }
  // What is kept of each run never shows the function's secrets (as startRun keeps them).
  const secrets = await secretsForRun(deps, fn.function_id, fn.has_secrets === true);
  const redactor = new Redactor(Object.values(secrets.values));
  const queuedAt = now.toISOString();
  const runs: RunItem[] = items.map((params) =>
    newRun(fn, {
      version,
      trigger: "batch",
      params: redactor.value(params),
      queuedAt,
      requestOrigin: request.headers["x-service-request-origin"] ?? null,
      sdkVersion: request.headers["x-service-sdk-version"] ?? null,
      batchId,
    }),
  );
  const batch: BatchItem = {
    batch_id: batchId,
    account_id: accountId,
    function_id: fn.function_id,
    function_name: fn.name,
    version,
    run_ids: runs.map((run) => run.run_id),
    created_at: queuedAt,
    finished_at: null,
    counts: null,
  };
  try {
    const inline = (run: RunItem) => Buffer.byteLength(JSON.stringify(run.params)) <= INLINE_PARAMS_BYTES;
    await deps.store.batches.putRuns(runs, inline, (run) => deps.store.runs.put(run));
    await deps.store.batches.create(batch);
  } catch (error) {
    await undo(deps, accountId, runs, plan ? items.length : 0);
    await giveKeyBack();
    throw error;
  }
  // Tracked as the run queue's work: a Lambda (frozen once it answers) hands every item to the
  // queue before its 202 leaves (lazyRoute awaits deps.queue.idle()); locally it runs on after it.
  void deps.queue.track(startBatchRuns(deps, {
    fn,
    plan: planName,
    version,
    batchId,
    runs: runs.map((run, index) => ({ runId: run.run_id, params: items[index] as Record<string, unknown>, queuedAt: run.queued_at })),
    baseUrl: request.baseUrl,
    requestOrigin: request.headers["x-service-request-origin"] ?? null,
    sdkVersion: request.headers["x-service-sdk-version"] ?? null,
  })).catch((error: unknown) => deps.log(`batch ${batchId}: starting its runs failed: ${(error as Error).stack ?? error}`));
  return acceptedBatch(batch, request.baseUrl);
}

/** A batch that could not be recorded: its runs written so far are removed and its reservation given back. */
async function undo(deps: Deps, accountId: string, runs: readonly RunItem[], reserved: number): Promise<void> {
  const log = (error: unknown) => deps.log(`undoing a batch that was not recorded: ${(error as Error).message}`);
  for (const run of runs) await deps.store.runs.deleteIfQueued(run.run_id).catch(log);
  if (reserved > 0) await deps.store.limits.unreserveInvocations(accountId, reserved).catch(log);
}
