import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import type { HttpResult } from "../http/response";
import type { RouteRequest } from "../http/defineRoute";
import { resolveFunction } from "../functions/resolveFunction";
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
): Promise<HttpResult> {
  const started = Date.now();
  const fn = await resolveFunction(deps.store, request.principal, request.params.ref ?? "");
  if (fn.status !== "active") {
    throw new ApiError("function_not_ready", `Function '${fn.name}' is ${fn.status}${fn.status_reason ? `: ${fn.status_reason}` : ""}`, {
      status: fn.status,
    });
  }
  const version = await pickVersion(deps, fn.function_id, fn.latest_version, request.headers["x-function-version"]);
  const variables =
    version === fn.latest_version ? (fn.variables ?? []) : ((await deps.store.versions.meta(fn.function_id, version))?.variables ?? []);
  const params = validateParams(variables, input, source);
  const syncMs = deps.config.syncWaitSeconds * 1000;
  const respondAsync = /respond-async/i.test(request.headers.prefer ?? "");
  // Aborted once this answers 202: a runtime that records runs itself (AWS) stops watching the run.
  const waiting = new AbortController();
  const { run, completion } = await startRun(deps, {
    fn,
    plan: request.principal.plan,
    version,
    params,
    trigger: "http",
    waitMs: syncMs,
    requestOrigin: request.headers["x-service-request-origin"] ?? null,
    sdkVersion: request.headers["x-service-sdk-version"] ?? null,
    // A caller answered at once may look at the run at once; one that waits sees only its end.
    markRunning: respondAsync ? "at-start" : "if-long",
    signal: waiting.signal,
    baseUrl: request.baseUrl,
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
