import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import type { HttpResult } from "../http/response";
import type { RouteRequest } from "../http/defineRoute";
import { resolveFunction } from "../functions/resolveFunction";
import type { FunctionItem } from "../functions/types";
import { newRunId } from "../runs/runIds";
import { FINAL_STATUSES, type RunTrigger } from "../runs/types";
import { type IdempotentRequest, requestHash } from "../store/idempotencyStore";
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
  const started = Date.now();
  const fn = await resolveFunction(deps.store, request.principal, request.params.ref ?? "");
  if (fn.status !== "active") {
    throw new ApiError("function_not_ready", `Function '${fn.name}' is ${fn.status}${fn.status_reason ? `: ${fn.status_reason}` : ""}`, {
      status: fn.status,
    });
  }
  const version = await pickVersion(deps, fn.function_id, fn.latest_version, request.headers["x-function-version"]);
  const meta = version === fn.latest_version ? undefined : await deps.store.versions.meta(fn.function_id, version);
  const variables = meta ? meta.variables : version === fn.latest_version ? (fn.variables ?? []) : [];
  const schema = meta ? meta.input_schema : version === fn.latest_version ? fn.input_schema : undefined;
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
  // Aborted once this answers 202: a runtime that records runs itself (AWS) stops watching the run.
  const waiting = new AbortController();
  const starting = startRun(deps, {
    fn,
    plan: request.principal.plan,
    version,
    params,
    trigger,
    waitMs: syncMs,
    requestOrigin: request.headers["x-service-request-origin"] ?? null,
    sdkVersion: request.headers["x-service-sdk-version"] ?? null,
    // A caller answered at once may look at the run at once; one that waits sees only its end.
    markRunning: respondAsync ? "at-start" : "if-long",
    signal: waiting.signal,
    baseUrl: request.baseUrl,
    ...(runId ? { runId } : {}),
  });
  // A run that never started (refused by a limit) gives its key back: a retry may start one.
  const { run, completion } = await starting.catch(async (error: unknown) => {
    if (key !== null && runId) await deps.store.idempotency.release(request.principal.account_id, fn.function_id, key, runId).catch(() => undefined);
    throw error;
  });
  if (respondAsync) {
    waiting.abort();
    return acceptedResponse(run, request.baseUrl);
  }
  const remaining = Math.max(0, syncMs - (Date.now() - started));
  let timer: NodeJS.Timeout | undefined;
  const finished = await Promise.race([
    completion,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), remaining);
    }),
  ]);
  clearTimeout(timer);
  if (finished) return finishedResponse(finished);
  waiting.abort();
  return acceptedResponse({ ...run, status: "running" }, request.baseUrl);
}

async function pickVersion(deps: Deps, functionId: string, latest: number, header: string | undefined): Promise<number> {
  if (header === undefined || header === "") return latest;
  const wanted = /^[1-9]\d{0,8}$/.test(header.trim()) ? Number(header.trim()) : 0;
  if (wanted < 1 || wanted > latest) {
    throw new ApiError("version_not_found", `No version '${header}'; versions are 1 to ${latest}`, { version: header });
  }
  return wanted;
}

/** `Idempotency-Key`: 1..255 characters; absent, null. */
function idempotencyKey(header: string | undefined): string | null {
  if (header === undefined) return null;
  if (header.length < 1 || header.length > 255) {
    throw new ApiError("invalid_request", "Idempotency-Key must be 1 to 255 characters", { field: "Idempotency-Key" });
  }
  return header;
}

/** How often a duplicate request reads the first one's run while it waits for its end. */
const REPLAY_POLL_MS = 100;

/**
 * Claims the idempotency key for this request (null: go on and start the run named in
 * `request`), or answers as the first request under the key did: 422 for another request under
 * the same key; otherwise the first run's answer once it ended, or 202 while it goes on (after
 * the sync window, or at once with `Prefer: respond-async`), with `Idempotent-Replayed: true`.
 * Concurrent duplicates start one run: the claim is a conditional write.
 */
async function claimOrReplay(
  deps: Deps,
  request: RouteRequest<unknown, unknown>,
  fn: FunctionItem,
  key: string,
  mine: IdempotentRequest,
  timing: { started: number; syncMs: number; respondAsync: boolean },
): Promise<HttpResult | null> {
  const replayed = { "idempotent-replayed": "true" };
  for (;;) {
    const claim = await deps.store.idempotency.claim(request.principal.account_id, fn.function_id, key, mine, deps.clock.now());
    if (claim.claimed) return null;
    if (claim.first.request_hash !== mine.request_hash) {
      throw new ApiError("idempotency_key_reused", "This Idempotency-Key was used for another request (other parameters or version) within 24 h", {
        run_id: claim.first.run_id,
      });
    }
    const run = await deps.store.runs.get(claim.first.run_id);
    const late = Date.now() - timing.started >= timing.syncMs;
    if (run && FINAL_STATUSES.includes(run.status)) {
      try {
        const answer = finishedResponse(run);
        return { ...answer, headers: { ...answer.headers, ...replayed } };
      } catch (error) {
        if (error instanceof ApiError) Object.assign(error.headers, replayed);
        throw error;
      }
    }
    if (run && (timing.respondAsync || late)) {
      const answer = acceptedResponse(run, request.baseUrl);
      return { ...answer, headers: { ...answer.headers, ...replayed } };
    }
    if (!run && late) {
      throw new ApiError("service_unavailable", "The first request with this Idempotency-Key is still starting its run; try again shortly", {}, { "retry-after": "1" });
    }
    await new Promise((resolve) => setTimeout(resolve, REPLAY_POLL_MS));
  }
}
