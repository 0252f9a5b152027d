import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import type { HttpResult } from "../http/response";
import type { RouteRequest } from "../http/defineRoute";
import { resolveFunction } from "../functions/resolveFunction";
import { newRunId } from "../runs/runIds";
import { refusedBeforeStart, type RunTrigger } from "../runs/types";
import { requestHash } from "../store/idempotencyStore";
import { claimOrReplay } from "./claimOrReplay";
import { idempotencyKey, invokedVersion } from "./invokedVersion";
import { acceptedResponse, finishedResponse } from "./invokeResponse";
import { startRun } from "./startRun";
import { validateParams } from "./validateParams";

/**
 * An HTTP invocation: checks the parameters before anything runs, starts the run, waits
 * up to the sync window for it (not at all with `Prefer: respond-async`), then answers
 * with its result, its error, or 202 and where to find it later.
 */
export async function invokeFunction(
  request: RouteRequest<unknown, unknown>,
  deps: Deps,
  input: unknown,
  source: "json" | "query",
  /** What the run records as its trigger (an MCP tool call: `mcp`). */
  trigger: RunTrigger = "http",
): Promise<HttpResult> {
  const started = Date.now() - ageOf(request, deps.clock.now().getTime());
  const fn = await resolveFunction(deps.store, request.principal, request.params.ref ?? "");
  if (fn.status !== "active") {
    throw new ApiError("function_not_ready", `Function '${fn.name}' is ${fn.status}${fn.status_reason ? `: ${fn.status_reason}` : ""}`, {
      status: fn.status,
    });
  }
  const { version, variables, schema } = await invokedVersion(deps, fn, request.headers["x-function-version"]);
  const params = validateParams(variables, input, source, schema);
  const syncMs = deps.config.syncWaitSeconds * 1000;
  const respondAsync = /respond-async/i.test(request.headers.prefer ?? "");
  const key = idempotencyKey(request.headers["idempotency-key"]);
  let runId: string | undefined;
  if (key !== null) {
    runId = newRunId();
    const same = { request_hash: requestHash(version, params), run_id: runId };
    const replay = await claimOrReplay(deps, request, fn, key, same, { started, syncMs, respondAsync });
    if (replay) return replay;
  }
  /** What is left of this request's window (a duplicate may have waited for the first request). */
  const windowLeft = () => Math.max(0, syncMs - (Date.now() - started));
  // A run that never started (refused by a limit) gives its key back: a retry may start one.
  const giveKeyBack = async () => {
    if (key !== null && runId) await deps.store.idempotency.release(request.principal.account_id, fn.function_id, key, runId).catch(() => undefined);
  };
  // Aborted once this answers 202: a runtime that records runs itself (AWS) stops watching the run.
  const waiting = new AbortController();
  // Answered at once: nothing watches the run at all (on AWS no end notice is asked for).
  if (respondAsync) waiting.abort();
  const starting = startRun(deps, {
    fn,
    plan: request.principal.plan,
    version,
    params,
    trigger,
    waitMs: windowLeft(),
    requestOrigin: request.headers["x-service-request-origin"] ?? null,
    sdkVersion: request.headers["x-service-sdk-version"] ?? null,
    // A caller answered at once may look at the run at once; one that waits sees only its end.
    markRunning: respondAsync ? "at-start" : "if-long",
    // Only a caller answered at once leaves the failure to retries; a sync caller sees it.
    retryable: respondAsync,
    signal: waiting.signal,
    baseUrl: request.baseUrl,
    ...(runId ? { runId } : {}),
  });
  const { run, completion, phase } = await starting.catch(async (error: unknown) => {
    await giveKeyBack();
    throw error;
  });
  if (key !== null && runId && run.status === "queued") {
    // The runtime has the run, but its record says `queued` as it did before admission: the key
    // tells duplicates it may be replayed (claimOrReplay).
    await deps.store.idempotency
      .markStarted(request.principal.account_id, fn.function_id, key, runId)
      .catch((error: unknown) => deps.log(`run ${runId}: noting its start on its idempotency key failed: ${(error as Error).message}`));
  }
  if (respondAsync) {
    waiting.abort();
    return acceptedResponse(run, request.baseUrl);
  }
  let timer: NodeJS.Timeout | undefined;
  const finished = await Promise.race([
    completion,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), windowLeft());
    }),
  ]);
  clearTimeout(timer);
  if (finished) {
    // Refused after it was recorded (a throttled Lambda): it never ran, and its key comes back too.
    if (refusedBeforeStart(finished)) await giveKeyBack();
    return finishedResponse(finished);
  }
  waiting.abort();
  // A run that waited in the queue (or for a worker) may still wait: the answer says which.
  const now = await phase();
  // Ended where this caller could not hear it (canceled while queued: 409 run_canceled).
  if (typeof now !== "string") return finishedResponse(now);
  return acceptedResponse({ ...run, status: now }, request.baseUrl);
}

/** How far back a request's receipt time is believed (a clock that says more is not). */
const MAX_RECEIPT_AGE_MS = 60_000;

/**
 * How long ago the request reached the API (API Gateway's `requestContext.timeEpoch`; locally,
 * when the server had read it), in the frame of the service's clock, which stamped it: the sync
 * window counts from there, so the authorizer's and this Lambda's cold starts come out of the
 * window, not out of API Gateway's 30 s (#23.13). A receipt in the future or more than a minute
 * ago is not believed: 0 then.
 */
function ageOf(request: RouteRequest<unknown, unknown>, now: number): number {
  const epoch = request.event.requestContext?.timeEpoch;
  if (typeof epoch !== "number") return 0;
  const age = now - epoch;
  return age >= 0 && age <= MAX_RECEIPT_AGE_MS ? age : 0;
}
